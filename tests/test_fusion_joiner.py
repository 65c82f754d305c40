"""The DocumentJoiner ``joiner_parameters`` writes, inside a Haystack pipeline fed by two retrievers (two
components returning fixed ranked Documents), ranks as ``fusion.fuse`` does where Haystack's join mode
reproduces the fusion (RRF with k = 60, weighted merge and max on raw scores), with scores a constant
multiple of ours; and where it cannot (another k, a normalisation), the difference is shown and
``joiner_parameters`` refuses."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("haystack")
import yaml
from haystack import Document, Pipeline, component
from haystack.components.joiners import DocumentJoiner

from haystack_irmetrics.errors import FusionError
from haystack_irmetrics.fusion import fuse, joiner_component, joiner_parameters, joiner_yaml

SHARED = Path(os.environ.get("IRMETRICS_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@component
class FixedRetriever:
    """Returns a run's documents for the query, in its rank order: trec_eval's (score descending, ties by id
    descending), the order ``fuse`` reads a run in."""

    def __init__(self, ranked: dict) -> None:
        self.ranked = ranked

    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict:
        docs = self.ranked.get(query, {})
        ranked = sorted(docs, key=lambda d: (float(np.float32(docs[d])), d), reverse=True)
        return {"documents": [Document(id=d, content=d, score=docs[d]) for d in ranked]}


def pipeline_rankings(runs: list[dict], parameters: dict) -> dict[str, list[tuple[str, float]]]:
    """Each query through retrievers -> the DocumentJoiner built from the YAML ``joiner_yaml`` writes."""
    p = Pipeline()
    for i, run in enumerate(runs):
        p.add_component(f"retriever{i}", FixedRetriever(run))
    p.add_component("joiner", DocumentJoiner.from_dict(yaml.safe_load(joiner_yaml(parameters))))
    for i in range(len(runs)):
        p.connect(f"retriever{i}.documents", "joiner.documents")
    out = {}
    for q in runs[0]:
        result = p.run({f"retriever{i}": {"query": q} for i in range(len(runs))})
        out[q] = [(d.id, d.score) for d in result["joiner"]["documents"]]
    return out


def assert_same_ranking(got: dict, fused: dict, factor: float) -> None:
    """The pipeline's ranking is ours position by position (up to float-level ties), its scores ``factor``
    times ours."""
    for q, ranking in got.items():
        ours = fused[q]
        assert [d for d, _ in ranking] and {d for d, _ in ranking} == set(ours), q
        order = list(ours)
        for i, (d, score) in enumerate(ranking):
            assert score == pytest.approx(factor * ours[d], rel=1e-12, abs=1e-15)
            assert ours[d] == pytest.approx(ours[order[i]], rel=1e-12, abs=1e-15), (q, i)


def sample_runs() -> list[dict]:
    bm25 = {
        "q1": {"a": 12.0, "b": 9.5, "c": 7.0, "d": 7.0, "e": 1.0},
        "q2": {"x": 3.0, "y": 2.0},
    }
    dense = {
        "q1": {"c": 0.92, "a": 0.80, "f": 0.75, "b": 0.1},
        "q2": {"y": 0.9, "z": 0.5, "x": 0.4},
    }
    return [bm25, dense]


def real_runs() -> list[dict]:
    path = SHARED / "robust03" / "input.uic0301"
    if not path.is_file():
        pytest.skip(f"real runs not found under {SHARED} (set IRMETRICS_SHARED_DATA)")
    import numpy as np

    from haystack_irmetrics.io.trec import read_run

    run = read_run(path).data
    qids = sorted(run)[:8]
    first = {q: dict(sorted(run[q].items(), key=lambda kv: -kv[1])[:100]) for q in qids}
    rng = np.random.default_rng(3)
    second = {q: {d: s + float(rng.normal(0, 2.0)) for d, s in list(first[q].items())[10:90]} for q in qids}
    return [first, second]


@pytest.mark.parametrize("runs", [sample_runs, real_runs], ids=["sample", "robust03"])
def test_rrf_joiner_ranks_as_fuse_rrf_with_k_60(runs):
    runs = runs()
    parameters = joiner_parameters("rrf", params={"k": 60})
    # Haystack: 61 * sum w_i / (61 + rank0) with w_i = 1/n, i.e. 61/n times ranx's sum 1/(60 + rank1).
    assert_same_ranking(pipeline_rankings(runs, parameters), fuse(runs, "rrf").data, 61 / len(runs))


@pytest.mark.parametrize("runs", [sample_runs, real_runs], ids=["sample", "robust03"])
def test_merge_joiner_ranks_as_fuse_wsum_on_raw_scores(runs):
    runs = runs()
    weights = [0.25, 1.0]
    parameters = joiner_parameters("wsum", norm=None, weights=weights)
    assert parameters["join_mode"] == "merge"
    expected = fuse(runs, "wsum", norm=None, weights=weights).data
    # Haystack divides the weights by their sum; the weights reach the lists in the order connected.
    assert_same_ranking(pipeline_rankings(runs, parameters), expected, 1 / sum(weights))


def test_concatenate_joiner_ranks_as_fuse_max_on_raw_scores():
    runs = sample_runs()
    parameters = joiner_parameters("max", norm=None)
    assert_same_ranking(pipeline_rankings(runs, parameters), fuse(runs, "max", norm=None).data, 1.0)


def test_where_haystack_differs_the_pipeline_ranks_otherwise_and_no_joiner_is_written():
    # Haystack merges raw scores: BM25's scale swamps the dense scores, where min-max evens them out.
    runs = [{"q": {"x": 30.0, "y": 29.0, "w": 0.0}}, {"q": {"y": 0.9, "z": 0.5, "x": 0.1}}]
    raw = pipeline_rankings(runs, joiner_parameters("wsum", norm=None, weights=[0.5, 0.5]))
    assert [d for d, _ in raw["q"]][:2] == ["x", "y"]
    assert list(fuse(runs, "wsum", norm="min-max", weights=[0.5, 0.5]).data["q"])[:2] == ["y", "x"]
    with pytest.raises(FusionError, match="raw scores"):
        joiner_parameters("wsum", norm="min-max", weights=[0.5, 0.5])
    # Haystack's RRF constant is fixed at ranx's k = 60: with k = 1 a single first place beats two fifth places.
    runs = [
        {"q": {d: 6.0 - i for i, d in enumerate("abcdef")}},
        {"q": {d: 6.0 - i for i, d in enumerate("ghijef")}},
    ]
    assert next(d for d, _ in pipeline_rankings(runs, joiner_parameters("rrf"))["q"]) == "e"
    assert next(iter(fuse(runs, "rrf").data["q"])) == "e"
    assert list(fuse(runs, "rrf", rrf_k=1).data["q"])[:2] == ["a", "g"]
    with pytest.raises(FusionError, match="fixes RRF's k at 60"):
        joiner_parameters("rrf", params={"k": 10})
    for method in ("condorcet", "mnz", "bordafuse"):
        with pytest.raises(FusionError, match="no DocumentJoiner join mode"):
            joiner_parameters(method)
    with pytest.raises(FusionError, match="non-negative"):
        joiner_parameters("wsum", weights=[-1.0, 2.0])


def test_the_component_dict_is_what_a_pipeline_yaml_holds():
    found = joiner_component(joiner_parameters("rrf"))
    assert found["type"] == "haystack.components.joiners.document_joiner.DocumentJoiner"
    joiner = DocumentJoiner.from_dict(found)
    assert str(joiner.join_mode) == "reciprocal_rank_fusion"
    assert joiner.to_dict()["init_parameters"]["join_mode"] == "reciprocal_rank_fusion"
