"""The irmetrics CLI: formats, per-query output, typed errors as exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from haystack_irmetrics.cli import main


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d4 3 0.4 t\nq2 Q0 d5 1 0.8 t\nq2 Q0 d3 2 0.7 t\n")
    return qrels, run


def test_json_has_beir_key_names_and_rounded_values(files, capsys):
    assert main(["evaluate", str(files[0]), str(files[1]), "-k", "1,3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == [
        "NDCG@1",
        "NDCG@3",
        "MAP@1",
        "MAP@3",
        "Recall@1",
        "Recall@3",
        "P@1",
        "P@3",
        "MRR@1",
        "MRR@3",
        "R_cap@1",
        "R_cap@3",
    ]
    assert out["NDCG@3"] == 0.74532 and out["MRR@1"] == 0.5


def test_per_query_adds_unrounded_values_by_metric_and_query(files, capsys):
    main(["evaluate", str(files[0]), str(files[1]), "-k", "3", "--per-query"])
    out = json.loads(capsys.readouterr().out)
    assert out["per_query"]["MRR@3"] == {"q1": 1.0, "q2": 0.5}
    assert out["per_query"]["NDCG@3"]["q2"] == pytest.approx(0.6309297535714575, abs=0)


def test_markdown_and_tsv_formats(files, capsys):
    main(["evaluate", str(files[0]), str(files[1]), "-k", "1,3", "--format", "markdown"])
    md = capsys.readouterr().out
    assert "| NDCG | 0.25000 | 0.74532 |" in md
    main(["evaluate", str(files[0]), str(files[1]), "-k", "3", "--format", "tsv", "-m", "P"])
    assert capsys.readouterr().out.strip() == "P@3\tall\t0.50000"  # tables: the beir preset's 5 decimals


def test_trec_preset_and_threshold_flags(files, capsys):
    main(["evaluate", str(files[0]), str(files[1]), "-k", "3", "--preset", "trec", "--threshold", "2", "-m", "P"])
    assert json.loads(capsys.readouterr().out)["P@3"] == pytest.approx(1 / 6)


def test_bad_input_exits_2_with_a_message_naming_the_line(files, tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.write_text("q1 Q0 d1 1 0.9 t\nq1 Q0 d1 2 0.5 t\n")
    assert main(["evaluate", str(files[0]), str(bad)]) == 2
    assert "appears twice for query 'q1' (rows 1 and 2)" in capsys.readouterr().err
    assert main(["evaluate", str(files[0]), str(files[1]), "-k", "0"]) == 2


def test_console_script_is_installed_and_runs(files):
    out = subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", "evaluate", str(files[0]), str(files[1]), "-k", "3"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["P@3"] == 0.5


HEAVY = ("haystack", "polars", "pyarrow", "matplotlib", "scipy")


def loaded_after(argv: list[str]) -> list[str]:
    """The heavy packages a fresh interpreter has imported after ``irmetrics ARGV``."""
    code = (
        "import contextlib, io, sys\n"
        "from haystack_irmetrics.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    main({argv!r})\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.replace("'", '"'))


@pytest.mark.parametrize("command", [[], ["evaluate"], ["beir"], ["compare"], ["feedback"], ["plot"]])
def test_help_imports_no_heavy_package(command):
    assert loaded_after([*command, "--help"]) == []


def test_evaluate_imports_neither_haystack_matplotlib_nor_scipy(files):
    # polars may stream the run file (io.evaluate_run_file) when it is installed; nothing else is loaded.
    assert set(loaded_after(["evaluate", str(files[0]), str(files[1]), "-k", "3"])) <= {"polars", "pyarrow"}


def test_holes_adds_judged_and_beirs_hole_at_every_k(capsys):
    from beir.retrieval.evaluation import EvaluateRetrieval

    from haystack_irmetrics.io import read_qrels, read_run

    assert main(["evaluate", "examples/data/half_qrels.tsv", "examples/data/good.trec", "-k", "3,10", "--holes"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out)[-4:] == ["Judged@3", "Judged@10", "Hole@3", "Hole@10"]
    qrels, run = read_qrels("examples/data/half_qrels.tsv").data, read_run("examples/data/good.trec").data
    assert {k: out[k] for k in ("Hole@3", "Hole@10")} == EvaluateRetrieval.evaluate_custom(qrels, run, [3, 10], "hole")


def test_bounds_prints_each_bounded_measures_interval_as_hole_bounds_computes_it(capsys):
    from haystack_irmetrics import hole_bounds
    from haystack_irmetrics.io import read_qrels, read_run

    args = ["evaluate", "examples/data/half_qrels.tsv", "examples/data/good.trec", "-k", "10", "-m", "NDCG,P"]
    assert main([*args, "--bounds", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    qrels, run = read_qrels("examples/data/half_qrels.tsv").data, read_run("examples/data/good.trec").data
    want = hole_bounds(qrels, run, measures=["NDCG@10", "P@10"], grade=2)
    assert out["evaluation"] == {"NDCG@10": want.value["NDCG@10"], "P@10": want.value["P@10"]}
    assert out["bounds"] == json.loads(json.dumps(want.to_dict()))
    assert out["bounds"]["measures"]["NDCG@10"]["low"] < out["evaluation"]["NDCG@10"]  # holes can lower nDCG
    assert main([*args, "--bounds", "1", "--format", "markdown"]) == 0
    table = capsys.readouterr().out
    assert "| measure | value | low | high | holes judged 1 | holes per query |" in table


def test_bounds_of_measures_without_them_or_a_bad_grade_exit_2_with_one_line(capsys):
    args = ["evaluate", "examples/data/half_qrels.tsv", "examples/data/good.trec", "-k", "10"]
    assert main([*args, "-m", "bpref", "--bounds", "1"]) == 2
    assert "--bounds: none of the measures ['bpref'] has hole bounds" in capsys.readouterr().err
    assert main([*args, "-m", "NDCG", "--bounds", "0"]) == 2
    assert "grade must be a finite number > 0" in capsys.readouterr().err
