"""Contract suite for every haystack_irmetrics component, and the document path's rules."""

from __future__ import annotations

import doctest
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from haystack import Document, Pipeline, component
from haystack.core.errors import DeserializationError
from haystack.core.serialization_security import _is_module_allowed
from haystack.evaluation import EvaluationRunResult

from haystack_irmetrics import (
    DuplicateCutoffError,
    EmptyInputError,
    InvalidCutoffError,
    InvalidIdError,
    InvalidLabelError,
    InvalidPolicyError,
    InvalidScoreError,
    IRMetricsError,
    LengthMismatchError,
    UnknownMeasureError,
    evaluate,
)
from haystack_irmetrics.components import (
    InvalidDocumentsError,
    IRMetricsEvaluator,
    MAPEvaluator,
    MRREvaluator,
    NDCGEvaluator,
    PrecisionEvaluator,
    RCapEvaluator,
    RecallEvaluator,
    evaluators,
    load_pipeline,
    to_evaluation_run_result,
)
from haystack_irmetrics.integration import documents, loading

ROOT = Path(__file__).resolve().parent.parent
SINGLE = {
    "NDCG": NDCGEvaluator,
    "MAP": MAPEvaluator,
    "P": PrecisionEvaluator,
    "Recall": RecallEvaluator,
    "R_cap": RCapEvaluator,
    "MRR": MRREvaluator,
}
ALL = [*SINGLE.values(), IRMetricsEvaluator]


def make(cls, k: int = 3, **kwargs):
    if cls is IRMetricsEvaluator:
        return cls(k_values=[1, k], **kwargs)
    return cls(k=k, **kwargs)


def views(cls, out: dict) -> dict[str, dict]:
    """Every metric of an output as ``{name: {"score", "individual_scores", "per_query"}}``."""
    if cls is IRMetricsEvaluator:
        return {
            name: {
                "score": out["raw_means"][name],
                "individual_scores": out["individual_scores"][name],
                "per_query": out["per_query"][name],
            }
            for name in out["means"]
        }
    return {"only": out}


def D(doc_id: str, score: float | None = None, **meta) -> Document:
    return Document(id=doc_id, content=f"text of {doc_id}", score=score, meta=meta)


GOLD = [[D("a"), D("c")], [D("b", 2.0), D("e", 1.0)], [D("f")]]
RETRIEVED = [[D("a"), D("b"), D("c")], [D("d"), D("b")], [D("x"), D("y")]]
QRELS = {"0": {"a": 1, "c": 1}, "1": {"b": 2.0, "e": 1.0}, "2": {"f": 1}}
RESULTS = {"0": {"a": 3.0, "b": 2.0, "c": 1.0}, "1": {"d": 2.0, "b": 1.0}, "2": {"x": 2.0, "y": 1.0}}


# -- sockets -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_component_has_haystack_evaluator_input_sockets_with_optional_query_ids(cls):
    pipe = Pipeline()
    pipe.add_component("ev", make(cls))
    inputs = pipe.inputs()["ev"]
    assert inputs["ground_truth_documents"] == {"type": list[list[Document]], "is_mandatory": True}
    assert inputs["retrieved_documents"] == {"type": list[list[Document]], "is_mandatory": True}
    assert inputs["query_ids"]["is_mandatory"] is False
    assert inputs["query_ids"]["default_value"] is None


@pytest.mark.parametrize("cls", SINGLE.values(), ids=lambda c: c.__name__)
def test_single_metric_component_outputs_score_and_individual_scores(cls):
    pipe = Pipeline()
    pipe.add_component("ev", make(cls))
    outputs = pipe.outputs()["ev"]
    assert outputs["score"]["type"] is float
    assert outputs["individual_scores"]["type"] == list[float]
    assert outputs["per_query"]["type"] == dict[str, float]


def test_multi_metric_component_outputs_means_raw_means_individual_scores_per_query_query_ids():
    pipe = Pipeline()
    pipe.add_component("ev", IRMetricsEvaluator())
    assert set(pipe.outputs()["ev"]) == {
        "means", "raw_means", "individual_scores", "per_query", "query_ids", "holes", "bounds",
    }  # fmt: skip


