"""Properties every registered measure must have, run over the whole registry (every family, every variant)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.core.measures import FAMILIES, MIN_GEO_MEAN, Measure, parse_measure
from haystack_irmetrics.core.subtopics import SubtopicQrels
from tests import strategies as S
from tests.oracles import pytrec_per_query

# Every test here runs on both dict scans: the compiled one and the pure-Python one.
pytestmark = pytest.mark.usefixtures("scan_path")

FAMILY_NAMES = sorted(FAMILIES)
PRESETS = ["beir", "trec"]
GAIN_MAP = {0: 0, 1: 1, 2: 3, 3: 7}


def registry(ks: list[int]) -> list[Measure]:
    """Every family at the cutoffs ``ks``, with each of its variants."""
    out: list[Measure] = []
    for f, spec in FAMILIES.items():
        if spec.at == "level":
            out.extend(Measure(f, level=x) for x in (0.0, 0.25, 0.5, 1.0))
        elif spec.at == "none":
            out.append(Measure(f))
        else:
            if spec.at == "optional":
                out.append(Measure(f))
            out.extend(Measure(f, k) for k in ks)
    ks_top = ks[:2]
    out.extend(Measure("NDCG", k, gain="exp") for k in ks_top)
    out.extend(Measure("NDCG", k, discount="jk") for k in ks_top)
    out.extend(Measure("NDCG", k, gain=GAIN_MAP) for k in ks_top)
    out.extend(Measure("F", k, beta=0.5) for k in ks_top)
    out.append(Measure("F", beta=2.0))
    out.extend(Measure("RBP", k, p=0.5, rel=1) for k in ks_top)
    out.append(Measure("RBP_residual", rel=2))
    out.append(Measure("Compat", p=0.5))
    return out


def judgments(qrels: dict) -> object:
    """The qrels every family of the registry reads: one subtopic per query, which the families that need
    subtopics read as such (``Family.needs_subtopics``) and the others as these qrels."""
    if not qrels or not any(f.needs_subtopics for f in FAMILIES.values()):
        return qrels
    return SubtopicQrels.from_dict({q: {"0": docs} for q, docs in qrels.items()})


def test_the_registry_suite_covers_every_family_and_variant():
    ms = registry([1, 10])
    assert {m.family for m in ms} == set(FAMILIES)
    assert {m.variant[:3] for m in ms if m.family == "NDCG"} == {  # (gain, discount, beta)
        (None, None, None),
        ("exp", None, None),
        (None, "jk", None),
        (tuple((float(g), float(v)) for g, v in GAIN_MAP.items()), None, None),
    }


def _scored(qrels, results):
    return [q for q in results if qrels.get(q)]


@pytest.mark.parametrize("m", registry([1, 10, 1000]), ids=str)
def test_measure_names_round_trip(m):
    assert parse_measure(str(m)) == m
    assert parse_measure(m.name.lower()) == m
    assert parse_measure(m.name.upper()) == m


@pytest.mark.parametrize(
    "alias,name",
    [
        ("nDCG@10", "NDCG@10"),
        ("ndcg_cut_10", "NDCG@10"),
        ("map_cut.5", "MAP@5"),
        ("RR@10", "MRR@10"),
        ("recall_100", "Recall@100"),
        ("P_5", "P@5"),
        ("precision@3", "P@3"),
        ("r_cap@100", "R_cap@100"),
        ("AP@10", "MAP@10"),
        ("Rprec", "Rprec"),
        ("R_prec", "Rprec"),
        ("bpref", "bpref"),
        ("gm_map", "GMAP"),
        ("iprec_at_recall_0.30", "iP@0.3"),
        ("IPrec@0.3", "iP@0.3"),
        ("iP@.3", "iP@0.3"),
        ("11pt_avg", "iP_avg"),
        ("success_10", "Success@10"),
        ("hit_rate@5", "Success@5"),
        ("top_k_acc@5", "Success@5"),
        ("accuracy@1", "Success@1"),
        ("set_F", "F"),
        ("F1@10", "F@10"),
        ("F(beta=1)@10", "F@10"),
        ("f(BETA=0.50)@10", "F(beta=0.5)@10"),
        ("nDCG_exp@10", "nDCG_exp@10"),
        ("ndcg_burges@10", "nDCG_exp@10"),
        ("NDCG(gain=exp)@10", "nDCG_exp@10"),
        ("NDCG(gain=linear)@10", "NDCG@10"),
        ("nDCG_jk@10", "nDCG_jk@10"),
        ("NDCG(discount=jk, gain=exp)@3", "nDCG_exp_jk@3"),
        ("ndcg(gains={2:3, 1:1, 0:0})@10", "nDCG(gains={0:0,1:1,2:3})@10"),
        ("nDCG(gains={1=3,2=9,4=4.5})@5", "nDCG(gains={1:3,2:9,4:4.5})@5"),
        ("judged_10", "Judged@10"),
        ("hole@10", "Hole@10"),
    ],
)
def test_aliases_of_trec_eval_ir_measures_beir_and_ranx_parse_to_canonical_names(alias, name):
    assert parse_measure(alias).name == name


def test_beir_six_print_exactly_their_beir_keys():
    assert [str(Measure(f, 10)) for f in ("NDCG", "MAP", "Recall", "P", "MRR")] == [
        "NDCG@10", "MAP@10", "Recall@10", "P@10", "MRR@10"
    ]  # fmt: skip
    assert str(Measure("R_cap", 100)) == "R_cap@100"


@given(S.qrels(), S.runs(), S.k_values, st.sampled_from(PRESETS))
def test_every_value_is_between_0_and_1(qrels, results, ks, preset):
    assume(_scored(qrels, results))
    res = evaluate(judgments(qrels), results, ks, measures=registry(ks), preset=preset)
    counts = {m.name for m in res.measures if m.spec.unit == "count"}
    for name, values in res.per_query.items():
        if name in counts:  # whole numbers, up to the ranking's length
            assert all(v == int(v) and 0 <= v <= max(len(d) for d in [*results.values(), *qrels.values()])
                       for v in values.values()), name  # fmt: skip
            continue
        low = MIN_GEO_MEAN if name.startswith("GMAP") else 0.0
        if parse_measure(name).spec.unit == "gain":  # graded RBP sums labels: up to the query's largest
            assert all(low <= v <= max(1.0, *qrels[q].values()) for q, v in values.items()), name
            continue
        assert all(low <= v <= 1.0 for v in values.values()), name
    for name, v in res.means.items():
        if parse_measure(name).spec.unit == "gain":
            assert v >= 0.0
        elif name in counts:
            assert v == sum(res.per_query[name].values()), name
        elif name.startswith("Hole") and preset == "beir":
            # BEIR sums Hole over every results query but divides by len(qrels): it can pass 1.
            assert v >= 0.0
        else:
            assert 0.0 <= v <= 1.0, name


def _ideal_value(m: Measure, R: int, n_judged: int) -> float | None:
    """What measure m must score on a run that lists every judged document, best label first (None: no claim)."""
    if m.spec.ideal_is_one is not None:  # the families that state it in their Family entry
        return 1.0 if m.spec.ideal_is_one else None
    k = m.cutoff
    hits = R if k is None else min(R, k)
    if m.family in ("NDCG", "MRR", "R_cap", "Success", "Rprec", "bpref", "iP", "iP_avg"):
        return 1.0
    if m.family in ("MAP", "Recall"):
        return hits / R
    if m.family == "GMAP":
        return max(hits / R, MIN_GEO_MEAN)
    if m.family == "P":
        return hits / k
    if m.family == "F":
        x = 1.0 if m.beta is None else m.beta * m.beta
        P, Rc = hits / (n_judged if k is None else min(k, n_judged)), hits / R
        return (x + 1.0) * P * Rc / (x * P + Rc)
    if m.family == "Judged":
        return min(k, n_judged) / k
    if m.family == "Hole":
        return 0.0
    # The counts: the ideal run retrieves every judged document, the relevant ones among them.
    counts = {"num_q": 1, "num_ret": n_judged, "num_rel": R, "num_rel_ret": R}
    if m.family in counts:
        return float(counts[m.family])
    raise AssertionError(f"no ideal value for {m}")  # a new family must be added here


@given(S.qrels(st.sampled_from([0, 1, 2, 3])), S.k_values, st.sampled_from(PRESETS))
def test_ideal_ranking_scores_what_the_measure_can_reach(qrels, ks, preset):
    # Ideal run: every judged document, sorted by label, distinct scores.
    results = {
        q: {d: float(lab) + 1.0 / (i + 2) for i, (d, lab) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))}
        for q, docs in qrels.items()
        if docs
    }
    assume(results)
    ms = registry(ks)
    res = evaluate(judgments(qrels), results, ks, measures=ms, preset=preset, ignore_identical_ids=False)
    for q in results:
        R = sum(1 for v in qrels[q].values() if v >= 1)
        for m in ms:
            value = res.per_query[m.name][q]
            if R == 0:
                expected = {"GMAP": MIN_GEO_MEAN, "Judged": None, "Hole": 0.0, "num_q": 1.0, "num_ret": None}.get(
                    m.family, 0.0 if m.spec.zero_without_relevant else None
                )
                if expected is not None:
                    assert value == expected, m
                continue
            ideal = _ideal_value(m, R, len(results[q]))
            if ideal is not None:
                assert value == pytest.approx(ideal, abs=1e-12), m


@given(S.qrels(), S.runs(), S.k_values, st.sampled_from(PRESETS), st.randoms(use_true_random=False))
def test_query_order_does_not_change_per_query_values(qrels, results, ks, preset, rnd):
    assume(_scored(qrels, results))
    items = list(results.items())
    rnd.shuffle(items)
    a = evaluate(judgments(qrels), results, ks, measures=registry(ks), preset=preset)
    b = evaluate(judgments(qrels), dict(items), ks, measures=registry(ks), preset=preset)
    assert a.per_query == b.per_query
    for name, v in a.raw_means.items():
        assert b.raw_means[name] == pytest.approx(v, abs=1e-12)


@given(S.qrels(), S.runs(), S.k_values, st.sampled_from(PRESETS))
def test_order_preserving_relabelling_of_ids_changes_nothing(qrels, results, ks, preset):
    assume(_scored(qrels, results))
    # Prefixing keeps byte order, so trec ties resolve the same; query-id equality is kept too.
    qr = {"x" + q: {"x" + d: v for d, v in docs.items()} for q, docs in qrels.items()}
    rr = {"x" + q: {"x" + d: v for d, v in docs.items()} for q, docs in results.items()}
    a = evaluate(judgments(qrels), results, ks, measures=registry(ks), preset=preset)
    b = evaluate(judgments(qr), rr, ks, measures=registry(ks), preset=preset)
    assert a.raw_means == b.raw_means
    assert {m: {"x" + q: v for q, v in pq.items()} for m, pq in a.per_query.items()} == b.per_query


@given(
    S.qrels(st.sampled_from([0, 1])),
    S.runs(st.sampled_from([0.0, 1.0, 2.0, 3.0])),
    S.k_values,
    st.sampled_from(PRESETS),
    st.data(),
)
def test_raising_a_relevant_documents_score_never_lowers_any_measure(qrels, results, ks, preset, data):
    scored = _scored(qrels, results)
    assume(scored)
    q = data.draw(st.sampled_from(scored))
    relevant = [d for d in results[q] if qrels[q].get(d, 0) >= 1 and d != q]
    assume(relevant)
    d = data.draw(st.sampled_from(relevant))
    better = {**results, q: {**results[q], d: 10.0}}
    ms = registry(ks)
    a = evaluate(judgments(qrels), results, ks, measures=ms, preset=preset)
    b = evaluate(judgments(qrels), better, ks, measures=ms, preset=preset)
    for m in ms:
        before, after = a.per_query[m.name][q], b.per_query[m.name][q]
        if m.spec.higher_is_better:
            assert after >= before - 1e-15, m
        else:
            assert after <= before + 1e-15, m


@given(S.float_qrels(), S.runs(), S.k_values, st.sampled_from([0.5, 1.0, 1.5]))
def test_float_labels_equal_pytrec_eval_on_labels_scaled_to_integers(qrels, results, ks, threshold):
    """pytrec_eval cannot take 0.3 or 0.5; scaled by 10 they are integers with the same NDCG and
    the same relevant set at relevance_level = 10 * threshold."""
    assume(_scored(qrels, results))
    res = evaluate(qrels, results, ks, preset="trec", relevance_threshold=threshold)
    # Negative labels clipped to -1: pytrec_eval crashes on a query whose labels are all below -1.
    scaled = {q: {d: max(round(v * 10), -1) for d, v in docs.items()} for q, docs in qrels.items()}
    oracle = pytrec_per_query(scaled, results, ks, relevance_level=round(threshold * 10))
    for family in ("NDCG", "MAP", "Recall", "P"):
        for k in ks:
            for q, v in oracle[f"{family}@{k}"].items():
                assert math.isclose(res.per_query[f"{family}@{k}"][q], v, abs_tol=1e-12)


@given(st.lists(st.floats(allow_nan=True, width=64), min_size=0, max_size=20), st.integers(0, 3))
def test_per_query_dicts_hold_the_scored_queries_then_the_missing_ones_as_floats(values, n_extra):
    from haystack_irmetrics.core.results import PerQuery

    names = [f"q{i}" for i in range(len(values))]
    extra = [f"e{i}" for i in range(n_extra)]
    pq = PerQuery()
    pq.parts["m"] = (names, np.asarray(values, np.float64), extra, 0.0)
    pq.parts["n"] = (names, -np.asarray(values, np.float64), [], 0.0)
    assert [list(pq[k]) for k in pq] == [[*names, *extra], names]
    assert repr(list(pq["m"].values())) == repr([*map(float, values), *[0.0] * n_extra])
    assert all(type(v) is float for k in pq for v in pq[k].values())
