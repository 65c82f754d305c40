"""Significance tests and intervals: against scipy on the same per-query values, brute force and hand sums."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from haystack_irmetrics.stats import (
    StatsInputError,
    bootstrap_ci,
    compare_paired,
    holm,
    paired_t_test,
    percentile_interval,
    randomization_test,
)

RNG = np.random.default_rng(20240601)
A = RNG.random(40)
B = np.clip(A - 0.05 + RNG.normal(0, 0.1, 40), 0, 1)


def brute_force_p(d: np.ndarray) -> tuple[float, float, float]:
    """(two-sided, greater, less) p of the mean difference over all 2**n sign patterns, in plain Python."""
    observed = sum(d) / len(d)
    greater = less = 0
    patterns = list(itertools.product((1.0, -1.0), repeat=len(d)))
    for signs in patterns:
        value = sum(s * x for s, x in zip(signs, d, strict=True)) / len(d)
        greater += value >= observed - 1e-12
        less += value <= observed + 1e-12
    pg, pl = greater / len(patterns), less / len(patterns)
    return min(1.0, 2 * min(pg, pl)), pg, pl


def test_paired_t_test_equals_scipy_ttest_rel_on_the_same_values():
    ours = paired_t_test(A, B)
    ref = stats.ttest_rel(A, B)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_paired_t_test_tests_every_metric_column_like_scipy_column_by_column():
    x = np.column_stack([A, A**2, np.sqrt(A)])
    y = np.column_stack([B, B**2, np.sqrt(B)])
    ours = paired_t_test(x, y)
    for j in range(3):
        assert ours.pvalue[j] == pytest.approx(stats.ttest_rel(x[:, j], y[:, j]).pvalue, rel=1e-12)


def test_paired_t_test_defines_identical_systems_as_p_one_and_constant_shift_as_p_zero():
    same = paired_t_test([0.1, 0.5, 0.9], [0.1, 0.5, 0.9])
    assert (same.statistic, same.pvalue) == (0.0, 1.0)
    shifted = paired_t_test([0.2, 0.6, 1.0], [0.1, 0.5, 0.9])  # differences equal up to rounding
    assert shifted.pvalue == 0.0 and shifted.statistic == np.inf


@pytest.mark.parametrize("seed", range(5))
def test_exact_randomization_p_value_equals_brute_force_over_all_sign_patterns(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.random(9), rng.random(9)
    b[:2] = a[:2]  # zero differences, as queries where both systems tie
    two, greater, less = brute_force_p(a - b)
    assert randomization_test(a, b).pvalue == pytest.approx(two, abs=1e-15)
    assert randomization_test(a, b, alternative="greater").pvalue == pytest.approx(greater, abs=1e-15)
    assert randomization_test(a, b, alternative="less").pvalue == pytest.approx(less, abs=1e-15)


def test_exact_randomization_equals_scipy_permutation_test_with_paired_samples():
    rng = np.random.default_rng(7)
    a, b = rng.random(10), rng.random(10)
    ref = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
    )
    ours = randomization_test(a, b, n_resamples=10_000)
    assert "exact, 1024" in ours.method
    assert ours.pvalue == pytest.approx(ref.pvalue, abs=1e-12)
    assert ours.statistic == pytest.approx(ref.statistic, abs=1e-15)


def test_sampled_randomization_is_deterministic_given_the_seed_and_close_to_scipy():
    first = randomization_test(A, B, n_resamples=20_000, seed=3)
    again = randomization_test(A, B, n_resamples=20_000, seed=3)
    other = randomization_test(A, B, n_resamples=20_000, seed=4)
    assert first.pvalue == again.pvalue
    assert first.pvalue != other.pvalue or first.pvalue < 1e-4
    ref = stats.permutation_test(
        (A, B),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=20_000,
        rng=np.random.default_rng(0),
    )
    # Both estimate the same p from 20,000 draws: within a few Monte Carlo standard errors.
    se = np.sqrt(ref.pvalue * (1 - ref.pvalue) / 20_000) + 1 / 20_000
    assert abs(first.pvalue - ref.pvalue) < 5 * se


def test_sampled_randomization_p_value_is_never_zero():
    a = np.linspace(0.5, 1.0, 200)
    p = randomization_test(a, a - 0.3, n_resamples=999).pvalue
    assert p == 2 / 1000  # (0 hits + 1) / (999 + 1), two-sided doubling


def test_percentile_bootstrap_interval_matches_scipy_bootstrap_within_monte_carlo_error():
    d = A - B
    ours = bootstrap_ci(A, B, n_resamples=20_000, seed=11)
    ref = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=20_000, rng=np.random.default_rng(5))
    assert ours[0] == pytest.approx(ref.confidence_interval.low, abs=0.004)
    assert ours[1] == pytest.approx(ref.confidence_interval.high, abs=0.004)
    assert bootstrap_ci(A, B, n_resamples=20_000, seed=11) == ours


def test_bootstrap_columns_share_resamples_and_each_equals_its_own_1d_interval():
    x = np.column_stack([A, B])
    low, high = bootstrap_ci(x, n_resamples=3000, seed=2)
    for j, col in enumerate((A, B)):
        assert (low[j], high[j]) == pytest.approx(bootstrap_ci(col, n_resamples=3000, seed=2), abs=1e-12)


def test_bootstrap_of_a_constant_column_is_that_constant():
    assert bootstrap_ci([0.25] * 5, n_resamples=100) == (0.25, 0.25)


def test_holm_adjustment_equals_hand_computation():
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.02, 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]).tolist() == [1.0, 1.0]  # 0.5*2 capped at 1, then the running max
    assert holm([]).tolist() == []


def test_compare_paired_applies_holm_within_each_family_only():
    a = {("s", "full", "m1"): A, ("s", "full", "m2"): A, ("s", "cond", "m1"): A}
    b = {k: B for k in a}
    fams = {k: k[:2] for k in a}
    out = {c.metric: c for c in compare_paired(a, b, families=fams, n_resamples=500)}
    single = out[("s", "cond", "m1")]
    assert single.p_randomization_holm == single.p_randomization  # a family of one
    pair = out[("s", "full", "m1")]
    assert pair.p_t_holm == pytest.approx(min(1.0, 2 * pair.p_t))
    assert pair.delta == pytest.approx(float(np.mean(A - B)))


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([0.1, 0.2], [0.1], "same queries"),
        ([0.1], [0.2], "at least 2"),
        ([0.1, float("nan")], [0.1, 0.2], "NaN"),
    ],
)
def test_untestable_inputs_raise_a_typed_error(a, b, message):
    with pytest.raises(StatsInputError, match=message):
        randomization_test(a, b)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: paired_t_test([], []), "at least 2 queries"),
        (lambda: randomization_test([], []), "at least 2 queries"),
        (lambda: paired_t_test(["0.5", "0.7"], ["0.1", "0.2"]), "must be real numbers"),
        (lambda: bootstrap_ci(A, B, seed="x"), "seed must be"),
        (lambda: randomization_test(A, B, seed=-1), "seed must be"),
        (lambda: bootstrap_ci(A, B, seed=1.5), "seed must be"),
        (lambda: bootstrap_ci(A, B, confidence="0.9"), "confidence must be"),
        (lambda: bootstrap_ci(A, B, confidence=float("nan")), "confidence must be"),
        (lambda: bootstrap_ci(A, B, n_resamples=2**63), "at most 100,000,000"),
        (lambda: randomization_test(A, B, n_resamples=10**15), "at most 100,000,000"),
        (lambda: compare_paired({"x": A, "y": B}, {"x": B, "y": A}, families={"x": 1}), "no family for metrics"),
        (lambda: compare_paired({"x": A, "y": B[:3]}, {"x": B, "y": A[:3]}), "one value per query"),
    ],
)
def test_values_and_parameters_that_cannot_be_tested_are_stats_input_errors(call, message):
    with pytest.raises(StatsInputError, match=message):
        call()


def test_a_generator_or_none_is_a_seed():
    assert randomization_test(A, B, seed=np.random.default_rng(3)).pvalue == randomization_test(A, B, seed=3).pvalue
    assert 0 <= randomization_test(A, B, seed=None).pvalue <= 1


def test_differences_of_rounding_size_are_no_difference_for_every_test():
    # 0.1 + 0.2 is 0.30000000000000004: the same system, scored by two summation orders.
    a = [0.3, 0.5, 0.7] + [0.3] * 7
    b = [0.1 + 0.2, 0.5, 0.7] + [0.1 + 0.2] * 7
    assert paired_t_test(a, b).pvalue == 1.0 and paired_t_test(a, b).statistic == 0.0
    assert randomization_test(a, b).pvalue == 1.0 and randomization_test(a, b).statistic == 0.0
    assert bootstrap_ci(a, b, n_resamples=200) == (0.0, 0.0)
    (c,) = compare_paired({"NDCG@10": a}, {"NDCG@10": b})
    assert (c.delta, c.p_t, c.p_randomization, c.marker(), c.marker("t")) == (0.0, 1.0, 1.0, "", "")
    # Real differences beside rounding-size ones are tested as scipy tests them.
    a2, b2 = [*a, 0.9, 0.8], [*b, 0.4, 0.1]
    assert paired_t_test(a2, b2).pvalue == stats.ttest_rel(a2, b2).pvalue


def test_tiny_values_are_tested_relative_to_their_size_not_to_one():
    a, b = [2e-12, 2.5e-12, 1e-12], [0.0, 0.0, 0.0]
    ours, ref = paired_t_test(a, b), stats.ttest_rel(a, b)
    assert (ours.statistic, ours.pvalue) == (ref.statistic, ref.pvalue)
    assert 0.05 < ours.pvalue < 1
    # A constant difference, relative to its size, is still p = 0.
    assert paired_t_test([1e-12 * 3, 1e-12 * 3], [1e-12, 1e-12]).pvalue == 0.0


def test_paired_t_test_of_differences_alone_is_scipy_ttest_1samp():
    d = A - B
    ours, ref = paired_t_test(d), stats.ttest_1samp(d, 0.0)
    assert (ours.statistic, ours.pvalue) == (ref.statistic, ref.pvalue)


def test_percentile_interval_takes_one_column_or_many_and_refuses_what_it_cannot_read():
    means = RNG.random(1000)
    low, high = percentile_interval(means)
    alpha = (1 - 0.95) / 2
    ref = np.quantile(means.reshape(-1, 1), [alpha, 1 - alpha], axis=0)[:, 0].tolist()
    assert isinstance(low, float) and [low, high] == ref
    low2, high2 = percentile_interval(list(means.reshape(-1, 1)))
    assert low2.tolist() == [low] and high2.tolist() == [high]
    for bad, message in [(np.empty((0, 2)), "shape"), ([[0.1, np.nan]], "NaN"), ("abc", "real numbers")]:
        with pytest.raises(StatsInputError, match=message):
            percentile_interval(bad)


def test_values_beyond_1e100_are_refused_instead_of_overflowing():
    huge = [1.5e308, 1.6e308, 1.7e308]
    for call in (paired_t_test, randomization_test, bootstrap_ci):
        with pytest.raises(StatsInputError, match=r"within \+-1e\+100"):
            call(huge, [0.0, 0.0, 0.0])


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: holm({"NDCG": 0.01}), "p-values must be real numbers"),
        (lambda: holm(["0.01"]), "p-values must be real numbers"),
        (lambda: holm([True, False]), "p-values must be real numbers"),
        (lambda: compare_paired([0.1, 0.2], [0.2, 0.1]), "the first is list"),
        (lambda: compare_paired({"x": [1, 2]}, {"x": [1, 3]}, families={"x": ["f"]}), r"families\['x'\] must be"),
        (lambda: compare_paired({"x": [1, 2]}, {"x": [1, 3]}, families=["x"]), "families must map"),
    ],
)
def test_malformed_families_pvalues_and_systems_are_stats_input_errors(call, message):
    with pytest.raises(StatsInputError, match=message):
        call()


def test_labelled_values_in_different_orders_are_refused_not_paired_by_position():
    pd = pytest.importorskip("pandas")
    a = pd.Series([0.9, 0.1, 0.5], index=["q1", "q2", "q3"])
    b = pd.Series([0.1, 0.8, 0.4], index=["q2", "q1", "q3"])
    with pytest.raises(StatsInputError, match="reindex"):
        paired_t_test(a, b)
    aligned = b.reindex(a.index)
    assert paired_t_test(a, aligned).pvalue == stats.ttest_rel(a.to_numpy(), aligned.to_numpy()).pvalue


def test_rounding_is_judged_per_query_so_a_large_value_elsewhere_keeps_small_real_differences():
    rng = np.random.default_rng(5)
    a = np.r_[rng.random(20), 1e6]
    b = a - np.r_[rng.uniform(3e-7, 7e-7, 20), 0.0]
    ours, ref = paired_t_test(a, b), stats.ttest_rel(a, b)
    assert (ours.statistic, ours.pvalue) == (ref.statistic, ref.pvalue) and ours.pvalue < 1e-6
    assert randomization_test(a, b, n_resamples=2000).pvalue < 0.01
    low, high = bootstrap_ci(a, b, n_resamples=500)
    assert 0 < low < high


def test_bootstrap_intervals_of_tiny_values_are_not_collapsed():
    a = np.array([1e-13, 3e-13, 2e-13, 5e-13, 4e-13, 1e-13])
    low, high = bootstrap_ci(a, n_resamples=2000, seed=1)
    scaled = bootstrap_ci(a * 1e13, n_resamples=2000, seed=1)
    assert low < high and (low * 1e13, high * 1e13) == pytest.approx(scaled, rel=1e-12)


def test_compare_paired_refuses_labelled_values_in_different_orders():
    pd = pytest.importorskip("pandas")
    a = {"NDCG@10": pd.Series([0.9, 0.1, 0.5], index=["q1", "q2", "q3"])}
    b = {"NDCG@10": pd.Series([0.1, 0.8, 0.4], index=["q2", "q1", "q3"])}
    with pytest.raises(StatsInputError, match="row labels"):
        compare_paired(a, b)
    frame_a = pd.DataFrame({"NDCG": [0.9, 0.1, 0.5], "P": [0.3, 0.1, 0.2]})
    with pytest.raises(StatsInputError, match="column labels"):
        paired_t_test(frame_a, frame_a[["P", "NDCG"]])


def test_a_bootstrap_that_would_not_fit_in_memory_is_refused_before_allocating():
    with pytest.raises(StatsInputError, match="fewer resamples or columns"):
        bootstrap_ci(RNG.random((50, 36)), n_resamples=100_000_000)
    with pytest.raises(StatsInputError, match=r"within \+-1e\+100"):
        percentile_interval([1e308, -1e308])


def test_arrow_tables_and_labels_with_a_missing_value_pair_as_they_are():
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    ta = pa.table({"x": [0.1, 0.2, 0.5, 0.4], "y": [0.3, 0.6, 0.9, 0.5]})
    tb = pa.table({"x": [0.2, 0.1, 0.55, 0.4], "y": [0.35, 0.55, 0.85, 0.5]})
    ref = stats.ttest_rel(np.asarray(ta), np.asarray(tb))
    assert paired_t_test(ta, tb).pvalue.tolist() == ref.pvalue.tolist()
    index = pd.Index(["q1", None, "q3"])
    a, b = pd.Series([1.0, 2.0, 3.5], index=index), pd.Series([1.1, 2.0, 3.0], index=index)
    assert paired_t_test(a, b).pvalue == stats.ttest_rel(a.to_numpy(), b.to_numpy()).pvalue
    assert compare_paired({"m": a}, {"m": b}, n_resamples=50)[0].p_t == paired_t_test(a, b).pvalue


def test_a_bootstrap_too_large_is_refused_before_any_test_runs_and_no_columns_give_empty_intervals():
    a = {f"m{i}": RNG.random(100) for i in range(36)}
    with pytest.raises(StatsInputError, match="fewer resamples or columns"):
        compare_paired(a, a, n_resamples=8_000_000)
    low, high = percentile_interval(np.empty((10, 0)))
    assert low.shape == high.shape == (0,)


def test_holm_adjust_corrects_over_comparisons_made_in_separate_calls_as_one_family():
    from haystack_irmetrics.stats import holm_adjust

    first = compare_paired({"NDCG@10": A[:20], "P@10": B[:20]}, {"NDCG@10": B[:20], "P@10": A[:20]}, n_resamples=500)
    second = compare_paired({"NDCG@10": A[20:], "P@10": A[20:]}, {"NDCG@10": B[20:], "P@10": B[:20]}, n_resamples=500)
    together = holm_adjust(first + second)
    raw_t = [c.p_t for c in first + second]
    raw_r = [c.p_randomization for c in first + second]
    assert [c.p_t_holm for c in together] == holm(raw_t).tolist()
    assert [c.p_randomization_holm for c in together] == holm(raw_r).tolist()
    # Everything else is kept; four tests correct more than each call's two did.
    assert [(c.metric, c.p_t, c.delta, c.ci_low) for c in together] == [
        (c.metric, c.p_t, c.delta, c.ci_low) for c in first + second
    ]
    assert all(t.p_t_holm >= c.p_t_holm for t, c in zip(together, first + second))
    assert holm_adjust([]) == []
    with pytest.raises(StatsInputError, match="Comparison objects"):
        holm_adjust([0.01, 0.02])


def test_compare_with_baseline_is_compare_paired_per_system_with_holm_over_the_scope_asked():
    from haystack_irmetrics.stats import compare_with_baseline

    rng = np.random.default_rng(4)
    values = {s: {m: rng.random(12).tolist() for m in ("P@10", "NDCG@10")} for s in ("base", "x", "y")}
    alone = {s: compare_paired(values[s], values["base"], n_resamples=300, seed=1) for s in ("x", "y")}
    every = compare_with_baseline(values, "base", n_resamples=300, seed=1)
    assert list(every.comparisons) == ["x", "y"] and every.tests == 4 and every.untested == {}
    flat = [c for s in ("x", "y") for c in alone[s]]
    got = [every.comparisons[s][c.metric] for s in ("x", "y") for c in alone[s]]
    assert [(c.delta, c.ci_low, c.p_t) for c in got] == [(c.delta, c.ci_low, c.p_t) for c in flat]
    assert [c.p_t_holm for c in got] == holm([c.p_t for c in flat]).tolist()  # runs × measures
    per_system = compare_with_baseline(values, "base", holm_scope="system", n_resamples=300, seed=1)
    assert [c.p_randomization_holm for c in per_system.comparisons["x"].values()] == [
        c.p_randomization_holm for c in alone["x"]
    ]
    # {qid: value} pairs over the union of queries, a missing one taking the fill value; one query: untested
    sparse = {"base": {"m": {"q1": 0.5, "q2": 1.0}, "n": {"q1": 1.0}}, "x": {"m": {"q2": 0.5, "q3": 1.0}, "n": {}}}
    out = compare_with_baseline(sparse, "base", fill={"m": 0.25, "n": 0.0}, n_resamples=100)
    assert out.comparisons["x"]["m"].mean_a == pytest.approx((0.25 + 0.5 + 1.0) / 3)
    assert out.untested == {"x": [("n",)]}
    with pytest.raises(StatsInputError, match="holm_scope must be one of"):
        compare_with_baseline(values, "base", holm_scope="everything")
    with pytest.raises(StatsInputError, match="the baseline 'z' is not one of the systems"):
        compare_with_baseline(values, "z")