def test_holes_and_bounds_are_reported_beside_the_means_as_beir_and_hole_bounds_compute_them():
    from beir.retrieval.evaluation import EvaluateRetrieval

    from haystack_irmetrics import evaluate, hole_bounds

    gold = [[Document(id="d1", score=1), Document(id="d3", score=0)], [Document(id="d2", score=2)]]
    retrieved = [
        [Document(id="d1"), Document(id="d3"), Document(id="d2"), Document(id="d9")],
        [Document(id="d7"), Document(id="d2"), Document(id="d1")],
    ]
    ev = IRMetricsEvaluator(metrics=["NDCG", "P"], k_values=[3], holes=True, bounds_grade=1)
    out = ev.run(gold, retrieved)
    assert list(out["means"]) == ["NDCG@3", "P@3"]  # the holes stay out of the means
    qrels = {"0": {"d1": 1, "d3": 0}, "1": {"d2": 2}}
    results = {"0": {"d1": 4.0, "d3": 3.0, "d2": 2.0, "d9": 1.0}, "1": {"d7": 3.0, "d2": 2.0, "d1": 1.0}}
    assert out["holes"]["Hole@3"] == EvaluateRetrieval.evaluate_custom(qrels, results, [3], "hole")["Hole@3"]
    assert out["holes"]["Judged@3"] == evaluate(qrels, results, measures=["Judged@3"]).means["Judged@3"]
    want = hole_bounds(qrels, results, measures=["NDCG@3", "P@3"], grade=1)
    assert out["bounds"] == want.to_dict()["measures"]
    assert out["bounds"]["NDCG@3"]["low"] < out["means"]["NDCG@3"]  # d2 judged relevant in query 0 lowers it
    again = IRMetricsEvaluator.from_dict(ev.to_dict())
    assert (again.holes, again.bounds_grade) == (True, 1.0)
    assert IRMetricsEvaluator(metrics=["NDCG"], k_values=[3]).run(gold, retrieved)["holes"] == {}


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"holes": "yes"}, "holes must be true or false"),
        ({"bounds_grade": 0}, "bounds_grade must be a number > 0"),
        ({"bounds_grade": True}, "bounds_grade must be a number > 0"),
        ({"metrics": ["bpref"], "bounds_grade": 1}, "none of the metrics"),
    ],
)
def test_bad_hole_parameters_are_refused_at_init(kwargs, says):
    from haystack_irmetrics.errors import IRMetricsError

    with pytest.raises(IRMetricsError, match=says):
        IRMetricsEvaluator(**kwargs)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_outputs_are_plain_json_values_that_haystack_snapshots_and_traces_serialize(cls):
    import json

    from haystack.utils.base_serialization import _serialize_value_with_schema

    out = make(cls).run(ground_truth_documents=GOLD, retrieved_documents=RETRIEVED)

    def plain(value):  # only the JSON types, as the declared output types say
        if isinstance(value, dict):
            return type(value) is dict and all(type(k) is str and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return type(value) is list and all(map(plain, value))
        return type(value) in (str, float, int)

    assert plain(out)
    assert json.loads(json.dumps(out)) == out
    _serialize_value_with_schema(out)  # raises SerializationError on a type it does not know


# -- run: component == core on the same judgments and ranking ---------------------------------


@pytest.mark.parametrize("preset", ["beir", "trec"])
@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_component_run_equals_core_evaluate_on_the_equivalent_dicts(cls, preset):
    comp = make(cls, preset=preset)
    out = comp.run(ground_truth_documents=GOLD, retrieved_documents=RETRIEVED)
    for name, view in views(cls, out).items():
        metric = comp._measure.name if name == "only" else name
        core = evaluate(QRELS, RESULTS, None, measures=[metric], preset=preset, ties="stable")
        assert view["per_query"] == core.per_query[metric]
        assert view["score"] == core.raw_means[metric]
        assert view["individual_scores"] == [core.per_query[metric][q] for q in ("0", "1", "2")]


def test_multi_metric_means_are_the_core_means_rounded_as_beir_reports_them():
    out = IRMetricsEvaluator(k_values=[1, 3, 5]).run(GOLD, RETRIEVED)
    core = evaluate(QRELS, RESULTS, [1, 3, 5], ties="stable")
    assert out["means"] == core.means
    assert out["raw_means"] == core.raw_means
    assert list(out["means"]) == [f"{f}@{k}" for f in ("NDCG", "MAP", "Recall", "P", "MRR", "R_cap") for k in (1, 3, 5)]
    assert out["query_ids"] == ["0", "1", "2"]


@pytest.mark.parametrize("cls", SINGLE.values(), ids=lambda c: c.__name__)
def test_single_metric_output_drops_into_evaluation_run_result_reports(cls):
    out = make(cls).run(GOLD, RETRIEVED)
    result = EvaluationRunResult("run", inputs={"q": ["a", "b", "c"]}, results={"metric": out})
    assert result.aggregated_report() == {"metrics": ["metric"], "score": [out["score"]]}
    assert result.detailed_report()["metric"] == out["individual_scores"]
    other = EvaluationRunResult("other", inputs={"q": ["a", "b", "c"]}, results={"metric": out})
    assert result.comparative_detailed_report(other)["other_metric"] == out["individual_scores"]


def test_to_evaluation_run_result_makes_one_result_per_beir_name_with_query_id_column():
    out = IRMetricsEvaluator(metrics=["NDCG", "P"], k_values=[1, 3]).run(GOLD, RETRIEVED, query_ids=["x", "y", "z"])
    result = to_evaluation_run_result(out, "bm25")
    assert result.aggregated_report() == {"metrics": list(out["raw_means"]), "score": list(out["raw_means"].values())}
    detailed = result.detailed_report()
    assert detailed["query_id"] == ["x", "y", "z"]
    assert detailed["P@3"] == out["individual_scores"]["P@3"]
    assert to_evaluation_run_result(out, "bm25", inputs={"question": ["1", "2", "3"]}).inputs == {
        "question": ["1", "2", "3"]
    }


# -- serialization -------------------------------------------------------------------------------

NON_DEFAULT = {
    "document_comparison_field": "meta.corpus_id",
    "relevance_field": "meta.grade",
    "rank_by": "score",
    "preset": "trec",
    "relevance_threshold": 0.5,
    "ignore_identical_ids": True,
    "no_relevant": "skip",
}


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_to_dict_holds_only_json_values_and_from_dict_round_trips(cls):
    comp = make(cls, **NON_DEFAULT)
    data = comp.to_dict()
    assert data["type"] == f"haystack_irmetrics.components.evaluators.{cls.__name__}"
    params = data["init_parameters"]
    assert {k: params[k] for k in NON_DEFAULT} == NON_DEFAULT
    assert all(v is None or isinstance(v, str | int | float | bool | list) for v in params.values())
    assert cls.from_dict(data).to_dict() == data


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_pipeline_dumps_then_load_pipeline_round_trips_and_gives_the_same_output(cls):
    pipe = Pipeline()
    pipe.add_component("ev", make(cls, preset="trec", relevance_threshold=2))
    text = pipe.dumps()
    loaded = load_pipeline(text)
    assert loaded.dumps() == text
    data = {"ground_truth_documents": GOLD, "retrieved_documents": RETRIEVED}
    assert loaded.run(data) == pipe.run(data)


def test_plain_pipeline_loads_refuses_our_components_and_import_does_not_widen_the_allowlist():
    pipe = Pipeline()
    pipe.add_component("ev", NDCGEvaluator())
    assert not _is_module_allowed("haystack_irmetrics.components.evaluators")
    with pytest.raises(DeserializationError, match="haystack_irmetrics"):
        Pipeline.loads(pipe.dumps())
    load_pipeline(pipe.dumps())
    assert not _is_module_allowed("haystack_irmetrics.components.evaluators"), "load_pipeline leaked its allowlist"


def test_load_pipeline_reads_a_path_a_str_path_an_open_file_and_yaml_text(tmp_path):
    pipe = Pipeline()
    pipe.add_component("ev", MRREvaluator(k=7))
    path = tmp_path / "p.yaml"
    path.write_text(pipe.dumps())
    with path.open() as fh:
        sources = [path, str(path), fh, pipe.dumps()]
        assert [load_pipeline(s).get_component("ev").k for s in sources] == [7, 7, 7, 7]
    with pytest.raises(FileNotFoundError):
        load_pipeline(str(tmp_path / "missing.yaml"))


@component
class Doubler:
    """A component outside haystack_irmetrics, for the allowlist test."""

    @component.output_types(value=int)
    def run(self, value: int) -> dict:
        return {"value": 2 * value}


def test_load_pipeline_trusts_further_allowed_modules_on_request_only():
    pipe = Pipeline()
    pipe.add_component("double", Doubler())
    pipe.add_component("ndcg", NDCGEvaluator())
    with pytest.raises(DeserializationError, match=__name__):
        load_pipeline(pipe.dumps())
    loaded = load_pipeline(pipe.dumps(), allowed_modules=[__name__])
    assert loaded.get_component("double").run(value=2) == {"value": 4}
    untrusted = "components:\n  x:\n    type: os.system\n    init_parameters: {}\nconnections: []\n"
    with pytest.raises(DeserializationError, match="os"):
        load_pipeline(untrusted, allowed_modules=[__name__])


# -- errors --------------------------------------------------------------------------------------

RUN_ERRORS = [
    (
        "lengths",
        ([[D("a")], [D("b")]], [[D("a")]]),
        {},
        LengthMismatchError,
        r"2 queries but retrieved_documents has 1",
    ),
    ("empty_gold", ([], [[D("a")]]), {}, EmptyInputError, r"ground_truth_documents is empty"),
    ("empty_retrieved", ([[D("a")]], []), {}, EmptyInputError, r"retrieved_documents is empty"),
    ("no_gold_at_all", ([[], []], [[D("a")], []]), {}, EmptyInputError, r"none of the 2 queries"),
    (
        "mixed_scores",
        ([[D("a")], [D("b", 1.0), D("c")]], [[D("a")], [D("b")]]),
        {},
        InvalidLabelError,
        r"ground_truth_documents\[1\] \(query '1'\) mixes .*\[1\]\[0\] \(id 'b'\) has 1.0, \[1\]\[1\] \(id 'c'\)",
    ),
    (
        "nan_label",
        ([[D("a", float("nan"))]], [[D("a")]]),
        {},
        InvalidLabelError,
        r"ground_truth_documents\[0\]\[0\] \(query '0', id 'a'\)",
    ),
    (
        "not_a_list_of_lists",
        ([D("a")], [[D("a")]]),
        {},
        InvalidDocumentsError,
        r"ground_truth_documents\[0\] is Document, not a list",
    ),
    (
        "not_a_document",
        ([[D("a")]], [[D("a"), {"id": "b"}]]),
        {},
        InvalidDocumentsError,
        r"retrieved_documents\[0\]\[1\] \(query '0'\) is dict",
    ),
    ("query_ids_length", ([[D("a")]], [[D("a")]]), {"query_ids": ["q1", "q2"]}, LengthMismatchError, r"2 ids for 1"),
    (
        "bytes_outer",
        (b"ab", [[D("a")]]),
        {},
        InvalidDocumentsError,
        r"ground_truth_documents must be a list .* got bytes",
    ),
    ("bytes_inner", ([[D("a")]], [b"a"]), {}, InvalidDocumentsError, r"retrieved_documents\[0\] is bytes"),
    ("bytes_query_ids", ([[D("a")]], [[D("a")]]), {"query_ids": b"q"}, InvalidIdError, r"query_ids must be a list"),
    (
        "query_ids_repeat",
        ([[D("a")], [D("a")]], [[D("a")], [D("a")]]),
        {"query_ids": ["q", "q"]},
        InvalidIdError,
        r"query_ids\[1\] 'q' repeats query_ids\[0\]",
    ),
    ("query_ids_type", ([[D("a")]], [[D("a")]]), {"query_ids": [7]}, InvalidIdError, r"query_ids\[0\] 7 is int"),
]


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("case", "inputs", "kwargs", "error", "match"), RUN_ERRORS, ids=[c[0] for c in RUN_ERRORS])
def test_run_raises_typed_error_naming_the_position(cls, case, inputs, kwargs, error, match):
    gold, retrieved = inputs
    with pytest.raises(error, match=match) as info:
        make(cls).run(gold, retrieved, **kwargs)
    assert isinstance(info.value, IRMetricsError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_missing_comparison_value_raises_invalid_id_error_naming_query_document_and_field(cls):
    gold = [[D("a", corpus_id="A")], [D("b", corpus_id="B")]]
    retrieved = [[D("a1", corpus_id="A")], [D("b1", corpus_id="B"), D("b2")]]
    with pytest.raises(
        InvalidIdError, match=r"retrieved_documents\[1\]\[1\] \(query '1', id 'b2'\) has no 'meta.corpus_id'"
    ):
        make(cls, document_comparison_field="meta.corpus_id").run(gold, retrieved)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_rank_by_score_without_a_score_raises_invalid_score_error_naming_the_document(cls):
    with pytest.raises(InvalidScoreError, match=r"retrieved_documents\[0\]\[1\] \(query '0', id 'b'\) has score None"):
        make(cls, rank_by="score").run([[D("a")]], [[D("a", 1.0), D("b")]])


@pytest.mark.parametrize("bad", [np.timedelta64(5, "s"), np.bool_(True), True], ids=lambda v: type(v).__name__)
def test_rank_by_score_with_a_time_or_bool_score_raises_though_float_converts_it(bad):
    retrieved = [[D("a", 1.0), D("b", bad)]]
    with pytest.raises(InvalidScoreError, match=r"retrieved_documents\[0\]\[1\] \(query '0', id 'b'\) has score"):
        IRMetricsEvaluator(rank_by="score").run([[D("a")]], retrieved)
    with pytest.raises(InvalidLabelError, match=r"ground_truth_documents\[0\]\[0\] \(query '0', id 'a'\)"):
        IRMetricsEvaluator().run([[D("a", bad)]], [[D("a")]])


def test_an_int_beyond_any_float_or_too_long_to_print_in_a_document_is_a_typed_error():
    with pytest.raises(InvalidLabelError, match=r"ground_truth_documents\[0\]\[0\] \(query '0', id 'a'\)"):
        IRMetricsEvaluator().run([[D("a", 10**400)]], [[D("a")]])
    with pytest.raises(InvalidScoreError, match=r"retrieved_documents\[0\]\[0\] \(query '0', id 'a'\) has score 1000"):
        IRMetricsEvaluator(rank_by="score").run([[D("a")]], [[D("a", 10**400)]])
    with pytest.raises(InvalidIdError, match=r"meta.cid is an int of 16,610 bits"):
        IRMetricsEvaluator(document_comparison_field="meta.cid").run([[D("a", cid=10**5000)]], [[D("a", cid=1)]])


INIT_ERRORS = [
    ({"document_comparison_field": "title"}, InvalidPolicyError, "unknown document_comparison_field 'title'"),
    ({"document_comparison_field": "meta."}, InvalidPolicyError, "names no meta key"),
    ({"relevance_field": "content"}, InvalidPolicyError, "unknown relevance_field"),
    ({"rank_by": "bm25"}, InvalidPolicyError, "rank_by must be"),
    ({"preset": "ranx"}, InvalidPolicyError, "unknown preset"),
    ({"relevance_threshold": 0}, InvalidPolicyError, "relevance_threshold"),
    ({"no_relevant": "drop"}, InvalidPolicyError, "no_relevant"),
    ({"ignore_identical_ids": "yes"}, InvalidPolicyError, "ignore_identical_ids"),
]


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("kwargs", "error", "match"), INIT_ERRORS, ids=lambda v: str(v)[:30])
def test_bad_init_parameter_raises_typed_error_at_construction(cls, kwargs, error, match):
    with pytest.raises(error, match=match):
        make(cls, **kwargs)


