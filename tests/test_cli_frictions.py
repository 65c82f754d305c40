"""Frictions a new user met (issue 21, section 5): each test states the behaviour that replaced one."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

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


def test_the_version_is_looked_up_only_when_asked_for(files, monkeypatch, capsys):
    import haystack_irmetrics.cli.app as cli  # where --version looks it up

    def fail() -> str:
        raise AssertionError("package metadata read on an ordinary run")

    monkeypatch.setattr(cli, "package_version", fail)
    assert main(["evaluate", *files, "-k", "1", "-m", "P"]) == 0


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


def test_every_subcommand_taking_measures_suggests_the_close_name(files, tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text('{"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1}\n')
    for argv in (
        ["feedback", str(log), "-m", "NDGC"],
        ["compare", files[1], files[1], "--qrels", files[0], "-m", "NDGC@10", "--no-stats"],
    ):
        assert main(argv) == 2
        assert "did you mean 'NDCG" in capsys.readouterr().err


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

    with pytest.raises(UnknownMeasureError, match=r"^unknown measure 'BLEU@4'; known families: \['Compat', "):
        evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, [10], measures=["BLEU@4"])


# -- 2. a run that shares no query with the feedback log -------------------------------------------

FEEDBACK_ROWS = [
    {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1},
    {"query_id": "q1", "doc_id": "d2", "position": 2, "vote": 0},
    {"query_id": "q2", "doc_id": "d3", "position": 1, "vote": 1},
    {"query_id": "q2", "doc_id": "d3", "position": 1, "vote": 1},
]


@pytest.fixture
def feedback_log(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in FEEDBACK_ROWS))
    return str(path)


@pytest.fixture
def foreign_run(tmp_path):
    path = tmp_path / "other.trec"
    path.write_text("x1 Q0 d1 1 0.9 t\nx2 Q0 d3 1 0.9 t\n")
    return str(path)


def test_feedback_with_a_run_sharing_no_query_raises_the_error_evaluate_raises():
    from haystack_irmetrics import NoOverlapError, evaluate
    from haystack_irmetrics.feedback import evaluate_feedback

    run = {"x1": {"d1": 0.9}, "x2": {"d3": 0.9}}
    with pytest.raises(NoOverlapError) as from_evaluate:
        evaluate({"q1": {"d1": 1}, "q2": {"d3": 1}}, run)
    with pytest.raises(NoOverlapError) as from_feedback:
        evaluate_feedback(FEEDBACK_ROWS, {"other": run}, n_resamples=10)
    assert type(from_feedback.value) is type(from_evaluate.value)
    message = str(from_feedback.value)
    assert message.startswith("no query is shared by run 'other' (2 queries, e.g. 'x1', 'x2')")
    assert "the judged queries of the feedback log feedback rows (2 queries, e.g. 'q1', 'q2')" in message


def test_irmetrics_feedback_with_a_run_sharing_no_query_exits_2_like_evaluate(
    feedback_log, foreign_run, tmp_path, capsys
):
    qrels = tmp_path / "qrels.txt"
    assert main(["feedback", feedback_log, "--n-resamples", "10", "--write-qrels", str(qrels)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(qrels), foreign_run]) == 2
    assert "irmetrics: error: no query is shared by the results" in capsys.readouterr().err
    assert main(["feedback", feedback_log, "--run", foreign_run, "--n-resamples", "10"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("irmetrics: error: no query is shared by run 'other' (2 queries, e.g. 'x1', 'x2')")
    assert f"judged queries of the feedback log {feedback_log} (2 queries, e.g. 'q1', 'q2')" in err


def test_an_empty_run_is_the_empty_input_error_of_evaluate_in_feedback_too():
    from haystack_irmetrics import EmptyInputError, evaluate
    from haystack_irmetrics.feedback import evaluate_feedback

    with pytest.raises(EmptyInputError, match="no query was retrieved for"):
        evaluate({"q1": {"d1": 1}}, {})
    with pytest.raises(EmptyInputError, match="no query was retrieved for"):
        evaluate_feedback(FEEDBACK_ROWS, {"new": {}}, n_resamples=10)


def test_a_run_sharing_one_query_or_missing_a_whole_segment_still_scores():
    from haystack_irmetrics.feedback import evaluate_feedback

    rows = [dict(r, segment="a" if r["query_id"] == "q1" else "b") for r in FEEDBACK_ROWS]
    ev = evaluate_feedback(
        rows, {"new": {"q1": {"d1": 1.0}}}, columns={"segment": "segment"}, k_values=[1], n_resamples=10
    )
    assert ev.means()["new"]["P@1"] == 0.5  # q2 unanswered scores 0
    assert {s.label: s.systems["new"].means()["P@1"] for s in ev.segments} == {"a": 1.0, "b": 0.0}


# -- 3. a threshold that leaves nothing relevant ---------------------------------------------------


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("threshold", [0.1, 0.3, 0.5, 0.7, 0.9, 0.97])
def test_smallest_all_up_votes_is_the_fewest_unanimous_votes_whose_wilson_bound_reaches_the_threshold(
    confidence, threshold
):
    from haystack_irmetrics.feedback import Strategy, wilson_lower_bound
    from haystack_irmetrics.feedback.evaluate import smallest_all_up_votes

    n = smallest_all_up_votes(Strategy("wilson", confidence=confidence), threshold)
    assert wilson_lower_bound(n, n, confidence) >= threshold
    assert n == 1 or wilson_lower_bound(n - 1, n - 1, confidence) < threshold


def test_smallest_all_up_votes_per_strategy():
    from haystack_irmetrics.feedback import Strategy
    from haystack_irmetrics.feedback.evaluate import smallest_all_up_votes

    assert smallest_all_up_votes(Strategy("wilson"), 0.5) == 4  # the README's 4 of 4 (0.5101)
    assert smallest_all_up_votes(Strategy("wilson", min_votes=6), 0.5) == 6
    assert smallest_all_up_votes(Strategy("wilson"), 1.0) is None
    assert smallest_all_up_votes(Strategy("majority", min_votes=3), 1.0) == 3
    assert smallest_all_up_votes(Strategy("majority"), 1.5) is None
    assert smallest_all_up_votes(Strategy("mean"), 0.5) is None


def test_wilson_at_the_default_threshold_on_a_small_log_warns_saying_how_many_votes_it_takes():
    from haystack_irmetrics.feedback import NoRelevantJudgmentWarning, evaluate_feedback

    with pytest.warns(NoRelevantJudgmentWarning) as caught:
        ev = evaluate_feedback(FEEDBACK_ROWS, strategy="wilson", threshold=0.5, n_resamples=10)
    (warning,) = caught
    message = str(warning.message)
    assert message.startswith("no judgment reaches the relevance threshold 0.5 (0 relevant of 3 judged")
    assert "so MAP, Recall, P, MRR, R_cap are 0 for every system" in message
    assert "with wilson at 95% confidence it takes 4 of 4 up votes (bound 0.5101) to reach 0.5" in message
    assert "the highest label here is 0.3424 (2 of 2 votes up)" in message
    assert warning.filename == __file__  # points at the caller
    assert ev.means()["logged"]["P@1"] == 0.0


def test_the_vote_count_in_the_warning_follows_the_strategy_confidence():
    from haystack_irmetrics.feedback import NoRelevantJudgmentWarning, Strategy, evaluate_feedback

    with pytest.warns(NoRelevantJudgmentWarning, match=r"at 90% confidence it takes 3 of 3 up votes \(bound 0\.5"):
        evaluate_feedback(FEEDBACK_ROWS, strategy=Strategy("wilson", confidence=0.9), n_resamples=10)
    with pytest.warns(NoRelevantJudgmentWarning, match=r"it takes 16 of 16 up votes \(bound 0\.80"):
        evaluate_feedback(FEEDBACK_ROWS, strategy="wilson", threshold=0.8, n_resamples=10)


@pytest.mark.parametrize(
    "strategy,threshold,why",
    [
        ("mean", 2.0, "the labels are mean votes and no (query, document) has a mean vote >= 2; the highest here is 1"),
        ("majority", 1.5, "majority labels are 0 or 1, so a threshold of 1.5 (above 1) is never reached"),
        ("wilson", 1.0, "the Wilson lower bound is below 1 for any number of votes"),
    ],
)
def test_the_warning_explains_each_strategy(strategy, threshold, why):
    from haystack_irmetrics.feedback import NoRelevantJudgmentWarning, evaluate_feedback

    with pytest.warns(NoRelevantJudgmentWarning, match=re.escape(why)):
        evaluate_feedback(FEEDBACK_ROWS, strategy=strategy, threshold=threshold, n_resamples=10)


def test_no_warning_when_a_judgment_is_relevant_or_no_measure_uses_the_threshold():
    import warnings

    from haystack_irmetrics.feedback import evaluate_feedback

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate_feedback(FEEDBACK_ROWS, strategy="wilson", threshold=0.3, n_resamples=10)  # 2 of 2: 0.3424
        evaluate_feedback(FEEDBACK_ROWS, strategy="wilson", measures=["NDCG"], n_resamples=10)  # labels as gains


def test_irmetrics_feedback_prints_the_warning_as_one_line_on_stderr(feedback_log, capsys):
    assert main(["feedback", feedback_log, "--strategy", "wilson", "--threshold", "0.5", "--n-resamples", "10"]) == 0
    out, err = capsys.readouterr()
    assert "0 relevant at threshold 0.5" in out
    (line,) = err.splitlines()
    assert line.startswith("irmetrics: warning: no judgment reaches the relevance threshold 0.5")
    assert "it takes 4 of 4 up votes" in line


# -- 4. an unknown log extension names the caller's own option -------------------------------------


def test_irmetrics_feedback_on_an_unknown_extension_names_the_format_option(feedback_log, tmp_path, capsys):
    log = tmp_path / "log.txt"
    log.write_text(Path(feedback_log).read_text())
    assert main(["feedback", str(log), "--n-resamples", "10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"irmetrics: error: {log}: cannot tell the format from the name")
    assert err.rstrip().endswith("pass --format jsonl|csv|tsv|parquet") and "fmt=" not in err
    assert main(["feedback", str(log), "--format", "jsonl", "--n-resamples", "10"]) == 0


def test_irmetrics_feedback_on_a_missing_log_still_says_file_not_found(tmp_path, capsys):
    assert main(["feedback", str(tmp_path / "nothere.txt")]) == 2
    assert capsys.readouterr().err.strip() == f"irmetrics: error: {tmp_path / 'nothere.txt'}: file not found"


def test_the_python_api_on_an_unknown_extension_names_the_fmt_keyword(feedback_log, tmp_path):
    from haystack_irmetrics.feedback import FeedbackLog, FeedbackSchemaError, evaluate_feedback

    log = tmp_path / "log.txt"
    log.write_text(Path(feedback_log).read_text())
    expected = r"cannot tell the format from the name \(known endings: \.jsonl, .*\); pass fmt= one of 'jsonl', 'csv'"
    with pytest.raises(FeedbackSchemaError, match=expected):
        FeedbackLog(log).to_frame()
    with pytest.raises(FeedbackSchemaError, match=expected):
        evaluate_feedback(str(log), n_resamples=10)
    assert evaluate_feedback(str(log), fmt="jsonl", n_resamples=10).systems == ["logged"]


# -- 7. short reprs --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_result():
    from haystack_irmetrics import evaluate

    qrels = {f"query-{i:05d}": {f"doc-{i}": 1, f"doc-{i + 1}": 2} for i in range(10_000)}
    run = {f"query-{i:05d}": {f"doc-{j}": 1.0 / (1 + j - i) for j in range(i, i + 30)} for i in range(10_000)}
    return evaluate(qrels, run)


def test_an_evaluation_result_repr_is_short_and_names_preset_queries_measures_and_first_means(big_result):
    text = repr(big_result)
    assert len(text) <= 400 and str(big_result) == text
    assert text.startswith("EvaluationResult(preset='beir', queries=10000, measures=[NDCG@1, NDCG@3, NDCG@5, NDCG@10, ")
    assert "... (+32)]" in text and f"means={{'NDCG@1': {big_result.means['NDCG@1']!r}, " in text
    assert "query-0" not in text and "doc-" not in text


def test_a_repr_stays_bounded_with_long_measure_names():
    from haystack_irmetrics import evaluate

    gains = ",".join(f"{g}:{g * 7}" for g in range(40))
    res = evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, [1, 2, 3, 4, 5], measures=[f"nDCG(gains={{{gains}}})"])
    assert len(repr(res)) <= 400 and repr(res).endswith("...)")


def test_a_feedback_evaluation_repr_is_short_whatever_the_log_size():
    from haystack_irmetrics.feedback import evaluate_feedback

    rows = [{"query_id": f"q{i}", "doc_id": f"d{i % 50}", "position": 1 + i % 10, "vote": i % 2} for i in range(5_000)]
    ev = evaluate_feedback(rows, {"new": {f"q{i}": {f"d{i % 50}": 1.0} for i in range(5_000)}}, n_resamples=10)
    text = repr(ev)
    assert len(text) <= 400
    assert text.startswith("FeedbackEvaluation(source='feedback rows', strategy='mean', queries=5000, ")
    assert "systems=[logged, new], baseline='logged', metrics=[NDCG@1," in text
    assert (
        repr(ev.overall)
        == "SegmentResult(label='all', queries=5000, systems=[logged, new], queries_with_relevant=2500)"
    )
