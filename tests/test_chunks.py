"""``evaluate_chunks``: a run in pieces scores exactly as the whole run does."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics import SplitQueryError, evaluate, evaluate_chunks
from haystack_irmetrics.errors import EmptyInputError, NoOverlapError
from tests import strategies as S
from tests.test_properties import registry


def _split(results: dict, cuts: list[int]) -> list[dict]:
    items = list(results.items())
    bounds = sorted({min(c, len(items)) for c in cuts} | {0, len(items)})
    return [dict(items[a:b]) for a, b in pairwise(bounds)]


@given(S.qrels(), S.runs(), st.lists(st.integers(0, 6), max_size=4), st.sampled_from(["beir", "trec"]))
def test_any_split_into_whole_queries_gives_the_whole_runs_result(qrels, results, cuts, preset):
    ks = [1, 3, 10]
    measures = registry(ks)
    try:
        whole = evaluate(qrels, results, ks, measures=measures, preset=preset)
    except Exception as exc:  # the same typed error, whatever the split
        with pytest.raises(type(exc)):
            evaluate_chunks(qrels, _split(results, cuts), ks, measures=measures, preset=preset)
        return
    pieces = evaluate_chunks(qrels, _split(results, cuts), ks, measures=measures, preset=preset)
    assert pieces.means == whole.means
    assert pieces.raw_means == whole.raw_means
    assert pieces.n_queries == whole.n_queries
    assert dict(pieces.per_query.items()) == dict(whole.per_query.items())


def test_a_query_in_two_pieces_is_a_typed_error_naming_it():
    qrels = {"q1": {"d1": 1}}
    with pytest.raises(SplitQueryError, match="'q1'"):
        evaluate_chunks(qrels, [{"q1": {"d1": 1.0}}, {"q1": {"d2": 0.5}}], [1])


def test_pieces_sharing_no_query_with_the_qrels_raise_no_overlap():
    with pytest.raises(NoOverlapError, match="'x'"):
        evaluate_chunks({"q1": {"d1": 1}}, [{"x": {"d1": 1.0}}, {}], [1])
    with pytest.raises(EmptyInputError):
        evaluate_chunks({"q1": {"d1": 1}}, [], [1])