@pytest.mark.parametrize("cls", SINGLE.values(), ids=lambda c: c.__name__)
@pytest.mark.parametrize("k", [0, -1, 2.5, True, "10"])
def test_single_metric_cutoff_must_be_a_positive_int(cls, k):
    with pytest.raises(InvalidCutoffError):
        cls(k=k)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"k_values": [1, 1]}, DuplicateCutoffError),
        ({"k_values": [0]}, InvalidCutoffError),
        ({"k_values": []}, InvalidCutoffError),
        ({"metrics": ["NDCG", "BLEU"]}, UnknownMeasureError),
        ({"metrics": []}, UnknownMeasureError),
    ],
)
def test_multi_metric_bad_metrics_or_k_values_raise_the_core_errors(kwargs, error):
    with pytest.raises(error):
        IRMetricsEvaluator(**kwargs)


def test_multi_metric_accepts_aliases_and_full_names_and_reports_beir_names():
    out = IRMetricsEvaluator(metrics=["precision", "ndcg_cut_5", "RR@2"], k_values=[3]).run(GOLD, RETRIEVED)
    assert list(out["means"]) == ["P@3", "NDCG@5", "MRR@2"]


# -- the document path -----------------------------------------------------------------------------


def test_query_ids_key_per_query_and_individual_scores_keep_input_order():
    out = PrecisionEvaluator(k=1).run(GOLD, RETRIEVED, query_ids=["z", "a", "m"])
    assert out["per_query"] == {"z": 1.0, "a": 0.0, "m": 0.0}
    assert out["individual_scores"] == [1.0, 0.0, 0.0]


