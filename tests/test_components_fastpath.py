"""The batch fast path of the document conversion equals the per-query path, input for input."""

from __future__ import annotations

import pytest
from haystack import Document
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics.components._documents import DocumentPath

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
    def _fast_batch(self, *args):
        return None


def _convert(path, gt, ret):
    try:
        out = path.convert(gt, ret)
    except Exception as exc:  # the same error either way
        return type(exc), str(exc)
    return out.query_ids, out.qrels, out.results


@pytest.mark.parametrize("field", ["id", "content"])
@pytest.mark.parametrize("rank_by", ["order", "score"])
@given(batch=batches())
def test_fast_batch_conversion_equals_the_per_query_path(field, rank_by, batch):
    gt, ret = batch
    fast = _convert(DocumentPath(document_comparison_field=field, rank_by=rank_by), gt, ret)
    slow = _convert(_PerQueryOnly(document_comparison_field=field, rank_by=rank_by), gt, ret)
    assert fast == slow
    if not isinstance(fast[0], type):  # same dicts, same insertion order
        assert [list(d) for d in fast[2].values()] == [list(d) for d in slow[2].values()]


def test_fast_batch_takes_the_common_case_and_leaves_the_rest():
    path = DocumentPath()
    plain = ([[Document(id="a", score=2)]], [[Document(id="a"), Document(id="b"), Document(id="a")]])
    assert path._fast_batch(*plain, ["0"]) == ({"0": {"a": 2}}, {"0": {"a": 2.0, "b": 1.0}})
    mixed = ([[Document(id="a", score=2), Document(id="b")]], [[Document(id="a")]])
    assert path._fast_batch(*mixed, ["0"]) is None  # the per-query path names the mixed list
    twice = ([[Document(id="a", score=1), Document(id="a", score=2)]], [[Document(id="a")]])
    assert path._fast_batch(*twice, ["0"]) is None
    assert DocumentPath(document_comparison_field="meta.x")._fast_batch(*plain, ["0"]) is None
