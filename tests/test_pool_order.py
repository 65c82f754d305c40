"""Pools that do not depend on the order the runs are listed in (issue 47.3): for every strategy of the
registry, any permutation of the runs gives the same pairs; the tie-break is a draw the seed moves and the
runs' contents decide, not their names; ``irmetrics pool`` writes one file for any listing or naming."""

from __future__ import annotations

import hashlib
from itertools import permutations

import pytest

from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import InvalidSeedError
from haystack_irmetrics.pooling import STRATEGIES, make_strategy, pool, pool_runs, sample_queries
from haystack_irmetrics.pooling.runs import contents_digest


def listed_seed(runs, depth=None) -> int:
    """The first seed whose tie order is, on every query, the order ``runs`` are written in (cut at ``depth``:
    the contents drawn over): hand traces that read "R1 first" on a tie run under it."""
    pooled = pool_runs(runs, depth=depth)
    listed = list(range(len(pooled.names)))
    return next(s for s in range(100_000) if all(order == listed for order in pooled.tie_orders(s)))


# Four runs of three queries, tie-heavy: every run ranks the same number of documents, several share
# documents at equal ranks, q3 is missing from one run and the runs list their queries in different orders.
RANKED = [
    {"q1": "abcd", "q2": "klm", "q3": "uv"},
    {"q2": "mkn", "q1": "ebcf"},
    {"q1": "gadh", "q3": "vw", "q2": "knl"},
    {"q3": "uw", "q1": "ebij", "q2": "lmo"},
]
RUNS = [{q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.items()} for run in RANKED]
# relevant: about a third of the documents, so the adaptive strategies' runs tie often (equal means, priorities)
LABELS = {
    "q1": dict.fromkeys("aeg", 1) | dict.fromkeys("bcdfhij", 0),
    "q2": dict.fromkeys("kn", 1) | dict.fromkeys("lmo", 0),
    "q3": dict.fromkeys("v", 2) | dict.fromkeys("uw", 0),
}
BUDGET = 14  # of the pool's 18 pairs: the cut falls inside it, a sample leaves some out


def replay(strategy) -> list[tuple[str, str, float]]:
    """Every pair the strategy asks for (with its probability), each labelled before the next is asked."""
    out = []
    while len(out) < BUDGET and (pair := strategy.next()) is not None:
        out.append(tuple(pair))
        strategy.record(pair.query, pair.doc, LABELS[pair.query][pair.doc])
    return out


def build(name, runs, names=None, seed=0):
    return make_strategy(name, pool_runs(runs, names), budget=BUDGET, seed=seed)


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_listing_of_the_runs_gives_the_same_pairs(name):
    first = replay(build(name, RUNS))
    assert len(first) == BUDGET
    for order in permutations(range(len(RUNS))):
        assert replay(build(name, [RUNS[r] for r in order])) == first, (name, order)
    # names say nothing of the rankings: named, renamed or all one name, the same pairs
    for names in (["b", "d", "a", "c"], ["z", "y", "x", "w"], ["same"] * 4):
        assert replay(build(name, RUNS, names)) == first, (name, names)


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_the_seed_moves_the_tie_break(name):
    pairs = {tuple(replay(build(name, RUNS, seed=s))) for s in range(8)}
    assert len(pairs) > 1, name  # eight seeds, one pool: the seed would not be used


def tied(pooled, seed):
    """Each query's runs (their rankings of every query) in the query's tie order."""
    return [[pooled.rankings[r] for r in order] for order in pooled.tie_orders(seed)]


def test_the_tie_break_reads_the_runs_contents():
    pooled = pool_runs(RUNS, ["same"] * len(RUNS))  # equal names: the contents decide
    assert len({tuple(map(tuple, pooled.tie_orders(s))) for s in range(8)}) > 1
    assert len({tuple(order) for order in pooled.tie_orders(0)}) > 1  # a draw per query: not one run first
    for order in permutations(range(len(RUNS))):
        again = pool_runs([RUNS[r] for r in order], ["same"] * len(RUNS))
        # the same runs, by contents, in the same tie order whatever their listing
        assert tied(again, 3) == tied(pooled, 3)
    # one run's contents changed, its name kept: its key changes (a key of names alone would not), the others'
    # keys stay, and so does their order among themselves
    changed = [RUNS[0], RUNS[1], {"q1": {"z": 1.0}}, RUNS[3]]
    keys = [pool_runs(runs, ["same"] * 4).digests for runs in (RUNS, changed)]
    assert keys[0][2] != keys[1][2] and keys[0][:2] == keys[1][:2] and keys[0][3] == keys[1][3]
    moved = {tuple(pool_runs([*changed[:2], {"q1": {z: 1.0}}, *changed[3:]]).tie_orders(0)[0]) for z in "zyxwvu"}
    assert len(moved) > 1  # another third run's contents: another place in q1's draw
    # equal contents, whatever the names: one key
    twins = pool_runs([RUNS[0], RUNS[0], RUNS[1]], ["x", "y", "z"]).digests
    assert twins[0] == twins[1] != twins[2]