def test_rank_by_order_ignores_document_scores_and_rank_by_score_sorts_by_them():
    gold = [[D("c")]]
    retrieved = [[D("a", 0.1), D("b", 0.2), D("c", 0.9)]]
    assert MRREvaluator(k=3).run(gold, retrieved)["score"] == pytest.approx(1 / 3)
    assert MRREvaluator(k=3, rank_by="score").run(gold, retrieved)["score"] == 1.0


def test_rank_by_order_keeps_list_order_even_when_scores_tie():
    gold = [[D("a")]]
    tied = [[D("a", 1.0), D("z", 1.0)]]  # trec ties (id descending) would put 'z' first
    assert NDCGEvaluator(k=1, preset="trec").run(gold, tied)["score"] == 1.0
    assert MRREvaluator(k=2, preset="trec").run(gold, [[D("z", 1.0), D("a", 1.0)]])["score"] == 0.5
    # Ranked by score, the BEIR preset breaks NDCG's float32 tie by id descending: 'z' before 'a'.
    assert NDCGEvaluator(k=1, rank_by="score").run([[D("a")]], [[D("a", 1.0), D("z", 1.0)]])["score"] == 0.0


def test_match_on_meta_key_counts_chunks_of_one_gold_document_once_at_the_first_rank():
    gold = [[D("A", corpus_id="A"), D("B", corpus_id="B")]]
    retrieved = [[D("A#1", corpus_id="A"), D("A#2", corpus_id="A"), D("C#1", corpus_id="C"), D("B#4", corpus_id="B")]]
    out = IRMetricsEvaluator(
        metrics=["P", "Recall", "NDCG"], k_values=[2, 3], document_comparison_field="meta.corpus_id"
    ).run(gold, retrieved)
    # Collapsed ranking: A, C, B. The second chunk of A takes no slot.
    assert out["means"]["P@2"] == 0.5
    assert out["means"]["Recall@3"] == 1.0
    assert out["raw_means"]["NDCG@3"] == pytest.approx((1 + 1 / 2) / (1 + 1 / math.log2(3)))


