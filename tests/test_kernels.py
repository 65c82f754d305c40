"""Kernel helpers against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics.core.kernels import counts_below

CUTOFFS = st.lists(st.none() | st.integers(1, 12), min_size=1, max_size=7)  # unsorted, repeated, None


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 15)), max_size=40), CUTOFFS)
def test_counts_below_counts_each_query_s_ranks_under_each_cutoff(pairs, cutoffs):
    n = 6
    owner = np.array([q for q, _ in pairs], np.int64)
    ranks = np.array([r for _, r in pairs], np.int64)
    got = counts_below(ranks, owner, n, cutoffs)
    assert got.shape == (len(cutoffs), n)
    for row, k in enumerate(cutoffs):
        expected = [sum(1 for q, r in pairs if q == i and (k is None or r < k)) for i in range(n)]
        assert got[row].tolist() == expected


FLOATS = st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0.1, 0.2, 0.3, 1e-17, 1 / 3, 2 / 3, -0.0])


@given(st.lists(st.lists(FLOATS, max_size=25), min_size=1, max_size=12))
def test_segmented_cumsum_is_python_s_sequential_sum_bit_for_bit(segments):
    # few long segments take one np.cumsum each, many short ones the vectorised steps: both exact
    from haystack_irmetrics.core.kernels import segmented_cumsum

    values = np.array([v for seg in segments for v in seg], np.float64)
    offsets = np.concatenate([[0], np.cumsum([len(seg) for seg in segments])]).astype(np.int64)
    expected = []
    for seg in segments:
        total = 0.0
        for i, v in enumerate(seg):
            total = v if i == 0 else total + v
            expected.append(total)
    got = segmented_cumsum(values, offsets)
    assert got.view(np.uint64).tolist() == np.array(expected, np.float64).view(np.uint64).tolist()  # -0.0 too


@given(st.lists(st.lists(FLOATS, max_size=25), min_size=1, max_size=12))
def test_segmented_suffix_max_is_each_segment_s_running_maximum_from_the_right(segments):
    from haystack_irmetrics.core.kernels import segmented_suffix_max

    values = np.array([v for seg in segments for v in seg], np.float64)
    offsets = np.concatenate([[0], np.cumsum([len(seg) for seg in segments])]).astype(np.int64)
    expected = [max(seg[i:]) for seg in segments for i in range(len(seg))]
    assert segmented_suffix_max(values, offsets).tolist() == expected


def test_every_binary_and_count_family_carries_its_value_function():
    from haystack_irmetrics.core.measures import FAMILIES

    for spec in FAMILIES.values():
        assert (spec.value is not None) == (spec.kernel in ("binary", "count")), spec.name
        assert not spec.needs_counts or spec.kernel == "binary", spec.name
    assert {f for f, s in FAMILIES.items() if s.averaged_levels is not None} == {"iP_avg"}


def test_a_new_binary_family_is_one_table_entry(monkeypatch):
    """ranx's hits@k (relevant documents retrieved in the top k) as a Family with its own value: no core branch."""
    from dataclasses import replace

    from haystack_irmetrics import evaluate
    from haystack_irmetrics.core.measures import FAMILIES, Family, Measure
    from haystack_irmetrics.core.presets import TREC, FamilyPolicy

    def hits(b, row, k, out):
        out[:] = b.counts[row]

    monkeypatch.setitem(FAMILIES, "Hits", Family("Hits", "binary", "pytrec", "hits@k", value=hits, needs_counts=True))
    preset = replace(TREC, families={**TREC.families, "Hits": FamilyPolicy()})
    qrels = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"d": 2}}
    run = {"q1": {"a": 0.9, "x": 0.8, "b": 0.7, "c": 0.6}, "q2": {"y": 0.5, "d": 0.4}}
    res = evaluate(qrels, run, None, measures=[Measure("Hits", k) for k in (1, 3)] + ["P@3"], preset=preset)
    assert res.per_query["Hits@1"] == {"q1": 1.0, "q2": 0.0}
    assert res.per_query["Hits@3"] == {"q1": 2.0, "q2": 1.0}
    assert res.per_query["P@3"] == {"q1": 2 / 3, "q2": 1 / 3}  # shares the counts of its relevance rule
