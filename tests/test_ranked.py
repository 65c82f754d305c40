"""Ranked lists (``RankedRun``, ``{qid: [docid, ...]}``): the list order is the ranking, exactly.

A ranked list of ``n`` distinct ids means the scores ``n, n - 1, ..., 1``; the oracles get that dict.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate, evaluate_chunks
from haystack_irmetrics.core.inputs import Qrels, RankedRun, as_run
from haystack_irmetrics.core.prepare import prepare
from haystack_irmetrics.core.ranking import judged_ranks
from haystack_irmetrics.errors import EmptyInputError, InvalidIdError, InvalidScoreError
from tests import strategies as S
from tests.oracles import beir_means, pytrec_per_query, pytrec_rr_at, without_identical_ids
from tests.test_properties import registry

# Both paths: the compiled scan (ranked lists read and indexed in C) and pure Python.
pytestmark = pytest.mark.usefixtures("scan_path")

TOL = 1e-12
# Repeats (chunks), a query's own id ("q1", "10", "9" are both), empty lists.
LISTS = st.dictionaries(st.sampled_from(S.QIDS), st.lists(st.sampled_from(S.DOCS), max_size=12), max_size=5)


def scored(lists: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """The documented meaning: first occurrences in order, scored n - position."""
    out = {}
    for q, ranked in lists.items():
        firsts = list(dict.fromkeys(ranked))
        out[q] = {d: float(len(firsts) - i) for i, d in enumerate(firsts)}
    return out


def _scored_queries(qrels, lists):
    return [q for q in lists if qrels.get(q) and lists[q]]


@given(S.qrels(), LISTS, S.k_values)
def test_beir_preset_per_query_equals_pytrec_eval_on_the_list_order(qrels, lists, ks):
    assume(_scored_queries(qrels, lists))
    before = copy.deepcopy(lists)
    res = evaluate(qrels, lists, ks, preset="beir")
    assert lists == before, "evaluate() modified the caller's lists"
    oracle = pytrec_per_query(qrels, without_identical_ids(scored(lists)), ks)
    for family in ("NDCG", "MAP", "Recall", "P"):
        for k in ks:
            name = f"{family}@{k}"
            assert res.per_query[name].keys() == oracle[name].keys()
            for q, v in oracle[name].items():
                assert abs(res.per_query[name][q] - v) <= TOL, (name, q)


@given(S.qrels(), LISTS, S.k_values, st.sampled_from([1, 2]))
def test_trec_preset_all_six_per_query_equal_pytrec_eval_on_the_list_order(qrels, lists, ks, level):
    assume(_scored_queries(qrels, lists))
    res = evaluate(qrels, RankedRun.from_lists(lists), ks, preset="trec", relevance_threshold=level)
    run = scored(lists)
    oracle = pytrec_per_query(qrels, run, ks, relevance_level=level)
    for family in ("NDCG", "MAP", "Recall", "P"):
        for k in ks:
            assert res.per_query[f"{family}@{k}"] == oracle[f"{family}@{k}"]  # bit for bit
    for k in ks:
        assert res.per_query[f"MRR@{k}"] == pytrec_rr_at(qrels, run, k, relevance_level=level)


@st.composite
def beir_safe_lists(draw):
    qrels, results = draw(S.beir_safe())
    return qrels, {q: draw(st.lists(st.sampled_from(S.DOCS), max_size=12)) for q in results}


@given(beir_safe_lists(), S.k_values)
def test_beir_preset_means_equal_beir_evaluate_on_the_list_order(case, ks):
    qrels, lists = case
    expected = beir_means(qrels, scored(lists), ks)
    assume(expected is not None)
    assert evaluate(qrels, lists, ks, preset="beir").means == expected


@given(S.qrels(), LISTS, st.sampled_from(["beir", "trec"]), st.booleans())
def test_every_registered_measure_equals_the_scored_dict(qrels, lists, preset, identical):
    """Beyond the oracles' six: the whole registry on a list equals the same ranking as scores."""
    ks = [1, 3, 10]
    kwargs = {"measures": registry(ks), "preset": preset, "ignore_identical_ids": identical}
    try:
        want = evaluate(qrels, scored(lists), ks, **kwargs)
    except Exception as exc:  # the same typed error either way
        with pytest.raises(type(exc)):
            evaluate(qrels, lists, ks, **kwargs)
        return
    got = evaluate(qrels, lists, ks, **kwargs)
    assert got.raw_means == want.raw_means
    assert dict(got.per_query.items()) == dict(want.per_query.items())


@given(S.qrels(), LISTS, st.lists(st.integers(0, 6), max_size=3))
def test_ranked_pieces_score_as_the_whole(qrels, lists, cuts):
    items = list(lists.items())
    bounds = sorted({min(c, len(items)) for c in cuts} | {0, len(items)})
    pieces = [RankedRun.from_lists(dict(items[a:b])) for a, b in pairwise(bounds) if b > a]
    try:
        whole = evaluate(qrels, lists, [1, 3, 10])
    except Exception as exc:
        with pytest.raises(type(exc)):
            evaluate_chunks(qrels, pieces, [1, 3, 10])
        return
    assert evaluate_chunks(qrels, pieces, [1, 3, 10]).means == whole.means


