"""trec_eval's uncut measures (``map``, ``ndcg``, ``recip_rank``) and its counts (``num_q``, ``num_ret``,
``num_rel``, ``num_rel_ret``), checked against pytrec_eval, BEIR and trec_eval's own output files."""

from __future__ import annotations

import copy
import math

import pytest
import pytrec_eval
from beir.retrieval.evaluation import EvaluateRetrieval
from hypothesis import assume, given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.core.measures import parse_measure, resolve_measures
from haystack_irmetrics.io import read_qrels, read_run
from tests import strategies as S
from tests.oracles import without_identical_ids
from tests.test_real_data import parse_trec_eval_output

UNCUT = {"map": "MAP", "ndcg": "NDCG", "recip_rank": "MRR"}
COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")


def test_trec_eval_names_without_a_cutoff_are_the_uncut_measures():
    assert [str(m) for m in resolve_measures(["map", "ndcg", "recip_rank"], [10])] == ["MAP", "NDCG", "MRR"]


def test_beir_names_without_a_cutoff_are_still_crossed_with_the_cutoffs():
    names = [str(m) for m in resolve_measures(["MAP", "NDCG", "MRR"], [1, 10])]
    assert names == ["MAP@1", "MAP@10", "NDCG@1", "NDCG@10", "MRR@1", "MRR@10"]


def test_uncut_names_round_trip():
    for name in ("MAP", "NDCG", "MRR", "num_q", "num_ret", "num_rel", "num_rel_ret"):
        assert str(parse_measure(name)) == name
    assert str(parse_measure("NumRelRet")) == "num_rel_ret"


def _pytrec(qrels, results, measures):
    # pytrec_eval's uncut ndcg corrupts its memory on a negative label (later calls hang or count
    # wrong). Every measure here reads a negative label as a 0 (no gain, not relevant, not counted in
    # num_rel), so the oracle gets labels clipped at 0 and ours the labels as they are; queries with
    # an empty judgment dict are scored by neither tool.
    judged = {q: {d: max(v, 0) for d, v in docs.items()} for q, docs in qrels.items() if docs}
    return pytrec_eval.RelevanceEvaluator(judged, set(measures)).evaluate(copy.deepcopy(results))


@given(S.qrels(), S.runs())
def test_uncut_measures_and_counts_equal_pytrec_eval_per_query(qrels, results):
    scored = [q for q in results if qrels.get(q) and results[q]]
    assume(scored)
    results = {q: results[q] for q in scored}
    ours = evaluate(qrels, results, None, measures=[*UNCUT, *COUNTS], preset="trec")
    oracle = _pytrec(qrels, results, [*UNCUT, *COUNTS])
    for q, values in oracle.items():
        for trec_name, name in [*UNCUT.items(), *((c, c) for c in COUNTS)]:
            assert math.isclose(ours.per_query[name][q], values[trec_name], abs_tol=1e-12), (trec_name, q)
    for c in COUNTS:  # trec_eval's summary line of a count is its sum
        assert ours.means[c] == sum(v[c] for v in oracle.values())


@given(S.beir_safe())
def test_uncut_mrr_in_the_beir_preset_is_beirs_mrr_over_the_whole_ranking(case):
    qrels, results = case
    depth = max((len(d) for d in results.values()), default=1) or 1
    trimmed = without_identical_ids(results)
    expected = EvaluateRetrieval.evaluate_custom(qrels, trimmed, [depth], "mrr")[f"MRR@{depth}"]
    assert evaluate(qrels, results, None, measures=["recip_rank"]).means["MRR"] == expected


@pytest.mark.parametrize("name", ["map", "recip_rank", "num_q", "num_ret", "num_rel", "num_rel_ret"])
def test_trec_eval_own_output_per_query_and_summary(data_dir, name):
    d = data_dir / "trec_eval_test"
    res = evaluate(read_qrels(d / "qrels.test"), read_run(d / "results.test"), None, measures=[name], preset="trec")
    expected = parse_trec_eval_output(d / "out.test.aq")[name]
    key = str(parse_measure(name)) if name in UNCUT else name
    for qid, value in expected.items():
        got = res.raw_means[key] if qid == "all" else res.per_query[key][qid]
        assert got == pytest.approx(value, abs=5e-5), qid


def test_counts_are_not_bounded_by_one_and_are_summed(data_dir):
    d = data_dir / "trec_eval_test"
    res = evaluate(read_qrels(d / "qrels.test"), read_run(d / "results.test"), None, measures=list(COUNTS))
    assert res.means["num_q"] == 3
    assert res.means["num_ret"] == sum(res.per_query["num_ret"].values()) > 1


@given(S.qrels(), S.runs(), st.sampled_from(["beir", "trec"]))
def test_uncut_values_are_the_values_at_a_cutoff_past_every_ranking(qrels, results, preset):
    assume(any(qrels.get(q) for q in results))
    deep = 10_000
    a = evaluate(qrels, results, [deep], measures=["MAP", "NDCG", "MRR"], preset=preset)
    b = evaluate(qrels, results, None, measures=list(UNCUT), preset=preset)
    for name in ("MAP", "NDCG", "MRR"):
        assert b.per_query[name] == a.per_query[f"{name}@{deep}"]


def test_cli_m_map_prints_trec_evals_uncut_numbers_and_whole_counts(data_dir):
    import subprocess
    import sys

    d = data_dir / "trec_eval_test"
    out = subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", "evaluate", str(d / "qrels.test"), str(d / "results.test"),
         "-m", "map,recip_rank,num_q,num_ret,num_rel,num_rel_ret", "--preset", "trec", "--format", "tsv"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    expected = parse_trec_eval_output(d / "out.test.aq")
    rows = dict(line.split("\t")[0::2] for line in out.stdout.splitlines())
    assert rows == {
        "MAP": f"{expected['map']['all']:.4f}",
        "MRR": f"{expected['recip_rank']['all']:.4f}",
        **{c: str(int(expected[c]["all"])) for c in COUNTS},
    }
