"""The compiled pass over Haystack Documents (``index_judged`` in ``core/_rank.c``), against the
Python path it stands in for.

``index_judged`` reads each query's ground-truth Documents (key and relevance) and retrieved
Documents (keys into a per-query table) in one pass and keeps no retrieved key; the run reads its
keys again only when asked for them. Both paths must give the same judgments, rankings, values and
errors, and every input the pass does not take must reach the Python path unchanged.
"""

from __future__ import annotations

import gc
import logging
import math
import sys

import numpy as np
import pytest
from haystack import Document
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics.components import IRMetricsEvaluator
from haystack_irmetrics.core import native
from haystack_irmetrics.core.inputs import Qrels, RankedRun
from haystack_irmetrics.errors import EmptyInputError, InvalidLabelError, IRMetricsError
from haystack_irmetrics.integration.documents import DocumentPath
from tests.conftest import scan


@pytest.fixture(autouse=True)
def _built():
    if native.scan() is None:
        pytest.skip("the compiled scan is off: not built or IRMETRICS_PURE_PYTHON set")


def _native():
    return native.scan()


QIDS = ["q1", "q2", "10", "9"]
# Query ids among the documents (dropped as own ids when asked), non-ASCII, a NUL, a prefix pair.
KEYS = [*QIDS, "d1", "d2", "d10", "é", "a", "a\x00", "ab", *(f"x{i}" for i in range(12))]
LABELS = [None, 0, 1, 2, 3, 0.5, -1, 1.0, 2**60]


@st.composite
def batches(draw):
    n = draw(st.integers(1, 4))
    qids = draw(st.one_of(st.none(), st.lists(st.sampled_from(QIDS), min_size=n, max_size=n, unique=True)))
    gt, ret = [], []
    for _ in range(n):
        keys = draw(st.lists(st.sampled_from(KEYS), max_size=5))
        kind = draw(st.sampled_from(["binary", "graded", "mixed"]))  # mixed: InvalidLabelError
        docs = []
        for k in keys:
            label = None if kind == "binary" else draw(st.sampled_from(LABELS[1:] if kind == "graded" else LABELS))
            docs.append(Document(id=k, content=f"text {k}", score=label))
        gt.append(tuple(docs) if draw(st.booleans()) else docs)
        ranked = [Document(id=k, content=f"text {k}") for k in draw(st.lists(st.sampled_from(KEYS), max_size=12))]
        ret.append(tuple(ranked) if draw(st.booleans()) else ranked)
    return gt, ret, qids


def _output(path: str, gt, ret, qids, **init):
    with scan(path):
        try:
            out = IRMetricsEvaluator(k_values=[1, 3, 10], **init).run(gt, ret, qids)
        except Exception as e:  # the same typed error on both paths
            return type(e), str(e)
    return out["raw_means"], out["individual_scores"], out["per_query"], out["query_ids"]


@pytest.mark.parametrize("field", ["id", "content"])
@given(batch=batches(), drop=st.booleans(), preset=st.sampled_from(["beir", "trec"]))
def test_the_compiled_document_pass_scores_as_the_python_path_scores(field, batch, drop, preset):
    gt, ret, qids = batch
    init = {"document_comparison_field": field, "ignore_identical_ids": drop, "preset": preset}
    native = _output("native", gt, ret, qids, **init)
    assert repr(native) == repr(_output("python", gt, ret, qids, **init))  # repr: nan == nan