def test_rank_by_score_with_chunks_ranks_each_key_by_its_best_chunk():
    gold = [[D("B", corpus_id="B")]]
    retrieved = [[D("A#1", 0.5, corpus_id="A"), D("B#1", 0.2, corpus_id="B"), D("B#2", 0.9, corpus_id="B")]]
    out = MRREvaluator(k=1, rank_by="score", document_comparison_field="meta.corpus_id").run(gold, retrieved)
    assert out["score"] == 1.0


def test_meta_key_may_be_a_literal_dotted_key_or_a_nested_path_and_int_values_match_their_str():
    gold = [[Document(id="g", meta={"src": {"doc": 7}})]]
    assert (
        RecallEvaluator(k=1, document_comparison_field="meta.src.doc").run(
            gold, [[Document(id="r", meta={"src": {"doc": "7"}})]]
        )["score"]
        == 1.0
    )
    gold = [[Document(id="g", meta={"src.doc": "x"})]]
    retrieved = [[Document(id="r", meta={"src.doc": "x"})]]
    assert RecallEvaluator(k=1, document_comparison_field="meta.src.doc").run(gold, retrieved)["score"] == 1.0


def test_non_scalar_comparison_value_raises_invalid_id_error():
    with pytest.raises(InvalidIdError, match=r"ground_truth_documents\[0\]\[0\].*is list"):
        RecallEvaluator(document_comparison_field="meta.tags").run(
            [[Document(id="g", meta={"tags": ["x"]})]], [[Document(id="r", meta={"tags": ["x"]})]]
        )


