"""Interleaving: the joiner's lists (team-draft, balanced, probabilistic), their credit and outcome; team-draft
is fair under clicks that ignore relevance and finds the better ranker under clicks that follow it."""

from __future__ import annotations

import numpy as np
import pytest
from haystack import Document, Pipeline

from haystack_irmetrics.clicks import ClickLog
from haystack_irmetrics.clicks.interleaving import balanced_credit, credit, interleave, outcome, outcome_of, query_rng
from haystack_irmetrics.components import InterleavingJoiner, load_pipeline
from haystack_irmetrics.errors import InterleavingError
from tests.test_clicks_models import QRELS, RUNS


def docs(*ids):
    return [Document(id=i, content=f"text of {i}") for i in ids]


@pytest.mark.parametrize("seed", range(20))
def test_team_draft_keeps_the_teams_within_one_pick_and_each_rankings_order(seed):
    rng = np.random.default_rng(seed)
    a = [f"d{i}" for i in rng.permutation(12)[:8]]
    b = [f"d{i}" for i in rng.permutation(12)[:8]]
    merged = interleave(a, b, rng=query_rng(seed, "q"))
    assert sorted(d for d, _, _ in merged) == sorted(set(a) | set(b))
    teams = [t for _, t, _ in merged]
    placed = {t: [d for d, tt, _ in merged if tt == t] for t in "ab"}
    for t, ranking in (("a", a), ("b", b)):  # a team places its documents in its own order
        mine = [d for d in placed[t] if d in ranking]
        assert mine == sorted(mine, key=ranking.index)
    shown: set[str] = set()
    picks = {"a": 0, "b": 0}
    for doc, team, _ in merged:  # a team picks ahead of the other only when the other has nothing left
        other = "b" if team == "a" else "a"
        if picks[team] > picks[other]:
            assert set(a if other == "a" else b) <= shown
        shown.add(doc)
        picks[team] += 1
    assert teams.count("a") + teams.count("b") == len(merged)


def test_balanced_interleaving_takes_turns_by_depth():
    merged = interleave(["a1", "a2", "x"], ["x", "b2", "b3"], method="balanced", rng=query_rng(0, "q"))
    ids = [d for d, _, _ in merged]
    assert set(ids) == {"a1", "a2", "x", "b2", "b3"}
    assert set(ids[:2]) == {"a1", "x"}


def test_balanced_credit_is_joachims_rule():
    # a = (1, 2, 3), b = (4, 1, 5); clicked: 4 and 1 -> lowest click 1 is at depth 1 in a, 2 in b: k = 1
    assert balanced_credit(["1", "4", "2", "5"], [True, True, False, False], ["1", "2", "3"], ["4", "1", "5"]) == (1, 1)
    assert balanced_credit(["1", "4"], [False, True], ["1", "2"], ["4", "1"]) == (0, 1)


def test_probabilistic_interleaving_keeps_the_probability_each_document_was_drawn_with():
    merged = interleave(["a", "b", "c"], ["c", "b", "a"], method="probabilistic", rng=query_rng(3, "q"))
    first_doc, first_team, p = merged[0]
    ranking = ["a", "b", "c"] if first_team == "a" else ["c", "b", "a"]
    softmax = 1 / np.arange(1, 4) ** 3.0
    assert p == pytest.approx(softmax[ranking.index(first_doc)] / softmax.sum())
    assert all(0 < q <= 1 for _, _, q in merged)
    assert merged[-1][2] == 1.0  # the last document left is drawn for sure


def test_the_joiner_is_reproducible_per_seed_and_query_and_leaves_its_inputs_alone():
    a, b = docs("a1", "a2", "a3", "s"), docs("s", "b1", "b2", "b3")
    before = [(d.id, dict(d.meta)) for d in a + b]
    joiner = InterleavingJoiner(seed=11)
    lists = {q: [(d.id, d.meta["interleaving_team"]) for d in joiner.run(a, b, query=q)["documents"]] for q in "xyzw"}
    assert lists["x"] == [(d.id, d.meta["interleaving_team"]) for d in joiner.run(a, b, query="x")["documents"]]
    assert len({tuple(v) for v in lists.values()}) > 1  # the query seeds the draw
    assert [(d.id, dict(d.meta)) for d in a + b] == before
    out = InterleavingJoiner(method="probabilistic", top_k=3).run(a, b)["documents"]
    assert len(out) == 3 and all("interleaving_probability" in d.meta for d in out)


