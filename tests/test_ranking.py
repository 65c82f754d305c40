"""The float64 bounds that stand in for float32 comparisons (``core.ranking.f32_bounds``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics.core.ranking import f32_bounds

F32_MAX = float(np.finfo(np.float32).max)


def _f32(x: float) -> np.float32:
    with np.errstate(over="ignore"):
        return np.float32(x) + np.float32(0.0)


def _neighbours(t: float) -> list[float]:
    """Doubles at and around the float32 rounding boundaries next to ``t``."""
    v = _f32(t)
    out = [t]
    for w in (np.nextafter(v, np.float32(-np.inf)), v, np.nextafter(v, np.float32(np.inf))):
        for side in (np.nextafter(w, np.float32(-np.inf)), np.nextafter(w, np.float32(np.inf))):
            mid = (float(w) + float(side)) / 2
            out += [mid, float(np.nextafter(mid, -np.inf)), float(np.nextafter(mid, np.inf)), float(w)]
    return out


def _check(t: float, candidates: list[float]) -> None:
    bounds = f32_bounds(np.array([t]))
    assert bounds is not None
    lo, up = float(bounds[0][0]), float(bounds[1][0])
    v = _f32(t)
    for s in candidates:
        assert (s >= up) == bool(_f32(s) > v), (t, s)
        assert (s >= lo) == bool(_f32(s) >= v), (t, s)


finite = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: abs(x) < F32_MAX * 0.999)


@given(finite, st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=20))
def test_bounds_agree_with_float32_comparison_for_any_double(t, others):
    _check(t, _neighbours(t) + others)


@given(st.integers(-(2**31), 2**31 - 1))
def test_bounds_agree_at_every_rounding_midpoint_of_float32(bits):
    v = np.array([bits], np.int32).view(np.float32)[0]
    if not np.isfinite(v) or abs(float(v)) >= F32_MAX:
        return
    _check(float(v), _neighbours(float(v)))


def test_bounds_fold_negative_zero_and_handle_subnormals():
    for t in (0.0, -0.0, 1e-45, -1e-45, 7e-46, -7e-46, 1.1754942e-38, 5e-324, -5e-324):
        _check(t, [*_neighbours(t), 0.0, -0.0, 5e-324, -5e-324])


def test_bounds_refuse_the_edge_of_float32_range():
    assert f32_bounds(np.array([F32_MAX])) is None
    assert f32_bounds(np.array([-1e300])) is None
    assert f32_bounds(np.array([3.3e38])) is not None
