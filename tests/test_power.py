"""How many queries a comparison needs (``haystack_irmetrics.stats.power``, ``irmetrics power``, the line under
``irmetrics compare``'s table): Sakai's topic set size design (T. Sakai, "Topic set size design", Information
Retrieval Journal 19(3): 256-283, 2016), checked against statsmodels' power solvers (``TTestPower``,
``FTestAnovaPower``), against the one-way ANOVA's residual mean square of statsmodels' ``anova_lm``, and
against the starting formula of Sakai's t-test design (Nagata's normal approximation,
n = ((z(alpha/2) - z(1 - beta)) / minDt)^2 + z(alpha/2)^2 / 2). The paper's own tables were not at hand:
its usual settings (alpha 0.05, beta 0.20 and stricter; minimum detectable differences 0.02 to 0.10) are
computed here with statsmodels, independently of the code under test."""

from __future__ import annotations

import json
import math
import shutil
from itertools import pairwise

import numpy as np
import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main
from haystack_irmetrics.io import read_qrels, read_run
from haystack_irmetrics.stats.power import (
    StatsInputError,
    min_detectable_delta,
    power_at,
    queries_needed,
    topic_set_size,
)

from .conftest import ROOT

pytest.importorskip("scipy")
statsmodels_power = pytest.importorskip("statsmodels.stats.power")
TT = statsmodels_power.TTestPower()
FA = statsmodels_power.FTestAnovaPower()
DATA = ROOT / "examples" / "data"
QRELS = DATA / "half_qrels.tsv"
KEYS = ["queries_needed", "queries_now", "min_detectable_delta", "variance", "design"]
#: What judging costs, after the design (tests/test_power_judgments.py checks its values).
JUDGMENT_KEYS = ["depth", "mean_pool_size", "judgments_needed", "judgments_now"]


def _cohens_f(delta: float, variance: float, systems: int) -> float:
    """statsmodels' effect size of Sakai's least favourable ANOVA case (two runs delta apart, the others at the
    mean): f^2 = sum((mu_i - mu)^2) / (m sigma^2) = delta^2 / (2 m sigma^2), so that f^2 * (m n) = n Delta."""
    return delta / math.sqrt(2 * systems * variance)


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
@pytest.mark.parametrize("effect", [0.15, 0.3, 0.5, 0.8, 1.3])
def test_the_paired_t_design_is_statsmodels_ttestpower(alpha, effect):
    variance = 0.03
    delta = effect * math.sqrt(variance)
    for n in (2, 3, 10, 41, 500):
        expected = TT.power(effect_size=effect, nobs=n, alpha=alpha)
        if math.isnan(expected):  # scipy's NaN for a far tail below any float: the upper tail is the power
            expected = TT.power(effect_size=effect, nobs=n, alpha=alpha / 2, alternative="larger")
        assert power_at(n, delta, variance, alpha=alpha) == pytest.approx(expected, abs=1e-12)
    for power in (0.7, 0.8, 0.9):
        n = queries_needed(delta, variance, alpha=alpha, power=power)
        solved = TT.solve_power(effect_size=effect, alpha=alpha, power=power)
        assert n == max(2, math.ceil(solved - 1e-9)), (n, solved)
        assert TT.power(effect_size=effect, nobs=n, alpha=alpha) >= power
        assert n == 2 or TT.power(effect_size=effect, nobs=n - 1, alpha=alpha) < power
    for n in (5, 40, 300):
        found = min_detectable_delta(n, variance, alpha=alpha, power=0.8)
        expected = TT.solve_power(nobs=n, alpha=alpha, power=0.8) * math.sqrt(variance)
        assert found == pytest.approx(expected, rel=1e-5)
        assert TT.power(effect_size=found / math.sqrt(variance), nobs=n, alpha=alpha) == pytest.approx(0.8, abs=1e-9)