def test_the_joiner_round_trips_through_to_dict_and_a_yaml_pipeline(tmp_path):
    joiner = InterleavingJoiner(method="balanced", seed=5, top_k=4)
    again = InterleavingJoiner.from_dict(joiner.to_dict())
    assert (again.method, again.seed, again.top_k) == ("balanced", 5, 4)
    pipe = Pipeline()
    pipe.add_component("joiner", joiner)
    path = tmp_path / "p.yaml"
    path.write_text(pipe.dumps())
    loaded = load_pipeline(path)
    a, b = docs("a1", "a2", "s"), docs("s", "b1")
    got = loaded.run({"joiner": {"documents_a": a, "documents_b": b, "query": "q"}})["joiner"]
    assert got == joiner.run(a, b, query="q")


def test_bad_joiner_settings_and_inputs_are_typed_errors():
    with pytest.raises(InterleavingError, match="unknown interleaving method"):
        InterleavingJoiner(method="coin")
    with pytest.raises(InterleavingError, match="top_k"):
        InterleavingJoiner(top_k=0)
    with pytest.raises(InterleavingError, match=r"documents_b\[1\] is a str"):
        InterleavingJoiner().run(docs("a"), [*docs("b"), "c"])


def click_log(n: int, attract, method: str = "team-draft", seed: int = 0):
    """``n`` impressions interleaving the best and the worst sample ranker, clicks from a PBM with
    attractiveness ``attract(query, doc)`` and examination 1/sqrt(rank)."""
    rng = np.random.default_rng(seed)
    queries = sorted(QRELS)
    rows = []
    for s in range(n):
        q = queries[rng.integers(len(queries))]
        merged = interleave(RUNS[0][q], RUNS[3][q], method=method, rng=query_rng(s, q), length=10)
        for r, (d, team, _) in enumerate(merged):
            c = rng.random() < attract(q, d) / np.sqrt(r + 1)
            rows.append(
                {"session": f"s{s}", "query_id": q, "doc_id": d, "position": r + 1, "click": int(c), "team": team}
            )
    return ClickLog(rows, team=True).sessions()


def test_team_draft_credit_is_balanced_when_clicks_ignore_relevance():
    result = outcome(click_log(3000, lambda q, d: 0.3), n_resamples=2000)
    assert abs(result.delta) < 0.03
    assert result.ci_low < 0 < result.ci_high
    assert result.p_value > 0.05


@pytest.mark.parametrize("method", ["team-draft", "probabilistic"])
def test_interleaving_prefers_the_better_ranker_when_clicks_follow_relevance(method):
    grade = {0: 0.05, 1: 0.4, 2: 0.8}
    result = outcome(click_log(1500, lambda q, d: grade[QRELS[q][d]], method), n_resamples=2000)
    assert result.delta > 0.05 and result.ci_low > 0
    assert result.p_value < 1e-3
    assert result.wins > result.losses


def test_outcome_counts_wins_losses_ties_and_delta_as_chapelle_et_al():
    out = outcome_of(np.array([2, 0, 1, 0, 1]), np.array([1, 1, 1, 0, 0]), n_resamples=200)
    assert (out.wins, out.losses, out.ties, out.impressions) == (2, 1, 1, 5)
    assert out.delta == pytest.approx((2 + 0.5) / 4 - 0.5)
    assert out.p_value == pytest.approx(1.0)  # 2 wins of 3 decided: binomial two-sided


def test_a_log_without_teams_or_with_a_third_team_is_a_typed_error():
    rows = [{"session": "s", "query_id": "q", "doc_id": "d", "position": 1, "click": 1, "team": "c"}]
    with pytest.raises(InterleavingError, match="team other than"):
        credit(ClickLog(rows, team=True).sessions())
    with pytest.raises(InterleavingError, match="no team column"):
        credit(ClickLog(rows).sessions())


