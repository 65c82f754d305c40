"""The compiled reading of ranked lists (``index_lists`` / ``find_ranked`` in ``core/_rank.c``)
against the pure-Python ``RankedRun`` it stands in for.

Both must give the same distinct ids, offsets, positions and prepared arrays, find the same
judged documents, and send every input the compiled pass does not take to the Python path (same
values, same errors, inputs unchanged). test_ranked, test_components_fastpath and
test_components_parity run on both paths too, against pytrec_eval and BEIR.
"""

from __future__ import annotations

import copy
import gc
import sys

import numpy as np
import pytest
from haystack import Document
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.components import IRMetricsEvaluator
from haystack_irmetrics.core import native
from haystack_irmetrics.core.inputs import Qrels, RankedRun
from haystack_irmetrics.core.prepare import prepare
from haystack_irmetrics.errors import InvalidDocumentsError, InvalidIdError
from tests.conftest import scan

QIDS = ["q1", "q2", "10", "9"]
# Query ids among the documents (dropped as own ids), non-ASCII, a NUL, a prefix pair.
DOCS = [*QIDS, "d1", "d2", "d10", "é", "ü", "a", "a\x00", "ab", *(f"x{i}" for i in range(40))]


@pytest.fixture(autouse=True)
def _built():
    if native.scan() is None:
        pytest.skip("the compiled scan is off: not built or IRMETRICS_PURE_PYTHON set")


@st.composite
def ranked_inputs(draw):
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True))
    # repeats are drawn often: a chunked document counts once, at its first position
    lists = {q: draw(st.lists(st.sampled_from(DOCS), max_size=60)) for q in qids}
    qrels = {
        q: draw(st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1, 0, 1, 2, 0.5]), max_size=30))
        for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True))
    }
    return qrels, lists


def _run(path: str, lists: dict) -> RankedRun:
    with scan(path):
        return RankedRun.from_lists(lists)


def _prepared(path: str, qrels: dict, lists: dict, drop: bool):
    with scan(path):
        return prepare(RankedRun.from_lists(lists), Qrels.from_dict(qrels), drop)