@pytest.mark.parametrize("systems", [3, 5, 12])
@pytest.mark.parametrize("alpha", [0.01, 0.05])
def test_the_anova_design_is_statsmodels_ftestanovapower(systems, alpha):
    variance = 0.05
    for delta in (0.05, 0.1, 0.2):
        f = _cohens_f(delta, variance, systems)
        for n in (2, 7, 60):
            expected = FA.power(effect_size=f, nobs=systems * n, alpha=alpha, k_groups=systems)
            assert power_at(n, delta, variance, design="anova", systems=systems, alpha=alpha) == pytest.approx(
                expected, abs=1e-12
            )
        n = queries_needed(delta, variance, design="anova", systems=systems, alpha=alpha, power=0.8)
        total = FA.solve_power(effect_size=f, alpha=alpha, power=0.8, k_groups=systems)
        assert n == max(2, math.ceil(total / systems - 1e-9)), (n, total / systems)
    for n in (10, 50):
        found = min_detectable_delta(n, variance, design="anova", systems=systems, alpha=alpha)
        f = FA.solve_power(nobs=systems * n, alpha=alpha, power=0.8, k_groups=systems)
        assert found == pytest.approx(f * math.sqrt(2 * systems * variance), rel=1e-5)


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
@pytest.mark.parametrize("power", [0.7, 0.8, 0.9, 0.95])
def test_sakais_starting_formula_is_met_to_within_a_query(alpha, power):
    """Sakai (2016), section 4, starts the t-test design from Nagata's normal approximation
    n = ((z_{alpha/2} - z_{1-beta}) / minDt)^2 + z_{alpha/2}^2 / 2 (z_P the upper 100P% point), then corrects
    it with the noncentral t; the exact answer is within one query of it."""
    from scipy.stats import norm

    for effect in (0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5):
        z = norm.isf(alpha / 2)
        start = ((z - norm.isf(power)) / effect) ** 2 + z * z / 2
        assert abs(queries_needed(effect, 1.0, alpha=alpha, power=power) - math.ceil(start)) <= 1


@pytest.mark.parametrize(
    ("alpha", "power", "delta", "variance"),
    [(0.05, 0.8, 0.10, 0.0479), (0.05, 0.8, 0.05, 0.0479), (0.05, 0.8, 0.02, 0.0479), (0.01, 0.9, 0.05, 0.0331)],
)
def test_sakais_usual_settings_computed_with_statsmodels(alpha, power, delta, variance):
    """Sakai's usual requirements (alpha 0.05, beta 0.20; minD 0.02 to 0.10) and within-system variances of the
    order he reports for nDCG-like measures (here sigma_t^2 = 2 sigma^2, his estimate before the pair is known):
    the number of topics each design needs, as statsmodels solves it."""
    sigma_t2 = 2 * variance
    solved = TT.solve_power(effect_size=delta / math.sqrt(sigma_t2), alpha=alpha, power=power)
    assert queries_needed(delta, sigma_t2, alpha=alpha, power=power) == math.ceil(solved)
    for m in (3, 10):
        total = FA.solve_power(effect_size=_cohens_f(delta, variance, m), alpha=alpha, power=power, k_groups=m)
        assert queries_needed(delta, variance, design="anova", systems=m, alpha=alpha, power=power) == math.ceil(
            total / m
        )


