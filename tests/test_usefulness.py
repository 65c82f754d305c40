"""Usefulness labels, the library: the answer metrics against an independent copy of SQuAD v1.1's official script,
the runs' measures against pytrec_eval on 0/1 labels, the graded rule (a measure that counts relevant documents
averaged over relevance thresholds) against hand-computed values, the settings' checks and the asker's protocol.
The command, the component and eRAG's numbers are in tests/test_usefulness_cli.py and
tests/test_usefulness_component.py."""

from __future__ import annotations

import math
import re
import string
from collections import Counter

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_irmetrics.core.measures import parse_measure
from haystack_irmetrics.errors import UnknownMeasureError, UsefulnessError
from haystack_irmetrics.usefulness.metrics import (
    answer_score,
    check_references,
    contains,
    exact_match,
    normalize_answer,
    token_f1,
)
from haystack_irmetrics.usefulness.scoring import check_measures, score_run
from haystack_irmetrics.usefulness.settings import UsefulnessSettings

# ---- SQuAD v1.1's official evaluate-v1.1.py, as it is written there (the oracle) ----------------------------------


def squad_normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def squad_f1_score(prediction, ground_truth):
    prediction_tokens = squad_normalize_answer(prediction).split()
    ground_truth_tokens = squad_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def squad_exact_match_score(prediction, ground_truth):
    return squad_normalize_answer(prediction) == squad_normalize_answer(ground_truth)


def metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    scores_for_ground_truths = []
    for ground_truth in ground_truths:
        score = metric_fn(prediction, ground_truth)
        scores_for_ground_truths.append(score)
    return max(scores_for_ground_truths)


def contained(prediction, ground_truth):
    """Containment as whole words, by token lists (the oracle of ``contains``)."""
    p, g = squad_normalize_answer(prediction).split(), squad_normalize_answer(ground_truth).split()
    return any(p[i : i + len(g)] == g for i in range(len(p) - len(g) + 1))


ORACLES = {"exact_match": squad_exact_match_score, "f1": squad_f1_score, "contains": contained}

# Words that exercise each step of the normalization: articles (any case, inside words too), punctuation, spaces.
TEXT = st.lists(
    st.sampled_from(
        [
            "the",
            "The",
            "a",
            "An",
            "an",
            "theatre",
            "1887",
            "Marsh",
            "marsh",
            "hedda",
            "it",
            "is",
            "!",
            ",",
            "-",
            "'s",
            "  ",
            "\t",
            "é",
            "İ",
            "x.y",
            "A.",
            "(the)",
        ]
    ),
    max_size=8,
).map(" ".join)


@settings(max_examples=300)
@given(TEXT, TEXT)
def test_the_answer_metrics_equal_squads_official_script(prediction, reference):
    assert normalize_answer(prediction) == squad_normalize_answer(prediction)
    assert exact_match(prediction, reference) == int(squad_exact_match_score(prediction, reference))
    assert token_f1(prediction, reference) == squad_f1_score(prediction, reference)
    if squad_normalize_answer(reference):
        assert contains(prediction, reference) == int(contained(prediction, reference))


@settings(max_examples=200)
@given(TEXT, st.lists(TEXT.filter(lambda t: bool(squad_normalize_answer(t))), min_size=1, max_size=3))
def test_a_label_is_the_best_score_over_the_references(prediction, references):
    for metric, oracle in ORACLES.items():
        expected = metric_max_over_ground_truths(oracle, prediction, references)
        assert answer_score(metric, prediction, references) == expected


@pytest.mark.parametrize(
    ("prediction", "references", "metric", "label"),
    [
        ("The Corran Bridge.", ["corran bridge"], "exact_match", 1),
        ("It opened in 1887", ["1887", "in 1887"], "f1", 2 / 3),  # 'it opened in 1887' vs 'in 1887': P 2/4, R 1
        ("It opened in 1887", ["1887"], "f1", 0.4),  # P 1/4, R 1
        ("1887 1887", ["1887"], "f1", 2 / 3),  # P 1/2 (one shared word, counted once), R 1
        ("18870", ["1887"], "contains", 0),  # whole words only
        ("It opened in 1887.", ["1887"], "contains", 1),
        ("", ["1887"], "exact_match", 0),  # an empty generation is 0 by every metric
        ("", ["1887"], "f1", 0.0),
        ("", ["1887"], "contains", 0),
        ("HEDDA MARSH.", ["Hedda Marsh", "Marsh"], "exact_match", 1),
    ],
)
def test_hand_computed_labels(prediction, references, metric, label):
    assert answer_score(metric, prediction, references) == label