@given(batch=batches())
def test_the_pass_builds_the_qrels_and_run_the_python_path_builds(batch):
    gt, ret, qids = batch
    qids = qids or [str(i) for i in range(len(gt))]
    out = RankedRun.from_judged_items(qids, gt, ret, "id", Document, "score")
    labels = [[d.score for d in docs] for docs in gt]
    mixed = any(None in ls and set(ls) != {None} for ls in labels)
    twice = any(len({d.id for d in docs}) < len(docs) for docs in gt)
    if mixed or twice:  # the per-query path names the mixed list / keeps the highest label
        assert out is None
        return
    qrels, run = out
    expected = {q: {d.id: (1 if d.score is None else d.score) for d in docs} for q, docs in zip(qids, gt, strict=True)}
    assert qrels.data == expected and [list(v) for v in qrels.data.values()] == [list(v) for v in expected.values()]
    reference = Qrels.from_dict(expected)
    assert qrels.qids == reference.qids and qrels.offsets.tolist() == reference.offsets.tolist()
    assert qrels.labels.tobytes() == reference.labels.tobytes()  # bit for bit, ints beyond 2**53 too
    ranked = RankedRun.from_items(qids, [list(r) for r in ret], "id", Document)
    assert run.offsets.tolist() == ranked.offsets.tolist()
    assert run.own_positions().tolist() == ranked.own_positions().tolist()
    judged = list(qrels.data.values())
    rows = np.repeat(np.arange(len(qids)), list(map(len, judged)))
    flat = [k for d in judged for k in d]
    assert run.judged_positions(qrels.data).tolist() == ranked.locate(rows, flat).tolist()
    assert run._ids is None  # nothing above needed the retrieved keys
    assert run.ids == ranked.ids  # read again, when asked
    assert run.positions == ranked.positions


def test_the_common_batch_takes_the_compiled_pass():
    path = DocumentPath()
    gt = [[Document(id="a", score=2), Document(id="b", score=0.5)], []]
    ret = [[Document(id="b"), Document(id="a"), Document(id="b")], [Document(id="c")]]
    batch = path.convert(gt, ret)
    assert batch.judgments is not None and batch.results._ids is None
    assert batch.qrels == {"0": {"a": 2, "b": 0.5}, "1": {}}
    assert batch.judgments.labels.tolist() == [2.0, 0.5]
    assert batch.results.judged_positions(batch.qrels).tolist() == [1, 0]
    assert batch.results.ids == ["b", "a", "c"]


def test_inputs_the_pass_does_not_take_reach_the_python_paths_values_or_errors():
    class MyDocument(Document):
        pass

    class Sub(str):
        pass

    cases = {
        "labels mixing None and numbers": ([[Document(id="a", score=1), Document(id="b")]], None),
        "a key twice in one ground truth": ([[Document(id="a", score=1), Document(id="a", score=3)]], None),
        "a nan label": ([[Document(id="a", score=math.nan)]], None),
        "an infinite label": ([[Document(id="a", score=-math.inf)]], None),
        "an int beyond any float": ([[Document(id="a", score=10**400)]], None),
        "a bool label": ([[Document(id="a", score=True)]], None),
        "a str subclass key": ([[Document(id=Sub("a"))]], None),
        "a Document subclass": ([[MyDocument(id="a")]], None),
        "not a Document": ([[Document(id="a"), "a"]], None),
        "a str subclass query id": ([[Document(id="a")]], [Sub("a")]),
    }
    for name, (gt, qids) in cases.items():
        ret = [[Document(id="b"), Document(id="a")]]
        before = [list(x) for x in gt], [list(x) for x in ret]
        assert RankedRun.from_judged_items(qids or ["0"], gt, ret, "id", Document, "score") is None, name
        native = _output("native", gt, ret, qids)
        assert repr(native) == repr(_output("python", gt, ret, qids)), name
        assert ([list(x) for x in gt], [list(x) for x in ret]) == before, name
    mixed = cases["labels mixing None and numbers"][0]
    assert _output("native", mixed, [[Document(id="a")]], None)[0] is InvalidLabelError
    # a label the pass takes: an exact int or float, finite as a double
    qrels, _ = RankedRun.from_judged_items(
        ["q"], [[Document(id="a", score=2**53 + 1), Document(id="b", score=-0.0)]], [[]], "id", Document, "score"
    )
    assert qrels.labels.tolist() == [float(2**53 + 1), -0.0] and type(qrels.data["q"]["a"]) is int