def test_match_on_content_ignores_ids():
    gold = [[Document(content="Paris")]]
    retrieved = [[Document(id="other", content="Berlin"), Document(id="x", content="Paris")]]
    assert MRREvaluator(k=2, document_comparison_field="content").run(gold, retrieved)["score"] == 0.5
    with pytest.raises(InvalidIdError, match="has no 'content'"):
        MRREvaluator(document_comparison_field="content").run(gold, [[Document(id="blob")]])


def test_graded_relevance_from_a_meta_key_and_threshold_for_binary_metrics():
    gold = [[Document(id="a", meta={"vote": 0.3}), Document(id="b", meta={"vote": 1.0})]]
    retrieved = [[Document(id="a"), Document(id="b")]]
    ev = IRMetricsEvaluator(
        metrics=["NDCG", "P", "MRR"], k_values=[1], relevance_field="meta.vote", relevance_threshold=0.5
    )
    out = ev.run(gold, retrieved)
    assert out["raw_means"]["NDCG@1"] == pytest.approx(0.3)
    assert out["raw_means"]["P@1"] == 0.0  # 0.3 < 0.5
    assert out["raw_means"]["MRR@1"] == 0.0


def test_gold_documents_without_scores_are_binary_relevance_one():
    out = NDCGEvaluator(k=2).run([[D("a"), D("b")]], [[D("b"), D("a")]])
    assert out["score"] == 1.0


