"""The batch fast path of the document conversion equals the per-query path, input for input."""

from __future__ import annotations

import pytest
from haystack import Document
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics.core.inputs import RankedRun
from haystack_irmetrics.integration.documents import DocumentPath

# Both paths: with the compiled scan, rank_by="order" reads the documents in C (_compiled_ranking).
pytestmark = pytest.mark.usefixtures("scan_path")

KEYS = ["a", "b", "c", "d", "e", "10", "9"]
LABELS = st.sampled_from([None, None, 0, 1, 2, 0.5, 3.0, -1])
SCORES = st.sampled_from([None, 0.0, 1.0, 1.0, 2.5, -1.0, 7])


@st.composite
def batches(draw):
    n = draw(st.integers(1, 4))
    graded = draw(st.sampled_from(["binary", "graded", "mixed"]))
    gt, ret = [], []
    for _ in range(n):
        keys = draw(st.lists(st.sampled_from(KEYS), max_size=4))
        docs = []
        for k in keys:
            label = (
                None if graded == "binary" else draw(LABELS if graded == "mixed" else st.sampled_from([0, 1, 2, 0.5]))
            )
            docs.append(Document(id=k, content=f"text {k}", score=label))
        gt.append(docs)
        ranked = draw(st.lists(st.sampled_from(KEYS), max_size=6))  # repeats = chunks
        ret.append([Document(id=k, content=f"text {k}", score=draw(SCORES)) for k in ranked])
    return gt, ret


class _PerQueryOnly(DocumentPath):
    def _compiled_batch(self, *args):
        return None

    def _compiled_ranking(self, *args):
        return None

    def _fast_keys_batch(self, *args):
        return None

    def _fast_judgments(self, *args):
        return None

    def _fast_scored(self, *args):
        return None


def _rankings(results):
    if isinstance(results, RankedRun):  # rank_by="order": the lists themselves
        return results.qids, results.ids, results.offsets.tolist(), results.positions
    return results, [list(d) for d in results.values()]  # same dicts, same insertion order


def _convert(path, gt, ret):
    try:
        out = path.convert(gt, ret)
    except Exception as exc:  # the same error either way
        return type(exc), str(exc)
    return out.query_ids, out.qrels, [list(d) for d in out.qrels.values()], _rankings(out.results)


@pytest.mark.parametrize("field", ["id", "content"])
@pytest.mark.parametrize("rank_by", ["order", "score"])
@given(batch=batches())
def test_fast_batch_conversion_equals_the_per_query_path(field, rank_by, batch):
    gt, ret = batch
    fast = _convert(DocumentPath(document_comparison_field=field, rank_by=rank_by), gt, ret)
    slow = _convert(_PerQueryOnly(document_comparison_field=field, rank_by=rank_by), gt, ret)
    assert fast == slow


def test_fast_paths_take_the_common_case_and_leave_the_rest():
    path = DocumentPath()
    gt, ret = [[Document(id="a", score=2)]], [[Document(id="a"), Document(id="b"), Document(id="a")]]
    assert path._fast_judgments(gt, ["0"]) == {"0": {"a": 2}}
    assert path._fast_keys_batch(ret) == ["a", "b", "a"]
    mixed = [[Document(id="a", score=2), Document(id="b")]]
    assert path._fast_judgments(mixed, ["0"]) is None  # the per-query path names the mixed list
    twice = [[Document(id="a", score=1), Document(id="a", score=2)]]
    assert path._fast_judgments(twice, ["0"]) is None  # the highest label wins there
    assert DocumentPath(document_comparison_field="meta.x")._fast_keys_batch(ret) is None
    assert path._fast_keys_batch([[Document(id="a"), "b"]]) is None  # not a Document: named per document
    scored = [[Document(id="a", score=1.0), Document(id="a", score=3.0)]]
    assert DocumentPath(rank_by="score")._fast_scored(scored, ["0"]) is None  # the highest score wins there


def test_order_ranking_is_the_list_with_repeated_keys_dropped():
    gt = [[Document(id="b")], [Document(id="x")]]
    ret = [[Document(id="a"), Document(id="a"), Document(id="b")], [Document(id="x")]]
    run = DocumentPath().convert(gt, ret).results
    assert isinstance(run, RankedRun)
    assert (run.qids, run.ids, run.offsets.tolist()) == (["0", "1"], ["a", "b", "x"], [0, 2, 3])
    assert run.positions == [{"a": 0, "b": 1}, {"x": 0}]


@pytest.mark.parametrize("repeat", [False, True], ids=["batch-path", "per-query-path"])
def test_rank_by_score_keeps_each_score_as_given_on_both_paths(repeat):
    # Ints beyond 2**53 tie as doubles; BEIR's MRR orders them as ints, so neither path may round them.
    from haystack_irmetrics.components import MRREvaluator

    ret = [Document(id="a", score=2**53), Document(id="b", score=2**53 + 1)]
    if repeat:  # a repeated key sends the batch to the per-query path
        ret.append(Document(id="a", score=0))
    path = DocumentPath(rank_by="score")
    assert [type(s) for s in path.convert([[Document(id="b")]], [ret]).results["0"].values()] == [int, int]
    out = MRREvaluator(k=1, rank_by="score").run(ground_truth_documents=[[Document(id="b")]], retrieved_documents=[ret])
    assert out["score"] == 1.0  # b = 2**53 + 1 ranks first, as in BEIR's sort
