"""What ir_measures' and pytrec_eval's open issues ask for, through the irmetrics provider, and PyTerrier on it.

* a stated tie policy (terrierteam/ir_measures#18): ``IRMetricsProvider(ties="stable" | "trec")``, checked
  against the reference providers handed the run in that order as strictly decreasing scores;
* BEIR's identical-id rule (terrierteam/ir_measures#47): ``ignore_identical_ids=True``, against the reference on
  the run without those documents;
* ``NCG@k`` (terrierteam/ir_measures#19): hand-computed values;
* float labels (cvangysel/pytrec_eval#16): against pytrec_eval's provider on the labels times 10;
* confidence intervals (terrierteam/ir_measures#69): ``bootstrap_intervals`` against stats.bootstrap_ci and
  scipy's bootstrap;
* PyTerrier's ``pt.Experiment`` through the preferred provider: the same table as through the default pipeline.
"""

from __future__ import annotations

import ir_measures
import numpy as np
import pytest
from hypothesis import assume, given, settings
from ir_measures import AP, RR, Judged, Metric, NumQ, P, R, SetP, nDCG

from haystack_irmetrics.errors import InvalidArgumentError, InvalidLabelError
from haystack_irmetrics.ir_measures import NCG, PROVIDER, IRMetricsProvider, bootstrap_intervals, prefer
from haystack_irmetrics.stats.significance import bootstrap_ci
from tests import strategies as S
from tests.oracles import trec_order, without_identical_ids
from tests.test_ir_measures import assert_same, per_query, pytrec_safe

SOME = settings(max_examples=50, deadline=None)


def stable_order(run: dict) -> dict:
    """Each ranking in BEIR's stable order (float64 score descending, ties as listed), as strictly decreasing scores."""
    return {q: {d: float(len(docs) - i) for i, d in enumerate(sorted(docs, key=docs.get, reverse=True))}
            for q, docs in run.items()}  # fmt: skip


def in_trec_order(run: dict) -> dict:
    return {q: {d: float(len(docs) - i) for i, d in enumerate(trec_order(docs))} for q, docs in run.items()}


MEASURES = [nDCG @ 3, AP, P(rel=2) @ 2, R @ 5, RR, SetP]


@SOME
@given(S.qrels(), S.runs())
def test_stable_ties_rank_as_beir_does_for_every_measure(qrels, run):
    qrels, run = pytrec_safe(qrels, run)
    assume(qrels and run)
    stable = IRMetricsProvider(ties="stable")
    ours = per_query(stable.iter_calc([*MEASURES, RR @ 2, Judged @ 3], qrels, run))
    theirs = per_query(ir_measures.pytrec_eval.iter_calc(MEASURES, qrels, stable_order(run)))
    theirs |= per_query(ir_measures.msmarco.iter_calc([RR @ 2], qrels, stable_order(run)))
    theirs |= per_query(ir_measures.judged.iter_calc([Judged @ 3], qrels, stable_order(run)))
    assert ours == pytest.approx(theirs, abs=1e-12)


@SOME
@given(S.qrels(), S.runs())
def test_trec_ties_rank_msmarcos_rr_and_judged_in_trec_evals_order(qrels, run):
    run = {q: docs for q, docs in run.items() if docs}
    assume(qrels and run)
    ours = per_query(IRMetricsProvider(ties="trec").iter_calc([RR @ 2, Judged @ 3], qrels, run))
    theirs = per_query(ir_measures.msmarco.iter_calc([RR @ 2], qrels, in_trec_order(run)))
    theirs |= per_query(ir_measures.judged.iter_calc([Judged @ 3], qrels, in_trec_order(run)))
    assert ours == pytest.approx(theirs, abs=1e-12)


@SOME
@given(S.qrels(), S.runs())
def test_ignore_identical_ids_scores_the_run_without_each_querys_own_id(qrels, run):
    qrels, run = pytrec_safe(qrels, without_identical_ids(run) | {})
    assume(qrels and run)
    with_ids = {q: {**docs, q: 9.0} for q, docs in run.items()}  # each query retrieves itself first
    assert_same(MEASURES, qrels, run, ir_measures.pytrec_eval)
    assert_same(MEASURES, qrels, run, ir_measures.pytrec_eval, provider=IRMetricsProvider(ignore_identical_ids=True))
    ignoring = per_query(IRMetricsProvider(ignore_identical_ids=True).iter_calc(MEASURES, qrels, with_ids))
    assert ignoring == pytest.approx(per_query(ir_measures.pytrec_eval.iter_calc(MEASURES, qrels, run)), abs=1e-12)


def test_ncg_at_k_by_hand():
    qrels = {"q": {"a": 2, "b": 1, "c": 0, "d": 3, "e": -1}, "none": {"a": 0}, "gone": {"a": 1}}
    run = {"q": {"a": 0.9, "x": 0.8, "b": 0.7, "e": 0.6}, "none": {"a": 1.0}}
    got = per_query(PROVIDER.iter_calc([NCG @ 2, NCG @ 3, NCG @ 5], qrels, run))
    # ideal gains 3, 2, 1, 0: CG@2 = 2 + 0 of 5, CG@3 = 3 of 6, CG@5 = 3 of 6 (e's -1 gains nothing)
    assert got == {("NCG@2", "q"): 0.4, ("NCG@3", "q"): 0.5, ("NCG@5", "q"): 0.5,
                   **{(f"NCG@{k}", q): 0.0 for k in (2, 3, 5) for q in ("none", "gone")}}  # fmt: skip
    assert ir_measures.parse_measure("NCG@10") == NCG @ 10
    assert not ir_measures.pytrec_eval.supports(NCG @ 10) and PROVIDER.supports(NCG @ 10)