def test_the_tie_order_is_a_sha256_of_seed_contents_and_query():
    # the key written out from its definition, so a change of the derivation (a pool's reproducibility) shows
    pooled = pool_runs(RUNS)

    def text(value):
        return len(value.encode()).to_bytes(8, "big") + value.encode()

    def key(r, q, seed):
        digest = contents_digest((q, tuple(pooled.rankings[r][i])) for i, q in enumerate(pooled.qids))
        return hashlib.sha256(seed.to_bytes(4, "big") + digest + text(q)).digest()

    for seed in (0, 1, 2**32 - 1):
        expected = [sorted(range(4), key=lambda r: key(r, q, seed)) for q in pooled.qids]
        assert pooled.tie_orders(seed) == expected
    with pytest.raises(InvalidSeedError):
        pooled.tie_orders(-1)
    with pytest.raises(InvalidSeedError):
        make_strategy("mtf", RUNS, seed=2**32)


def test_contents_digest_is_unambiguous_and_ignores_empty_queries():
    assert contents_digest([("q", ("ab", "c"))]) != contents_digest([("q", ("a", "bc"))])
    assert contents_digest([("q1", ("a",)), ("q2", ())]) == contents_digest([("q1", ("a",))])
    assert contents_digest([("q2", ("b",)), ("q1", ("a",))]) == contents_digest([("q1", ("a",)), ("q2", ("b",))])
    assert contents_digest([("q1", ("a",)), ("q2", ("b",))]) != contents_digest([("q1", ("a", "b"))])


def test_the_digests_pool_runs_keeps_are_those_of_the_runs_it_made():
    from haystack_irmetrics.pooling.runs import PoolRuns

    made = pool_runs([{"q1": {"a": 2, "b": 1}, "q2": {"c": 1}}, {"q2": {"d": 3, "c": 1}}], depth=1)
    again = PoolRuns(made.names, made.qids, made.rankings, made.depth)  # digested from its rankings
    assert made.digests == again.digests and len(set(made.digests)) == 2


def test_the_queries_come_in_one_order_for_any_listing():
    qids = {pool_runs([RUNS[r] for r in order]).qids for order in permutations(range(len(RUNS)))}
    assert len(qids) == 1
    # runs that agree on the queries' order keep it
    assert pool_runs([{"b": {"x": 1}, "a": {"x": 1}}, {"b": {"y": 1}, "a": {"z": 1}}]).qids == ("b", "a")


def test_a_sample_of_queries_is_the_same_list_for_any_listing():
    first = sample_queries(RUNS, 2, depth=3, seed=5)
    for order in permutations(range(len(RUNS))):
        assert sample_queries([RUNS[r] for r in order], 2, depth=3, seed=5) == first


def test_pool_writes_one_file_for_either_listing_or_naming(tmp_path):
    paths = {"a": [], "b": []}
    for r, run in enumerate(RUNS):
        lines = [f"{q} Q0 {d} {k + 1} {s} run{r}" for q, docs in run.items() for k, (d, s) in enumerate(docs.items())]
        for folder, name in (("a", f"run{r}.trec"), ("b", f"{'zyxw'[r]}-renamed.trec")):
            path = tmp_path / folder / name
            path.parent.mkdir(exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
            paths[folder].append(str(path))
    for strategy in ("depth", "mtf", "maxmean"):
        texts = []
        for listing in (paths["a"], paths["a"][::-1], paths["b"][::-1]):
            out = tmp_path / f"{strategy}-{len(texts)}.tsv"
            args = ["pool", *listing, "--budget", "9", "--strategy", strategy, "--seed", "1", "-o", str(out)]
            assert main(args) == 0
            texts.append(out.read_text())
        assert texts[0] == texts[1] == texts[2] and texts[0].count("\n") == 10, strategy
        # the same runs given to Python as dicts: the same pairs
        expected = [(p.query, p.doc) for p in pool(RUNS, 9, strategy, seed=1)]
        assert [line.split("\t")[:2] for line in texts[0].splitlines()[1:]] == [list(p) for p in expected]


def test_rbp_adds_its_float_weights_in_the_tie_order():
    # A Latin square: x, y and w each at ranks 1, 2 and 3 of the three runs, so their weights are equal sums
    # whose floats differ with the order of the additions (p = 0.001: (w1 + w2) + w3 != (w3 + w2) + w1). Added
    # in the listing's order, the listing would order them.
    runs = [{"q": dict(zip(docs, (3.0, 2.0, 1.0)))} for docs in ("xyw", "ywx", "wxy")]
    first = [p.doc for p in iter(make_strategy("rbp", runs, p=0.001).next, None)]
    for order in permutations(range(3)):
        again = make_strategy("rbp", [runs[r] for r in order], p=0.001)
        assert [p.doc for p in iter(again.next, None)] == first, order
