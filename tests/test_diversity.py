"""The diversity measures against ndeval (pyndeval 0.0.8), per query, and their subtopic qrels.

pyndeval orders a run by score descending, ties by doc id ascending; we rank as trec_eval (float32,
ties by doc id descending). Each oracle call gets the ranking in our order as strictly decreasing
scores, so both score one ranking. ndeval computes to rank 20 (its DEPTH): cutoffs are 1 to 20 here.
"""

from __future__ import annotations

import json

import numpy as np
import pyndeval
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.core.subtopics import SubtopicQrels
from haystack_irmetrics.errors import InvalidArgumentError, InvalidIdError, InvalidLabelError, ParseError
from haystack_irmetrics.io import read_subtopic_qrels
from tests.oracles import trec_order

TOL = 1e-12
QIDS = ["1", "2", "10"]
SUBTOPICS = ["1", "2", "3", "4"]
DOCS = ["d1", "d2", "d3", "d10", "d9", "D1", "10", "é", "a"]
SCORES = st.sampled_from([0.0, 1.0, 0.5, 2.0, -1.0]) | st.floats(-3, 3, width=32)
LABELS = st.sampled_from([-1, 0, 0, 1, 1, 2])

subtopic_qrels = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(SUBTOPICS), st.dictionaries(st.sampled_from(DOCS), LABELS, max_size=6), max_size=4),
    max_size=3,
)
runs = st.dictionaries(st.sampled_from(QIDS), st.dictionaries(st.sampled_from(DOCS), SCORES, max_size=9), max_size=3)


def _oracle(qrels, run, measures, rel=1, alpha=0.5, beta=0.5):
    flat = [(q, s, d, v) for q, subs in qrels.items() for s, docs in subs.items() for d, v in docs.items()]
    ordered = [(q, d, float(len(docs) - i)) for q, docs in run.items() for i, d in enumerate(trec_order(docs))]
    ev = pyndeval.RelevanceEvaluator(flat, measures, relevance_level=rel, alpha=alpha, beta=beta)
    return ev.evaluate(ordered)


def _check(qrels, run, ks, rel=1, alpha=0.5, beta=0.5) -> tuple[int, float]:
    from haystack_irmetrics.core.measures import Measure

    a = {"alpha": alpha, "rel": rel}
    wanted = [Measure("NRBP", beta=beta, **a)]
    for k in ks:
        wanted += [Measure("alpha_nDCG", k, **a), Measure("StRecall", k, rel=rel)]
        if k > 1:  # ndeval leaves ERR-IA@1 undivided (see test_err_ia_at_1...)
            wanted.append(Measure("ERR_IA", k, **a))
    ndeval = {"NRBP": "NRBP", "alpha_nDCG": "alpha-nDCG", "StRecall": "strec", "ERR_IA": "ERR-IA"}
    pairs = {m.name: ndeval[m.family] + ("" if m.cutoff is None else f"@{m.cutoff}") for m in wanted}
    ours = evaluate(SubtopicQrels.from_dict(qrels), run, None, preset="trec", measures=wanted)
    theirs = _oracle(qrels, run, sorted(set(pairs.values())), rel, alpha, beta)
    checked, worst = 0, 0.0
    for q, values in theirs.items():
        if q not in ours.per_query[wanted[0].name]:
            continue  # an empty ranking: no query to score
        for name, key in pairs.items():
            worst = max(worst, abs(ours.per_query[name][q] - values[key]))
            assert abs(ours.per_query[name][q] - values[key]) <= TOL, (name, q, ours.per_query[name][q], values[key])
            checked += 1
    return checked, worst


@settings(max_examples=300, deadline=None)
@given(subtopic_qrels, runs, st.lists(st.integers(1, 20), min_size=1, max_size=3, unique=True),
       st.sampled_from([1, 2]), st.sampled_from([0.5, 0.0, 0.3, 1.0]), st.sampled_from([0.5, 0.8]))  # fmt: skip
def test_diversity_measures_equal_pyndeval_per_query(qrels, run, ks, rel, alpha, beta):
    assume(any(run.get(q) and any(qrels[q].values()) for q in qrels))
    _check(qrels, run, ks, rel, alpha, beta)


def _seeded(seed, n_queries=8, n_docs=150, n_sub=6):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for qi in range(n_queries):
        q = str(qi + 1)
        qrels[q] = {}
        for s in range(int(rng.integers(1, n_sub + 1))):
            judged = rng.choice(n_docs, size=int(rng.integers(1, 40)), replace=False)
            qrels[q][str(s + 1)] = {f"d{j}": int(rng.integers(0, 3)) for j in judged}
        docs = [f"d{x}" for x in rng.choice(n_docs, size=int(rng.integers(1, 100)), replace=False)]
        run[q] = dict(zip(docs, (rng.integers(0, 6, size=len(docs)) / 5.0).tolist()))
    return qrels, run


def test_seeded_tie_heavy_runs_with_many_subtopics_equal_pyndeval():
    checked, worst = 0, 0.0
    for seed in range(12):
        c, w = _check(*_seeded(seed), [1, 5, 10, 20])
        checked, worst = checked + c, max(worst, w)
    assert checked == 12 * 8 * (1 + 4 * 2 + 3)
    assert worst <= TOL


