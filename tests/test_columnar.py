"""The file and column paths give the same numbers as the dict path, and fall back correctly."""

from __future__ import annotations

import gzip
import random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from haystack_irmetrics import DuplicateDocumentError, ParseError, evaluate
from haystack_irmetrics.core.inputs import ColumnarRun, Run
from haystack_irmetrics.io import _fast, read_run, read_trec_run
from tests import strategies as S

needs_polars = pytest.mark.skipif(not _fast.available(), reason="polars (extra 'columnar') is not installed")


def _write_run(path, results, shuffle_seed=None, sep=" ", compress=False):
    rows = [(q, d, s) for q, docs in results.items() for d, s in docs.items()]
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(rows)
    text = "".join(f"{q}{sep}Q0{sep}{d}{sep}0{sep}{s!r}{sep}tag\n" for q, d, s in rows)
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _ids_ok(results):
    # Whitespace in ids cannot be written to a TREC file.
    return all(" " not in q and all(" " not in d for d in docs) for q, docs in results.items())


@needs_polars
@given(S.qrels(), S.runs(), S.k_values, st.sampled_from(["beir", "trec"]), st.integers(0, 3), st.booleans())
def test_fast_file_path_equals_dict_path(tmp_path_factory, qrels, results, ks, preset, seed, tab):
    results = {q: docs for q, docs in results.items() if docs}
    assume(results and _ids_ok(results) and any(qrels.get(q) for q in results))
    path = _write_run(tmp_path_factory.mktemp("run") / "run", results, shuffle_seed=seed, sep="\t" if tab else " ")
    run = read_run(path)
    assert isinstance(run, ColumnarRun)
    # Row order in the file is the insertion order within each query.
    expected = evaluate(qrels, read_trec_run(path, fast=False), ks, preset=preset)
    got = evaluate(qrels, run, ks, preset=preset)
    assert got.means == expected.means
    assert dict(got.per_query.items()) == dict(expected.per_query.items())


@needs_polars
def test_fast_path_reads_numeric_query_ids_as_strings_and_gzip(tmp_path):
    path = _write_run(tmp_path / "run.gz", {"301": {"10": 1.0, "9": 1.0}}, compress=True)
    run = read_run(path)
    assert isinstance(run, ColumnarRun) and run.qids == ["301"]
    assert run.data == {"301": {"10": 1.0, "9": 1.0}}


@needs_polars
def test_fast_path_duplicate_falls_back_to_line_numbered_error(tmp_path):
    path = _write_run(tmp_path / "run", {"q1": {"d1": 1.0, "d2": 0.5}})
    path.write_text(path.read_text() + "q1 Q0 d1 0 0.1 tag\n")
    with pytest.raises(DuplicateDocumentError, match=r"rows 1 and 3"):
        read_run(path)


@needs_polars
def test_fast_path_bad_score_falls_back_to_line_numbered_error(tmp_path):
    path = tmp_path / "run"
    path.write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 inf t\n")
    with pytest.raises(ParseError, match=r"run:2: score 'inf'"):
        read_run(path)


