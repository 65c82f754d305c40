"""Frictions a new user met (issue 21, section 5): each test states the behaviour that replaced one."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from haystack_irmetrics.cli import TABLE_DIGITS, build_parser, main


@pytest.fixture
def files(tmp_path):
    """Three judged queries, q3 unanswered; P@3 and the trec means are not round numbers."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d9 1\nq4 0 d7 1\n")
    run = tmp_path / "run"
    run.write_text(
        "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d4 3 0.4 t\n"
        "q2 Q0 d5 1 0.8 t\nq2 Q0 d3 2 0.7 t\nq2 Q0 d6 3 0.6 t\n"
        "q4 Q0 d8 1 0.8 t\nq4 Q0 d6 2 0.7 t\nq4 Q0 d7 3 0.6 t\n"
    )
    return str(qrels), str(run)


def run_cli(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Each markdown table of ``text`` as rows of cells (header first, separator dropped)."""
    tables: list[list[list[str]]] = []
    for block in text.strip().split("\n\n"):
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in block.splitlines()]
        tables.append([rows[0], *rows[2:]])
    return tables


# -- 1. --per-query in markdown --------------------------------------------------------------------


def test_markdown_per_query_prints_a_second_table_whose_values_are_the_json_values(files, capsys):
    as_json = json.loads(run_cli(capsys, "evaluate", *files, "-k", "1,3", "--per-query"))["per_query"]
    md = run_cli(capsys, "evaluate", *files, "-k", "1,3", "--per-query", "--format", "markdown")
    means, per_query = markdown_tables(md)
    assert means[0] == ["measure", "@1", "@3"]
    assert per_query[0] == ["query", *as_json]  # one column per measure, in the JSON's order
    rows = {row[0]: dict(zip(per_query[0][1:], row[1:], strict=True)) for row in per_query[1:]}
    assert set(rows) == {q for values in as_json.values() for q in values}
    for measure, values in as_json.items():
        for q in rows:
            # the table's 5 decimals of the JSON value; blank where the measure does not average the query
            assert rows[q][measure] == (f"{values[q]:.5f}" if q in values else "")
    assert rows["q3"]["NDCG@3"] == "" and rows["q3"]["MRR@3"] == "0.00000"  # beir: MRR counts q3, NDCG not


def test_markdown_per_query_with_digits_equals_the_json_per_query_values_exactly(files, capsys):
    args = ["evaluate", *files, "-k", "3", "-m", "NDCG,P", "--per-query", "--digits", "6"]
    as_json = json.loads(run_cli(capsys, *args))["per_query"]
    _, per_query = markdown_tables(run_cli(capsys, *args, "--format", "markdown"))
    from_md = {m: {row[0]: float(row[i]) for row in per_query[1:] if row[i]} for i, m in enumerate(per_query[0]) if i}
    assert from_md == as_json


def test_markdown_without_per_query_is_the_means_table_only(files, capsys):
    assert len(markdown_tables(run_cli(capsys, "evaluate", *files, "-k", "3", "--format", "markdown"))) == 1


def test_a_query_id_with_a_pipe_does_not_break_the_markdown_row(tmp_path, capsys):
    (tmp_path / "q").write_text("a|b 0 d1 1\n")
    (tmp_path / "r").write_text("a|b Q0 d1 1 0.9 t\n")
    args = ["evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "-k", "1", "-m", "P", "--per-query"]
    md = run_cli(capsys, *args, "--format", "markdown")
    assert md.strip().splitlines()[-1] == "| a\\|b | 1.00000 |"


# -- 5. --version, defaults in --help, close matches for misspelt measures -------------------------


def test_version_prints_the_installed_distribution_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"irmetrics {version('haystack-irmetrics')}"


def test_version_falls_back_to_the_package_version_when_not_installed(monkeypatch):
    import importlib.metadata

    from haystack_irmetrics import __version__
    from haystack_irmetrics.cli import package_version

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert package_version() == f"{__version__} (not installed)"


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("command", ["evaluate", "beir", "compare", "feedback", "plot"])
def test_every_option_with_a_default_shows_it_in_help(command):
    parser = subcommands()[command]
    text = parser.format_help()
    for action in parser._actions:
        if (
            not action.option_strings
            or action.default is None
            or action.default is False
            or action.default == []
            or action.default is argparse.SUPPRESS
            or isinstance(action, argparse._HelpAction)
        ):
            continue
        assert action.help and "default" in action.help, f"{command} {action.option_strings} hides its default"
    assert "(default: (default" not in text and "default 1" not in text  # one wording, stated once


def test_help_names_the_defaults_a_new_user_asked_about():
    helps = {name: re.sub(r"\s+", " ", p.format_help()) for name, p in subcommands().items()}
    assert "cutoffs, e.g. 1,3,5,10 (default: 1,3,5,10,100,1000)" in helps["evaluate"]
    assert "output format (default: json)" in helps["evaluate"]
    assert "beir 2.2.0 or trec_eval conventions (default: beir)" in helps["evaluate"]
    assert "(default: mean)" in helps["feedback"] and "log format (default: from the file name)" in helps["feedback"]
    assert "cutoffs (default: 1,3,5,10)" in helps["feedback"]
    assert "cutoffs (default: 1,3,5,10,100,1000)" in helps["beir"] and "(default: bm25)" in helps["beir"]
    assert "what to print (default: markdown)" in helps["compare"]
    assert "--dpi DPI default: 100" in helps["plot"]


# -- 6. how means are printed ----------------------------------------------------------------------


def test_trec_json_keeps_the_exact_float64_mean_of_the_per_query_values(files, capsys):
    from haystack_irmetrics import evaluate
    from haystack_irmetrics.io import read_qrels, read_run

    out = json.loads(run_cli(capsys, "evaluate", *files, "-k", "3", "-m", "P", "--preset", "trec", "--per-query"))
    expected = evaluate(read_qrels(files[0]), read_run(files[1]), [3], measures=["P"], preset="trec")
    assert out["P@3"] == expected.raw_means["P@3"] == 0.4444444444444444  # not rounded
    per_query = list(out["per_query"]["P@3"].values())
    assert out["P@3"] == sum(per_query) / len(per_query)


def test_tables_print_four_decimals_for_trec_and_five_for_beir(files, capsys):
    assert TABLE_DIGITS == {"beir": 5, "trec": 4}
    args = ["evaluate", *files, "-k", "3", "-m", "P"]
    assert run_cli(capsys, *args, "--preset", "trec", "--format", "tsv").strip() == "P@3\tall\t0.4444"
    assert run_cli(capsys, *args, "--preset", "trec", "--format", "markdown").splitlines()[2] == "| P | 0.4444 |"
    assert run_cli(capsys, *args, "--format", "tsv").strip() == "P@3\tall\t0.44444"
    assert run_cli(capsys, *args, "--format", "markdown").splitlines()[2] == "| P | 0.44444 |"


def test_the_beir_preset_json_numbers_are_unchanged(files, capsys):
    out = json.loads(run_cli(capsys, "evaluate", *files, "-k", "1,3"))
    assert out["P@3"] == 0.44444 and out["NDCG@3"] == round(out["NDCG@3"], 5)


def test_digits_rounds_every_printed_value_in_every_format(files, capsys):
    args = ["evaluate", *files, "-k", "3", "-m", "P,NDCG", "--preset", "trec", "--per-query", "--digits", "2"]
    out = json.loads(run_cli(capsys, *args))
    assert out["P@3"] == 0.44 and out["per_query"]["P@3"] == {"q1": 0.67, "q2": 0.33, "q4": 0.33}
    tsv = run_cli(capsys, *args, "--format", "tsv").splitlines()
    assert tsv[0] == "P@3\tall\t0.44" and "P@3\tq1\t0.67" in tsv
    assert all(re.fullmatch(r"\d\.\d\d", line.split("\t")[2]) for line in tsv)
    md = run_cli(capsys, *args, "--format", "markdown")
    assert "| P | 0.44 |" in md and "| q1 | 0.67 |" in md


def test_digits_rounds_the_unrounded_beir_mean_not_beirs_rounded_one(files, capsys):
    out = json.loads(run_cli(capsys, "evaluate", *files, "-k", "3", "-m", "NDCG", "--digits", "7"))
    from haystack_irmetrics import evaluate
    from haystack_irmetrics.io import read_qrels, read_run

    raw = evaluate(read_qrels(files[0]), read_run(files[1]), [3], measures=["NDCG"]).raw_means["NDCG@3"]
    assert out["NDCG@3"] == round(raw, 7)


@pytest.mark.parametrize("bad", ["-1", "18", "two"])
def test_digits_out_of_range_exits_2_naming_the_option(files, capsys, bad):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", *files, "--digits", bad])
    assert exit_.value.code == 2
    assert "argument --digits: expected a number of decimals from 0 to 17" in capsys.readouterr().err


def test_a_misspelt_measure_suggests_the_close_name_in_the_cli(files, capsys):
    assert main(["evaluate", *files, "-m", "NDGC@10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irmetrics: error: unknown measure 'NDGC@10'; did you mean 'NDCG@10'?")
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "written,suggested",
    [
        ("NDGC@10", "'NDCG@10'"),
        ("NDGC", "'NDCG'"),  # a bare family, crossed with k_values when spelt right
        ("recal@5", "'Recall@5'"),
        ("ndgc_burges@5", "'nDCG_exp@5'"),  # a variant alias is suggested by its measure name
        ("nDGC(gains={0:0,1:1})@5", "'NDCG(gains={0:0,1:1})@5'"),
    ],
)
def test_a_misspelt_measure_suggests_the_close_name_in_the_python_api(written, suggested):
    from haystack_irmetrics import UnknownMeasureError, evaluate
    from haystack_irmetrics.core.measures import parse_measure

    with pytest.raises(UnknownMeasureError, match=rf"^unknown measure {re.escape(repr(written))}; did you mean "):
        evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, [10], measures=[written])
    with pytest.raises(UnknownMeasureError) as err:
        parse_measure(written if "@" in written else written + "@10")
    assert suggested.rstrip("'") in str(err.value)


def test_a_name_close_to_nothing_only_lists_the_families():
    from haystack_irmetrics import UnknownMeasureError, evaluate

    with pytest.raises(UnknownMeasureError, match=r"^unknown measure 'BLEU@4'; known families: \['F', "):
        evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, [10], measures=["BLEU@4"])
