"""Scoring on feedback judgments: the seed case, parity with pytrec_eval, condensed lists and Judged@k."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.core import Qrels
from haystack_irmetrics.feedback import Strategy, aggregate_feedback, evaluate_feedback
from haystack_irmetrics.feedback.scoring import condense, score_system
from haystack_irmetrics.io import read_qrels, read_run, write_trec_run
from tests.oracles import pytrec_per_query, pytrec_rr_at

# The seed (shared/seeds/004): relevance scores per query, documents shown in the order 1, 2, 3, 4.
SEED = {
    "train cat": [1.0, 0.5, 0.3, 0.1],
    "train dog": [0.7, 1.0, 0.2, 0.1],
    "train parrot": [0.4, 0.2, 1.0, 0.1],
}
SEED_ROWS = [
    {"query_id": f"q{n}", "query": text, "doc_id": f"doc{i + 1}", "position": i + 1, "vote": grade}
    for n, (text, grades) in enumerate(SEED.items(), 1)
    for i, grade in enumerate(grades)
]
LOG3 = math.log2(3)


def test_seed_case_ndcg_uses_graded_scores_and_binary_metrics_the_half_threshold():
    ev = evaluate_feedback(SEED_ROWS, k_values=[2], threshold=0.5, columns={"query_text": "query"}, n_resamples=50)
    logged = ev.overall.systems["logged"]
    assert logged.queries == ["q1", "q2", "q3"]
    full = {m: v.tolist() for m, v in logged.values["full"].items()}
    # NDCG@2, linear gain, shown order doc1, doc2: ideal lists 1.0+0.5, 1.0+0.7, 1.0+0.4.
    assert full["NDCG@2"] == pytest.approx(
        [1.0, (0.7 + 1.0 / LOG3) / (1.0 + 0.7 / LOG3), (0.4 + 0.2 / LOG3) / (1.0 + 0.4 / LOG3)], abs=1e-15
    )
    assert [round(v, 4) for v in full["NDCG@2"]] == [1.0, 0.9232, 0.4202]  # the seed's 0.89 / 0.77 swap the order
    # Relevant at >= 0.5: q1 doc1, doc2; q2 doc1 (0.7), doc2; q3 doc3 only (shown third).
    assert full["P@2"] == [1.0, 1.0, 0.0]  # the seed's text gives 0.5 for q1 and q2 against its own counts
    assert full["Recall@2"] == [1.0, 1.0, 0.0]
    assert full["MRR@2"] == [1.0, 1.0, 0.0]  # the seed counts q3's rank-3 hit inside MRR@2
    assert full["MAP@2"] == [1.0, 1.0, 0.0]  # trec map_cut, not the seed's mean of P@k
    assert full["R_cap@2"] == [1.0, 1.0, 0.0]
    assert logged.judged["Judged@2"].tolist() == [1.0, 1.0, 1.0]
    assert ev.means()["logged"]["P@2"] == pytest.approx(2 / 3)


def test_seed_case_through_the_core_directly_gives_the_same_numbers():
    agg = aggregate_feedback(SEED_ROWS)
    direct = evaluate(agg.qrels(), agg.logged_run(), [2], relevance_threshold=0.5, ties="stable")
    scored = score_system("logged", agg.logged_run(), agg.qrels(), k_values=[2], threshold=0.5)
    for m, v in scored.values["full"].items():
        assert v.tolist() == [direct.per_query[m][q] for q in scored.queries]


def random_log(seed: int) -> tuple[list[dict], dict[str, dict[str, float]]]:
    """A log with up/down votes from several users and a new system's run over more documents."""
    rng = random.Random(seed)
    rows, run = [], {}
    for q in range(25):
        docs = [f"d{q}_{i}" for i in range(12)]
        for _ in range(rng.randrange(1, 4)):  # impressions of this query
            shown = rng.sample(docs, 6)
            for pos, d in enumerate(shown, 1):
                vote = rng.choice([None, None, 0, 1, 1])
                rows.append({"query_id": f"q{q}", "doc_id": d, "position": pos, "vote": vote})
        ranked = rng.sample(docs, 10) + [f"new{q}_{i}" for i in range(3)]
        # Ties on purpose: scores drawn from few values.
        run[f"q{q}"] = {d: float(rng.randrange(6)) for d in ranked}
    return rows, run