def test_columns_api_builds_the_same_run_as_a_dict():
    run = Run.from_columns(["q1", "q2", "q1"], ["d1", "d1", "d2"], [0.5, 0.7, 0.9])
    assert run.data == {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d1": 0.7}}
    with pytest.raises(DuplicateDocumentError, match=r"rows 1 and 3"):
        Run.from_columns(["q1", "q2", "q1"], ["d1", "d1", "d1"], [0.5, 0.7, 0.9])


@needs_polars
@given(
    S.qrels(),
    S.runs(),
    S.k_values,
    st.sampled_from(["beir", "trec"]),
    st.sampled_from([None, 1]),
    st.integers(1, 9),
    st.booleans(),
)
def test_streamed_file_scores_exactly_as_the_whole_file(tmp_path_factory, qrels, results, ks, preset, seed, rows, tab):
    """Pieces of any size (a query may straddle batches), shuffled files (a query in two blocks: read whole)."""
    from haystack_irmetrics.core.evaluation import evaluate_chunks
    from haystack_irmetrics.io import evaluate_run_file

    results = {q: docs for q, docs in results.items() if docs}
    assume(results and _ids_ok(results) and any(qrels.get(q) for q in results))
    path = _write_run(tmp_path_factory.mktemp("run") / "run", results, shuffle_seed=seed, sep="\t" if tab else " ")
    expected = evaluate(qrels, read_trec_run(path, fast=False), ks, preset=preset)
    try:
        got = evaluate_chunks(qrels, _fast.iter_trec_run_chunks(path, rows), ks, preset=preset)
    except _fast.NotStreamable:
        assert seed is not None  # only a shuffled file can split a query
    else:
        assert got.means == expected.means and got.raw_means == expected.raw_means
        assert dict(got.per_query.items()) == dict(expected.per_query.items())
    via_file = evaluate_run_file(qrels, path, ks, preset=preset)
    assert dict(via_file.per_query.items()) == dict(expected.per_query.items())


@needs_polars
def test_streaming_gives_up_on_what_the_line_reader_must_see(tmp_path):
    """gzip, a query in two blocks, a duplicate, a bad score, blank runs: NotStreamable, then the exact error."""
    from haystack_irmetrics.io import evaluate_run_file

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    cases = {
        "run.gz": (_write_run(tmp_path / "run.gz", {"q1": {"d1": 1.0}}, compress=True), None),
        "split": (tmp_path / "split", "q1 Q0 d1 1 1.0 t\nq2 Q0 d2 1 1.0 t\nq1 Q0 d3 2 0.5 t\n"),
        "dup": (tmp_path / "dup", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d1 3 0.2 t\n"),
        "inf": (tmp_path / "inf", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 inf t\n"),
        "blanks": (tmp_path / "blanks", "q1 Q0 d1 1 1.0 t\nq1  Q0 d2 2 0.5 t\n"),
        # comments: one that parses as a six-field row, one that does not, one inside a query
        "comment_row": (tmp_path / "comment_row", "# x y 1 2.0 z\nq1 Q0 d1 1 1.0 t\nq2 Q0 d2 1 1.0 t\n"),
        "comment_text": (tmp_path / "comment_text", "# made by run.py on 2026-11-22\nq1 Q0 d1 1 1.0 t\n"),
        "comment_inside": (tmp_path / "comment_inside", "q1 Q0 d3 1 2.0 t\n#q1 Q0 d9 2 9.0 t\nq1 Q0 d1 2 1.0 t\n"),
    }
    for path, text in cases.values():
        if text is not None:
            path.write_text(text)
        with pytest.raises(_fast.NotStreamable):
            list(_fast.iter_trec_run_chunks(path, 1))
    assert evaluate_run_file(qrels, cases["split"][0], [1]).per_query["NDCG@1"] == {"q1": 1.0, "q2": 1.0}
    with pytest.raises(DuplicateDocumentError, match=r"rows 1 and 3"):
        evaluate_run_file(qrels, cases["dup"][0], [1])
    with pytest.raises(ParseError, match=r"inf:2: score 'inf'"):
        evaluate_run_file(qrels, cases["inf"][0], [1])
    # Runs of blanks are fine for the line reader (it splits on whitespace): d2 keeps its 0.5.
    blanks = evaluate_run_file(qrels, cases["blanks"][0], [1, 2], preset="trec")
    assert blanks.per_query["P@2"] == {"q1": 0.5}
    assert read_trec_run(cases["blanks"][0], fast=False).data == {"q1": {"d1": 1.0, "d2": 0.5}}
    # Comment lines are skipped, as the line reader does; never read as a query "#".
    for name in ("comment_row", "comment_text", "comment_inside"):
        got = evaluate_run_file(qrels, cases[name][0], [1, 2], preset="trec")
        assert dict(got.per_query.items()) == dict(
            evaluate(qrels, read_trec_run(cases[name][0], fast=False), [1, 2], preset="trec").per_query.items()
        )
    assert evaluate_run_file(qrels, cases["comment_inside"][0], [2], preset="trec").per_query["P@2"] == {"q1": 0.5}


@needs_polars
def test_streamed_pieces_hold_whole_queries_and_confirm_hash_hits_on_strings(tmp_path):
    import numpy as np
    import polars as pl

    results = {f"q{i}": {f"d{j}": float(j % 3) for j in range(i + 1)} for i in range(6)}
    path = _write_run(tmp_path / "run", results)
    pieces = list(_fast.iter_trec_run_chunks(path, 4))
    assert [q for p in pieces for q in p.qids] == list(results)
    run = pieces[-1]
    rows, which = run.find(["d0", "d5", "nope"])
    assert run.ids_at(rows) == [["d0", "d5", "nope"][w] for w in which.tolist()]
    assert sorted(run.ids_at(rows)) == ["d0", "d5"]
    # Every row colliding with a candidate's hash: the strings still decide.
    dcol = pl.Series(["d0", "x", "d0", "y"])
    same = np.full(4, pl.Series(["d0"]).hash(seed=0).to_numpy().astype(np.uint32)[0])
    rows, which = _fast._find(dcol, same, ["d0"])
    assert rows.tolist() == [0, 2] and which.tolist() == [0, 0]
    # Every row of a query colliding: no duplicate unless two ids are equal.
    offsets = np.array([0, 2, 4])
    assert not _fast._has_duplicate(pl.Series(["a", "b", "a", "c"]), np.zeros(4, np.uint32), offsets)
    assert _fast._has_duplicate(pl.Series(["a", "b", "c", "c"]), np.zeros(4, np.uint32), offsets)
    assert not _fast._has_duplicate(pl.Series(["a", "b", "a"]), np.zeros(3, np.uint32), np.array([0, 2, 3]))


def _hand_built(results: dict[str, dict[str, float]]) -> ColumnarRun:
    """A ColumnarRun from its parts, as a caller with its own storage builds one (no ``identical``)."""
    import numpy as np

    qids = list(results)
    ids = [d for q in qids for d in results[q]]
    scores = np.asarray([s for q in qids for s in results[q].values()], np.float64)
    offsets = np.concatenate([[0], np.cumsum([len(results[q]) for q in qids])]).astype(np.int64)

    def find(candidates):
        index = {c: i for i, c in enumerate(candidates)}
        rows = [r for r, d in enumerate(ids) if d in index]
        return np.asarray(rows, np.int64), np.asarray([index[ids[r]] for r in rows], np.int64)

    return ColumnarRun(qids, offsets, scores, lambda rows: [ids[r] for r in rows.tolist()], find)


@given(S.beir_safe())
def test_a_hand_built_columnar_run_drops_a_documents_own_query_id_as_beir_does(case):
    from tests.oracles import beir_means

    qrels, results = case
    results = {q: {**docs, q: 0.5} for q, docs in results.items()}  # every query retrieves its own id
    expected = beir_means(qrels, results, [1, 3, 10])
    assume(expected is not None)
    assert evaluate(qrels, _hand_built(results), [1, 3, 10]).means == expected


def test_beirs_hole_of_a_columnar_run_whole_and_in_pieces_equals_evaluate_custom(tmp_path):
    import copy

    from beir.retrieval.evaluation import EvaluateRetrieval

    from haystack_irmetrics import evaluate_chunks

    rng = random.Random(3)
    docs = [f"d{i}" for i in range(60)]
    results = {f"q{i}": {d: float(rng.randint(0, 9)) for d in rng.sample(docs, 25)} for i in range(12)}
    qrels = {f"q{i}": {d: rng.randint(0, 2) for d in rng.sample(docs, 6)} for i in range(8)}
    path = tmp_path / "run.trec"
    _write_run(path, results)
    run = read_run(path)
    assert isinstance(run, ColumnarRun)
    want = EvaluateRetrieval.evaluate_custom(qrels, copy.deepcopy(results), [5, 10], "hole")
    names = ["Hole@5", "Hole@10"]
    assert evaluate(qrels, run, measures=names, ignore_identical_ids=False).means == want
    pieces = [{q: results[q] for q in list(results)[a : a + 5]} for a in range(0, 12, 5)]
    assert evaluate_chunks(qrels, pieces, measures=names, ignore_identical_ids=False).means == want
