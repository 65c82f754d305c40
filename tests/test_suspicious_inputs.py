"""Inputs that evaluate without an error but look wrong are said loudly: qrels of another collection,
``evaluate(results, qrels)``, and a run and qrels given the wrong way round on the command line."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.errors import ParseError, SuspiciousInputWarning


def _collection(seed: int = 0, n_queries: int = 30, depth: int = 50, prefix: str = "d"):
    rng = np.random.default_rng(seed)
    qrels = {f"q{i}": {f"{prefix}{i}_{j}": int(rng.integers(0, 3)) for j in range(5)} for i in range(n_queries)}
    run = {
        f"q{i}": {f"{prefix}{i}_{j}": float(rng.normal()) for j in range(depth)} for i in range(n_queries)
    }  # fmt: skip
    return qrels, run


def _no_warning(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SuspiciousInputWarning)
        return evaluate(*args, **kwargs)


def test_an_ordinary_run_gives_no_warning():
    qrels, run = _collection()
    assert _no_warning(qrels, run, [10]).means["NDCG@10"] > 0


def test_qrels_of_another_collection_warn_that_no_retrieved_document_is_judged():
    qrels, _ = _collection(prefix="doc")
    _, run = _collection(prefix="other")
    with pytest.warns(SuspiciousInputWarning, match=r"not one of the 1,500 documents retrieved for the 30 queries"):
        res = evaluate(qrels, run, [10])
    assert res.means["NDCG@10"] == 0.0


def test_far_fewer_judged_queries_than_usual_warn_with_the_counts():
    qrels, run = _collection()
    # Only one query of 30 keeps its judged documents in the run: under 5 % of the queries.
    foreign = {q: ({d.replace("d", "x"): s for d, s in docs.items()} if q != "q0" else docs) for q, docs in run.items()}
    with pytest.warns(SuspiciousInputWarning, match=r"only 1 of the 30 queries .* have a judged document"):
        evaluate(qrels, foreign, [10])


def test_a_few_queries_without_judged_documents_are_no_reason_to_warn():
    qrels, run = _collection()
    foreign = {q: ({d.replace("d", "x"): s for d, s in docs.items()} if q in ("q0", "q1") else docs)
               for q, docs in run.items()}  # fmt: skip
    _no_warning(qrels, foreign, [10])


def test_swapped_arguments_warn_that_the_qrels_look_like_a_run():
    qrels, run = _collection()
    with pytest.warns(SuspiciousInputWarning, match=r"are the arguments swapped\?"):
        evaluate(run, qrels, [10])


def test_float_graded_qrels_and_a_run_are_not_mistaken_for_swapped_arguments():
    qrels, run = _collection()
    graded = {q: {d: [0.0, 0.5, 1.0][int(v)] for d, v in docs.items()} for q, docs in qrels.items()}
    _no_warning(graded, run, [10], relevance_threshold=0.5)


def test_the_warning_reaches_a_streamed_evaluation_over_pieces_too():
    from haystack_irmetrics import evaluate_chunks

    qrels, _ = _collection(prefix="doc")
    _, run = _collection(prefix="other")
    pieces = [{q: run[q]} for q in run]
    with pytest.warns(SuspiciousInputWarning, match="not one of the 1,500 documents"):
        evaluate_chunks(qrels, pieces, [10])


def _write(path, rows):
    path.write_text("".join(" ".join(map(str, r)) + "\n" for r in rows))
    return str(path)


def _files(tmp_path, prefix_run="d"):
    qrels, _ = _collection()
    _, run = _collection(prefix=prefix_run)
    q = _write(tmp_path / "qrels.txt", [(qid, 0, d, v) for qid, docs in qrels.items() for d, v in docs.items()])
    r = _write(tmp_path / "run.trec", [(qid, "Q0", d, i + 1, s, "sys") for qid, docs in run.items()
                                       for i, (d, s) in enumerate(docs.items())])  # fmt: skip
    return q, r


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "haystack_irmetrics.cli", *args], capture_output=True, text=True)


def test_cli_says_loudly_on_one_line_that_the_qrels_judge_nothing_the_run_retrieved(tmp_path):
    q, r = _files(tmp_path, prefix_run="other")
    out = _cli("evaluate", q, r, "-k", "10", "-m", "NDCG")
    assert out.returncode == 0
    assert out.stdout.strip() == '{"NDCG@10": 0.0}'
    assert out.stderr.startswith("irmetrics: warning: not one of the 1,500 documents retrieved")
    assert len(out.stderr.strip().splitlines()) == 1


def test_cli_suggests_the_run_and_the_qrels_are_swapped(tmp_path):
    q, r = _files(tmp_path)
    out = _cli("evaluate", r, q, "-k", "10")
    assert out.returncode == 2
    assert "are they swapped? irmetrics evaluate takes QRELS first, then RUN" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_cli_suggests_swapping_for_beir_tsv_qrels_too(tmp_path):
    _, r = _files(tmp_path)
    tsv = tmp_path / "test.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\nq0\td0_0\t1\n")
    out = _cli("evaluate", r, str(tsv), "-k", "10")
    assert out.returncode == 2 and "BEIR: 3" in out.stderr


def test_a_malformed_qrels_file_that_is_no_run_gets_no_swap_hint(tmp_path):
    from haystack_irmetrics.cli.evaluate import swapped_hint

    q, r = _files(tmp_path)
    assert swapped_hint(q, r) is None
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 0 d1\n")
    out = _cli("evaluate", str(bad), r, "-k", "10")
    assert out.returncode == 2 and "swapped" not in out.stderr
    with pytest.raises(ParseError):
        from haystack_irmetrics.io import read_qrels

        read_qrels(str(bad))


def test_the_swap_hint_reads_a_bounded_prefix_of_an_endless_file(tmp_path):
    from haystack_irmetrics.cli.evaluate import swapped_hint

    _, r = _files(tmp_path)
    assert swapped_hint("/dev/zero", r) is None
    assert swapped_hint(r, "/dev/zero") is None


def test_fractional_judgments_of_shown_rankings_with_whole_scores_are_not_a_swap():
    # Judgments aggregated from a log (mean votes) and the logged rankings (n - rank scores) are about
    # as deep as each other: no warning, without any caller silencing it.
    rng = np.random.default_rng(3)
    qrels = {f"q{i}": {f"d{i}_{j}": float(rng.random()) for j in range(10)} for i in range(30)}
    logged = {f"q{i}": {f"d{i}_{j}": float(10 - j) for j in range(10)} for i in range(30)}
    _no_warning(qrels, logged, [10], relevance_threshold=0.5)