def test_topic_set_size_reads_the_variances_the_designs_need():
    pd = pytest.importorskip("pandas")
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    rng = np.random.default_rng(7)
    base = rng.uniform(0, 1, 30)
    runs = {name: {f"q{i}": float(np.clip(v + rng.normal(0, 0.1), 0, 1)) for i, v in enumerate(base)} for name in "abc"}
    pair = topic_set_size({"a": runs["a"], "b": runs["b"]}, delta=0.05)
    diff = np.array([runs["a"][f"q{i}"] - runs["b"][f"q{i}"] for i in range(30)])
    assert (pair.design, pair.queries_now) == ("paired-t", 30)
    assert pair.variance == pytest.approx(diff.var(ddof=1), rel=1e-12)
    assert pair.observed == pytest.approx(abs(diff.mean()), rel=1e-12)
    assert pair.queries_needed == queries_needed(0.05, pair.variance)
    assert pair.min_detectable_delta == min_detectable_delta(30, pair.variance)
    three = topic_set_size(runs, delta=0.1, alpha=0.01, power=0.9)
    frame = pd.DataFrame([(name, runs[name][f"q{i}"]) for name in "abc" for i in range(30)], columns=["run", "score"])
    residual = anova_lm(ols("score ~ C(run)", data=frame).fit()).loc["Residual", "mean_sq"]
    assert three.design == "anova" and three.variance == pytest.approx(residual, rel=1e-10)
    assert three.queries_needed == queries_needed(0.1, residual, design="anova", systems=3, alpha=0.01, power=0.9)
    assert list(three.to_dict()) == KEYS


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: queries_needed(0.1, 0.04, alpha=0), "alpha must be a number in"),
        (lambda: queries_needed(0.1, 0.04, alpha=0.05, power=0.05), "power must be a number in"),
        (lambda: queries_needed(-0.1, 0.04), "delta must be a finite number"),
        (lambda: queries_needed(0.1, math.nan), "variance must be a finite number"),
        (lambda: queries_needed(1e-6, 1.0), "more than 10,000,000 queries"),
        (lambda: min_detectable_delta(1, 0.04), "n must be a whole number >= 2"),
        (lambda: queries_needed(0.1, 0.04, systems=3), "the paired t-test compares two systems"),
        (lambda: topic_set_size({"a": {"q": 1.0}, "b": {"q": 0.5}}), "the runs are scored on 1 query in all"),
        (lambda: topic_set_size({"a": {"q": 1.0, "r": 0.5}, "b": {"q": 0.5, "r": 0.0}}), "do not vary"),
        (lambda: topic_set_size({"a": {"q": 1.0, "r": 0.0}, "b": {"q": 0.0, "r": 1.0}}), "means do not differ"),
    ],
)
def test_bad_settings_are_named(call, message):
    with pytest.raises(StatsInputError, match=message):
        call()


def test_power_at_a_large_effect_with_few_queries_is_a_number():
    """scipy's noncentral t answers NaN for the far tail at df 3, noncentrality 8: that tail is 0, not NaN."""
    assert math.isnan(TT.power(effect_size=4.0, nobs=4, alpha=0.05))  # statsmodels inherits it
    upper = TT.power(effect_size=4.0, nobs=4, alpha=0.025, alternative="larger")
    assert power_at(4, 4.0, 1.0) == pytest.approx(upper, abs=1e-15)


@pytest.fixture
def runs(tmp_path):
    for name in ("good", "poor"):
        shutil.copy(DATA / f"{name}.trec", tmp_path / f"{name}.trec")
    fused = tmp_path / "mixed.trec"  # a third run: good's rankings for half the queries, poor's for the rest
    good, poor = read_run(DATA / "good.trec").data, read_run(DATA / "poor.trec").data
    with open(fused, "w") as f:
        for i, q in enumerate(sorted(good)):
            for rank, (d, s) in enumerate(sorted((good if i % 2 else poor)[q].items(), key=lambda x: -x[1])):
                f.write(f"{q} Q0 {d} {rank + 1} {s} mixed\n")
    return tmp_path / "good.trec", tmp_path / "poor.trec", fused


def _per_query(path, measure="NDCG@10"):
    return dict(evaluate(read_qrels(QRELS), read_run(path), None, measures=[measure]).per_query[measure].items())