# One query; ranker a = (x, y, z), ranker b = (y, w, x); balanced interleaving with a first shows
# x (a), y (b), w (b), z (a). Four impressions of that list:
#   s1 clicks y, z: by team 1-1, a tie; Joachims: lowest click z at depth 3 in a, absent from b (3): k = 3,
#      a's top 3 holds y, z (2), b's top 3 holds y (1): a win;
#   s2 clicks w: by team 0-1, a loss; Joachims: w absent from a (3), depth 2 in b: k = 2, a's x, y (0),
#      b's y, w (1): a loss;
#   s3 clicks x, y: by team 1-1; Joachims: y at depth 2 in a, 1 in b: k = 1, x (1) against y (1): ties;
#   s4 no click: counted, not scored.
HAND_SHOWN = [("x", "a"), ("y", "b"), ("w", "b"), ("z", "a")]
HAND_CLICKS = {"s1": {"y", "z"}, "s2": {"w"}, "s3": {"x", "y"}, "s4": set()}


def hand_log(tmp_path):
    import polars as pl

    rows = [
        {"session": s, "query_id": "q1", "doc_id": d, "position": r + 1, "click": int(d in clicked), "team": t}
        for s, clicked in HAND_CLICKS.items()
        for r, (d, t) in enumerate(HAND_SHOWN)
    ]
    path = tmp_path / "hand.csv"
    pl.DataFrame(rows).write_csv(path)
    (tmp_path / "a.trec").write_text("q1 Q0 x 1 3 a\nq1 Q0 y 2 2 a\nq1 Q0 z 3 1 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 y 1 3 b\nq1 Q0 w 2 2 b\nq1 Q0 x 3 1 b\n")
    return path


@pytest.mark.parametrize(
    "method,expected",
    [
        ("team-draft", (0, 1, 2, (0 + 2 / 2) / 3 - 0.5)),  # clicks per team
        ("probabilistic", (0, 1, 2, (0 + 2 / 2) / 3 - 0.5)),  # Hofmann et al.'s first rule: clicks per team
        ("balanced", (1, 1, 1, (1 + 1 / 2) / 3 - 0.5)),  # Joachims's rule over the original rankings
    ],
)
def test_irmetrics_interleave_credits_each_method_by_its_own_rule_on_a_hand_computed_log(
    method, expected, tmp_path, capsys
):
    import json

    from haystack_irmetrics.cli import main

    path = hand_log(tmp_path)
    lists = (interleave(["x", "y", "z"], ["y", "w", "x"], method="balanced", rng=query_rng(s, "q1")) for s in range(20))
    merged = next(m for m in lists if m[0][1] == "a")
    assert [(d, t) for d, t, _ in merged] == HAND_SHOWN  # the list balanced interleaving shows when a leads
    args = ["interleave", str(path), "--method", method, "--json", "--n-resamples", "100"]
    if method == "balanced":
        args += ["--ranking-a", str(tmp_path / "a.trec"), "--ranking-b", str(tmp_path / "b.trec")]
    assert main(args) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["wins"], got["losses"], got["ties"]) == expected[:3] and got["impressions"] == 4
    assert got["delta"] == pytest.approx(expected[3])


def test_balanced_credit_without_both_rankings_or_rankings_for_another_method_exit_2(tmp_path, capsys):
    from haystack_irmetrics.cli import main

    path = hand_log(tmp_path)
    assert main(["interleave", str(path), "--method", "balanced", "--ranking-a", str(tmp_path / "a.trec")]) == 2
    assert "--ranking-b" in capsys.readouterr().err
    assert main(["interleave", str(path), "--ranking-a", str(tmp_path / "a.trec")]) == 2
    assert "credits by team" in capsys.readouterr().err
    (tmp_path / "other.trec").write_text("q9 Q0 x 1 3 a\n")
    args = ["interleave", str(path), "--method", "balanced", "--ranking-a", str(tmp_path / "other.trec")]
    assert main([*args, "--ranking-b", str(tmp_path / "b.trec")]) == 2
    assert "'q1', which ranking a does not hold" in capsys.readouterr().err