def test_gold_document_given_twice_keeps_its_highest_relevance():
    gold = [[D("a", 1.0), D("a", 3.0), D("b", 2.0)]]
    out = NDCGEvaluator(k=1).run(gold, [[D("a")]])
    assert out["score"] == 1.0  # gain 3 at rank 1, ideal 3


def test_gold_score_zero_is_judged_not_relevant():
    out = IRMetricsEvaluator(metrics=["MRR", "MAP", "NDCG"], k_values=[2]).run(
        [[D("a", 0.0), D("b", 1.0)]], [[D("a"), D("b")]]
    )
    assert out["raw_means"] == {"MRR@2": 0.5, "MAP@2": 0.5, "NDCG@2": pytest.approx(1 / math.log2(3))}


def test_empty_retrieved_list_scores_zero_for_every_metric():
    out = IRMetricsEvaluator(k_values=[1, 5]).run([[D("a")], [D("b")]], [[D("a")], []])
    assert all(v[1] == 0.0 for v in out["individual_scores"].values())
    assert all(v[0] == 1.0 for name, v in out["individual_scores"].items() if not name.startswith("P@5"))


@pytest.mark.parametrize("preset", ["beir", "trec"])
def test_query_with_empty_gold_list_is_nan_and_left_out_except_beir_mrr_and_r_cap_count_it_as_zero(preset):
    out = IRMetricsEvaluator(k_values=[1], preset=preset).run([[D("a")], []], [[D("a")], [D("b")]])
    for name, values in out["individual_scores"].items():
        assert values[0] == 1.0
        if preset == "beir" and name in ("MRR@1", "R_cap@1"):
            assert values[1] == 0.0 and out["raw_means"][name] == 0.5
        else:
            assert math.isnan(values[1]) and out["raw_means"][name] == 1.0
            assert "1" not in out["per_query"][name]