def test_cli_two_runs_is_the_paired_design_of_their_per_query_values(runs, capsys):
    good, poor, _ = runs
    argv = ["power", f"g={good}", str(poor), "--qrels", str(QRELS), "-m", "NDCG@10", "--delta", "0.05"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == KEYS + JUDGMENT_KEYS
    expected = topic_set_size({"g": _per_query(good), "poor": _per_query(poor)}, delta=0.05).to_dict()
    assert {k: out[k] for k in KEYS} == expected and out["design"] == "paired-t" and out["queries_now"] == 12
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "paired t-test design: NDCG@10 of g and poor over 12 queries (alpha 0.05, power 0.8)"
    assert lines[2] == f"queries needed to detect a difference of 0.05: {expected['queries_needed']}"
    assert lines[3].endswith(f"there are: {expected['min_detectable_delta']:.4f}")


def test_cli_three_runs_is_the_anova_design(runs, capsys):
    argv = ["power", *map(str, runs), "--qrels", str(QRELS), "-m", "NDCG@10", "--json", "--alpha", "0.01"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    values = {p.stem: _per_query(p) for p in runs}
    expected = topic_set_size(values, alpha=0.01).to_dict()  # delta: the observed range of the means
    assert {k: out[k] for k in KEYS} == expected and out["design"] == "anova"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--alpha", "1.5"], "alpha must be a number in (0, 1)"),
        (["--power", "0.01"], "power must be a number in (0.05, 1)"),
        (["--delta", "-1"], "delta must be a finite number > 0"),
        (["-m", "NDCG@10,P@5"], "-m takes one measure"),
    ],
)
def test_cli_bad_settings_exit_2_with_one_line(runs, capsys, extra, message):
    good, poor, _ = runs
    argv = ["power", str(good), str(poor), "--qrels", str(QRELS), "-m", "NDCG@10", *extra]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("irmetrics: error: ") and message in line


def test_cli_one_run_or_two_alike_exit_2(runs, capsys):
    good, _, _ = runs
    assert main(["power", str(good), "--qrels", str(QRELS), "-m", "NDCG@10"]) == 2
    assert "two runs or more" in capsys.readouterr().err
    assert main(["power", f"a={good}", f"b={good}", "--qrels", str(QRELS), "-m", "NDCG@10"]) == 2
    assert "do not vary" in capsys.readouterr().err