def test_meta_fields_and_rank_by_score_stay_on_the_python_passes():
    gt, ret = [[Document(id="a", meta={"k": "x"})]], [[Document(id="b", meta={"k": "x"})]]
    assert DocumentPath(document_comparison_field="meta.k")._compiled_batch(gt, ret, ["0"]) is None
    assert DocumentPath(relevance_field="meta.k")._compiled_batch(gt, ret, ["0"]) is None
    assert DocumentPath(rank_by="score")._compiled_batch(gt, ret, ["0"]) is None


def test_a_batch_without_matches_warns_and_one_without_ground_truth_raises(caplog):
    gt, ret = [[Document(id="a")]], [[Document(id="b")]]
    with caplog.at_level(logging.WARNING):
        DocumentPath().convert(gt, ret)
    assert "No retrieved document matched" in caplog.text
    with pytest.raises(EmptyInputError, match="none of the 1 queries has a ground-truth document"):
        DocumentPath().convert([[]], ret)


@pytest.mark.parametrize("path", ["native", "python"])
@pytest.mark.parametrize(
    "gt",
    [
        [[Document(id="d1"), Document(id="d1")]],  # a key twice: the compiled pass hands it to the Python read
        [[Document(id="d1")]],  # taken by the compiled pass
        [[Document(id="d1")], [Document(id="d2", score=2)]],
    ],
    ids=["repeated", "single", "two-queries"],
)
def test_queries_that_retrieved_nothing_score_zero_on_every_python_version(path, gt):
    # Empty ranked lists give an empty lookup table. On CPython 3.13.0 an empty bytearray's storage sits
    # at an odd address, and the compiled lookup refused it as misaligned (ValueError) instead of 0.0.
    with scan(path):
        out = IRMetricsEvaluator(k_values=[1, 3, 10]).run(gt, [[] for _ in gt])
    assert out["query_ids"] == [str(i) for i in range(len(gt))]
    assert set(out["means"].values()) == {0.0}
    assert all(set(scores) == {0.0} for scores in out["individual_scores"].values())


def test_positions_answer_only_for_the_dicts_the_pass_built():
    qrels, run = RankedRun.from_judged_items(
        ["q"], [[Document(id="a"), Document(id="z")]], [[Document(id="a")]], "id", Document, "score"
    )
    assert run.judged_positions(qrels.data).tolist() == [0, -1]
    assert run.judged_positions(dict(qrels.data)) is None  # an equal dict, not the same one
    original = qrels.data["q"]
    qrels.data["q"] = {"a": 1, "y": 1}  # breaks the read-only contract (same size): looked up instead
    assert run.judged_positions(qrels.data) is None
    qrels.data["q"] = original
    qrels.data["q"]["y"] = 1  # the same, by a dict edited in place
    assert run.judged_positions(qrels.data) is None
    assert run.locate(np.zeros(3, np.int64), ["a", "z", "y"]).tolist() == [0, -1, -1]


@pytest.mark.filterwarnings("ignore:Mutating attribute")
@pytest.mark.parametrize("path", ["native", "python"])
def test_items_changed_before_their_keys_are_read_again_raise_a_typed_error(path):
    ret = [[Document(id="a"), Document(id="b")]]
    _, run = RankedRun.from_judged_items(["q"], [[Document(id="a")]], ret, "id", Document, "score")
    ret[0][1].id = "a"  # now one distinct key where the run ranked two
    with scan(path), pytest.raises(IRMetricsError, match="changed after they were read"):
        run.ids  # noqa: B018


class _Item:
    """An item whose attributes run code, to stand for anything a getattr may do."""

    def __init__(self, key, label=None, on_key=None, on_label=None):
        self._key, self._label, self._on_key, self._on_label = key, label, on_key, on_label

    @property
    def key(self):
        if self._on_key:
            self._on_key()
        return self._key

    @property
    def label(self):
        if self._on_label:
            self._on_label()
        return self._label


def _judged(judged, lists, qids=None):
    qids = qids or [f"q{i}" for i in range(len(lists))]
    return _native().index_judged(judged, lists, "key", _Item, "label", qids)


