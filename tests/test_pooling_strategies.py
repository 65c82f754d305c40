"""Pooling strategies where one flipped comparison or one dropped line would otherwise go unnoticed: the
constructors' checks, RBP's tie-break, a label counted only once a run reaches its document, a relabel, a
batch asked before any label, and the count of pairs asked. Every order is traced by hand from the
strategy's definition (docstrings of haystack_irmetrics/pooling/strategies.py); where runs tie, the traces
read "R1 first" and run under the seed whose tie order is the runs' written order (``listed_seed``)."""

from __future__ import annotations

import pytest

from haystack_irmetrics.errors import PoolingError
from haystack_irmetrics.pooling import Depth, MaxMean, MoveToFront, RBPWeighted, pool_runs
from tests.test_pool_order import listed_seed


def ranked(*lists: str) -> list[dict[str, dict[str, float]]]:
    """One run per string, each of query ``q``, its letters best first: ``"ab"`` is ``{"q": {"a": 2, "b": 1}}``."""
    return [{"q": {d: float(len(docs) - i) for i, d in enumerate(docs)}} for docs in lists]


def replay(strategy, labels: dict[str, int]) -> str:
    """The documents of query ``q`` the strategy asks for, each labelled before the next is asked."""
    out = ""
    while (pair := strategy.next()) is not None:
        out += pair.doc
        strategy.record(pair.query, pair.doc, labels[pair.doc])
    return out


def test_depth_refuses_runs_pooled_at_another_depth_and_takes_its_own():
    runs = pool_runs(ranked("abc", "dbe"), depth=2)
    with pytest.raises(PoolingError, match="pooled at depth 2, not 3"):
        Depth(runs, depth=3)
    with pytest.raises(PoolingError, match="pooled at depth 2, not 1"):
        Depth(runs, depth=1)
    # the same depth again is the runs' own: rank 1 a d, rank 2 b (met already: once)
    assert replay(Depth(runs, depth=2, seed=listed_seed(ranked("abc", "dbe"))), {}.fromkeys("abde", 0)) == "adb"


@pytest.mark.parametrize("p", [0.0, 1.0, -0.5, 1.5])
def test_rbp_refuses_a_persistence_outside_the_open_interval(p):
    with pytest.raises(PoolingError, match=r"persistence p must be a number in \(0, 1\)"):
        RBPWeighted(ranked("ab"), p=p)


def test_rbp_takes_a_persistence_just_inside_the_interval():
    # runs a b and c b.  p near 0: a rank 1 weighs about 1, b twice about 1e-9: a c b.  p near 1: a and c weigh
    # 0.001, b twice 0.001 * 0.999: b a c.
    runs, seed = ranked("ab", "cb"), listed_seed(ranked("ab", "cb"))
    assert replay(RBPWeighted(runs, p=1e-9, seed=seed), {}.fromkeys("abc", 0)) == "acb"
    assert replay(RBPWeighted(runs, p=0.999, seed=seed), {}.fromkeys("abc", 0)) == "bac"


def test_rbp_breaks_equal_weights_in_the_order_the_depth_pool_grows_in():
    # Every document is one run's rank 1: all weigh 1 - p.  The depth pool's order: rank 1 of q1 (run 1, run 2),
    # then of q2 -- not the ids' order (a b c d), nor run by run (b d a c).
    runs = [{"q1": {"b": 1.0}, "q2": {"d": 1.0}}, {"q1": {"a": 1.0}, "q2": {"c": 1.0}}]
    order = [("q1", "b"), ("q1", "a"), ("q2", "d"), ("q2", "c")]
    seed = listed_seed(runs)
    for strategy in (RBPWeighted(runs, seed=seed), RBPWeighted(runs, p=0.5, seed=seed), Depth(runs, seed=seed)):
        assert [(p.query, p.doc) for p in iter(strategy.next, None)] == order
    two = [{"q": {"b": 1}}, {"q": {"a": 1}}]
    first = RBPWeighted(two, seed=listed_seed(two)).next()
    assert (first.query, first.doc) == ("q", "b")


def test_a_label_counts_for_a_run_only_once_the_run_has_read_the_document():
    # Runs R1: a b, R2: b c, R3: a d e (three runs sharing a and b); a relevant, every other document not.
    labels = {"a": 1, "b": 0, "c": 0, "d": 0, "e": 0}
    runs = pool_runs(ranked("ab", "bc", "ade"))
    # MTF, priority -(non-relevant read): R1 a (rel), b (non-rel: R1 -1; R2 has not read b, still 0).  R2 (0)
    # reads b (judged non-rel, free: -1), turn over.  R3 (0): a (judged rel, free), d (non-rel: -1).  R2, R3 at
    # -1, R1 exhausted: R2 first: c (-2), exhausted.  R3: e.  Had b counted for R2 before it read b, R2 would
    # read it later at -2 and lose the tie to R3: e before c.
    assert replay(MoveToFront(runs, seed=listed_seed(runs)), labels) == "abdce"
    # MaxMean, means (1 + relevant read) / (2 + read): R1 a (2/3), b (2/4), exhausted.  R2, R3 at 1/2: R2 reads b
    # (judged non-rel, free: 1/3); R3 reads a (judged rel, free: 2/3), d (2/4), e.  R2: c.  Had a counted for R3
    # when it was labelled, R3 (2/2) would read d straight after a.
    assert replay(MaxMean(runs, seed=listed_seed(runs)), labels) == "abdec"