def test_err_ia_at_1_is_divided_by_the_subtopics_where_ndeval_leaves_it_undivided():
    qrels = {"1": {"a": {"d1": 1, "d2": 1}, "b": {"d1": 1}, "c": {"d3": 1}}}
    run = {"1": {"d1": 2.0, "d3": 1.0}}
    ours = evaluate(SubtopicQrels.from_dict(qrels), run, [1], measures=["ERR_IA"], preset="trec")
    theirs = _oracle(qrels, run, ["ERR-IA@1"])["1"]["ERR-IA@1"]
    assert theirs == 2.0  # d1 covers two subtopics: ndeval's loop divides from rank 2 on
    assert ours.per_query["ERR_IA@1"]["1"] == theirs / 3  # N = 3 subtopics


def test_ordinary_measures_read_each_documents_highest_label_over_its_subtopics():
    sub = SubtopicQrels.from_dict({"q": {"1": {"a": 1, "b": 0}, "2": {"b": 2}}})
    run = {"q": {"b": 2.0, "a": 1.0, "x": 0.5}}
    both = evaluate(sub, run, [3], measures=["NDCG", "P", "alpha_nDCG"], preset="trec")
    plain = evaluate({"q": {"a": 1, "b": 2}}, run, [3], measures=["NDCG", "P"], preset="trec")
    assert {k: both.raw_means[k] for k in plain.raw_means} == plain.raw_means
    assert both.raw_means["alpha_nDCG@3"] == 1.0


def test_a_diversity_measure_on_plain_qrels_is_a_typed_error_naming_the_fix():
    with pytest.raises(InvalidArgumentError, match=r"alpha_nDCG@20 reads judgments per subtopic.*SubtopicQrels"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [20], measures=["alpha_nDCG"])


@pytest.mark.parametrize(
    "bad,error,where",
    [
        ({"q": {"1": {"a": "x"}}}, InvalidLabelError, r"label 'x' of document 'a' in query 'q', subtopic '1'"),
        ({"q": {"1": {"a": float("nan")}}}, InvalidLabelError, "subtopic '1'"),
        ({"q": {"1": {3: 1}}}, InvalidIdError, r"document id 3 in query 'q', subtopic '1'"),
        ({"q": {None: {"a": 1}}}, InvalidIdError, "subtopic id None of query 'q'"),
        ({"q": {1: {"a": 1}, "1": {"b": 1}}}, InvalidIdError, "subtopic '1' of query 'q' is given twice"),
        ({"q": {"1": ["a"]}}, InvalidLabelError, r"subtopic qrels\['q'\]\['1'\] must be a dict"),
        ({5: {"1": {"a": 1}}}, InvalidIdError, "query id 5"),
    ],
)
def test_bad_subtopic_qrels_are_typed_errors_naming_query_subtopic_and_document(bad, error, where):
    original = json.dumps(bad, default=str)
    with pytest.raises(error, match=where):
        SubtopicQrels.from_dict(bad)
    assert json.dumps(bad, default=str) == original  # the caller's input is untouched


def test_the_file_reader_reads_the_second_column_as_the_subtopic_and_names_bad_lines(tmp_path):
    path = tmp_path / "div.qrels"
    path.write_text("1 1 d1 1\n1 2 d1 0\n1 2 d2 1\n\n2 1 d9 2\n")
    sub = read_subtopic_qrels(path)
    assert sub.data == {"1": {"1": {"d1": 1}, "2": {"d1": 0, "d2": 1}}, "2": {"1": {"d9": 2}}}
    for text, message in [
        ("1 1 d1\n", r"div2.qrels:1: expected 4 fields"),
        ("1 1 d1 1\n1 1 d1 0\n", r"div2.qrels:2: document 'd1' is judged twice for subtopic '1'"),
        ("1 1 d1 x\n", r"div2.qrels:1: label 'x' is not a finite number"),
        ("\n", r"no judgment"),
    ]:
        (tmp_path / "div2.qrels").write_text(text)
        with pytest.raises(ParseError, match=message):
            read_subtopic_qrels(tmp_path / "div2.qrels")