@pytest.mark.parametrize("seed", range(4))
def test_metrics_on_integer_feedback_labels_equal_pytrec_eval_per_query(seed):
    rows, run = random_log(seed)
    agg = aggregate_feedback(rows, Strategy("majority"))
    qrels = {q: {d: int(v) for d, v in docs.items()} for q, docs in agg.qrels().data.items()}
    ks = [1, 3, 5, 10]
    scored = score_system("new", run, agg.qrels(), k_values=ks, threshold=1.0, preset="trec")
    for variant, ranking in (("full", run), ("condensed", condense(run, qrels))):
        answered = {q: r for q, r in ranking.items() if r}
        oracle = pytrec_per_query(qrels, answered, ks)
        for k in ks:
            rr = pytrec_rr_at(qrels, answered, k)
            for i, q in enumerate(scored.queries):
                for family in ("NDCG", "MAP", "Recall", "P"):
                    expected = oracle[f"{family}@{k}"].get(q, 0.0)
                    assert scored.values[variant][f"{family}@{k}"][i] == expected, (variant, family, k, q)
                assert scored.values[variant][f"MRR@{k}"][i] == rr.get(q, 0.0), (variant, k, q)


def judged_at_k(qrels: dict, run: dict, k_values: list[int]) -> dict[str, dict[str, float]]:
    """``{"Judged@k": {qid: share}}`` as :func:`score_system` reports it (the core's Judged@k on the full list)."""
    scores = score_system("s", run, Qrels.from_dict(qrels), k_values=k_values, measures=["P"], condensed=False)
    return {m: dict(zip(scores.queries, v.tolist(), strict=True)) for m, v in scores.judged.items()}


def brute_force_judged(qrels: dict, run: dict, k: int) -> dict[str, float]:
    """Share of the top k (trec order: float32 score descending, ties by doc id descending) that is judged."""
    out = {}
    for q, judged in qrels.items():
        docs = run.get(q, {})
        top = sorted(docs, key=lambda d: (np.float32(docs[d]), d), reverse=True)[:k]
        out[q] = sum(d in judged for d in top) / k
    return out


@pytest.mark.parametrize("seed", range(3))
def test_judged_at_k_equals_a_brute_force_count_in_trec_order(seed):
    rows, run = random_log(seed)
    qrels = aggregate_feedback(rows).qrels().data
    for k in (1, 5, 20):
        got = judged_at_k(qrels, run, [k])[f"Judged@{k}"]
        assert got == pytest.approx(brute_force_judged(qrels, run, k), abs=0)