def test_compare_prints_the_smallest_detectable_difference_under_its_table(runs, capsys):
    good, poor, _ = runs
    argv = ["compare", str(good), str(poor), "--qrels", str(QRELS), "-k", "3,10", "-m", "NDCG", "--n-resamples", "500"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    table, line, _ = text.split("\n\n", 2)
    a, b = _per_query(good, "NDCG@10"), _per_query(poor, "NDCG@10")
    diff = np.array([b[q] - a[q] for q in sorted(a)])
    mdd = TT.solve_power(nobs=len(diff), alpha=0.05, power=0.8) * diff.std(ddof=1)
    assert line.startswith("Smallest paired Δ detectable (paired t-test at α 0.05, power 0.8")
    assert f"NDCG@10 {mdd:.4f}" in line and table.count("\n") == 3
    assert main([*argv, "--format", "json"]) == 0
    paired = json.loads(capsys.readouterr().out)["metrics"]["NDCG@10"]["paired"]
    assert paired["min_detectable_delta"] == pytest.approx(mdd, rel=1e-5)
    assert main([*argv, "--no-stats"]) == 0  # no tests: no line
    assert "Smallest" not in capsys.readouterr().out


def _t_power_integrated(n: int, effect: float, alpha: float) -> float:
    """The paired t-test's power integrated over the variance's chi-square, independently of scipy's noncentral
    t: P(|T'| >= c) = E_V[Phi(nc - c sqrt(V/df)) + Phi(-nc - c sqrt(V/df))], V ~ chi2(df)."""
    from scipy import integrate, stats

    df, nc = n - 1, math.sqrt(n) * effect
    c = stats.t.isf(alpha / 2, df)

    def f(v):
        s = c * math.sqrt(v / df)
        return (stats.norm.sf(s - nc) + stats.norm.cdf(-nc - s)) * stats.chi2.pdf(v, df)

    centre = df * (nc / c) ** 2  # where c sqrt(V/df) crosses nc: the integrand's step
    edges = sorted({0.0, *(centre * r for r in (0.5, 0.9, 0.99, 1.0, 1.01, 1.1, 2.0)), stats.chi2.isf(1e-18, df)})
    return sum(integrate.quad(f, lo, hi, limit=500, epsabs=1e-15, epsrel=1e-13)[0] for lo, hi in pairwise(edges))


@pytest.mark.parametrize(("n", "alpha"), [(3, 1e-6), (12, 1e-12), (12, 1e-30), (40, 1e-60), (2, 0.05)])
def test_the_power_at_small_alphas_is_the_integral_and_the_smallest_difference_reaches_it(n, alpha):
    """scipy's noncentral t drifts past a noncentrality of 3000 (0.63 for a power of 0.8 at 3 queries and alpha
    1e-12, once): the power is used up to there only, checked against the integral."""
    found = min_detectable_delta(n, 1.0, alpha=alpha)
    assert math.sqrt(n) * found <= 3000
    assert _t_power_integrated(n, found, alpha) == pytest.approx(0.8, abs=1e-9)
    for effect in (found / 2, found * 1.5):
        assert power_at(n, effect, 1.0, alpha=alpha) == pytest.approx(_t_power_integrated(n, effect, alpha), abs=1e-9)


def test_past_the_exact_range_the_power_is_refused_or_one():
    effect = 2990 / math.sqrt(12)  # a noncentrality just inside the range: computed
    assert power_at(12, effect, 1.0, alpha=1e-100) == pytest.approx(_t_power_integrated(12, effect, 1e-100), abs=1e-9)
    with pytest.raises(StatsInputError, match=r"noncentrality of 3030, past 3000, .*give a larger alpha"):
        power_at(12, 3030 / math.sqrt(12), 1.0, alpha=1e-100)
    with pytest.raises(StatsInputError, match=r"past 3000"):  # scipy's answer there: 577364, whose power is 0.63
        min_detectable_delta(3, 1.0, alpha=1e-12)
    with pytest.raises(StatsInputError, match=r"alpha 1e-300 is too small: the test's critical value at 12 queries"):
        power_at(12, 0.5, 1.0, alpha=1e-300)  # scipy's t.isf answers -inf there
    with pytest.raises(StatsInputError, match=r"alpha 1e-100 is too small"):
        power_at(12, 0.5, 1.0, design="anova", systems=3, alpha=1e-100)  # scipy's f.isf answers inf there
    # Far past the range the power is 1 to double precision (a lower bound says so), where scipy answers NaN.
    assert power_at(2, 1e10, 1.0) == 1.0 and power_at(2, 1e300, 1e-300) == 1.0
    assert power_at(2, 1e10, 1.0, design="anova", systems=3) == 1.0
    assert queries_needed(1e10, 0.01) == 2 and queries_needed(1e10, 0.01, design="anova", systems=5) == 2


def test_a_query_a_run_lacks_counts_at_the_fill_value_in_that_run():
    a = {"q1": 0.5, "q2": 0.75, "q3": 0.25, "q4": 0.5}
    b = {"q2": 0.5, "q3": 0.0, "q4": 0.25, "q5": 0.5}  # lacks q1, has q5
    for fill in (0.0, 0.125):
        diff = np.array([0.5 - fill, 0.25, 0.25, 0.25, fill - 0.5])
        pair = topic_set_size({"a": a, "b": b}, delta=0.1, fill=fill)
        assert pair.queries_now == 5 and pair.variance == pytest.approx(diff.var(ddof=1), rel=1e-12)
    assert topic_set_size({"a": a, "b": b}, delta=0.1).variance == pytest.approx(
        np.var([0.5, 0.25, 0.25, 0.25, -0.5], ddof=1), rel=1e-12
    )


@pytest.mark.parametrize(("measure", "fill", "log"), [("NDCG@10", 0.0, False), ("GMAP", 1e-5, True)])
def test_power_and_compare_pair_a_query_one_run_lacks_alike(runs, tmp_path, capsys, measure, fill, log):
    """A query one run did not answer scores the measure's missing value in it (trec_eval -c's 0, GMAP's 1e-5,
    on the log scale as compare tests GMAP): power pairs the 12 queries compare pairs, not the 11 both answer."""
    good, poor, _ = runs
    first = poor.read_text().split()[0]
    lacking = tmp_path / "poor11.trec"
    lacking.write_text("".join(line for line in poor.read_text().splitlines(True) if line.split()[0] != first))
    a, b = _per_query(good, measure), _per_query(lacking, measure)
    assert first in a and first not in b and len(a) == 12
    scale = np.log if log else np.asarray
    diff = scale([b.get(q, fill) for q in sorted(a)]) - scale([a[q] for q in sorted(a)])
    mdd = TT.solve_power(nobs=12, alpha=0.05, power=0.8) * diff.std(ddof=1)
    assert main(["power", str(good), str(lacking), "--qrels", str(QRELS), "-m", measure, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["queries_now"] == 12 and out["min_detectable_delta"] == pytest.approx(mdd, rel=1e-5)
    assert out["variance"] == pytest.approx(diff.var(ddof=1), rel=1e-12)
    compare = ["compare", str(good), str(lacking), "--qrels", str(QRELS), "-m", measure.split("@")[0], "-k", "10"]
    assert main([*compare, "--format", "json", "--n-resamples", "200"]) == 0
    paired = json.loads(capsys.readouterr().out)["metrics"][measure]["paired"]
    assert paired["min_detectable_delta"] == out["min_detectable_delta"]
    assert main(["power", str(good), str(lacking), "--qrels", str(QRELS), "-m", measure]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert " over 12 queries " in lines[0] and ("on the log scale" in lines[0]) == log
    assert lines[3].endswith(f"with the 12 queries there are: {mdd:.4f}")


def test_cli_a_huge_difference_needs_two_queries_and_a_tiny_alpha_is_one_line(runs, capsys):
    good, poor, mixed = runs
    for listed in ([good, poor], [good, poor, mixed]):
        argv = ["power", *map(str, listed), "--qrels", str(QRELS), "-m", "NDCG@10"]
        assert main([*argv, "--delta", "1e10", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["queries_needed"] == 2
        assert main([*argv, "--alpha", "1e-300"]) == 2
        captured = capsys.readouterr()
        (line,) = captured.err.splitlines()
        assert line.startswith("irmetrics: error: alpha 1e-300 is too small") and not captured.out
    assert main(["power", str(good), str(poor), "--qrels", str(QRELS), "-m", "NDCG@10", "--alpha", "1e-100"]) == 2
    assert "past 3000" in capsys.readouterr().err


@pytest.mark.parametrize("alpha", [1e-6, 0.05, 0.5, 0.999])
def test_the_power_at_no_difference_is_alpha_in_both_designs(alpha):
    """No difference is rejected at the test's level: alpha, its two tails together in the t-test (statsmodels
    at effect size 0 says so too). scipy's noncentral F answers sf = -cdf at noncentrality 0 (-0.95 for 0.05)."""
    assert power_at(20, 0.0, 0.01, alpha=alpha) == pytest.approx(alpha, rel=1e-9)
    assert power_at(20, 0.0, 0.01, design="anova", systems=3, alpha=alpha) == pytest.approx(alpha, rel=1e-9)
    assert TT.power(effect_size=0.0, nobs=20, alpha=alpha) == pytest.approx(alpha, rel=1e-9)
    assert FA.power(effect_size=0.0, nobs=60, alpha=alpha, k_groups=3) == pytest.approx(alpha, rel=1e-9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: power_at(20, 0.1, 0.01, alpha=1.0), r"alpha must be a number in \(0, 1\), got 1.0"),
        (lambda: power_at(20, 0.1, 0.01, alpha=0.0), r"alpha must be a number in \(0, 1\), got 0.0"),
        (lambda: queries_needed(0.1, 0.01, alpha=1.0), r"alpha must be a number in \(0, 1\), got 1.0"),
        (lambda: queries_needed(0.1, 0.01, power=1.0), r"power must be a number in \(0.05, 1\), got 1.0"),
        (lambda: queries_needed(0.1, 0.01, power=0.05), r"power must be a number in \(0.05, 1\), got 0.05"),
        (lambda: power_at(20, -1e-9, 0.01), r"delta must be a finite number >= 0, got -1e-09"),
        (lambda: queries_needed(0.0, 0.01), r"delta must be a finite number > 0, got 0.0"),
        (lambda: power_at(20, 0.1, 0.0), r"variance must be a finite number > 0, got 0.0"),
    ],
)
def test_the_ends_of_each_range_are_named(call, message):
    with pytest.raises(StatsInputError, match=message):
        call()


def test_one_system_is_named_in_each_form():
    with pytest.raises(StatsInputError, match=r"^the design compares two runs or more, got 1$"):
        topic_set_size({"a": {"q1": 0.5, "q2": 0.25}})
    with pytest.raises(StatsInputError, match=r"two rows or more of per-query values, got shape \(1, 3\)"):
        topic_set_size([[0.5, 0.25, 0.0]])
    with pytest.raises(StatsInputError, match=r"^systems must be a whole number >= 2, got 1$"):
        power_at(20, 0.1, 0.01, design="anova", systems=1)


def test_the_default_delta_is_the_size_of_the_observed_difference_whichever_run_is_better():
    a = {"q1": 0.2, "q2": 0.4, "q3": 0.3, "q4": 0.1}
    b = {"q1": 0.5, "q2": 0.6, "q3": 0.4, "q4": 0.5}  # better on every query
    # a - b: -0.3 -0.2 -0.1 -0.4, mean -0.25; deviations -0.05 0.05 0.15 -0.15: variance 0.05 / 3
    effect = 0.25 / math.sqrt(0.05 / 3)
    needed = max(2, math.ceil(TT.solve_power(effect_size=effect, alpha=0.05, power=0.8) - 1e-9))
    for values in ({"a": a, "b": b}, {"b": b, "a": a}):
        t = topic_set_size(values)
        assert t.observed == t.delta == pytest.approx(0.25, abs=1e-12)
        assert t.variance == pytest.approx(0.05 / 3, rel=1e-12)
        assert t.queries_needed == needed


def test_the_anova_default_delta_is_the_range_of_the_means():
    # means 0.6, 0.5, 0.2: the range 0.4 (the best run's mean minus the worst's; not 0.6 - 0.4333, from the
    # grand mean).  Deviations within runs: 0.4 0.4 0, 0.4 0.4 0, 0.2 0.2 0: 0.72 over 3 (3 - 1) = 0.12.
    runs = {"r1": [0.2, 1.0, 0.6], "r2": [0.1, 0.9, 0.5], "r3": [0.0, 0.4, 0.2]}
    t = topic_set_size({name: {f"q{i}": v for i, v in enumerate(row)} for name, row in runs.items()})
    assert t.design == "anova" and t.observed == t.delta == pytest.approx(0.4, abs=1e-12)
    assert t.variance == pytest.approx(0.12, rel=1e-12)
    total = FA.solve_power(effect_size=_cohens_f(0.4, 0.12, 3), alpha=0.05, power=0.8, k_groups=3)
    assert t.queries_needed == math.ceil(total / 3 - 1e-9)
