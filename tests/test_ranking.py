"""Ranks of judged documents (``core.ranking``) against a brute-force sort, and the float32 score read.

Scores are read straight into float32 (trec_eval's precision). The reference here sorts every
query in Python: trec order by (float32 score, doc id) descending, stable order by float64 score
descending then results order, as BEIR's ``sorted`` does.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics.core.inputs import Qrels, Run
from haystack_irmetrics.core.prepare import prepare
from haystack_irmetrics.core.ranking import judged_ranks
from haystack_irmetrics.errors import InvalidScoreError
from tests import strategies as S

# Every test here runs on both dict scans: the compiled one and the pure-Python one.
pytestmark = pytest.mark.usefixtures("scan_path")

# float32 rounding edges: 1 + 2**-24 is the midpoint above 1 (rounds to 1, even); 3.4028235677973366e38
# is the midpoint above float32's largest value (rounds to inf); subnormals; signed zeros.
EDGES = [
    1.0,
    1.0 + 2**-24,
    1.0 + 2**-23,
    1.0 + 3 * 2**-24,
    np.nextafter(1.0 + 2**-24, 2.0),
    3.4028234663852886e38,
    3.4028235677973366e38,
    np.nextafter(3.4028235677973366e38, 0.0),
    -3.4028235677973366e38,
    1e-45,
    7e-46,
    -7e-46,
    5e-324,
    0.0,
    -0.0,
    1e300,
    -1e300,
]
SCORES = st.sampled_from(EDGES + S.SCORES) | st.floats(allow_nan=False, allow_infinity=False)


def _f32(x: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def _reference(results: dict, qrels: dict, ties: str) -> list[tuple[str, str, int]]:
    """(query, doc, 0-based rank) of every judged retrieved document, by sorting whole queries."""
    out = []
    for q, docs in results.items():
        if not qrels.get(q):
            continue
        items = list(docs.items())
        if ties == "trec":
            # strcmp order of UTF-8 bytes == Python's code-point order of str
            ranked = sorted(items, key=lambda x: (_f32(x[1]), x[0]), reverse=True)
        else:
            ranked = sorted(items, key=lambda x: x[1], reverse=True)
        out += [(q, d, r) for r, (d, _) in enumerate(ranked) if d in qrels[q]]
    return sorted(out)


def _ours(results: dict, qrels: dict, ties: str) -> list[tuple[str, str, int]]:
    prep = prepare(Run.from_dict(results), Qrels.from_dict(qrels), False)
    ranks = judged_ranks(prep, ties).tolist()
    return sorted(zip((prep.qids[i] for i in prep.pair_query.tolist()), prep.pair_doc, ranks, strict=True))


runs = st.dictionaries(
    st.sampled_from(S.QIDS), st.dictionaries(st.sampled_from(S.DOCS), SCORES, min_size=1, max_size=12), min_size=1
)


@pytest.mark.parametrize("ties", ["trec", "stable"])
@given(results=runs, data=st.data())
def test_judged_ranks_equal_a_full_sort_of_each_query(ties, results, data):
    qrels = {
        q: data.draw(st.dictionaries(st.sampled_from(S.DOCS), st.integers(0, 2), min_size=1, max_size=8))
        for q in results
    }
    assert _ours(results, qrels, ties) == _reference(results, qrels, ties)


def test_float32_midpoints_round_to_even_and_beyond_range_scores_tie_as_infinity():
    results = {
        "q": {
            "a": 1.0,
            "b": 1.0 + 2**-24,  # rounds down to 1.0: ties with a
            "c": np.nextafter(1.0 + 2**-24, 2.0),  # rounds up: beats both
            "d": 1e300,  # +inf in float32
            "e": 3.4028235677973366e38,  # the midpoint above float32's largest value: +inf too
            "f": -0.0,
            "g": 0.0,
        }
    }
    qrels = {"q": dict.fromkeys("abcdefg", 1)}
    trec = dict((d, r) for _, d, r in _ours(results, qrels, "trec"))
    # trec: float32 score descending, then doc id descending
    assert trec == {"e": 0, "d": 1, "c": 2, "b": 3, "a": 4, "g": 5, "f": 6}
    stable = dict((d, r) for _, d, r in _ours(results, qrels, "stable"))
    # stable: float64 descending, results order on exact ties (-0.0 == 0.0)
    assert stable == {"d": 0, "e": 1, "c": 2, "b": 3, "a": 4, "f": 5, "g": 6}


@given(st.lists(SCORES, min_size=1, max_size=30))
def test_scores_are_read_as_their_float32_rounding(values):
    results = {"q": {f"d{i}": v for i, v in enumerate(values)}}
    prep = prepare(Run.from_dict(results), Qrels.from_dict({"q": {"d0": 1}}), False)
    assert prep.scores.dtype == np.float32
    assert prep.scores.tolist() == [_f32(v) for v in values]
    assert prep.pair_score.tolist() == [values[0]]  # judged scores keep float64


# Numbers of every kind a run may hold; struct packs them, numpy's fromiter is the reference.
NUMBERS = (
    SCORES
    | st.integers(-(2**70), 2**70)
    | SCORES.map(lambda x: np.float32(_f32(x)))  # float32 scalars (beyond range: inf)
    | SCORES.map(np.float64)
    | st.integers(-(2**31), 2**31 - 1).map(np.int64)
    | st.decimals(allow_nan=False, allow_infinity=False, places=6)
    | st.fractions(max_denominator=10**6)
)


def _numpy_read(inner: list[dict]) -> list[float]:
    with np.errstate(over="ignore"):
        n = sum(map(len, inner))
        return np.fromiter((v for d in inner for v in d.values()), np.float32, count=n).tolist()


@pytest.mark.parametrize("group", [1, 3, 7, 1 << 16])
@given(st.lists(st.lists(NUMBERS, max_size=9), min_size=1, max_size=12), st.booleans())
def test_packed_score_read_equals_numpys_float32_conversion_for_any_grouping(group, columns, uniform):
    from haystack_irmetrics.core.packing import read_f32 as _read_f32

    if uniform:  # every query of one length: the one-Struct path
        width = min(map(len, columns))
        columns = [c[:width] for c in columns]
    inner = [{f"d{j}": v for j, v in enumerate(c)} for c in columns]
    lengths = np.array([len(d) for d in inner], np.int64)
    packed = _read_f32(inner, lengths, int(lengths.sum()), group)
    assert packed is not None and packed.dtype == np.float32
    assert packed.tolist() == _numpy_read(inner)  # bit for bit (-0.0 == 0.0 aside, checked next)
    assert np.signbit(packed).tolist() == np.signbit(np.array(_numpy_read(inner), np.float32)).tolist()


@pytest.mark.parametrize("odd", ["0.25", b"1", None, 10**400, [1.0], "x", 1j])
def test_a_value_struct_refuses_raises_naming_the_document_even_where_types_are_not_sampled(odd):
    # mid-query, where the sampled type check does not look; a numeric string is no score either
    # (pytrec_eval and BEIR's sort reject it too)
    results = {"q": {"a": 1.0, "odd": odd, "c": 0.5}}
    qrels = Qrels.from_dict({"q": {"a": 1}})
    with pytest.raises(InvalidScoreError, match="'odd' in query 'q'"):
        prepare(Run.from_dict(results), qrels, False)


@pytest.mark.parametrize("odd", [Decimal("0.25"), Fraction(1, 4), np.float16(0.25)])
def test_other_real_numbers_struct_packs_or_numpy_reads_are_scores_everywhere(odd):
    for where in (0, 1):  # the type-checked first item, and mid-query
        items = [("a", 1.0), ("odd", odd), ("c", 0.5)]
        items.insert(where, items.pop(1))
        prep = prepare(Run.from_dict({"q": dict(items)}), Qrels.from_dict({"q": {"a": 1}}), False)
        assert prep.scores.tolist() == [float(v) for _, v in items]


class _LyingFloat(float):
    """A float whose ``__float__`` disagrees with its own value (pytrec_eval and BEIR's sort use the value)."""

    def __float__(self) -> float:
        return 1.0


def test_a_float_subclass_is_read_by_its_own_value_everywhere_as_pytrec_eval_reads_it():
    from haystack_irmetrics import evaluate
    from tests.oracles import pytrec_per_query

    qrels = {"q": {"z": 1}}
    results = {"q": {"a": 1.5, "z": _LyingFloat(2.0)}}
    res = evaluate(qrels, results, [1, 3, 10])
    assert res.per_query["MRR@10"]["q"] == 1.0  # z (2.0) beats a (1.5): rank 1, not an impossible 3
    oracle = pytrec_per_query(qrels, results, [1, 3, 10])
    for name in ("NDCG@1", "P@1", "MAP@10"):
        assert res.per_query[name]["q"] == oracle[name]["q"]


def test_a_run_read_by_numpy_reads_a_float_subclass_by_its_own_value_throughout(monkeypatch, pure_python):
    # when struct refuses a run (a Decimal in it, say), numpy reads all of it; a float subclass is
    # still read by its own value (as struct and pytrec_eval read it), the judged and tie-member
    # scores too: the ranks of the struct read
    from haystack_irmetrics import evaluate
    from haystack_irmetrics.core import prepare

    qrels = {"q": {"z": 1}, "p": {"x": 1}}
    results = {"q": {"a": 1.5, "z": _LyingFloat(2.0)}, "p": {"w": 0.1, "x": 0.5}}
    by_struct = evaluate(qrels, results, [1, 3, 10]).per_query
    monkeypatch.setattr(prepare, "read_f32", lambda *args, **kwargs: None)
    res = evaluate(qrels, results, [1, 3, 10])
    assert res.per_query["MRR@10"]["q"] == 1.0 and res.per_query == by_struct


def test_numpy_integers_beyond_2_53_rank_as_their_doubles_like_python_ints():
    from haystack_irmetrics import evaluate

    # z's double (2**60 + 2**36) rounds to the float32 below a's; rounded straight to float32 (as
    # numpy would an int64) it would round up and tie with a. Judged scores are doubles too.
    big = {"z": 2**60 + 2**36 + 1, "a": 2**60 + 2**37}
    as_np = {d: np.int64(v) for d, v in big.items()}
    mrr = [evaluate({"q": {"z": 1}}, {"q": r}, [10]).per_query["MRR@10"]["q"] for r in (big, as_np)]
    assert mrr[0] == mrr[1] == 0.5


def test_an_int_too_long_to_print_is_a_typed_error_with_a_short_description():
    with pytest.raises(InvalidScoreError, match=r"<int of 16,610 bits> of document 'b' in query 'q'"):
        prepare(Run.from_dict({"q": {"a": 1.0, "b": 10**5000}}), Qrels.from_dict({"q": {"a": 1}}), False)


class _ShortMapping(dict):
    """A mapping whose len() is one less than what it yields."""

    def __len__(self) -> int:
        return super().__len__() - 1


@pytest.mark.parametrize("group", [1, 2, 1 << 16])
def test_a_mapping_whose_len_disagrees_with_its_items_is_left_to_numpy(group):
    from haystack_irmetrics.core.packing import read_f32 as _read_f32

    inner = [_ShortMapping({"a": 1.0, "b": 2.0, "c": 3.0}), {"x": 4.0, "y": 5.0}]
    assert _read_f32(inner, np.array([2, 2]), 4, group) is None


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_score_raises_even_beside_scores_beyond_float32_range(bad):
    results = {"q": {"big": 1e300, "bad": bad}}
    with pytest.raises(InvalidScoreError, match="'bad' in query 'q'"):
        prepare(Run.from_dict(results), Qrels.from_dict({"q": {"big": 1}}), False)


def test_tie_members_carry_their_float64_scores():
    # one float32 tie group of three, far apart in float64 and in results order
    results = {"q": {"x": 1.0 + 2**-25, "judged": 1.0, "y": 1.0 - 2**-26, "z": 5.0}}
    prep = prepare(Run.from_dict(results), Qrels.from_dict({"q": {"judged": 1}}), False)
    positions = np.array([0, 1, 2])
    ids = prep.ids_at(positions)
    exact = prep.exact_at(positions, ids)
    assert ids == ["x", "judged", "y"]
    assert exact.tolist() == [1.0 + 2**-25, 1.0, 1.0 - 2**-26]


@pytest.mark.parametrize("ties", ["trec", "stable"])
@given(results=runs)
def test_mappings_other_than_dict_rank_like_dicts(ties, results):
    from types import MappingProxyType

    qrels = {q: dict.fromkeys(list(docs)[::2], 1) for q, docs in results.items()}
    proxied = {q: MappingProxyType(docs) for q, docs in results.items()}
    assert _ours(proxied, qrels, ties) == _reference(results, qrels, ties)


@pytest.mark.parametrize("ties", ["trec", "stable"])
@given(results=runs)
def test_queries_with_every_document_judged_take_the_sorting_path_and_agree(ties, results):
    # more judged documents than 2 log2(n + 2) + 4 sends a query to the one-sort path
    qrels = {q: dict.fromkeys(S.DOCS, 1) for q in results}
    assert _ours(results, qrels, ties) == _reference(results, qrels, ties)
