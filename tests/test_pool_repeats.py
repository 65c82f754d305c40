"""``irmetrics pool simulate --repeats R`` (issue 47.3; ``simulate(..., seed=range(S, S + R))`` in Python): each
strategy replayed under the seeds S..S+R-1, each figure reported as the mean with its ``[min, max]``; checked
against single-seed replays made here through the public API (``make_strategy``, ``next``, ``record``), the
command's text and JSON, and its refusals."""

from __future__ import annotations

import json
import math

import pytest

from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import InvalidSeedError, PoolingError
from haystack_irmetrics.io.trec import read_qrels
from haystack_irmetrics.pooling import make_strategy, pool_runs, simulate

from .conftest import ROOT

RUNS = [str(ROOT / "examples" / "data" / f"{name}.trec") for name in ("good", "poor")]
QRELS = str(ROOT / "haystack_irmetrics" / "datasets" / "sample" / "qrels" / "test.tsv")
BUDGETS = [12, 48]
STRATEGIES = ["depth", "mtf", "maxmean", "rbp", "stratified"]


def found_by_hand(name: str, seed: int, budget: int, qrels: dict) -> int:
    """Relevant documents a strategy finds in ``budget`` judgments under ``seed``, each pair labelled from the
    complete qrels before the next is asked (a pair they do not list: not relevant)."""
    s = make_strategy(name, pool_runs(RUNS), budget=budget, seed=seed)
    found = 0
    for _ in range(budget):
        pair = s.next()
        if pair is None:
            break
        label = qrels.get(pair.query, {}).get(pair.doc, 0)
        s.record(pair.query, pair.doc, label)
        found += label >= 1
    return found


def test_three_seeds_give_the_mean_and_range_of_three_single_seed_replays():
    qrels = read_qrels(QRELS).data
    out = simulate(RUNS, qrels, BUDGETS, STRATEGIES, seed=range(4, 7))
    assert out["seeds"] == [4, 5, 6]
    singles = [simulate(RUNS, qrels, BUDGETS, STRATEGIES, seed=s) for s in (4, 5, 6)]
    moved = False
    for name in STRATEGIES:
        for b in BUDGETS:
            row = out["strategies"][name][str(b)]
            found = [found_by_hand(name, s, b, qrels) for s in (4, 5, 6)]
            assert found == [single["strategies"][name][str(b)]["relevant_found"] for single in singles]
            assert row["relevant_found"] == pytest.approx(sum(found) / 3, abs=1e-12)
            assert row["relevant_found_range"] == [min(found), max(found)]
            assert row["judged"] == b
            for key in ("tau", "tau_ap"):
                values = [single["strategies"][name][str(b)][key] for single in singles]
                assert row[key] == pytest.approx(math.fsum(values) / 3, abs=1e-12), (name, b, key)
                assert row[f"{key}_range"] == [min(values), max(values)]
            moved |= len(set(found)) > 1
    assert moved  # some strategy finds a different number under another seed: the seeds were used


def test_one_seed_keeps_the_single_seed_shape_and_a_list_of_one_gives_its_range():
    qrels = read_qrels(QRELS).data
    out = simulate(RUNS, qrels, [12], ["mtf"], seed=2)
    assert set(out) == {"strategies", "relevant_total"}
    row = out["strategies"]["mtf"]["12"]
    assert set(row) == {"judged", "relevant_found", "tau", "tau_ap"}
    listed = simulate(RUNS, qrels, [12], ["mtf"], seed=[2])
    assert listed["seeds"] == [2]
    assert listed["strategies"]["mtf"]["12"]["relevant_found_range"] == [row["relevant_found"]] * 2


def test_an_undefined_tau_is_left_out_of_the_mean_and_range():
    # one query; run A ranks the relevant x first, B its z (not relevant) first.  One judgment: rank 1 of the
    # run the tie order puts first.  x judged: the runs' scores differ (tau 1); z judged: all 0 (tau undefined).
    runs = [{"q": {"x": 2.0, "y": 1.0}}, {"q": {"z": 2.0, "x": 1.0}}]
    qrels = {"q": {"x": 1}}
    seeds = 12
    out = simulate(runs, qrels, [1], ["depth"], measure="NDCG@2", seed=range(seeds))["strategies"]["depth"]["1"]
    first = [pool_runs(runs).tie_orders(s)[0][0] for s in range(seeds)]
    assert 0 in first and 1 in first  # both cases happen among these seeds
    assert out["relevant_found"] == pytest.approx(first.count(0) / seeds) and out["relevant_found_range"] == [0, 1]
    assert out["tau"] == 1.0 and out["tau_range"] == [1.0, 1.0]
    nothing = simulate(runs, qrels, [0], ["depth"], seed=[0, 1])["strategies"]["depth"]["0"]
    assert nothing["tau"] is None and nothing["tau_range"] is None and nothing["relevant_found_range"] == [0, 0]


def test_the_seeds_are_one_seed_or_more():
    qrels = read_qrels(QRELS).data
    with pytest.raises(PoolingError, match=r"seed must be a seed or a sequence of one seed or more, got \[\]"):
        simulate(RUNS, qrels, [12], ["depth"], seed=[])
    for bad in ([0, -1], range(2**32 - 1, 2**32 + 1), [1.5], "3", 2**32):
        with pytest.raises(InvalidSeedError, match=r"seed must be a whole number from 0 to 4294967295"):
            simulate(RUNS, qrels, [12], ["depth"], seed=bad)


def test_the_command_prints_the_means_and_ranges(capsys):
    args = ["pool", "simulate", *RUNS, "--qrels", QRELS, "--budgets", "12,48", "--no-progress"]
    assert main([*args, "--repeats", "3", "--seed", "4", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(simulate(RUNS, read_qrels(QRELS).data, BUDGETS, seed=range(4, 7))))
    assert main([*args, "--repeats", "3", "--seed", "4"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1] == "each figure: the mean [min, max] over 3 seeds, 4 to 6"
    row = printed["strategies"]["maxmean"]["48"]
    lo, hi = row["relevant_found_range"]
    tau = f"{row['tau']:.4f} [{row['tau_range'][0]:.4f}, {row['tau_range'][1]:.4f}]"
    assert f"| maxmean | 48 | 48 | {row['relevant_found']:.1f} [{lo}, {hi}] | {tau} |" in "\n".join(text)
    assert main([*args, "--repeats", "1"]) == 0
    once = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == once and "[" not in once and "seeds" not in once


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--repeats", "0"], "--repeats must be a whole number >= 1, got 0"),
        (["--repeats", "-2"], "--repeats must be a whole number >= 1, got -2"),
        (["--seed", "4294967295", "--repeats", "2"], "--seed + --repeats - 1 must be a whole number from 0 to"),
    ],
)
def test_the_command_refuses_bad_repeats_in_one_line(extra, message, capsys):
    args = ["pool", "simulate", *RUNS, "--qrels", QRELS, "--budgets", "12", "--no-progress", *extra]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