@pytest.mark.parametrize("policy", ["zero", "skip"])
def test_query_whose_gold_is_all_non_relevant_follows_no_relevant(policy):
    out = NDCGEvaluator(k=1, no_relevant=policy).run([[D("a")], [D("b", 0.0)]], [[D("a")], [D("b")]])
    if policy == "zero":
        assert out["individual_scores"] == [1.0, 0.0] and out["score"] == 0.5
    else:
        assert out["individual_scores"][0] == 1.0 and math.isnan(out["individual_scores"][1])
        assert out["score"] == 1.0


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_score_is_the_mean_of_the_individual_scores_that_are_not_nan(cls):
    gold = [*GOLD, [], [D("q", 0.0)]]
    retrieved = [*RETRIEVED, [D("a")], [D("q")]]
    for view in views(cls, make(cls, no_relevant="skip").run(gold, retrieved)).values():
        kept = [v for v in view["individual_scores"] if not math.isnan(v)]
        assert view["score"] == pytest.approx(sum(kept) / len(kept), abs=1e-15)


def test_ignore_identical_ids_drops_a_retrieved_key_equal_to_the_query_id():
    gold, retrieved = [[D("d2")]], [[D("q1"), D("d2")]]
    assert MRREvaluator(k=1).run(gold, retrieved, query_ids=["q1"])["score"] == 0.0
    assert MRREvaluator(k=1, ignore_identical_ids=True).run(gold, retrieved, query_ids=["q1"])["score"] == 1.0


def test_inputs_are_not_modified():
    gold = [[D("a", 1.0)]]
    retrieved = [[D("a", 0.5), D("a", 0.7)]]
    before = ([d.to_dict() for d in gold[0]], [d.to_dict() for d in retrieved[0]])
    IRMetricsEvaluator(rank_by="score").run(gold, retrieved)
    assert before == ([d.to_dict() for d in gold[0]], [d.to_dict() for d in retrieved[0]])


def test_no_match_in_the_whole_batch_logs_a_warning_naming_the_comparison_field(caplog):
    gold = [[Document(content="Paris")]]
    retrieved = [[Document(content="Paris", meta={"source": "wiki"})]]  # another id: hashes differ
    with caplog.at_level("WARNING", logger=documents.__name__):
        assert NDCGEvaluator().run(gold, retrieved)["score"] == 0.0
    assert "matched any ground-truth document by 'id'" in caplog.text
    assert "Haystack's built-in evaluators compare 'content'" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger=documents.__name__):
        NDCGEvaluator(document_comparison_field="content").run([[Document(content="Rome")]], retrieved)
    assert "by 'content'" in caplog.text and "built-in" not in caplog.text  # no hint to use what is used


# -- packaging rules -----------------------------------------------------------------------------


def test_import_haystack_irmetrics_does_not_import_haystack():
    code = "import sys, haystack_irmetrics; sys.exit('haystack' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False).returncode == 0


def test_the_core_io_and_cli_modules_never_import_haystack():
    # core/ and io/ are pure numpy; the packages that drive Haystack (components, beir, feedback)
    # import it themselves, and the light modules below must not pull it in at import time.
    package = ROOT / "haystack_irmetrics"
    offenders = [
        str(p.relative_to(ROOT))
        for folder in ("core", "io")
        for p in (package / folder).rglob("*.py")
        if any(
            line.lstrip().startswith(("import haystack\n", "from haystack ", "from haystack.", "import haystack."))
            for line in p.read_text().splitlines(keepends=True)
        )
    ]
    assert offenders == []
    code = (
        "import sys, haystack_irmetrics, haystack_irmetrics.core, haystack_irmetrics.io, haystack_irmetrics.cli; "
        "sys.exit('haystack' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False).returncode == 0


@pytest.mark.parametrize("module", [documents, evaluators, loading], ids=lambda m: m.__name__)
def test_docstring_examples_print_what_they_claim(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert module is documents or result.attempted > 0


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_score_is_nan_when_every_query_is_left_out(cls):
    """The mean of no individual score is nan (a 0.0 would read as a retriever that found nothing)."""
    out = make(cls, no_relevant="skip").run([[D("a", 0.0)]], [[D("a")]])
    for view in views(cls, out).values():
        assert math.isnan(view["score"]) and all(map(math.isnan, view["individual_scores"]))


def test_load_pipeline_is_exported_by_the_components_package():
    from haystack_irmetrics.components import load_pipeline as exported

    assert exported is load_pipeline is loading.load_pipeline