def test_exact_match_and_contains_give_ints_and_f1_floats():
    assert type(answer_score("exact_match", "a", ["b"])) is int and type(answer_score("contains", "b", ["b"])) is int
    assert type(answer_score("f1", "b", ["b"])) is float and type(answer_score("f1", "a", ["b"])) is float


@pytest.mark.parametrize(
    ("references", "message"),
    [
        ([], "query 'q1' has no reference answers"),
        ("1887", "query 'q1' has no reference answers"),
        (None, "query 'q1' has no reference answers"),
        ([1887], "a reference answer must be a string, got int"),
        (["1887", "The"], "reference answer 'The' is empty once normalized"),
        (["!?"], "reference answer '!\\?' is empty once normalized"),
    ],
)
def test_references_that_cannot_be_matched_are_refused_naming_the_query(references, message):
    with pytest.raises(UsefulnessError, match=message):
        check_references(references, "query 'q1'")


# ---- the runs' measures ----------------------------------------------------------------------------------------

MEASURES = ["NDCG@5", "P@5", "MRR@5", "Success@5", "Recall@5", "MAP@5", "P@1", "Success@1", "NDCG@3"]
#: pytrec_eval's name of each measure (MRR@k: recip_rank on the run cut at k).
PYTREC = {
    "NDCG@5": "ndcg_cut_5",
    "P@5": "P_5",
    "Success@5": "success_5",
    "Recall@5": "recall_5",
    "MAP@5": "map_cut_5",
    "P@1": "P_1",
    "Success@1": "success_1",
    "NDCG@3": "ndcg_cut_3",
}

RANKINGS = st.dictionaries(
    st.sampled_from([f"q{i}" for i in range(6)]),
    st.lists(st.sampled_from([f"d{i}" for i in range(9)]), min_size=1, max_size=7, unique=True),
    min_size=1,
)


@settings(max_examples=150)
@given(RANKINGS, st.randoms(use_true_random=False))
def test_with_binary_labels_every_measure_equals_pytrec_eval_per_query(rankings, rng):
    labels = {q: {d: rng.choice((0, 1)) for d in docs} for q, docs in rankings.items()}
    scores = score_run(labels, rankings, check_measures(MEASURES, 5), False, list(rankings))
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in rankings.items()}
    cut = {q: {d: float(5 - i) for i, d in enumerate(docs[:5])} for q, docs in rankings.items()}
    oracle = pytrec_eval.RelevanceEvaluator(labels, set(PYTREC.values())).evaluate(run)
    rr = pytrec_eval.RelevanceEvaluator(labels, {"recip_rank"}).evaluate(cut)
    for q in rankings:
        for name, theirs in PYTREC.items():
            assert scores.per_query[name][q] == pytest.approx(oracle[q][theirs], abs=1e-12), (name, q)
        assert scores.per_query["MRR@5"][q] == pytest.approx(rr[q]["recip_rank"], abs=1e-12)
    for name in MEASURES:
        assert scores.means[name] == pytest.approx(sum(scores.per_query[name].values()) / len(rankings), abs=1e-15)


def test_a_query_the_run_missed_or_nothing_helped_scores_zero_and_counts():
    labels = {"q1": {"a": 1, "b": 0}, "q2": {"x": 0}}
    scores = score_run(
        labels, {"q1": ["a", "b"], "q2": ["x"]}, check_measures(["P@2", "NDCG@2"], 2), False, ["q1", "q2", "q3"]
    )
    assert scores.per_query["P@2"] == {"q1": 0.5, "q2": 0.0, "q3": 0.0}
    assert scores.means["P@2"] == pytest.approx(0.5 / 3)
    assert scores.means["NDCG@2"] == pytest.approx(1 / 3)