@pytest.mark.parametrize("strategy", [MoveToFront, MaxMean])
@pytest.mark.parametrize(("first", "then"), [(2, 0), (0, 2)])
def test_a_relabelled_pair_counts_as_its_last_label_only(strategy, first, then):
    # Runs R1: a b, R2: c d; a is asked first.  Labelled relevant at last: R1 keeps its lead (MaxMean 2/3 against
    # 1/2; MTF priorities 0 and 0, R1 first): b.  Not relevant at last: R1 falls behind (1/3; -1): c.
    runs = pool_runs(ranked("ab", "cd"))
    s = strategy(runs, seed=listed_seed(runs))
    assert s.next().doc == "a"
    s.record("q", "a", first)
    s.record("q", "a", then)
    assert s.next().doc == ("b" if then else "c")
    # the same as a strategy that only ever saw the last label
    once = strategy(runs, seed=listed_seed(runs))
    once.next()
    once.record("q", "a", then)
    assert once.next().doc == ("b" if then else "c")


def test_asked_counts_the_pairs_handed_out():
    # Depth over R1: a b c, R2: d b e with a judged before: d, b (rank 2 of both), c, e.
    s = Depth(ranked("abc", "dbe"), judged={"q": {"a": 1}}, seed=listed_seed(ranked("abc", "dbe")))
    assert s.asked == 0
    assert [s.next().doc, s.next().doc] == ["d", "b"]  # two pending: both asked
    assert s.asked == 2
    s.record("q", "d", 1)
    assert s.asked == 2  # a label asks nothing
    assert [p.doc for p in iter(s.next, None)] == ["c", "e"]
    assert s.asked == 4
    assert s.next() is None and s.asked == 4  # an exhausted pool asks nothing more


def asked(strategy, labels: dict[str, int], steps: str) -> str:
    """Drive a strategy of query ``q`` by ``steps``: ``+`` asks for a pair, a letter records that document's
    label; then every pair left, each labelled before the next.  Returns the documents asked, in order."""
    out = ""
    for step in steps:
        if step == "+":
            out += strategy.next().doc
        else:
            strategy.record("q", step, labels[step])
    return out + replay(strategy, labels)


def test_mtf_with_pairs_pending_before_any_label():
    # R1: a, R2: a b c, R3: d a; relevant b c.  Two asked before any label: R1 a, exhausted; R2 reads a
    # (pending: read, not a failure yet) and b.  a arrives non-relevant: R2 read it in this turn, so the turn is
    # over (R2 -1; b relevant changes nothing).  R3 (0): d (-1).  R2, R3 at -1: R2 first: c.  R3: a judged.
    labels = {"a": 0, "b": 1, "c": 1, "d": 0}
    runs = ranked("a", "abc", "da")
    assert asked(MoveToFront(runs, seed=listed_seed(runs)), labels, "++ab") == "abdc"


def test_mtf_a_late_label_of_an_earlier_turn_lowers_the_run_and_keeps_the_turn():
    # R1: a b c d, R2: e f; relevant c d f.  R1 gives a and b; a arrives non-relevant: R1 -1, turn over.
    # R2 (0): e (-1).  R1 (-1, first) again from c; b, of R1's earlier turn, arrives non-relevant: R1 -2, and this
    # turn goes on: d, not R2's f.
    labels = {"a": 0, "b": 0, "c": 1, "d": 1, "e": 0, "f": 1}
    runs = ranked("abcd", "ef")
    assert asked(MoveToFront(runs, seed=listed_seed(runs)), labels, "++a+e+b+") == "abecdf"


def test_mtf_a_label_of_another_runs_document_keeps_the_current_turn():
    # R1: a, R2: b c d, R3: e c; relevant d only.  R1 gives a, exhausted; R2 (0) gives b.  a arrives
    # non-relevant: R1's document, R2's turn goes on: c.  b arrives non-relevant: R2 -1, turn over (c stays
    # pending).  R3 (0): e (-1).  R2, R3 at -1: R2 first: d.  R3 reads c (pending, never asked again): exhausted.
    labels = {"a": 0, "b": 0, "c": 0, "d": 1, "e": 0}
    runs = ranked("a", "bcd", "ec")
    assert asked(MoveToFront(runs, seed=listed_seed(runs)), labels, "++a+b") == "abced"


def test_mtf_a_relevant_label_keeps_the_turn_so_a_later_non_relevant_one_ends_it():
    # R1: a b c d, R2: e; relevant a c d.  R1 gives a and b; a arrives relevant: the turn goes on: c.  b arrives
    # non-relevant, read in this turn: R1 -1, turn over.  R2 (0): e (-1).  R1 (-1, first): d (c pending).
    labels = {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0}
    runs = ranked("abcd", "e")
    assert asked(MoveToFront(runs, seed=listed_seed(runs)), labels, "++a+b") == "abced"
