"""What a ``--judged`` table says (issue 46, item 7): each column's own queries, counted beside it (human and
filled qrels are the preset's means, BEIR's MRR over every query of the qrels; PPI's estimate over the queries
with a pool, n labelled + N others), and an interval of a measure in [0, 1] clipped to it (NDCG's upper end read
1.0005). The case is the one docs/judging.md runs: the two sample runs judged with ``--ppi`` against the local
server answering the sample's qrels, one pair in five wrong."""

from __future__ import annotations

import json

import numpy as np
import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main
from haystack_irmetrics.io import read_qrels, read_run

from .conftest import ROOT

pytest.importorskip("haystack")
SAMPLE = ROOT / "haystack_irmetrics" / "datasets" / "sample"
DATA = ROOT / "examples" / "data"
QRELS = DATA / "ppi_qrels.tsv"


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    from haystack_irmetrics.judges.server import JudgeServer, labels_from_files

    out = tmp_path_factory.mktemp("judged") / "judged-ppi"
    labels = labels_from_files(str(SAMPLE / "qrels" / "test.tsv"), str(SAMPLE), str(SAMPLE), error_rate=0.2)
    argv = ["judge", str(DATA / "good.trec"), str(DATA / "poor.trec"), "--qrels", str(QRELS), "--queries"]
    argv += [str(SAMPLE), "--corpus", str(SAMPLE), "--depth", "10", "--llm", "m", "--ppi", "-o", str(out)]
    with JudgeServer(labels, unjudged=0) as server:
        assert main([*argv, "--api-base-url", server.url, "--no-cache", "--no-progress"]) == 0
    return out


def _reference(folder, run: str, measure: str) -> tuple[float, float, float]:
    """ppi_py's estimate and interval of ``measure`` for ``run`` on the folder's labelled queries."""
    ppi_py = pytest.importorskip("ppi_py")
    labelled = set(json.loads((folder / "ppi.json").read_text())["labelled"])
    y = evaluate(read_qrels(QRELS), read_run(DATA / run), None, measures=[measure]).per_query[measure]
    model = read_qrels(folder / "model_qrels.tsv")
    yhat = evaluate(model, read_run(DATA / run), None, measures=[measure]).per_query[measure]
    lab = [q for q in yhat if q in labelled and q in y]
    unl = [q for q in yhat if q not in labelled]
    args = (np.array([y[q] for q in lab]), np.array([yhat[q] for q in lab]), np.array([yhat[q] for q in unl]))
    low, high = ppi_py.ppi_mean_ci(*args, alpha=0.05)
    est = ppi_py.ppi_mean_pointestimate(*args)
    return float(np.ravel(est)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0])


def test_an_interval_of_a_measure_in_0_1_is_ppi_pythons_clipped_to_0_1(judged, capsys):
    report = json.loads((judged / "ppi.json").read_text())
    est, low, high = _reference(judged, "good.trec", "NDCG@10")
    assert high > 1.0  # the normal interval reaches past the measure's range here (1.0005)
    row = report["runs"]["good"]
    assert row["estimate"] == pytest.approx(est, abs=1e-12) and row["low"] == pytest.approx(low, abs=1e-12)
    assert row["high"] == 1.0
    poor = report["runs"]["poor"]
    assert (poor["estimate"], poor["low"], poor["high"]) == pytest.approx(_reference(judged, "poor.trec", "NDCG@10"))
    diff = report["differences"]["good - poor"]
    assert -1.0 <= diff["low"] <= diff["estimate"] <= diff["high"] <= 1.0
    argv = ["evaluate", str(QRELS), str(DATA / "good.trec"), "-m", "NDCG", "-k", "10", "--judged", str(judged)]
    assert main(argv) == 0
    shown = json.loads(capsys.readouterr().out)["judged"]["NDCG@10"]
    assert shown["high"] == 1.0 and shown["low"] == pytest.approx(low, abs=1e-12)
    assert main([*argv, "--format", "markdown"]) == 0
    assert f"[{low:.4f}, 1.0000]" in capsys.readouterr().out


def test_each_judged_column_counts_the_queries_it_averages(judged, capsys):
    """MRR with the human qrels read 0.25 beside a PPI estimate of 1.00 with no word why: BEIR's MRR averages
    all 40 queries of the qrels, PPI the 12 the runs have a pool for."""
    qrels, run = read_qrels(QRELS).data, read_run(DATA / "good.trec").data
    labelled = set(json.loads((judged / "ppi.json").read_text())["labelled"])
    answered = set(run) & set(qrels)
    argv = ["evaluate", str(QRELS), str(DATA / "good.trec"), "-m", "NDCG,MRR", "-k", "10", "--judged", str(judged)]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["judged"]
    assert (rows["NDCG@10"]["human_queries"], rows["NDCG@10"]["filled_queries"]) == (len(answered), len(answered))
    assert (rows["MRR@10"]["human_queries"], rows["MRR@10"]["filled_queries"]) == (len(qrels), len(qrels)) == (40, 40)
    assert (rows["MRR@10"]["n"], rows["MRR@10"]["N"]) == (len(labelled), len(set(run) - labelled)) == (6, 6)
    assert main([*argv, "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "| PPI 95% interval | queries (human, filled, PPI) |" in text
    assert "| MRR@10 | 0.2500 | 0.3000 | 1.0000 | [1.0000, 1.0000] | 40, 40, 6 + 6 |" in text
    assert "| NDCG@10 | 0.8679 | 0.9746 | 0.9965 |" in text and "| 12, 12, 6 + 6 |" in text
    assert text.rstrip().endswith("its interval clipped to [0, 1] for a measure in [0, 1].")


def test_the_reports_judged_table_counts_them_too(judged, tmp_path):
    from haystack_irmetrics.report import build_report, write_report
    from haystack_irmetrics.report.exports import to_markdown
    from haystack_irmetrics.report.judged import JUDGED_NOTE

    runs = [str(DATA / "good.trec"), str(DATA / "poor.trec")]
    data = build_report(runs, str(QRELS), k_values=[10], measures=["NDCG", "MRR"], judged=judged, n_resamples=100)
    page = write_report(data, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<th>queries (human, filled, PPI)</th>" in page and "<td>40, 40, 6 + 6</td>" in page
    assert data.judged["good"]["NDCG@10"]["high"] == 1.0
    markdown = to_markdown(data)
    assert "| queries (human, filled, PPI) |" in markdown and "| 40, 40, 6 + 6 |" in markdown
    assert JUDGED_NOTE in markdown
