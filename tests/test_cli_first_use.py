"""What a new user meets first (issue 46, item 7): a mistyped flag, subcommand or choice is named with the
closest one the command takes (every command, through ``cli.args.Parser``), counts agree in number, and the
local judge server does not take the judging page's port."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from haystack_irmetrics.cli import build_parser, main
from haystack_irmetrics.cli.args import Parser
from haystack_irmetrics.io.tables import plural

from .conftest import ROOT

DATA = ROOT / "examples" / "data"
GOOD, POOR, QRELS = str(DATA / "good.trec"), str(DATA / "poor.trec"), str(DATA / "half_qrels.tsv")


def _error(capsys, argv: list[str]) -> str:
    """The last line argparse printed for ``argv`` (it exits 2)."""
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["pool", GOOD, POOR, "--budjet", "5"], "irmetrics pool: error: unrecognized argument --budjet: did you mean --budget?"),
        (["pool", "simulate", GOOD, "--qrels", QRELS, "--budgest", "5"], "did you mean --budgets?"),
        (["pool", "estimate", GOOD, "--sample", "x", "--estimater", "xinfAP"], "did you mean --estimator?"),
        (["power", GOOD, POOR, "--qrels", QRELS, "-m", "NDCG@10", "--delat", "0.1"], "did you mean --delta?"),
        (["power", GOOD, POOR, "--qrels", QRELS, "-m", "NDCG@10", "--alpah=0.1"], "unrecognized argument --alpah: did you mean --alpha?"),
        (["assess", "pairs.tsv", "--quries", "q"], "irmetrics assess: error: unrecognized argument --quries: did you mean --queries?"),
        (["evaluate", QRELS, GOOD, "--fromat", "json"], "did you mean --format?"),
        (["clicks", "fit", "log.csv", "--modle", "pbm"], "irmetrics clicks fit: error: unrecognized argument --modle: did you mean --model?"),
        (["--verison"], "irmetrics: error: unrecognized argument --verison: did you mean --version?"),
        (["compare", GOOD, POOR, "--zzz"], "irmetrics compare: error: unrecognized argument --zzz"),
    ],
)  # fmt: skip
def test_a_mistyped_flag_is_named_with_the_closest_before_a_missing_required_one(capsys, argv, line):
    """``--budjet`` once said 'the following arguments are required: --budget'."""
    got = _error(capsys, argv)
    assert got.endswith(line) and "required" not in got


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["asess"], "invalid choice: 'asess' (choose from 'evaluate', "),
        (["pool", "simulte", GOOD], "'simulte' is no file and no action: did you mean irmetrics pool simulate?"),
        (["assess", "exprot", "DIR"], "'exprot' is no file and no action: did you mean irmetrics assess export?"),
        (["clicks", "fitt", "log.csv"], "invalid choice: 'fitt'"),
        (["pool", GOOD, "--budget", "1", "--strategy", "dept", "-o", "x.tsv"], "invalid choice: 'dept'"),
        (["evaluate", QRELS, GOOD, "--preset", "trek"], "invalid choice: 'trek'"),
    ],
)
def test_a_mistyped_subcommand_action_or_choice_gets_the_closest(capsys, argv, says):
    got = _error(capsys, argv)
    match = {"asess": "assess", "fitt": "fit", "dept": "depth", "trek": "trec"}
    assert says in got
    for typed, meant in match.items():
        if typed in argv:
            assert got.endswith(f"did you mean {meant!r}?")


def _parsers(parser: argparse.ArgumentParser, seen: list[argparse.ArgumentParser]) -> list[argparse.ArgumentParser]:
    seen.append(parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                _parsers(command, seen)
    for command in getattr(parser, "actions", {}).values():  # irmetrics pool simulate / estimate
        _parsers(command, seen)
    return seen


def test_every_flag_of_every_command_passes_the_check_and_every_parser_checks():
    parsers = _parsers(build_parser(), [])
    assert len(parsers) > 20 and all(isinstance(p, Parser) for p in parsers)
    for p in parsers:
        flags = [s for a in p._actions for s in a.option_strings]
        for flag in flags:
            p._check_flags([flag, "1", f"{flag}=1"] if flag.startswith("--") else [flag, "1"])


def test_abbreviations_attached_values_and_negative_numbers_are_not_mistypes(capsys):
    assert main(["evaluate", QRELS, GOOD, "-k10", "-m", "NDCG", "--form=json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"NDCG@10": pytest.approx(0.82687)}
    assert main(["evaluate", QRELS, GOOD, "-k", "10", "-m", "NDCG", "--pres", "trec"]) == 0  # argparse's prefix
    capsys.readouterr()
    assert main(["power", GOOD, POOR, "--qrels", QRELS, "-m", "NDCG@10", "--delta", "-1"]) == 2  # the value's check
    assert "delta must be a finite number > 0" in capsys.readouterr().err


def test_counts_agree_in_number(tmp_path, capsys):
    assert [plural(1, "pair"), plural(2, "pair"), plural(1, "query", "queries"), plural(0, "query", "queries")] == [
        "1 pair",
        "2 pairs",
        "1 query",
        "0 queries",
    ]
    assert main(["pool", GOOD, "--budget", "1", "-o", str(tmp_path / "pairs.tsv")]) == 0
    assert capsys.readouterr().err.endswith(": 1 pair of 1 query (depth)\n")
    lacking = tmp_path / "poor11.trec"
    lines = (DATA / "poor.trec").read_text().splitlines(True)
    lacking.write_text("".join(line for line in lines if line.split()[0] != lines[0].split()[0]))
    argv = ["compare", GOOD, str(lacking), "--qrels", QRELS, "-m", "NDCG", "-k", "10", "--n-resamples", "200"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "Holm-adjusted over the 1 measure tested;" in captured.out
    assert "note: 1 judged query is answered by good only" in captured.err


def test_irmetrics_judge_says_one_pair_judged(tmp_path, capsys):
    from .judge_data import make_case
    from .judge_server import JudgeServer

    case = make_case(tmp_path / "data")
    argv = ["judge", *map(str, case.runs), "--qrels", str(case.qrels), "--queries", str(case.folder), "--corpus"]
    argv += [str(case.folder), "--depth", "5", "--llm", "m", "-o", str(tmp_path / "out"), "--no-cache"]
    with JudgeServer(case.labels) as server:
        assert main([*argv, "--api-base-url", server.url, "--strategy", "depth", "--budget", "1"]) == 0
    assert re.match(r"judged 1 pair \(1 request, 0 cached, ", capsys.readouterr().out)


def test_the_local_judge_server_does_not_take_the_judging_pages_port():
    from haystack_irmetrics.judges.server import DEFAULT_PORT

    assess = next(
        a
        for a in build_parser()._subparsers._group_actions[0].choices["assess"]._actions
        if "--port" in a.option_strings
    )
    assert DEFAULT_PORT != assess.default == 8765
    page = (ROOT / "docs" / "judging.md").read_text(encoding="utf-8")
    server = next(line for line in page.splitlines() if line.startswith("python -m haystack_irmetrics.judges.server"))
    assert f"--port {DEFAULT_PORT} &" in server and f"http://127.0.0.1:{DEFAULT_PORT}/v1" in page
    assert "127.0.0.1:8765/v1" not in page
