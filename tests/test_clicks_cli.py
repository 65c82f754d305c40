"""``irmetrics clicks fit|compare`` and ``irmetrics interleave``: files written, JSON keys, bad input exits 2."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main
from haystack_irmetrics.clicks.interleaving import interleave, query_rng
from haystack_irmetrics.clicks.simulate import log_rows
from haystack_irmetrics.io import read_qrels
from tests.test_clicks_models import QRELS, RUNS, simulated


@pytest.fixture(scope="module")
def click_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("clicks") / "log.csv"
    pl.DataFrame(log_rows(simulated("dbn", 3000))).write_csv(path)
    return path


def test_fit_writes_float_qrels_that_evaluate_reads_and_model_json_as_the_issue_specifies(click_csv, tmp_path, capsys):
    out = tmp_path / "dbn"
    assert main(["clicks", "fit", str(click_csv), "--model", "dbn", "--test-fraction", "0.2", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("dbn: 2400 training sessions") and "600 test sessions" in printed
    model = json.loads((out / "model.json").read_text())
    assert list(model) == ["model", "em", "params", "train", "test"]  # em: issue 39, how the fit ended
    assert model["model"] == "dbn" and set(model["params"]) == {"continuation", "attractiveness", "satisfaction"}
    assert list(model["train"]) == ["sessions", "log_likelihood"] and model["train"]["sessions"] == 2400
    assert list(model["test"]) == ["sessions", "log_likelihood", "perplexity", "perplexity_at"]
    assert list(model["test"]["perplexity_at"])[:2] == ["1", "2"]
    header, *lines = (out / "qrels.tsv").read_text().splitlines()
    assert header == "query-id\tcorpus-id\tscore"  # BEIR's layout, as irmetrics judge writes its qrels.tsv
    assert all(len(line.split("\t")) == 3 for line in lines)
    labels = [float(line.split("\t")[2]) for line in lines]
    assert labels and all(0 <= v <= 1 for v in labels)
    run = {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in RUNS[0].items()}
    assert 0 < evaluate(read_qrels(out / "qrels.tsv"), run, [10]).means["NDCG@10"] <= 1


def test_pbm_model_json_keys_examination_by_rank(click_csv, tmp_path):
    assert main(["clicks", "fit", str(click_csv), "--model", "pbm", "-o", str(tmp_path)]) == 0
    model = json.loads((tmp_path / "model.json").read_text())
    assert list(model["params"]["examination"])[:3] == ["1", "2", "3"]
    assert model["test"] is None


def test_compare_prints_one_row_per_model_and_json_with_the_issues_keys(click_csv, capsys):
    assert main(["clicks", "compare", str(click_csv), "--models", "ctr,pbm,dbn", "--json", "--seed", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["models", "test_sessions"] and data["test_sessions"] == 600
    assert list(data["models"]) == ["ctr", "pbm", "dbn"]
    assert set(data["models"]["dbn"]) == {"log_likelihood", "perplexity", "perplexity_at"}
    assert main(["clicks", "compare", str(click_csv), "--models", "ctr,dbn"]) == 0
    table = capsys.readouterr().out
    assert "| model | log-likelihood | perplexity |" in table and "| dbn |" in table


def test_interleave_prints_the_issues_json_keys(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = []
    for s in range(300):
        q = sorted(QRELS)[s % len(QRELS)]
        for r, (d, team, _) in enumerate(interleave(RUNS[0][q], RUNS[3][q], rng=query_rng(s, q), length=10)):
            click = rng.random() < (0.8 if QRELS[q][d] == 2 else 0.1) / (r + 1)
            rows.append({"session": s, "query_id": q, "doc_id": d, "position": r + 1, "click": click, "team": team})
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["interleave", str(path), "--json", "--n-resamples", "500"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["wins", "losses", "ties", "delta", "p_value", "ci_low", "ci_high", "impressions"]
    assert data["impressions"] == 300 and data["delta"] > 0


def test_a_bad_click_exits_2_naming_file_row_line_and_column(tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text("session,query_id,doc_id,position,click\ns1,q,a,1,1\ns1,q,b,2,often\n")
    assert main(["clicks", "fit", str(path), "--model", "pbm", "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "log.csv: row 2 (line 3): column 'click'" in err


def test_a_session_that_skips_a_position_exits_2_or_is_skipped_and_listed(tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text("session,query_id,doc_id,position,click\ns1,q,a,1,1\ns1,q,b,2,0\ns2,q,a,1,0\ns2,q,b,3,1\n")
    assert main(["clicks", "fit", str(path), "--model", "ctr", "-o", str(tmp_path / "o")]) == 2
    assert "session 's2' (rows 3, 4): position 2 is missing" in capsys.readouterr().err
    out = tmp_path / "skip"
    assert main(["clicks", "fit", str(path), "--model", "ctr", "-o", str(out), "--on-error", "skip"]) == 0
    assert "skipped 0 malformed rows and 1 sessions (first: 's2': position 2 is missing" in capsys.readouterr().err
    assert (out / "skipped_sessions.csv").read_text().splitlines()[1].startswith('s2,3 4,"position 2 is missing')


def test_configured_column_names_are_read(tmp_path):
    path = tmp_path / "log.jsonl"
    rows = [{"imp": "x", "qid": "q", "pid": "a", "rank": 1, "clicked": "yes"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["--session-col", "imp", "--query-col", "qid", "--doc-col", "pid", "--position-col", "rank"]
    assert (
        main(["clicks", "fit", str(path), "--model", "ctr", "-o", str(tmp_path / "o"), *args, "--click-col", "clicked"])
        == 0
    )
    assert (tmp_path / "o" / "qrels.tsv").read_text() == "query-id\tcorpus-id\tscore\nq\ta\t1.0\n"


def test_simulated_rows_round_trip_through_the_reader():
    s = simulated("pbm", 50)
    from haystack_irmetrics.clicks import ClickLog

    again = ClickLog(log_rows(s)).sessions()
    assert again.clicks.tolist() == s.clicks.tolist()

    def shown(x):
        queries, docs = x.pair_names()
        return [[(queries[p], docs[p]) for p in row if p >= 0] for row in x.pairs.tolist()]

    assert shown(again) == shown(s)


def test_the_shipped_click_logs_and_runs_are_what_make_click_data_writes(tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_click_data.py"), str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    names = ("click_log.csv", "interleaved_clicks.csv", "randomized_clicks.csv", "timed_clicks.csv", "good.trec")
    for name in (*names, "poor.trec"):
        assert (tmp_path / name).read_bytes() == (ROOT / "examples" / "data" / name).read_bytes(), name
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_diversity_qrels.py"), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    name = "diversity_qrels.txt"
    assert (tmp_path / name).read_bytes() == (ROOT / "examples" / "data" / name).read_bytes(), name


def test_interleave_breaks_the_outcome_down_by_segment(tmp_path, capsys):
    rows = ["session,query_id,doc_id,position,click,team,device"]
    for s in range(40):
        device = "mobile" if s % 2 else "desktop"
        rows += [f"s{s},q,a,1,{int(s % 4 == 1)},a,{device}", f"s{s},q,b,2,{int(s % 4 == 0)},b,{device}"]
    path = tmp_path / "log.csv"
    path.write_text("\n".join(rows) + "\n")
    assert main(["interleave", str(path), "--segment", "device", "--json", "--n-resamples", "200"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["desktop", "mobile"]
    assert (data["mobile"]["wins"], data["mobile"]["losses"]) == (10, 0)
    assert (data["desktop"]["wins"], data["desktop"]["losses"]) == (0, 10)


def test_ids_with_blanks_are_written_as_qrels_and_ids_with_a_line_break_cannot_be(tmp_path, capsys):
    """qrels.tsv is BEIR's layout (tab-separated): an id may hold a space, not a line break."""
    path = tmp_path / "log.jsonl"
    row = {"session": "s", "query_id": "a query", "doc_id": "two words", "position": 1, "click": 1}
    path.write_text(json.dumps(row) + "\n")
    assert main(["clicks", "fit", str(path), "--model", "ctr", "-o", str(tmp_path / "o")]) == 0
    assert read_qrels(tmp_path / "o" / "qrels.tsv").data == {"a query": {"two words": 1}}
    path.write_text(json.dumps({**row, "doc_id": "two\nlines"}) + "\n")
    capsys.readouterr()
    assert main(["clicks", "fit", str(path), "--model", "ctr", "-o", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "document id 'two\\nlines' of query 'a query' cannot be written to a BEIR qrels file" in err


def test_estimate_prints_ips_snips_and_dr_of_a_run_from_a_randomised_log(capsys):
    from tests.conftest import ROOT

    data = ROOT / "examples" / "data"
    args = ["clicks", "estimate", str(data / "randomized_clicks.csv"), "-k", "5", "--json", "--n-resamples", "500"]
    assert main([*args, "--run", str(data / "good.trec")]) == 0
    good = json.loads(capsys.readouterr().out)
    assert list(good) == ["ips", "snips", "dr", "impressions"] and good["impressions"] == 1000
    assert list(good["ips"]) == ["value", "ci_low", "ci_high"]
    assert main([*args, "--run", str(data / "poor.trec")]) == 0
    poor = json.loads(capsys.readouterr().out)
    assert all(poor[k]["value"] < good[k]["value"] for k in ("ips", "snips", "dr"))
    assert main(["clicks", "estimate", str(data / "click_log.csv"), "--run", str(data / "good.trec")]) == 2
    assert "propensity" in capsys.readouterr().err


def test_fit_and_compare_take_a_second_log_as_the_test_sessions(click_csv, tmp_path, capsys):
    test_log = tmp_path / "test.csv"
    pl.DataFrame(log_rows(simulated("dbn", 400), prefix="t")).write_csv(test_log)
    out = tmp_path / "o"
    assert main(["clicks", "fit", str(click_csv), "--model", "pbm", "--test", str(test_log), "-o", str(out)]) == 0
    model = json.loads((out / "model.json").read_text())
    assert model["train"]["sessions"] == 3000 and model["test"]["sessions"] == 400
    capsys.readouterr()
    assert main(["clicks", "compare", str(click_csv), "--models", "ctr,pbm", "--test", str(test_log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["test_sessions"] == 400


def test_measure_scores_a_better_run_higher_from_the_same_clicks(capsys):
    from tests.conftest import ROOT

    data = ROOT / "examples" / "data"
    args = ["clicks", "measure", str(data / "click_log.csv"), "-k", "5", "--json", "--n-resamples", "300"]
    assert main([*args, "--run", str(data / "good.trec")]) == 0
    good = json.loads(capsys.readouterr().out)
    assert list(good) == ["ips", "clipped", "snips", "impressions"]
    assert main([*args, "--run", str(data / "poor.trec"), "--measure", "dcg"]) == 0
    assert json.loads(capsys.readouterr().out)["ips"]["value"] < good["ips"]["value"]