def test_attribute_reads_that_edit_the_lists_send_the_batch_to_the_caller():
    judged: list = [[], []]
    lists: list = [[], ["b", "c", "d"]]
    judged[0] = [_Item("a", on_key=lambda: judged[0].clear()), _Item("b")]
    lists[0] = [_Item("a")]
    assert _judged(judged, lists) is None
    judged[0] = [_Item("a", on_label=lambda: lists.__setitem__(1, "xyz"))]  # same length: identity tells
    assert _judged(judged, lists) is None
    judged[0] = [_Item("a")]
    lists[0] = [_Item("a", on_key=lambda: lists[0].append(_Item("new"))), _Item("b")]
    assert _judged(judged, lists) is None
    grown = [_Item("a")]
    lists[0] = [_Item("a", on_key=lambda: grown.extend(_Item(str(i)) for i in range(50)))]
    assert _judged([[_Item("a")], grown], [lists[0], [_Item("x")]]) is None  # longer than when sized


def test_a_read_walking_every_live_object_never_meets_the_half_built_dicts():
    def walk():
        for obj in gc.get_objects():
            if type(obj) is list:
                len([x for x in obj])  # iterating a list with empty slots would crash

    out = _judged([[_Item("a", on_label=walk)], [_Item("b")]], [[_Item("a", on_key=walk)], []])
    assert out is not None and out[0] == {"q0": {"a": 1}, "q1": {"b": 1}}


def test_a_read_walking_every_live_object_cannot_edit_the_judgments_being_built():
    def edit():
        for obj in gc.get_objects():
            if type(obj) is dict and type(obj.get("q0")) is dict and obj is not globals():
                obj["q0"] = {"zz": 5}  # the same size as the pass's {"a": 1}
                return

    ranked = [[_Item("a"), _Item("b")], [_Item("b", on_key=edit)]]
    judgments, _, _, positions, *_ = _judged([[_Item("a", 1)], [_Item("b", 2)]], ranked, ["q0", "q1"])
    assert judgments == {"q0": {"a": 1}, "q1": {"b": 2}}  # what was read: where the positions were found
    assert np.frombuffer(positions, np.int64).tolist() == [0, 0]


@pytest.fixture
def collect_often():
    """A collection at every second allocation of a gc object, which on 3.10 and 3.11 may be one the
    pass makes: it runs Python code there (gc.callbacks, finalizers)."""
    if sys.version_info >= (3, 12):
        pytest.skip("3.12 and later start a collection between bytecodes only, never within the pass")
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    yield
    gc.set_threshold(*threshold)


@pytest.mark.parametrize("tail", range(4))  # gc objects allocated after the last attribute read
def test_code_a_collection_runs_mid_pass_never_meets_what_the_pass_returns(collect_often, tail):
    met, keep, within = [], [], [False]

    def edit(phase, info):  # a finalizer could do the same: walk every live object and edit one
        keep.append(info)  # kept, so no dict goes back to the free list and PyDict_New allocates
        if phase != "start" or not within[0]:
            return
        for obj in gc.get_objects(generation=0):
            if type(obj) is list and len(obj) == 2 and type(obj[0]) is dict and "gc-a" in obj[0]:
                met.append(obj)
                obj.clear()
            elif type(obj) is dict and type(obj.get("q0")) is dict and "gc-a" in obj["q0"]:
                met.append(obj)
                obj["q0"] = {}

    def last():  # the last attribute the pass reads
        gc.disable()
        keep.extend([{} for _ in range(100)])  # the dict free list drained
        gc.enable()  # and the next allocation of a gc object starts a collection
        for _ in range(tail):  # sets have no free list: each counts towards the next collection
            keep.append(set())
        within[0] = True

    gc.callbacks.append(edit)
    try:
        for _ in range(2):
            ranked = [[_Item("gc-a")], [_Item("x", on_key=last)]]
            out = _judged([[_Item("gc-a")], [_Item("gc-b")]], ranked)
            within[0] = False  # no allocation since the pass returned
            assert not met
            assert out[0] == {"q0": {"gc-a": 1}, "q1": {"gc-b": 1}} and out[1] == list(out[0].values())
            del out
    finally:
        gc.callbacks.remove(edit)
    assert gc.is_tracked(_judged([[_Item("a")]], [[]])[1])


