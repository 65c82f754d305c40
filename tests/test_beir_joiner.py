"""A tuned fusion inside a Haystack pipeline: ``irmetrics fuse --optimize --joiner-yaml`` tunes the weights of
BM25 and dense on qrels, ``irmetrics beir --retriever hybrid --joiner`` runs the hybrid pipeline with that
DocumentJoiner, and its run ranks as ``irmetrics fuse``'s fused run does."""

from __future__ import annotations

import importlib.util
import json

import pytest

from haystack_irmetrics.beir import load_beir, load_beir_pipelines, sample_path
from haystack_irmetrics.beir.pipelines import pipeline_digest, read_joiner
from haystack_irmetrics.cli.app import main
from haystack_irmetrics.errors import PipelineError
from haystack_irmetrics.io import read_run

needs_dense = pytest.mark.skipif(
    importlib.util.find_spec("haystack_integrations.components.embedders.sentence_transformers") is None
    or importlib.util.find_spec("faiss") is None,
    reason="the dense extra (sentence-transformers-haystack, faiss-cpu) is not installed",
)
MERGE = {"join_mode": "merge", "weights": [0.9, 0.1]}


def small_folder(folder):
    """A BEIR folder of the sample's first 20 queries over their judged documents and 40 others (fast to embed)."""
    ds = load_beir(sample_path())
    sub = ds.subset(list(ds.queries)[:20])
    judged = {d for docs in sub.qrels.values() for d in docs}
    others = [d for d in ds.corpus if d not in judged][:40]
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w") as fh:
        for d, doc in ds.corpus.items():
            if d in judged or d in others:
                fh.write(json.dumps({"_id": d, "title": doc.get("title") or "", "text": doc.get("text") or ""}) + "\n")
    with open(folder / "queries.jsonl", "w") as fh:
        fh.writelines(json.dumps({"_id": q, "text": t}) + "\n" for q, t in sub.queries.items())
    lines = [f"{q}\t{d}\t{label}" for q, docs in sub.qrels.items() for d, label in docs.items()]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(lines) + "\n")
    return folder


def joiner_of(pipes):
    return pipes.retrieval.get_component("joiner")


def test_a_tuned_joiner_replaces_the_hybrid_joiners_parameters_and_keeps_its_depth():
    pipes = load_beir_pipelines("hybrid", progress=False, joiner=MERGE)
    try:
        joiner = joiner_of(pipes)
        assert (joiner.join_mode.value, joiner.weights, joiner.top_k) == ("merge", [0.9, 0.1], 1000)
    finally:
        pipes.close()
    assert (
        pipeline_digest("hybrid", MERGE)
        != pipeline_digest("hybrid")
        != pipeline_digest("hybrid", {**MERGE, "weights": [0.5, 0.5]})
    )


@pytest.mark.parametrize(
    ("retriever", "joiner", "message"),
    [
        ("bm25", MERGE, "exactly one DocumentJoiner; builtin:bm25 has 0|beir_bm25.yaml has 0"),
        ("hybrid", {**MERGE, "weights": [0.2, 0.3, 0.5]}, "3 weights do not match the 2 lists joiner"),
        ("hybrid", {"join_mode": "vote"}, "join_mode must be one of"),
        ("hybrid", {"mode": "merge"}, "'mode' is no DocumentJoiner parameter"),
        ("hybrid", {"join_mode": "merge", "weights": [-1, 2]}, "weights must be a list of non-negative numbers"),
    ],
)
def test_a_joiner_that_cannot_apply_is_refused_naming_why(retriever, joiner, message):
    with pytest.raises(PipelineError, match=message):
        load_beir_pipelines(retriever, progress=False, joiner=joiner)


def test_a_joiner_file_of_another_component_is_refused(tmp_path):
    path = tmp_path / "j.yaml"
    path.write_text("type: haystack.components.joiners.answer_joiner.AnswerJoiner\ninit_parameters: {}\n")
    with pytest.raises(PipelineError, match="not a DocumentJoiner"):
        read_joiner(path)
    path.write_text("join_mode: reciprocal_rank_fusion\n")  # a bare mapping of init parameters reads too
    assert read_joiner(path) == {"join_mode": "reciprocal_rank_fusion"}


@needs_dense
def test_the_tuned_joiner_in_the_hybrid_pipeline_ranks_as_irmetrics_fuse_and_is_recorded(tmp_path, capsys):
    data = small_folder(tmp_path / "data")
    for retriever in ("bm25", "dense"):
        assert (
            main(["beir", str(data), "--retriever", retriever, "-o", str(tmp_path / retriever), "--no-progress"]) == 0
        )
    runs = [str(tmp_path / r / "data" / "run.trec") for r in ("bm25", "dense")]  # hybrid's order: bm25, dense
    qrels = str(data / "qrels" / "test.tsv")
    joiner = tmp_path / "joiner.yaml"
    fused = tmp_path / "fused.trec"
    args = ["fuse", *runs, "--method", "wsum", "--norm", "none", "--optimize", "--qrels", qrels, "--folds", "2"]
    assert main([*args, "--json", "--joiner-yaml", str(joiner), "-o", str(fused)]) == 0
    tuned = read_joiner(joiner)
    assert tuned["join_mode"] == "merge" and len(tuned["weights"]) == 2
    capsys.readouterr()
    out = tmp_path / "hybrid"
    assert (
        main(["beir", str(data), "--retriever", "hybrid", "--joiner", str(joiner), "-o", str(out), "--no-progress"])
        == 0
    )
    summary = json.loads((out / "data" / "summary.json").read_text())
    assert summary["pipeline"] == "hybrid+joiner" and summary["joiner"]["weights"] == tuned["weights"]
    # Haystack's merge divides by the weights' sum: the same order as the fused run; compare the top 10
    # of each query where the fused scores do not tie.
    ours = read_run(out / "data" / "run.trec")
    theirs = read_run(fused)
    ours = ours if isinstance(ours, dict) else ours.data
    theirs = theirs if isinstance(theirs, dict) else theirs.data
    compared = 0
    for qid, scores in theirs.items():
        top = sorted(scores.items(), key=lambda item: -item[1])[:11]
        if len({round(s, 9) for _, s in top}) < len(top):
            continue
        mine = sorted(ours[qid].items(), key=lambda item: -item[1])[:10]
        assert [d for d, _ in mine] == [d for d, _ in top[:10]], qid
        compared += 1
    assert compared >= 15
    # The same output folder with another joiner is another configuration: refused, nothing mixed.
    other = tmp_path / "other.yaml"
    other.write_text(json.dumps({**tuned, "weights": [0.5, 0.5]}))
    capsys.readouterr()
    assert (
        main(["beir", str(data), "--retriever", "hybrid", "--joiner", str(other), "-o", str(out), "--no-progress"]) == 2
    )
    assert "another configuration" in capsys.readouterr().err