def test_judged_at_k_counts_judged_not_relevant_documents_and_divides_by_k():
    got = judged_at_k({"q": {"a": 0, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, [2, 10])
    assert got == {"Judged@2": {"q": 0.5}, "Judged@10": {"q": 0.2}}


def test_condensed_list_keeps_run_order_among_tied_judged_documents():
    run = {"q": {"z": 1.0, "x": 5.0, "a": 1.0, "m": 1.0}}
    assert list(condense(run, {"q": {"a": 1, "z": 0, "x": 1}})["q"]) == ["x", "z", "a"]


def test_columnar_run_from_a_trec_file_scores_like_the_same_run_as_a_dict(tmp_path):
    rows, run = random_log(9)
    agg = aggregate_feedback(rows)
    write_trec_run(run, tmp_path / "run.trec")
    from_file = read_run(tmp_path / "run.trec")
    as_dict = {q: dict(d) for q, d in read_run(tmp_path / "run.trec").data.items()}
    assert condense(from_file, agg.qrels()) == condense(as_dict, agg.qrels())
    a = score_system("a", from_file, agg.qrels(), k_values=[3, 10])
    b = score_system("b", as_dict, agg.qrels(), k_values=[3, 10])
    for variant in ("full", "condensed"):
        for m in a.values[variant]:
            assert a.values[variant][m].tolist() == b.values[variant][m].tolist()


def test_trec_qrels_written_from_feedback_read_back_to_the_same_judgments(tmp_path):
    rows, _ = random_log(2)
    for strategy in ("mean", "majority", "wilson"):
        agg = aggregate_feedback(rows, strategy)
        n = agg.write_trec_qrels(tmp_path / f"{strategy}.qrels")
        back = read_qrels(tmp_path / f"{strategy}.qrels").data
        assert n == agg.judgments.height
        assert back == agg.qrels().data
    # majority labels are written as integers, the others as exact float text
    assert {line.split()[-1] for line in (tmp_path / "majority.qrels").read_text().splitlines()} == {"0", "1"}


def test_queries_a_system_does_not_answer_score_zero_and_stay_paired():
    rows, run = random_log(4)
    partial = {q: r for q, r in list(run.items())[:10]}
    ev = evaluate_feedback(rows, {"partial": partial}, k_values=[5], n_resamples=100)
    s = ev.overall.systems["partial"]
    assert len(s.queries) == len(ev.overall.systems["logged"].queries) == 25
    assert s.retrieved_queries == 10
    missing = [i for i, q in enumerate(s.queries) if q not in partial]
    assert all(s.values["full"]["NDCG@5"][i] == 0.0 for i in missing)


def test_unjudged_documents_lower_the_full_score_but_not_the_condensed_one():
    rows = [{"query_id": "q", "doc_id": "rel", "position": 1, "vote": 1.0}]
    run = {"q": {"unseen1": 3.0, "unseen2": 2.0, "rel": 1.0}}
    ev = evaluate_feedback(
        rows, {"new": run}, k_values=[1, 3], measures=["P", "MRR"], include_logged=False, n_resamples=10
    )
    s = ev.overall.systems["new"]
    assert s.values["full"]["MRR@3"].tolist() == [1 / 3]
    assert s.values["condensed"]["MRR@3"].tolist() == [1.0]
    assert s.judged["Judged@3"].tolist() == [1 / 3]
    assert s.values["full"]["P@1"].tolist() == [0.0] and s.values["condensed"]["P@1"].tolist() == [1.0]


def test_feedback_evaluation_refuses_measures_without_a_cutoff_with_a_typed_error():
    from haystack_irmetrics.errors import FeedbackError
    from haystack_irmetrics.feedback import aggregate_feedback, evaluate_feedback
    from tests.test_feedback_component import SEED_ROWS

    with pytest.raises(FeedbackError, match=r"take measures with a cutoff.*Rprec"):
        evaluate_feedback(aggregate_feedback(SEED_ROWS), k_values=[2], measures=["NDCG", "Rprec"], n_resamples=50)


def test_graded_judgments_scored_on_the_logged_rankings_raise_no_swapped_arguments_warning(tmp_path):
    """Feedback labels are fractional (mean votes, Wilson bounds) and the logged run's scores whole
    (n - rank): the core's check for evaluate(results, qrels) must not fire on judgments and runs the
    feedback path built itself."""
    import warnings

    from haystack_irmetrics.errors import SuspiciousInputWarning

    rng = random.Random(3)
    rows = [
        {"query_id": f"q{q}", "doc_id": f"d{q}-{i}", "position": i, "vote": round(rng.random(), 3)}
        for q in range(30)
        for i in range(1, 5)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SuspiciousInputWarning)
        ev = evaluate_feedback(rows, k_values=[3], measures=["NDCG"], n_resamples=50)
        from haystack_irmetrics.report import feedback_report  # the page irmetrics feedback --report writes

        feedback_report(ev, {}, tmp_path / "report.html")
    assert ev.overall.systems["logged"].means()["NDCG@3"] > 0
    with warnings.catch_warnings():  # nor through evaluate: the judgments are no deeper than the rankings
        warnings.simplefilter("error", SuspiciousInputWarning)
        evaluate(ev.feedback.qrels(), ev.feedback.logged_run(), [3], measures=["NDCG"])


def test_the_feedback_policy_is_one_preset_the_scores_and_the_report_both_use():
    from haystack_irmetrics.core import resolve_preset
    from haystack_irmetrics.feedback.scoring import FEEDBACK_POLICY, feedback_preset

    assert FEEDBACK_POLICY == {"missing_queries": "zero", "ignore_identical_ids": False, "no_relevant": "zero"}
    preset = feedback_preset("trec", 1.0)
    assert preset == resolve_preset(
        "trec", relevance_threshold=1.0, missing_queries="zero", ignore_identical_ids=False, no_relevant="zero"
    )
    assert preset.relevance_threshold == 1.0 and not preset.ignore_identical_ids