def test_an_attribute_read_that_raises_falls_back_and_an_interrupt_propagates():
    class NoKey(_Item):
        key = property(lambda self: self.missing)  # AttributeError

    assert _native().index_judged([[NoKey("a")]], [[]], "key", NoKey, "label", ["q"]) is None

    def boom():
        raise KeyError("boom")

    # The caller's path reads again, in its own order, and raises what it meets first.
    assert _judged([[_Item("a", on_label=boom)]], [[]]) is None
    assert _judged([[_Item("a")]], [[_Item("b"), _Item("c", on_key=boom)]]) is None

    def interrupt():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _judged([[_Item("a")]], [[_Item("b", on_key=interrupt)]])


def test_a_raising_document_read_gives_the_python_paths_first_error(monkeypatch):
    gt, ret = [[Document(id="a")], ["not a document"]], [[Document(id="boom")], [Document(id="b")]]

    def read_id(doc):
        if doc.__dict__["id"] == "boom":
            raise RuntimeError("id read failed")
        return doc.__dict__["id"]

    monkeypatch.setattr(Document, "id", property(read_id))
    native = _output("native", gt, ret, None)
    assert native == _output("python", gt, ret, None) and native[0].__name__ == "InvalidDocumentsError"


def test_keys_read_again_that_no_longer_find_the_judgments_raise_a_typed_error():
    # Code run by a read edits an item of a query read before: the pass ranked "a" first in q0.
    r0 = [_Item("a"), _Item("b")]

    def edit():
        r0[0]._key = "c"

    qrels, run = RankedRun.from_judged_items(
        ["q0", "q1"], [[_Item("a", 1)], [_Item("x", 1)]], [r0, [_Item("y", on_key=edit)]], "key", _Item, "label"
    )
    assert run.judged_positions(qrels.data).tolist() == [0, -1]
    with pytest.raises(IRMetricsError, match="changed after they were read"):
        run.ids  # noqa: B018
    with pytest.raises(IRMetricsError, match="changed after they were read"):
        run.locate(np.zeros(1, np.int64), ["a"])
    # an own id that moved is noticed as well
    r1 = [_Item("x"), _Item("q0")]
    _, run = RankedRun.from_judged_items(["q0"], [[]], [r1], "key", _Item, "label")
    r1[0]._key, r1[1]._key = "q0", "x"
    with pytest.raises(IRMetricsError, match="changed after they were read"):
        run.ids  # noqa: B018


def test_the_pass_frees_every_reference_it_takes():
    key, label, qid = "".join(["unique", "-key"]), float("".join(["2", ".5"])), "".join(["q", "-own"])
    items = [_Item(key, label), _Item("z", label)]
    before = [sys.getrefcount(x) for x in (key, label, qid, items[0])]
    for _ in range(5):
        out = _judged([items[:1]], [[_Item(key), _Item(qid), _Item(key)] * 20], [qid])
        assert out[0] == {qid: {key: label}}
        del out
        assert _judged([items], [[_Item(key)]], [qid]) is not None
        assert _judged([[_Item(key, label), _Item(key, label)]], [[]], [qid]) is None  # a key twice
        assert _judged([[_Item(key, label), _Item("y")]], [[]], [qid]) is None  # mixed labels
        assert _judged([[_Item(key)]], [[_Item(key)] * 10 + [_Item(3)]], [qid]) is None  # fallback mid-list
    gc.collect()
    assert [sys.getrefcount(x) for x in (key, label, qid, items[0])] == before


def test_arguments_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match="one entry per query"):
        _judged([[]], [[], []], ["a", "b"])
    with pytest.raises(TypeError):
        _native().index_judged([[]], [[]], "key", "not a type", "label", ["q"])
    assert _judged([[]], [{"a": 1}]) is None  # a query's ranking that is not a list or tuple
    assert _judged([[]], [[_Item("a")]], [3]) is None  # a query id that is not a str
    assert _judged([[], []], [[], []], ["q", "q"]) is None  # a query id twice
