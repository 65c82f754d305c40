"""Real data from ../shared/data: trec_eval's own expected outputs, Robust03, SciFact, fixtures."""

from __future__ import annotations

import json

import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.io import read_qrels, read_run
from tests.oracles import pytrec_per_query, pytrec_rr_at

TREC_NAMES = {"ndcg_cut": "NDCG", "map_cut": "MAP", "P": "P", "recall": "Recall"}
CUTS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]


def parse_trec_eval_output(path) -> dict[str, dict[str, float]]:
    """``{measure: {qid or 'all': value}}`` from a ``trec_eval -q`` output file."""
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        name, qid, value = (x.strip() for x in line.split("\t"))
        try:
            out.setdefault(name, {})[qid] = float(value)
        except ValueError:
            continue
    return out


def _check_against_trec_eval(res, expected, exact_queries: bool = True) -> int:
    checked = 0
    for trec_family, family in TREC_NAMES.items():
        for k in CUTS:
            rows = expected[f"{trec_family}_{k}"]
            ours = res.per_query[f"{family}@{k}"]
            for qid, value in rows.items():
                if qid == "all":
                    assert res.raw_means[f"{family}@{k}"] == pytest.approx(value, abs=5e-5)
                else:
                    assert ours[qid] == pytest.approx(value, abs=5e-5), (family, k, qid)
                checked += 1
    return checked


def test_trec_eval_out_test_aq_every_ndcg_map_p_recall_value(data_dir):
    d = data_dir / "trec_eval_test"
    res = evaluate(read_qrels(d / "qrels.test"), read_run(d / "results.test"), CUTS, preset="trec")
    expected = parse_trec_eval_output(d / "out.test.aq")
    assert _check_against_trec_eval(res, expected) == 4 * 9 * 4  # 3 queries + all
    for qid, rr in expected["recip_rank"].items():
        if qid != "all":
            assert res.per_query["MRR@1000"][qid] == pytest.approx(rr, abs=5e-5)


def test_trec_eval_relevance_level_2_on_graded_qrels(data_dir):
    d = data_dir / "trec_eval_test"
    res = evaluate(
        read_qrels(d / "qrels.rel_level"), read_run(d / "results.test"), CUTS, preset="trec", relevance_threshold=2
    )
    _check_against_trec_eval(res, parse_trec_eval_output(d / "out.test.aql"))


def test_trec_eval_dash_c_counts_missing_queries_as_zero(data_dir):
    d = data_dir / "trec_eval_test"
    res = evaluate(
        read_qrels(d / "qrels.test"), read_run(d / "results.trunc"), CUTS, preset="trec", missing_queries="zero"
    )
    expected = parse_trec_eval_output(d / "out.test.aqc")
    _check_against_trec_eval(res, expected)
    assert res.n_queries["NDCG@10"] == expected["num_q"]["all"]


def test_comment_lines_are_skipped_like_trec_eval(data_dir):
    d = data_dir / "trec_eval_test"
    plain = evaluate(read_qrels(d / "qrels.test"), read_run(d / "results.test"), [10], preset="trec")
    commented = evaluate(read_qrels(d / "qrels.test.with-comments"), read_run(d / "results.test"), [10], preset="trec")
    assert commented.raw_means == plain.raw_means


def test_trec_eval_test_files_equal_pytrec_eval_bit_for_bit(data_dir):
    d = data_dir / "trec_eval_test"
    for qrels_name in ("qrels.test", "qrels.rel_level"):
        qrels, run = read_qrels(d / qrels_name), read_run(d / "results.test")
        res = evaluate(qrels, run, CUTS, preset="trec")
        oracle = pytrec_per_query(dict(qrels.data), dict(run.data), CUTS)
        for family in ("NDCG", "MAP", "Recall", "P"):
            for k in CUTS:
                assert res.per_query[f"{family}@{k}"] == oracle[f"{family}@{k}"]


