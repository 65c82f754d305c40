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