@given(ranked_inputs(), st.booleans())
def test_compiled_and_python_ranked_runs_are_the_same_run(data, drop):
    qrels, lists = data
    native, python = _run("native", lists), _run("python", lists)
    assert native._table is not None and python._table is None
    assert native.qids == python.qids and native.ids == python.ids
    assert native.offsets.tolist() == python.offsets.tolist()
    assert native.scores.tolist() == python.scores.tolist()
    assert native.positions == python.positions
    assert native.own_positions().tolist() == python.own_positions().tolist()
    assert native.identical_rows().tolist() == python.identical_rows().tolist()
    rows = np.repeat(np.arange(len(lists)), len(DOCS))
    keys = DOCS * len(lists)
    assert native.locate(rows, keys).tolist() == python.locate(rows, keys).tolist()
    # and what prepare hands the kernels
    a, b = _prepared("native", qrels, lists, drop), _prepared("python", qrels, lists, drop)
    assert a.qids == b.qids and a.pair_doc == b.pair_doc
    for name in ("offsets", "pair_query", "pair_score", "pair_label", "judged_offsets", "judged_labels"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    assert {t: r.tolist() for t, r in a.pair_ranks.items()} == {t: r.tolist() for t, r in b.pair_ranks.items()}
    kept = np.arange(int(a.offsets[-1]))
    assert a.ids_at(kept) == b.ids_at(kept)


@given(ranked_inputs())
def test_both_paths_give_the_same_values_for_every_measure_and_policy(data):
    qrels, lists = data

    def outcome(path, options):
        with scan(path):
            try:
                res = evaluate(qrels, lists, [1, 3, 10], **options)
            except Exception as e:  # nothing to score: the same typed error on both paths
                return type(e), str(e)
        return dict(res.per_query.items()), res.raw_means

    for options in ({}, {"preset": "trec"}, {"ignore_identical_ids": True, "no_relevant": "skip"}):
        assert repr(outcome("native", options)) == repr(outcome("python", options))  # repr: nan == nan


def test_a_long_list_with_many_repeats_keeps_first_positions():
    rng = np.random.default_rng(7)
    ranked = [f"d{i}" for i in rng.integers(0, 3000, 20000)]  # ~2,900 distinct: long probe chains
    native, python = _run("native", {"q": ranked}), _run("python", {"q": ranked})
    assert native.ids == list(dict.fromkeys(ranked)) == python.ids
    keys = [f"d{i}" for i in range(3100)]
    rows = np.zeros(len(keys), np.int64)
    assert native.locate(rows, keys).tolist() == python.locate(rows, keys).tolist()


def test_equal_ids_that_are_different_objects_are_one_document():
    a, b = "".join(["d", "1"]), "".join(["d", "1"])
    assert a == b and a is not b
    run = _run("native", {"q": [a, "x", b]})
    assert run.ids == ["d1", "x"] and run.locate(np.zeros(1, np.int64), ["d" + "1"]).tolist() == [0]


def test_ids_the_compiled_pass_does_not_take_reach_the_python_paths_checks():
    class Sub(str):
        pass

    for lists in ({"q": ["a", Sub("b")]}, {"q": ["a", 3]}, {"q": ["a", None]}):
        original = copy.deepcopy(lists)
        outcomes = []
        for path in ("native", "python"):
            try:
                with scan(path):
                    run = RankedRun.from_lists(lists)
                outcomes.append((run.ids, run.offsets.tolist()))
            except InvalidIdError as e:
                outcomes.append(str(e))
        assert outcomes[0] == outcomes[1]
        assert lists == original


def test_judged_ids_that_are_str_subclasses_are_found_as_a_dict_finds_them():
    class Sub(str):
        pass

    run = _run("native", {"q": ["a", "b", "c"]})
    assert run.locate(np.zeros(2, np.int64), [Sub("b"), "c"]).tolist() == [1, 2]


def test_an_edited_ids_list_falls_back_to_the_python_lookup_instead_of_reading_garbage():
    run = _run("native", {"q": ["a", "b", "c"]})
    run.ids[1] = 5  # breaks the read-only contract: the table no longer describes the list
    assert run.locate(np.zeros(2, np.int64), ["a", "c"]).tolist() == [0, 2]


def test_a_key_read_that_edits_the_lists_sends_the_batch_to_the_caller():
    lists: list = []

    class Sneaky:
        @property
        def key(self):
            lists[0].clear()
            return "k"

    lists.append([Sneaky(), Sneaky(), Sneaky()])
    assert RankedRun.from_items(["q"], lists, "key") is None


def test_a_failed_attribute_read_falls_back_and_other_errors_propagate():
    class NoKey:
        pass

    class Broken:
        @property
        def key(self):
            raise KeyError("boom")

    assert RankedRun.from_items(["q"], [[NoKey()]], "key") is None
    with pytest.raises(KeyError, match="boom"):
        RankedRun.from_items(["q"], [[Broken()]], "key")


def test_building_frees_every_reference_it_takes():
    key = "".join(["unique", "-key"])
    before = sys.getrefcount(key)
    for _ in range(3):
        run = _run("native", {"q": [key, key, "x"]})
        assert RankedRun.from_items(["q"], [[key, key, 3]]) is None  # a fallback mid-list
        del run
    assert sys.getrefcount(key) == before


def test_a_cycle_through_a_runs_ids_is_collected():
    import weakref

    class Node:
        pass

    run = _run("native", {"q": ["a", "b"]})
    node = Node()
    node.run = run
    run.ids.append(node)  # a caller's edit (the ids are read-only by contract): still no leak
    alive = weakref.ref(node)
    del run, node
    gc.collect()
    assert alive() is None


def test_a_key_read_that_swaps_another_querys_list_falls_back_without_reading_it():
    outer: list = []

    class Swapper:
        @property
        def key(self):
            outer[1] = "xyz"  # same length as the list it replaces: only identity tells
            return "a"

    outer.extend([[Swapper()], ["b", "c", "d"]])
    assert RankedRun.from_items(["q1", "q2"], outer, "key") is None


def test_a_key_read_walking_every_live_object_never_meets_the_half_built_ids():
    seen = []

    class Walker:
        @property
        def key(self):
            for obj in gc.get_objects():
                if type(obj) is list:
                    seen.append(len([x for x in obj]))  # iterating a list with empty slots would crash
            return "k"

    assert RankedRun.from_items(["q"], [[Walker(), Walker()]], "key").ids == ["k"]


def test_a_list_subclass_of_ids_is_read_by_the_python_path():
    class L(list):
        pass

    with scan("native"):
        run = RankedRun(["q"], L(["a", "b", "a"]), [3])
    assert run.ids == ["a", "b"]
    from haystack_irmetrics.core import _rank

    assert _rank.index_lists(L(["a"]), np.array([1], np.int64).tobytes(), None, None) is None


def test_ids_appended_after_indexing_are_looked_up_by_the_python_path():
    run = _run("native", {"q": ["a", "b"]})
    run.ids.append("z")  # breaks the read-only contract: no SystemError, the dict lookup answers
    assert run.locate(np.zeros(1, np.int64), ["b"]).tolist() == [1]


def test_a_table_with_no_empty_slot_is_refused_not_probed_forever():
    from haystack_irmetrics.core import _rank

    ids = ["a", "b"]
    offsets = np.array([0, 2], np.int64).tobytes()
    full = np.array([1, 2, 1, 2], np.int32).tobytes()  # not what index_lists builds
    toff = np.array([0, 4], np.int64).tobytes()
    assert _rank.find_ranked(ids, offsets, full, toff, np.zeros(1, np.int64).tobytes(), ["zz"]) is None
    with pytest.raises(ValueError):
        _rank.find_ranked(
            ids, offsets, full, np.array([0, 3], np.int64).tobytes(), np.zeros(1, np.int64).tobytes(), ["a"]
        )


def _odd_empty() -> memoryview:
    """A writable buffer of no bytes at an odd address: what every empty bytearray is on CPython 3.13.0
    (they share one static empty string, which that build places at an odd address)."""
    return memoryview(bytearray(9))[1:1]


def test_empty_buffers_are_taken_at_any_address_and_items_must_be_aligned():
    from haystack_irmetrics.core import _rank

    ids, counts, table, toff = _rank.index_lists([[], []], None, None, None)  # lists without ids: no table
    assert (ids, bytes(counts), bytes(table)) == ([], bytes(16), b"")
    bounds, rows = np.zeros(3, np.int64).tobytes(), np.array([0, 1], np.int64).tobytes()
    assert bytes(_rank.find_ranked(ids, bounds, _odd_empty(), toff, rows, ["a", "b"])) == np.full(2, -1).tobytes()
    assert bytes(_rank.find_ranked(ids, bounds, table, toff, rows[:0], [])) == b""
    assert _rank.flat_values([{}], _odd_empty()) is True
    assert _rank.index_lists([], _odd_empty(), None, None) == ([], bytearray(), bytearray(), bytearray(8))
    # a buffer with items is read in place: a misaligned one is refused, naming it
    with pytest.raises(ValueError, match="out: items of 8 bytes at an address not aligned"):
        _rank.flat_values([{"a": 1.0}], memoryview(bytearray(9))[1:])
    one, two = np.array([0, 1], np.int64).tobytes(), np.array([0, 2], np.int64).tobytes()
    with pytest.raises(ValueError, match="table: items of 4 bytes at an address not aligned"):
        _rank.find_ranked(["a"], one, memoryview(bytearray(9))[1:], two, rows[:8], ["a"])


@pytest.mark.parametrize("path", ["native", "python"])
def test_a_run_of_empty_lists_scores_zero(path):
    lists = {"q1": [], "q2": []}
    qrels = {"q1": {"a": 1}, "q2": {"q2": 1}}
    assert _prepared(path, qrels, lists, True).pair_doc == []
    with scan(path):
        run = RankedRun.from_lists(lists)
        assert run.locate(np.array([0, 1]), ["a", "q2"]).tolist() == [-1, -1]
        assert set(evaluate(qrels, run, k_values=[1, 10]).means.values()) == {0.0}


# -- the Haystack Document path -------------------------------------------------------------------


def _docs(ids):
    return [Document(id=i, content=f"text {i}") for i in ids]


def _component_output(path: str, gt, ret, **init):
    with scan(path):
        try:
            out = IRMetricsEvaluator(k_values=[1, 3], **init).run(gt, ret)
        except Exception as e:  # the same typed error on both paths
            return type(e), str(e)
    return out["raw_means"], out["individual_scores"], out["per_query"]


@pytest.mark.parametrize("field", ["id", "content"])
def test_documents_read_in_c_score_as_the_python_path_scores_them(field):
    gt = [_docs(["a", "c"]), _docs(["x"]), []]
    ret = [_docs(["b", "a", "a", "c"]), _docs(["y", "x", "z"]), _docs(["a"])]
    native = _component_output("native", gt, ret, document_comparison_field=field)
    assert repr(native) == repr(_component_output("python", gt, ret, document_comparison_field=field))
    # the repeated "a" counts once, so c moves up to rank 3; the query without ground truth is unjudged
    assert repr(native[1]["P@3"]) == repr([2 / 3, 1 / 3, float("nan")])


def test_documents_the_compiled_pass_does_not_take_get_the_python_paths_values_or_errors():
    class MyDocument(Document):
        pass

    cases = [
        [[Document(id="a"), "not a document"]],  # InvalidDocumentsError naming [0][1]
        [[Document(id="a"), MyDocument(id="b")]],  # a subclass: read by the Python path
        [[Document(id="a"), Document(content=None)]],  # content None with document_comparison_field=content
    ]
    for field, ret in zip(["id", "id", "content"], cases):
        gt = [_docs(["a", "b"])]
        original = [list(r) for r in ret]
        native = _component_output("native", gt, ret, document_comparison_field=field)
        assert repr(native) == repr(_component_output("python", gt, ret, document_comparison_field=field))
        assert [list(r) for r in ret] == original
    assert _component_output("native", [_docs(["a"])], cases[0])[0] is InvalidDocumentsError