def test_cli_reads_qrels_as_subtopic_qrels_when_a_diversity_measure_is_asked(tmp_path, capsys):
    from haystack_irmetrics.cli.app import main

    (tmp_path / "qrels").write_text("1 1 a 1\n1 2 b 1\n1 2 a 0\n1 3 c 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 3.0 r\n1 Q0 x 2 2.0 r\n1 Q0 b 3 1.0 r\n")
    argv = ["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run"), "--preset", "trec", "--format", "json"]
    assert main([*argv, "-m", "alpha_nDCG(alpha=0.5,rel=1)@20,ERR_IA@20,NRBP,StRecall@2,P@3"]) in (0, None)
    out = json.loads(capsys.readouterr().out)
    theirs = _oracle({"1": {"1": {"a": 1}, "2": {"b": 1, "a": 0}, "3": {"c": 1}}},
                     {"1": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["alpha-nDCG@20", "ERR-IA@20", "NRBP", "strec@2"])["1"]  # fmt: skip
    assert out["alpha_nDCG@20"] == pytest.approx(theirs["alpha-nDCG@20"], abs=TOL)
    assert out["ERR_IA@20"] == pytest.approx(theirs["ERR-IA@20"], abs=TOL)
    assert out["NRBP"] == pytest.approx(theirs["NRBP"], abs=TOL)
    assert out["StRecall@2"] == theirs["strec@2"] == 1 / 3
    assert out["P@3"] == 2 / 3  # the topical view: a and b relevant


@pytest.mark.parametrize(
    "written,name",
    [
        ("alpha_nDCG@20", "alpha_nDCG@20"),
        ("alpha-nDCG(alpha=0.5)@20", "alpha_nDCG@20"),
        ("alpha_ndcg(alpha=0.3,rel=2)@10", "alpha_nDCG(alpha=0.3,rel=2)@10"),
        ("ERR_IA@20", "ERR_IA@20"),
        ("NRBP(alpha=0.5,beta=0.5)", "NRBP"),
        ("nrbp(beta=0.8)", "NRBP(beta=0.8)"),
        ("StRecall@20", "StRecall@20"),
        ("strec@20", "StRecall@20"),
    ],
)
def test_diversity_names_as_ir_measures_and_ndeval_spell_them(written, name):
    from haystack_irmetrics.core.measures import parse_measure

    assert str(parse_measure(written)) == name


@pytest.mark.parametrize("bad", ["NRBP(beta=1.5)", "NRBP@10", "alpha_nDCG(alpha=2)@5", "StRecall(alpha=0.5)@5"])
def test_bad_diversity_parameters_are_typed_errors(bad):
    from haystack_irmetrics.core.measures import parse_measure
    from haystack_irmetrics.errors import InvalidCutoffError, UnknownMeasureError

    with pytest.raises((UnknownMeasureError, InvalidCutoffError)):
        parse_measure(bad)


def test_the_report_reads_diversity_qrels_when_a_diversity_measure_is_asked(tmp_path):
    from haystack_irmetrics.report.data import build_report

    (tmp_path / "qrels").write_text("1 1 a 1\n1 2 b 1\n1 2 a 0\n1 3 c 1\n")
    runs = {"first": {"1": {"a": 3.0, "x": 2.0, "b": 1.0}}, "second": {"1": {"c": 3.0, "b": 2.0}}}
    data = build_report(runs, tmp_path / "qrels", measures=["alpha_nDCG@5", "StRecall@2", "P@2"], significance=False)
    assert data.means["first"]["StRecall@2"] == 1 / 3 and data.means["second"]["StRecall@2"] == 2 / 3
    assert data.best("alpha_nDCG@5") == data.means["second"]["alpha_nDCG@5"]
    assert data.judgment("1", "a") == "1"  # the page shows each document's highest label


def test_the_evaluator_component_refuses_a_diversity_measure_at_init_naming_why():
    from haystack_irmetrics.components import IRMetricsEvaluator
    from haystack_irmetrics.errors import UnknownMeasureError

    with pytest.raises(UnknownMeasureError, match="alpha_nDCG@10 reads judgments per subtopic, which ground-truth"):
        IRMetricsEvaluator(metrics=["NDCG", "alpha_nDCG"], k_values=[10])


def test_compare_reads_diversity_qrels_when_a_diversity_measure_is_asked(tmp_path, capsys):
    from haystack_irmetrics.cli.app import main

    (tmp_path / "qrels").write_text("1 1 a 1\n1 2 b 1\n1 3 c 1\n2 1 x 1\n2 2 y 1\n")
    (tmp_path / "a.trec").write_text("1 Q0 a 1 3.0 r\n1 Q0 b 2 2.0 r\n2 Q0 x 1 1.0 r\n")
    (tmp_path / "b.trec").write_text("1 Q0 a 1 3.0 s\n1 Q0 z 2 2.0 s\n2 Q0 z 1 1.0 s\n")
    argv = ["compare", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--qrels", str(tmp_path / "qrels"),
            "-m", "StRecall@2,alpha_nDCG@5", "--no-stats", "--preset", "trec"]  # fmt: skip
    assert main(argv) in (0, None)
    out = capsys.readouterr().out
    # q1: a, b cover 2 of 3 subtopics; q2: x covers 1 of 2. The other run: a alone, then nothing.
    assert "| StRecall@2 | 0.58333 | 0.16667 | -0.41667 |" in out
    assert "| alpha_nDCG@5 |" in out


def test_evaluating_leaves_the_callers_subtopic_judgments_and_run_untouched():
    qrels = {"1": {"a": {"d1": 1, "d2": 0}, "b": {"d2": 2}}}
    run = {"1": {"d2": 1.0, "d1": 1.0, "d3": 0.5}}
    before = json.dumps([qrels, run])
    evaluate(SubtopicQrels.from_dict(qrels), run, [1, 5], measures=["alpha_nDCG", "ERR_IA", "NRBP", "StRecall", "P"])
    assert json.dumps([qrels, run]) == before
