"""Every seed is checked in one place: a whole number from 0 to 2**32 - 1. On the command line every ``--seed`` is
the argparse type ``cli.args.seed`` (exit 2, the one message, before any work); in Python every entry point
that takes a seed raises :class:`~haystack_irmetrics.errors.InvalidSeedError` (an ``InvalidArgumentError``)
from ``stats.significance.seed_value``, never numpy's ``ValueError``."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from haystack_irmetrics.cli import build_parser, main
from haystack_irmetrics.cli.args import seed
from haystack_irmetrics.errors import InvalidArgumentError, InvalidSeedError, StatsInputError

from .conftest import ROOT

EXAMPLES = ROOT / "examples" / "data"
RUN = str(EXAMPLES / "good.trec")
QRELS = str(EXAMPLES / "half_qrels.tsv")
CLICKS = str(EXAMPLES / "click_log.csv")
MESSAGE = "seed must be a whole number from 0 to 4294967295"

#: A command line of each command that takes --seed (the seed is appended); each would do real work.
COMMANDS = {
    "clicks fit": ["clicks", "fit", CLICKS, "--model", "pbm", "--test-fraction", "0.2", "-o", "{tmp}/fit"],
    "clicks compare": ["clicks", "compare", CLICKS, "--models", "ctr,pbm"],
    "clicks estimate": ["clicks", "estimate", str(EXAMPLES / "randomized_clicks.csv"), "--run", RUN],
    "clicks measure": ["clicks", "measure", CLICKS, "--run", RUN],
    "clicks windows": ["clicks", "windows", CLICKS],
    "interleave": ["interleave", str(EXAMPLES / "interleaved_clicks.csv")],
    "fuse": ["fuse", RUN, str(EXAMPLES / "poor.trec"), "--qrels", QRELS, "--optimize", "--method", "wsum"],
    "compare": ["compare", RUN, str(EXAMPLES / "poor.trec"), "--qrels", QRELS],
    "report": ["report", RUN, "--qrels", QRELS, "-o", "{tmp}/r.html"],
    "feedback": ["feedback", str(EXAMPLES / "feedback_log.csv")],
    "judge": ["judge", RUN, "--qrels", QRELS, "--queries", "q.jsonl", "--corpus", "c.jsonl", "--llm", "m",
              "--api-base-url", "http://127.0.0.1:9/v1", "-o", "{tmp}/judged"],
}  # fmt: skip


def _seed_options(parser: argparse.ArgumentParser, prog: str = "irmetrics"):
    for action in parser._actions:
        if "--seed" in action.option_strings:
            yield prog, action
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                yield from _seed_options(command, f"{prog} {name}")


def test_every_seed_option_of_every_command_is_the_one_seed_type():
    found = dict(_seed_options(build_parser()))
    assert {f"irmetrics {c}" for c in COMMANDS} <= set(found)
    assert [prog for prog, action in found.items() if action.type is not seed or action.default != 0] == []
    assert seed("4294967295") == 2**32 - 1 and seed("0") == 0  # the whole range is taken


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("bad", ["-1", "4294967296", "1.5", "x"])
def test_a_bad_seed_exits_2_with_the_one_message_before_any_work(command, bad, tmp_path, capsys):
    argv = [a.format(tmp=tmp_path) for a in COMMANDS[command]]
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--seed", bad])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        err[-1] == f"irmetrics {command}: error: argument --seed: {MESSAGE}, got {bad if bad[0] in '-4' else repr(bad)}"
    )
    assert not any(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, True, "7"])
def test_python_entry_points_raise_the_one_typed_error(bad):
    pytest.importorskip("polars")
    from haystack_irmetrics.clicks import ClickLog, compare_models, fit_model
    from haystack_irmetrics.clicks.interleaving import query_rng
    from haystack_irmetrics.clicks.simulate import simulate
    from haystack_irmetrics.fusion import FusionSearch, optimize_fusion
    from haystack_irmetrics.judges.agreement import sample_labelled
    from haystack_irmetrics.stats import bootstrap_ci

    sessions = ClickLog(CLICKS).sessions()
    qrels = {f"q{i}": {"good": 1} for i in range(6)}
    runs = [{q: {"good": 1.0, "bad": 2.0} for q in qrels}, {q: {"good": 3.0, "bad": 0.0} for q in qrels}]
    calls = [
        lambda: fit_model("pbm", sessions, test_fraction=0.2, seed=bad),
        lambda: fit_model("ctr", sessions, seed=bad),  # no fraction drawn: still checked
        lambda: compare_models(["ctr"], sessions, seed=bad),
        lambda: sessions.split(0.2, seed=bad),
        lambda: simulate(fit_model("ctr", sessions).model, sessions, seed=bad),
        lambda: optimize_fusion(runs, qrels, FusionSearch(metric="P@1", folds=3, seed=bad), method="wsum"),
        lambda: sample_labelled(qrels, 2, seed=bad),
        lambda: query_rng(bad, "q1"),
        lambda: bootstrap_ci([0.1, 0.2, 0.3], seed=bad),
    ]
    for call in calls:
        with pytest.raises(InvalidSeedError, match=MESSAGE) as raised:
            call()
        assert isinstance(raised.value, InvalidArgumentError) and isinstance(raised.value, StatsInputError)


def test_the_interleaving_joiner_and_the_jittered_plot_check_their_seed(tmp_path):
    pytest.importorskip("haystack")
    pytest.importorskip("matplotlib")
    from haystack_irmetrics.components.interleaving import InterleavingJoiner
    from haystack_irmetrics.plots.arrays import plot_score_distribution

    with pytest.raises(InvalidSeedError, match=MESSAGE):
        InterleavingJoiner(seed=-1)
    with pytest.raises(InvalidSeedError, match=MESSAGE):
        plot_score_distribution({"a": [0.1, 0.2]}, tmp_path / "d.png", seed=-1)
    assert not (tmp_path / "d.png").exists()
    assert InterleavingJoiner(seed=np.int64(7)).seed == 7 and type(InterleavingJoiner(seed=np.int64(7)).seed) is int