def test_robust03_uic0301_published_values(data_dir):
    d = data_dir / "robust03"
    spec = json.loads((d / "EXPECTED_VALUES.json").read_text())["cases"][1]
    qrels, run = read_qrels(d / "robust03_cs_qrels.txt"), read_run(d / "input.uic0301")
    ks = [5, 10, 15, 20, 30, 100, 200, 500, 1000]
    res = evaluate(qrels, run, ks, preset="trec")
    expected = spec["all"]
    assert round(res.raw_means["MAP@1000"], 4) == expected["map"]
    assert round(res.raw_means["MRR@1000"], 4) == expected["recip_rank"]
    assert round(res.raw_means["P@1000"], 4) == expected["P_1000"]
    for k in ks:
        assert round(res.raw_means[f"Recall@{k}"], 4) == expected[f"recall_{k}"]
    per = spec["per_query"]
    for qid, v in per["recip_rank"].items():
        assert round(res.per_query["MRR@1000"][qid], 4) == v
    for qid, v in per["map"].items():
        assert round(res.per_query["MAP@1000"][qid], 4) == v
    for qid, v in per["P_30"].items():
        assert round(res.per_query["P@30"][qid], 4) == v
    for qid, v in per["recall_30"].items():
        assert round(res.per_query["Recall@30"][qid], 4) == v


def test_robust03_all_six_equal_pytrec_eval_per_query(data_dir):
    d = data_dir / "robust03"
    qrels, run = read_qrels(d / "robust03_cs_qrels.txt"), read_run(d / "input.uic0301")
    ks = [1, 3, 5, 10, 100, 1000]
    res = evaluate(qrels, run, ks, preset="trec")
    q, r = dict(qrels.data), dict(run.data)
    oracle = pytrec_per_query(q, r, ks)
    for family in ("NDCG", "MAP", "Recall", "P"):
        for k in ks:
            assert res.per_query[f"{family}@{k}"] == oracle[f"{family}@{k}"]
    for k in (1, 10, 1000):
        assert res.per_query[f"MRR@{k}"] == pytrec_rr_at(q, r, k)


def test_inline_fixtures_from_ir_measures_pytrec_eval_and_haystack(data_dir):
    cases = json.loads((data_dir / "inline_fixtures" / "fixtures.json").read_text())
    checked = 0
    for case in cases:
        qrels = case["qrels"]
        run: dict[str, dict[str, float]] = {}
        for line in case.get("run_trec", "").splitlines():
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
        if not run or not any(qrels.get(q) for q in run):
            continue
        for name, per_query in case["expected"].items():
            base, _, option = name.partition("@")
            measure, k = _fixture_measure(base)
            if measure is None or option == "judged_docs_only":
                continue
            level = int(option.split("=")[1]) if option.startswith("relevance_level") else 1
            res = evaluate(qrels, run, [k], measures=[measure], preset="trec", relevance_threshold=level)
            for qid, value in per_query.items():
                assert res.per_query[f"{measure}@{k}"][qid] == pytest.approx(value, abs=case["tolerance"]), (
                    case["name"],
                    name,
                    qid,
                )
                checked += 1
    assert checked >= 10


def _fixture_measure(name: str) -> tuple[str | None, int]:
    if name == "ndcg":
        return "NDCG", 10**6
    if name == "map":
        return "MAP", 10**6
    if name == "recip_rank":
        return "MRR", 10**6
    for prefix, family in (("ndcg_cut_", "NDCG"), ("P_", "P")):
        if name.startswith(prefix):
            return family, int(name[len(prefix) :])
    return None, 0


def test_scifact_qrels_load_like_beir_generic_data_loader(data_dir):
    from beir.datasets.data_loader import GenericDataLoader

    _, _, beir_qrels = GenericDataLoader(data_folder=str(data_dir / "scifact")).load(split="test")
    ours = read_qrels(data_dir / "scifact" / "qrels" / "test.tsv")
    assert {q: dict(v) for q, v in ours.data.items()} == beir_qrels