@SOME
@given(S.float_qrels(), S.runs())
def test_float_labels_give_what_pytrec_eval_gives_on_the_labels_times_ten(qrels, run):
    qrels, run = pytrec_safe(qrels, run)
    assume(qrels and run)
    tenfold = {q: {d: round(v * 10) for d, v in docs.items()} for q, docs in qrels.items()}
    ours = per_query(PROVIDER.iter_calc([nDCG @ 5, nDCG, P(rel=1) @ 3, AP(rel=1)], qrels, run))
    theirs = per_query(ir_measures.pytrec_eval.iter_calc([nDCG @ 5, nDCG, P(rel=10) @ 3, AP(rel=10)], tenfold, run))
    theirs = {(k.replace("rel=10", "rel=1").replace("(rel=1)", ""), q): v for (k, q), v in theirs.items()}
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_float_labels_are_refused_by_the_reference_and_a_bad_label_by_ours():
    qrels, run = {"q": {"a": 0.5, "b": 1.0}}, {"q": {"a": 1.0, "b": 0.5}}
    with pytest.raises(TypeError):
        ir_measures.pytrec_eval.calc_aggregate([nDCG @ 2], qrels, run)
    assert PROVIDER.calc_aggregate([nDCG @ 2], qrels, run)[nDCG @ 2] == pytest.approx(
        (0.5 + 1 / np.log2(3)) / (1 + 0.5 / np.log2(3)), abs=1e-15
    )
    with pytest.raises(InvalidLabelError):
        PROVIDER.calc_aggregate([nDCG @ 2], {"q": {"a": float("nan")}}, run)


def test_bootstrap_intervals_are_stats_bootstrap_ci_of_each_measures_per_query_values():
    rng = np.random.default_rng(3)
    qrels = {str(q): {f"d{d}": int(rng.integers(0, 3)) for d in range(20)} for q in range(40)}
    run = {q: {f"d{d}": float(rng.random()) for d in range(30)} for q in qrels}
    metrics = list(PROVIDER.iter_calc([nDCG @ 10, AP], qrels, run))
    got = bootstrap_intervals(metrics, n_resamples=4000, seed=7)
    means = PROVIDER.calc_aggregate([nDCG @ 10, AP], qrels, run)
    from scipy import stats

    for m in (nDCG @ 10, AP):
        values = np.array([x.value for x in metrics if x.measure == m])
        assert (got[m].low, got[m].high) == bootstrap_ci(values, n_resamples=4000, seed=7)
        assert got[m].mean == means[m] and got[m].n_queries == 40
        ref = stats.bootstrap((values,), np.mean, method="percentile", n_resamples=4000, rng=np.random.default_rng(1))
        width = ref.confidence_interval.high - ref.confidence_interval.low
        assert abs(got[m].low - ref.confidence_interval.low) < 0.1 * width
        assert abs(got[m].high - ref.confidence_interval.high) < 0.1 * width


def test_bootstrap_intervals_refuse_a_summed_measure_a_repeated_query_and_nothing():
    with pytest.raises(InvalidArgumentError, match="summed over the queries"):
        bootstrap_intervals([Metric("1", NumQ, 1.0), Metric("2", NumQ, 1.0)])
    with pytest.raises(InvalidArgumentError, match="query '1' has two values of AP"):
        bootstrap_intervals([Metric("1", AP, 1.0), Metric("1", AP, 0.5)])
    with pytest.raises(InvalidArgumentError, match="no metric given"):
        bootstrap_intervals([])


# --- PyTerrier ---------------------------------------------------------------------------------------------


def _experiment(pt, qrels_rows, runs, measures):
    import pandas as pd

    topics = pd.DataFrame({"qid": sorted({q for q, _, _ in qrels_rows}), "query": "text"})
    qrels = pd.DataFrame(qrels_rows, columns=["qid", "docno", "label"])
    systems = [pt.Transformer.from_df(pd.DataFrame(rows, columns=["qid", "docno", "score"])) for rows in runs]
    return pt.Experiment(systems, topics, qrels, eval_metrics=measures, baseline=0, correction="holm",
                         names=["a", "b"])  # fmt: skip


def test_pyterrier_experiment_through_the_preferred_provider_gives_the_default_pipelines_table():
    pt = pytest.importorskip("pyterrier", reason="pyterrier is not installed (the test extra installs it)")
    import pandas as pd

    rng = np.random.default_rng(5)
    qrels = [(str(q), f"d{d}", int(rng.integers(0, 3))) for q in range(30) for d in range(15)]
    runs = [[(str(q), f"d{d}", float(np.round(rng.random(), 2))) for q in range(30) for d in range(25)] for _ in "ab"]
    measures = [nDCG @ 10, AP(rel=2), P @ 10]
    default = _experiment(pt, qrels, runs, measures)
    try:
        prefer()
        assert ir_measures.DefaultPipeline.providers[0] is PROVIDER
        ours = _experiment(pt, qrels, runs, measures)
        # float labels: pytrec_eval refuses them; through ours the experiment runs
        halves = [(q, d, v / 2) for q, d, v in qrels]
        assert _experiment(pt, halves, runs, [nDCG @ 10])["nDCG@10"].tolist() == pytest.approx(
            ours["nDCG@10"].tolist(), abs=1e-12
        )
    finally:
        prefer(first=False)
    # PyTerrier orders the columns as the metrics first come (pytrec_eval's provider yields from a set of measures)
    assert sorted(ours.columns) == sorted(default.columns) and len(ours.columns) == 1 + 3 * 6
    pd.testing.assert_frame_equal(ours[default.columns], default, check_exact=False, atol=1e-12, rtol=0)