def test_graded_labels_average_a_measure_over_relevance_thresholds_by_hand():
    # q1 ranks labels 0.5, 0, 1.0: P@3 = (0.5 + 0 + 1) / 3 (eRAG's mean label); Success@3 = 1.0 (its max);
    # MRR@3: thresholds in (0, 0.5] find rank 1, in (0.5, 1] rank 3: 0.5 * 1 + 0.5 * 1/3.
    labels = {"q1": {"a": 0.5, "b": 0.0, "c": 1.0}, "q2": {"x": 0.25, "y": 0.75}}
    ranked = {"q1": ["a", "b", "c"], "q2": ["x", "y"]}
    scores = score_run(
        labels, ranked, check_measures(["P@3", "Success@3", "MRR@3", "Success@1", "NDCG@3"], 3), True, ["q1", "q2"]
    )
    q = scores.per_query
    assert q["P@3"] == {"q1": pytest.approx(0.5), "q2": pytest.approx(1 / 3)}
    assert q["Success@3"] == {"q1": pytest.approx(1.0), "q2": pytest.approx(0.75)}
    assert q["Success@1"] == {"q1": pytest.approx(0.5), "q2": pytest.approx(0.25)}  # the top document's label
    assert q["MRR@3"]["q1"] == pytest.approx(0.5 + 0.5 / 3)
    assert q["MRR@3"]["q2"] == pytest.approx(0.25 + 0.5 * 0.5)  # (0, .25]: rank 1; (.25, .75]: rank 2; above: none
    # NDCG takes the label as its gain, as the core does: DCG 0.5 + 1/log2(4), IDCG 1 + 0.5/log2(3).
    assert q["NDCG@3"]["q1"] == pytest.approx((0.5 + 1 / 2) / (1 + 0.5 / math.log2(3)))


@settings(max_examples=100)
@given(RANKINGS, st.randoms(use_true_random=False))
def test_with_graded_labels_p_and_success_are_the_mean_and_the_best_label_of_the_top_k(rankings, rng):
    labels = {q: {d: rng.choice((0.0, 0.2, 0.5, 2 / 3, 1.0)) for d in docs} for q, docs in rankings.items()}
    scores = score_run(labels, rankings, check_measures(["P@5", "Success@5"], 5), True, list(rankings))
    for q, docs in rankings.items():
        top = [labels[q][d] for d in docs[:5]]
        assert scores.per_query["P@5"][q] == pytest.approx(sum(top) / 5, abs=1e-12)
        assert scores.per_query["Success@5"][q] == pytest.approx(max(top), abs=1e-12)


def test_0_1_labels_score_alike_as_binary_and_as_graded():
    labels = {"q1": {"a": 0.0, "b": 1.0, "c": 1.0}}
    measures = check_measures(["P@3", "MRR@3", "MAP@3", "NDCG@3"], 3)
    graded = score_run(labels, {"q1": ["a", "b", "c"]}, measures, True, ["q1"])
    binary = score_run(labels, {"q1": ["a", "b", "c"]}, measures, False, ["q1"])
    assert graded.means == pytest.approx(binary.means)


def test_measures_are_checked_before_anything_is_asked():
    assert [m.name for m in check_measures(["ndcg@5", "P@5"], 5)] == ["NDCG@5", "P@5"]
    with pytest.raises(UsefulnessError, match=r"^P@10 reads each ranking's top 10, but only the top 5 .*\(--depth 5\)"):
        check_measures(["P@10"], 5)
    with pytest.raises(UsefulnessError, match="measure NDCG@5 is asked for twice"):
        check_measures(["NDCG@5", "ndcg@5"], 5)
    with pytest.raises(UnknownMeasureError):
        check_measures(["Bogus@5"], 5)
    assert parse_measure("MAP").cutoff is None and check_measures(["MAP"], 3)  # no cutoff: the labelled top K


# ---- settings ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"depth": 0}, "^depth must be a whole number >= 1, got 0$"),
        ({"concurrency": 0}, "^concurrency must be a whole number >= 1, got 0$"),
        ({"retries": -1}, "^retries must be a whole number >= 0, got -1$"),
        ({"end_to_end": 0}, r"^end_to_end \(documents asked together\) must be a whole number >= 1, got 0$"),
        ({"backoff": -1.0}, r"^backoff \(seconds\) must be a finite number >= 0, got -1.0$"),
        ({"answer_metric": "rouge"}, "^the answer metric must be one of exact_match, f1, contains, got 'rouge'$"),
        ({"measures": "P@5"}, "^measures must be a list of one or more measure names"),
        ({"measures": []}, "^measures must be a list of one or more measure names"),
    ],
)
def test_settings_refuse_each_value_out_of_range(options, message):
    with pytest.raises(UsefulnessError, match=message):
        UsefulnessSettings(**options)


def test_settings_default_measures_follow_the_depth_and_an_unknown_keyword_is_a_type_error():
    assert UsefulnessSettings(depth=5).measure_names == ("NDCG@5", "P@5", "MRR@5", "Success@5")
    from dataclasses import replace

    assert replace(UsefulnessSettings(), depth=3).measure_names == ("NDCG@3", "P@3", "MRR@3", "Success@3")
    assert UsefulnessSettings(measures=["P@1"]).measure_names == ("P@1",)
    with pytest.raises(TypeError, match="label_usefulness\\(\\) got an unexpected keyword argument 'dpeth'"):
        UsefulnessSettings.of(None, {"dpeth": 3})