@pytest.mark.parametrize("ties", ["trec", "stable"])
@pytest.mark.parametrize("identical", [True, False])
@given(S.qrels(), LISTS)
def test_list_positions_are_the_ranks_the_float32_count_finds(ties, identical, qrels, lists):
    # Ranked lists skip counting (rank = position among the kept rows); counting their synthetic
    # scores must agree, with repeats and dropped own ids.
    assume(_scored_queries(qrels, lists))
    prep = prepare(RankedRun.from_lists(lists), Qrels.from_dict(qrels), identical)
    assert prep.pair_ranks is not None and prep.scores is None
    # The kept rows' synthetic scores, as ids_at / exact_at give them, counted as any run's scores.
    kept = np.arange(int(prep.offsets[-1]))
    scores = prep.exact_at(kept, prep.ids_at(kept)).astype(np.float32)
    counted = judged_ranks(replace(prep, pair_ranks=None, scores=scores), ties)
    assert prep.pair_ranks[ties].tolist() == counted.tolist()
    # ids_at / exact_at see the lists without repeats and without the dropped own ids.
    expected = []
    for q, ranked in lists.items():
        if qrels.get(q):
            distinct = list(dict.fromkeys(ranked))
            expected += [(d, len(distinct) - i) for i, d in enumerate(distinct) if not (identical and d == q)]
    assert list(zip(prep.ids_at(kept), scores.tolist())) == expected


def test_a_repeated_id_counts_once_at_its_first_position():
    run = RankedRun.from_lists({"q": ["a", "b", "a", "c", "b"]})
    assert run.ids == ["a", "b", "c"]
    assert run.offsets.tolist() == [0, 3]
    assert run.scores.tolist() == [3.0, 2.0, 1.0]
    assert run.positions == [{"a": 0, "b": 1, "c": 2}]
    # c moves up to rank 3: P@3 sees it.
    assert evaluate({"q": {"c": 1}}, run, [3]).means["P@3"] == round(1 / 3, 5)


def test_hand_computed_values_follow_the_list_order():
    qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
    lists = {"q1": ["d1", "d2", "d4"], "q2": ("d5", "d3")}
    res = evaluate(qrels, lists, [1, 3])
    # The README's worked example, given as scores there: the same numbers from the order alone.
    assert (res.means["NDCG@3"], res.means["MRR@1"], res.means["P@3"]) == (0.74532, 0.5, 0.5)


def test_the_query_s_own_id_is_dropped_by_the_beir_preset_and_kept_by_trec():
    qrels = {"q1": {"q1": 1, "d1": 1}}
    lists = {"q1": ["q1", "d1"]}
    assert evaluate(qrels, lists, [1], preset="beir").means["P@1"] == 1.0  # d1 moves up
    assert evaluate(qrels, lists, [1], preset="trec").means["P@1"] == 1.0  # q1 itself is relevant
    assert evaluate({"q1": {"d1": 1}}, lists, [1], preset="trec").means["P@1"] == 0.0


def test_columnar_accessors_see_the_deduplicated_lists():
    run = RankedRun.from_lists({"q1": ["x", "y", "x"], "q2": ["y", "q2"]})
    assert run.ids_at(np.array([1, 2])) == ["y", "y"]
    rows, which = run.find(["y", "nope", "x"])
    assert rows.tolist() == [0, 1, 2] and which.tolist() == [2, 0, 0]
    assert run.identical_rows().tolist() == [False, False, False, True]
    assert run.data == {"q1": {"x": 2.0, "y": 1.0}, "q2": {"y": 2.0, "q2": 1.0}}
    assert as_run(run) is run


def test_every_cutoff_measure_and_hole_work_on_lists():
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d9": 1}}
    lists = {"q1": ["d3", "d2", "d1"], "q2": ["d1"]}
    res = evaluate(qrels, lists, [2], measures=["Hole@2", "Judged@2", "Rprec", "bpref"])
    assert (
        res.raw_means
        == evaluate(qrels, scored(lists), [2], measures=["Hole@2", "Judged@2", "Rprec", "bpref"]).raw_means
    )


@pytest.mark.parametrize(
    ("lists", "error", "match"),
    [
        ({"q1": ["d1", 7]}, InvalidIdError, r"document id 7 at run\['q1'\]\[1\]"),
        ({"q1": ["d1", None]}, InvalidIdError, r"\['q1'\]\[1\]"),
        ({"q1": "d1 d2"}, InvalidIdError, r"run\['q1'\] must be a list of doc ids"),
        ({5: ["d1"]}, InvalidIdError, "query id 5"),
    ],
)
def test_bad_ranked_lists_are_typed_errors_naming_the_place(lists, error, match):
    with pytest.raises(error, match=match):
        RankedRun.from_lists(lists)


def test_bad_results_shapes_name_both_accepted_forms():
    with pytest.raises(InvalidScoreError, match="ranked lists of doc ids are accepted too"):
        evaluate({"q1": {"d1": 1}}, {"q1": ["d1"], "q2": {"d1": 1.0}}, [1])
    with pytest.raises(EmptyInputError):
        RankedRun.from_lists({})
    with pytest.raises(EmptyInputError):
        RankedRun.from_lists([["d1"]])
    with pytest.raises(InvalidIdError, match=r"document id 3 at results\[.q1.\]\[1\]"):
        evaluate({"q1": {"d1": 1}}, {"q1": ["d1", 3]}, [1])


def test_the_parts_must_agree():
    with pytest.raises(EmptyInputError, match="2 queries"):
        RankedRun(["q1", "q2"], ["a"], [1])


def test_list_subclasses_are_ranked_lists_too():
    class Ranked(list):
        pass

    assert evaluate({"q": {"a": 1}}, {"q": Ranked(["b", "a"])}, [1, 2]).means["P@2"] == 0.5


def test_feedback_condense_accepts_ranked_lists():
    from haystack_irmetrics.feedback.scoring import condense

    assert condense({"q1": ["d1", "d2", "d3"]}, {"q1": {"d3": 1, "d1": 0}}) == {"q1": {"d1": 3.0, "d3": 1.0}}
