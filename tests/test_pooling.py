"""Pooling strategies on hand-traced examples, the stratified sample's design and estimates computed by hand,
the registry's checks, and ``irmetrics pool`` (``simulate``, ``estimate``) end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import InvalidLabelError, InvalidSeedError, ParseError, PoolingError
from haystack_irmetrics.pooling import (
    STRATEGIES,
    MaxMean,
    MoveToFront,
    Stratified,
    StratifiedDesign,
    Stratum,
    design_from_sample,
    estimate,
    make_strategy,
    pool,
    pool_runs,
    read_pairs,
    simulate,
    write_pairs,
)
from haystack_irmetrics.pooling.sampling import allocate
from tests.test_pool_order import listed_seed

# Three runs of two queries, each written best first (scores n, n-1, ...):
#   q1  R1: a b c d     R2: e a f g     R3: h i e j
#   q2  R1: k           R2: k           R3: k m
RANKED = [
    {"q1": ["a", "b", "c", "d"], "q2": ["k"]},
    {"q1": ["e", "a", "f", "g"], "q2": ["k"]},
    {"q1": ["h", "i", "e", "j"], "q2": ["k", "m"]},
]
RUNS = [{q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.items()} for run in RANKED]
# The traces below read "R1 first" on a tie between runs: under this seed the tie order is R1, R2, R3.
SEED = listed_seed(RUNS)
LABELS = {
    "q1": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 1, "f": 0, "g": 1, "h": 0, "i": 0, "j": 1},
    "q2": {"k": 1, "m": 0},
}


def replay(strategy, labels=LABELS):
    """Every pair the strategy asks for, each judged (recorded) before the next is asked."""
    out = []
    while (pair := strategy.next()) is not None:
        out.append((pair.query, pair.doc))
        strategy.record(pair.query, pair.doc, labels[pair.query][pair.doc])
    return out


def test_depth_grows_rank_by_rank_over_all_queries():
    # rank 1: q1 a (R1), e (R2), h (R3); q2 k.  rank 2: q1 b, (a seen), i; q2 m.  rank 3: q1 c, f, (e seen).
    # rank 4: q1 d, g, j.
    expected = ["a", "e", "h", "k", "b", "i", "m", "c", "f", "d", "g", "j"]
    assert [d for _, d in replay(make_strategy("depth", RUNS, seed=SEED))] == expected
    # the budget cuts that order; the depth option cuts the runs: depth 1 is rank 1 only
    assert [p.doc for p in pool(RUNS, 5, "depth", seed=SEED)] == expected[:5]
    assert [p.doc for p in pool(RUNS, 99, "depth", depth=1, seed=listed_seed(RUNS, 1))] == ["a", "e", "h", "k"]


def test_rbp_orders_by_summed_weight_heaviest_first():
    # p = 0.5: a run's rank k weighs 0.5 * 0.5^(k-1) = 0.5, 0.25, 0.125, 0.0625.
    # q2: k 0.5 * 3 = 1.5; m 0.25.  q1: a 0.5 + 0.25 = 0.75; e 0.5 + 0.125 = 0.625; h 0.5; b, i 0.25;
    # c, f 0.125; d, g, j 0.0625.  Equal weights keep the depth order (b, i, then q2's m at rank 2).
    expected = ["k", "a", "e", "h", "b", "i", "m", "c", "f", "d", "g", "j"]
    assert [d for _, d in replay(make_strategy("rbp", RUNS, p=0.5, seed=SEED))] == expected
    weights = make_strategy("rbp", RUNS, p=0.5, seed=SEED).weights()
    assert weights[(1, "k")] == 1.5 and weights[(0, "a")] == 0.75 and weights[(0, "e")] == 0.625


def test_move_to_front_traced_by_hand():
    # Queries take turns (q1, q2, q1, ...) until q2 is exhausted.
    # q1: priorities 0,0,0 -> R1: a (rel, R1 keeps its turn), b (non-rel: R1 -1, turn over).
    #     R2 (0): e (rel), a judged rel (free), f (non-rel: R2 -1).  R3 (0): h (non-rel: R3 -1).
    #     all -1 -> R1: c (rel), d (non-rel: R1 -2).  R2 (-1): g (rel), R2 exhausted.
    #     R3 (-1): i (non-rel: R3 -2).  R3 only: e judged rel (free), j.
    # q2: R1: k (rel), R1 exhausted; R2: k judged (free), exhausted; R3: k judged (free), m.
    got = replay(MoveToFront(pool_runs(RUNS), seed=SEED))
    assert got == [
        ("q1", "a"),
        ("q2", "k"),
        ("q1", "b"),
        ("q2", "m"),
        *[("q1", d) for d in ["e", "f", "h", "c", "d", "g", "i", "j"]],
    ]


def test_maxmean_traced_by_hand():
    # q1, posterior means (1 + relevant read) / (2 + read):
    #   all 1/2 -> R1: a (rel: 2/3) -> R1: b (non-rel: 2/4) -> tie 1/2, R1 first: c (rel: 3/5) -> R1: d (3/6).
    #   R1 exhausted; R2, R3 1/2 -> R2: e (rel: 2/3) -> R2: a judged rel (free: 3/4), f (non-rel: 3/5)
    #   -> R2: g (rel: 4/6), exhausted -> R3: h, i, e judged (free), j.
    got = [d for q, d in replay(MaxMean(pool_runs(RUNS), seed=SEED)) if q == "q1"]
    assert got == ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]


def test_bandits_find_more_relevant_documents_than_depth_here():
    def found(name, budget):
        return sum(LABELS[q][d] for q, d in replay(make_strategy(name, RUNS, seed=SEED))[:budget])

    # after 10 judgments: depth a e h k b i m c f d -> 4; mtf a k b m e f h c d g -> 5; maxmean likewise 5
    assert found("depth", 10) == 4
    assert found("mtf", 10) == 5 and found("maxmean", 10) == 5


def test_a_batch_asked_before_any_label_never_repeats_a_pair():
    runs = [{"q1": RUNS[0]["q1"]}, {"q1": RUNS[1]["q1"]}, {"q1": RUNS[2]["q1"]}]
    s = MaxMean(pool_runs(runs), seed=listed_seed(runs))
    # no label yet: every mean is 1 / (2 + read), so the runs take turns: a (R1), e (R2), h (R3), b (R1)
    batch = [s.next().doc for _ in range(4)]
    assert batch == ["a", "e", "h", "b"]
    s.record("q1", "a", 1)  # labels of the batch arrive later: R1's mean is (1 + 1) / (2 + 2) = 1/2 now
    s.record("q1", "e", 0)
    s.record("q1", "h", 0)
    s.record("q1", "b", 1)  # R1: 3/4; R2 (e read, a pending read free... a is judged) and R3 lower
    assert s.next().doc == "c"


def test_judgments_there_are_already_are_never_asked_and_count_for_the_runs():
    judged = {"q1": {"a": 1, "e": 1}}
    for name in STRATEGIES:
        asked = [(p.query, p.doc) for p in pool(RUNS, 99, name, judged=judged)]
        assert ("q1", "a") not in asked and ("q1", "e") not in asked, name
        assert len(asked) == len(set(asked)) == 10, name  # the rest of the pool, once each
    # MTF learns from them: R1 reads a (judged relevant, free) and keeps its turn, so b comes first
    assert pool(RUNS, 1, "mtf", judged={"q1": {"a": 1}}, seed=SEED)[0].doc == "b"
    # a judged non-relevant a ends R1's turn at once: R2's e comes first
    assert pool(RUNS, 1, "mtf", judged={"q1": {"a": 0}}, seed=SEED)[0].doc == "e"


def test_record_rejects_a_label_that_is_not_a_number():
    s = make_strategy("mtf", RUNS)
    pair = s.next()
    for bad in (None, "1", float("nan"), True):
        with pytest.raises(InvalidLabelError):
            s.record(pair.query, pair.doc, bad)


def test_registry_checks_names_parameters_and_budgets():
    with pytest.raises(PoolingError, match="unknown pooling strategy 'nope': depth, mtf"):
        make_strategy("nope", RUNS)
    with pytest.raises(PoolingError, match=r"p must be a number in \(0, 1\)"):
        make_strategy("rbp", RUNS, p=1.0)
    with pytest.raises(PoolingError, match="no parameter 'p'"):
        make_strategy("mtf", RUNS, p=0.5)
    with pytest.raises(PoolingError, match="drawn for a budget"):
        make_strategy("stratified", RUNS)
    with pytest.raises(PoolingError, match="budget"):
        pool(RUNS, -1)
    with pytest.raises(PoolingError, match="depth"):
        pool(RUNS, 3, depth=0)
    with pytest.raises(InvalidSeedError):
        pool(RUNS, 3, "stratified", seed=-1)
    assert STRATEGIES["stratified"].params[0].parse("5,20") == (5, 20)
    with pytest.raises(PoolingError, match="increasing"):
        STRATEGIES["stratified"].params[0].parse("20,5")


def test_runs_rank_in_trec_eval_order_ties_by_doc_id_descending():
    # score ties break by document id, descending (trec_eval); so does the pool's order
    runs = pool_runs([{"q1": {"d1": 1.0, "d3": 1.0, "d2": 2.0}}])
    assert runs.rankings[0][0] == ("d2", "d3", "d1")


# --- the stratified sample -------------------------------------------------------------------------------


def test_allocation_by_hand():
    # sizes 10, 20, 70 with rates c, c/2, c/4: 10c + 10c + 17.5c = 30 -> c = 0.8: 8, 8, 14
    assert allocate([10, 20, 70], [1.0, 0.5, 0.25], 30) == [8, 8, 14]
    # budget 50: the first stratum caps at 10, then 10c + 17.5c = 40 -> c = 1.4545: 14.55, 25.45 -> 14 + 25 = 39,
    # one left for the largest remainder (0.55 of the second)
    assert allocate([10, 20, 70], [1.0, 0.5, 0.25], 50) == [10, 15, 25]
    # a budget with one for each stratum gives each at least one
    assert allocate([10, 20, 70], [1.0, 0.01, 0.0001], 3) == [1, 1, 1]
    assert allocate([2, 3], [1.0, 0.5], 10) == [2, 3]


def test_inclusion_probabilities_are_the_sampling_frequencies():
    runs = pool_runs([{"q1": {f"d{i:02d}": 40.0 - i for i in range(40)}}])
    counts: dict[str, int] = {}
    draws = 2000
    for seed in range(draws):
        s = Stratified(runs, budget=12, edges=(5, 15), seed=seed)
        for p in s.design.pairs():
            counts[p.doc] = counts.get(p.doc, 0) + 1
    design = Stratified(runs, budget=12, edges=(5, 15), seed=0).design
    sizes = [len(s.docs) for s in design.strata["q1"]]
    assert sizes == [5, 10, 25]
    for s in design.strata["q1"]:
        p = s.probability
        for d in s.docs:  # binomial: within 4 standard deviations
            assert abs(counts.get(d, 0) / draws - p) <= 4 * math.sqrt(p * (1 - p) / draws), d


def test_design_from_sample_rebuilds_and_checks_the_probabilities(tmp_path):
    runs = pool_runs(RUNS)
    s = Stratified(runs, budget=6, edges=(1, 2), seed=4, judged={"q1": {"a": 1}})
    path = tmp_path / "pairs.tsv"
    assert write_pairs(s.design.pairs(), path) == 6
    pairs = read_pairs(path)
    rebuilt = design_from_sample(runs, pairs, edges=(1, 2), judged={"q1": {"a": 1}})
    assert rebuilt.strata == s.design.strata and rebuilt.certain == s.design.certain
    assert s.design.probability("q1", "a") == 1.0  # judged before: in the sample with certainty
    with pytest.raises(PoolingError, match="probability"):
        design_from_sample(runs, pairs, edges=(1, 3), judged={"q1": {"a": 1}})
    with pytest.raises(PoolingError, match="judged before"):
        design_from_sample(
            runs, [*pairs, pairs[0]._replace(doc="a", query="q1")], edges=(1, 2), judged={"q1": {"a": 1}}
        )


def _design(strata: dict[int, tuple[tuple[str, ...], tuple[str, ...]]]) -> StratifiedDesign:
    return StratifiedDesign(
        (2,),
        {"q1": tuple(Stratum("q1", h, docs, sampled) for h, (docs, sampled) in strata.items())},
        {"q1": frozenset()},
    )


def test_statap_and_xinfap_by_hand():
    # ranking a b c d e; stratum 0 = {a, b} both drawn (pi 1); stratum 1 = {c, d, e}, c and d drawn: pi = 2/3,
    # two of them together 2*1 / (3*2) = 1/3.  Labels a 1, b 0, c 1, d 1.
    design = _design({0: (("a", "b"), ("a", "b")), 1: (("c", "d", "e"), ("c", "d"))})
    run = {"q1": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
    judged = {"q1": {"a": 1, "b": 0, "c": 1, "d": 1}}
    # R^ = 1 + 2 / (2/3) = 4.
    # statAP: a (k=1): 1/1 * (1/1) = 1; c (k=3): 1/3 * (3/2 + 1/(2/3 * 1)) = 1; d (k=4): 1/4 * (3/2 + 3/2 + 1/(1/3))
    #         = 1.5.  N^ = 3.5, statAP = 3.5 / 4 = 0.875.
    assert estimate([run], design, judged, estimator="statAP")["run1"].mean == pytest.approx(0.875, abs=1e-15)
    # xinfAP: a: 1.  c (k=3): 1/3 + 1/3 * (2 * (1+e)/(2+2e)) = 2/3, over pi: 1.
    #         d (k=4): 1/4 + 1/4 * (2 * (1+e)/(2+2e) + 1 * (1+e)/(1+2e)), over pi (times 3/2).
    eps = 0.00001
    d_term = (0.25 + 0.25 * (1.0 + (1 + eps) / (1 + 2 * eps))) * 1.5
    expected = (1.0 + 1.0 + d_term) / 4.0
    assert estimate([run], design, judged, estimator="xinfAP")["run1"].mean == pytest.approx(expected, abs=1e-15)
    with pytest.raises(PoolingError, match="no label for 1 sampled pair"):
        estimate([run], design, {"q1": {"a": 1, "b": 0, "c": 1}})


def test_a_sample_of_the_whole_pool_estimates_ap_exactly():
    from haystack_irmetrics.core.evaluation import evaluate

    runs = pool_runs(RUNS)
    design = Stratified(runs, budget=100, seed=0).design
    qrels = {q: {d: float(v) for d, v in docs.items()} for q, docs in LABELS.items()}
    truth = evaluate(qrels, RUNS[2], None, measures=["map"], preset="trec").per_query["MAP"]
    assert estimate(RUNS, design, qrels, estimator="statAP")["run3"].per_query == pytest.approx(truth, abs=1e-15)
    # xinfAP is infAP's smoothed ratio: on complete judgments trec_eval's infAP (pytrec_eval), not AP itself
    import pytrec_eval

    infap = pytrec_eval.RelevanceEvaluator({q: dict(d) for q, d in LABELS.items()}, {"infAP"}).evaluate(RUNS[2])
    got = estimate(RUNS, design, qrels, estimator="xinfAP")["run3"].per_query
    assert got == pytest.approx({q: v["infAP"] for q, v in infap.items()}, abs=1e-15)


# --- simulate --------------------------------------------------------------------------------------------


def test_simulate_by_hand():
    # depth at budget 4 judges a e h k: relevant a e k (3 of the 6 relevant pairs).  P@2 under all judgments:
    # q1 R1 (a b) 0.5, R2 (e a) 1, R3 (h i) 0; q2 R1 (k) 0.5, R2 (k) 0.5, R3 (k m) 0.5: means 0.5, 0.75, 0.25.
    # Under a e h k only (b, i unjudged: not relevant) the same values: the same order, tau = tau_AP = 1.
    out = simulate(RUNS, LABELS, [4, 100], ["depth", "mtf"], measure="P@2")
    assert out["relevant_total"] == 6
    row = out["strategies"]["depth"]["4"]
    assert (row["judged"], row["relevant_found"]) == (4, 3)
    assert row["tau"] == pytest.approx(1.0) and row["tau_ap"] == 1.0
    # a budget past the pool judges all of it (12 pairs)
    assert out["strategies"]["mtf"]["100"]["judged"] == 12 and out["strategies"]["mtf"]["100"]["relevant_found"] == 6
    with pytest.raises(PoolingError, match="two runs or more"):
        simulate(RUNS[:1], LABELS, [4])


# --- irmetrics pool --------------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    paths = []
    for i, run in enumerate(RUNS, 1):
        p = tmp_path / f"r{i}.trec"
        p.write_text("".join(f"{q} Q0 {d} 0 {s} r{i}\n" for q, docs in run.items() for d, s in docs.items()))
        paths.append(str(p))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {v}\n" for q, docs in LABELS.items() for d, v in docs.items()))
    existing = tmp_path / "existing.txt"
    existing.write_text("q1 0 a 1\nq2 0 k 1\n")
    return paths, str(qrels), str(existing), tmp_path


def test_pool_writes_the_pairs_in_order_without_the_existing_ones(files):
    runs, _, existing, tmp = files
    out = tmp / "pairs.tsv"
    seed = ["--seed", str(listed_seed(runs))]  # ties go to r1.trec, r2.trec, r3.trec in that order
    assert (
        main(["pool", *runs, "--budget", "3", "--strategy", "depth", "--qrels", existing, *seed, "-o", str(out)]) == 0
    )
    assert out.read_text() == "query_id\tdoc_id\tprobability\nq1\te\t1.0\nq1\th\t1.0\nq1\tb\t1.0\n"
    assert main(["pool", *runs, "--budget", "4", "--strategy", "rbp", "--param", "p=0.5", *seed, "-o", str(out)]) == 0
    assert [p.doc for p in read_pairs(out)] == ["k", "a", "e", "h"]


def test_pool_stratified_and_estimate_from_the_command_line(files, capsys):
    runs, qrels, _, tmp = files
    out = tmp / "sample.tsv"
    assert (
        main(["pool", *runs, "--budget", "6", "--strategy", "stratified", "--param", "edges=1,2", "-o", str(out)]) == 0
    )
    pairs = read_pairs(out)
    assert len(pairs) == 6 and any(p.probability < 1 for p in pairs)
    capsys.readouterr()
    cmd = ["pool", "estimate", *runs, "--sample", str(out), "--qrels", qrels, "--param", "edges=1,2", "--json"]
    assert main(cmd) == 0
    got = json.loads(capsys.readouterr().out)
    design = design_from_sample(pool_runs(runs), pairs, edges=(1, 2))
    expected = estimate(runs, design, LABELS)
    assert got["estimator"] == "statAP"
    assert {n: v["mean"] for n, v in got["runs"].items()} == {n: e.mean for n, e in expected.items()}
    # other strata than the sample's: refused, one line, exit 2
    assert main([*cmd[:-2], "edges=1,3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irmetrics: error: sampled pair") and err.count("\n") == 1


def test_pool_simulate_json_keys(files, capsys):
    runs, qrels, _, _ = files
    assert main(["pool", "simulate", *runs, "--qrels", qrels, "--budgets", "4,8", "--measure", "P@1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["strategies", "relevant_total"]
    assert list(out["strategies"]) == ["depth", "mtf", "maxmean", "rbp"]
    assert set(out["strategies"]["mtf"]["8"]) == {"judged", "relevant_found", "tau", "tau_ap"}
    assert out == simulate(runs, LABELS, [4, 8], measure="P@1")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--budget", "3", "--strategy", "rbp", "--param", "p=2"], "p must be a number in (0, 1)"),
        (["--budget", "3", "--param", "p=0.5"], "strategy depth has no parameter 'p'"),
        (["--budget", "-1"], "budget"),
        (["--budget", "3", "--depth", "0"], "depth"),
    ],
)
def test_pool_errors_exit_2_with_one_line(files, capsys, args, message):
    runs, _, _, tmp = files
    assert main(["pool", *runs, *args, "-o", str(tmp / "x.tsv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irmetrics: error: ") and message in err and err.count("\n") == 1
    assert not (tmp / "x.tsv").exists()


def test_pool_seed_is_checked_by_argparse(files, capsys):
    runs, _, _, tmp = files
    with pytest.raises(SystemExit) as e:
        main(["pool", *runs, "--budget", "3", "--seed", "-1", "-o", str(tmp / "x.tsv")])
    assert e.value.code == 2 and "seed" in capsys.readouterr().err


def test_a_seed_draws_the_same_sample_and_another_seed_another():
    a = [p.doc for p in pool(RUNS, 5, "stratified", seed=1)]
    assert a == [p.doc for p in pool(RUNS, 5, "stratified", seed=1)]
    assert any([p.doc for p in pool(RUNS, 5, "stratified", seed=s)] != a for s in range(2, 10))
    assert np.isclose(sum(1 for _ in a), 5)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("query_id\tdoc_id\tprobability\nq1\td1\t1.0\nq1\td1\t1.0\n", r"listed twice \(first on line 2\)"),
        ("query_id\tdoc_id\tprobability\n", "a header and no pair"),
        ("", "empty"),
    ],
)
def test_a_pairs_file_with_a_pair_twice_or_no_pair_is_refused_naming_the_line(tmp_path, body, message):
    path = tmp_path / "pairs.tsv"
    path.write_text(body)
    with pytest.raises(ParseError, match=message):
        read_pairs(path)
