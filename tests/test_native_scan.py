"""The compiled dict scan (``core/_rank.c``) against the pure-Python scan it stands in for.

Both must prepare the same arrays, bit for bit, and rank every judged document the same in both
orders; inputs the compiled scan does not take must reach the Python path (same values, same
errors). The oracle tests (test_differential, test_properties, test_ranking) run on both scans too.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import sysconfig
from collections import OrderedDict
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.core import native
from haystack_irmetrics.core.inputs import Qrels, Run
from haystack_irmetrics.core.prepare import prepare
from haystack_irmetrics.core.ranking import judged_ranks
from tests import strategies as S
from tests.conftest import scan

QIDS = ["q1", "q2", "10", "9"]
# Query ids among the documents (BEIR drops those), byte-order traps, non-ASCII, a prefix pair.
DOCS = [*QIDS, "d1", "d2", "d10", "d9", "D1", "é", "ü", "a", "a\x00", "ab", *(f"x{i}" for i in range(30))]
# Exact ties; 1 and 1 + 2**-30 tie in float32 but not in float64 (the stable order tells them
# apart); ints within 2**53; float32 overflow (+-inf there); signed zeros.
SCORES = [0.0, -0.0, 1.0, 1.0 + 2**-30, 1.0 - 2**-30, 2, 0.5, -1, 2**53 - 1, 3.5e38, -3.5e38, 1e-46, 7.0]
scores = st.sampled_from(SCORES) | st.floats(-3, 3, allow_nan=False).map(lambda x: round(x, 1))


@st.composite
def inputs_(draw):
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True))
    results = {q: draw(st.dictionaries(st.sampled_from(DOCS), scores, max_size=40)) for q in qids}
    qrels = {}
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True)):
        # up to every document judged: the few-judged pass and the one-sort pass of each query
        qrels[q] = draw(st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1, 0, 1, 2, 0.5]), max_size=40))
    return qrels, results


def _prepare(path: str, qrels: dict, results: dict, drop: bool):
    with scan(path):
        return prepare(Run.from_dict(results), Qrels.from_dict(qrels), drop)


def _bits(a: np.ndarray) -> list:
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32).tolist()


def test_the_compiled_scan_is_built_where_the_suite_runs():
    # pip builds it with optional=True, so a failed build would pass silently: the suite says so
    if os.environ.get("IRMETRICS_PURE_PYTHON"):
        pytest.skip("IRMETRICS_PURE_PYTHON is set")
    if native.free_threaded():
        pytest.skip("a free-threaded build: importing the extension would turn the GIL back on")
    from haystack_irmetrics.core import _rank

    assert callable(_rank.prepare_dicts)
    assert callable(_rank.flat_values)


@pytest.mark.parametrize("drop", [False, True])
@given(data=inputs_())
def test_the_compiled_scan_prepares_what_the_python_scan_prepares(drop, data):
    qrels, results = data
    if not any(qrels.get(q) for q in results):
        return
    native = _prepare("native", qrels, results, drop)
    python = _prepare("python", qrels, results, drop)
    assert native.pair_ranks is not None  # the compiled scan took it
    assert native.qids == python.qids
    assert native.offsets.tolist() == python.offsets.tolist()
    assert _bits(native.scores) == _bits(python.scores)
    assert native.pair_query.tolist() == python.pair_query.tolist()
    assert native.pair_doc == python.pair_doc
    assert _bits(native.pair_score) == _bits(python.pair_score)
    assert native.pair_label.tolist() == python.pair_label.tolist()
    assert native.judged_offsets.tolist() == python.judged_offsets.tolist()
    assert _bits(native.judged_labels) == _bits(python.judged_labels)
    for ties in ("trec", "stable"):
        assert native.pair_ranks[ties].tolist() == judged_ranks(python, ties).tolist(), ties
    # the members the Python path reads ids and scores through still point at the same documents
    positions = np.arange(native.scores.size)
    assert native.ids_at(positions) == python.ids_at(positions)


def test_one_large_tie_group_with_half_its_documents_judged_ranks_as_the_python_scan_does():
    results = {"q": {f"d{i}": 1.0 for i in range(3000)}, "p": {f"d{i}": float(i % 7) for i in range(3000)}}
    results["q"]["d17"] = 1.0 + 2**-30  # ties d* in float32, beats them in float64
    qrels = {q: {f"d{i}": 1 for i in range(0, 3000, 2)} for q in results}
    native = _prepare("native", qrels, results, True)
    python = _prepare("python", qrels, results, True)
    for ties in ("trec", "stable"):
        assert native.pair_ranks[ties].tolist() == judged_ranks(python, ties).tolist()


class _Str(str):
    pass


# Inputs the compiled scan hands to the Python path: anything but exact str ids, dicts and plain
# numbers, and ints that a double cannot hold (BEIR compares those as ints).
HANDED_OVER = {
    "int doc id": ({"q": {"a": 1}}, {"q": {"a": 1.0, 7: 2.0}}),
    "str subclass doc id": ({"q": {"a": 1}}, {"q": {"a": 1.0, _Str("b"): 2.0}}),
    "str subclass judged id": ({"q": {_Str("a"): 1}}, {"q": {"a": 1.0, "b": 2.0}}),
    "numpy float32 score": ({"q": {"a": 1}}, {"q": {"a": np.float32(1.0), "b": 2.0}}),
    "bool score": ({"q": {"a": 1}}, {"q": {"a": True, "b": 2.0}}),
    "Decimal score": ({"q": {"a": 1}}, {"q": {"a": Decimal("0.5"), "b": 2.0}}),
    "int beyond 2**53": ({"q": {"a": 1}}, {"q": {"a": 2**53 + 1, "b": 2**53}}),
    "negative int beyond 2**53": ({"q": {"a": 1}}, {"q": {"a": -(2**60), "b": -(2**60) - 1}}),
    "huge int": ({"q": {"a": 1}}, {"q": {"a": 10**400, "b": 2.0}}),
    "NaN score": ({"q": {"a": 1}}, {"q": {"a": float("nan"), "b": 2.0}}),
    "inf score": ({"q": {"a": 1}}, {"q": {"a": 1.0, "b": float("inf")}}),
    "None score": ({"q": {"a": 1}}, {"q": {"a": None, "b": 2.0}}),
    "string score": ({"q": {"a": 1}}, {"q": {"a": "0.5", "b": 2.0}}),
    "qrels dict subclass": ({"q": OrderedDict(a=1)}, {"q": {"a": 1.0, "b": 2.0}}),
    "numpy float64 label": ({"q": {"a": np.float64(1.0)}}, {"q": {"a": 1.0, "b": 2.0}}),
    "int label beyond 2**53": ({"q": {"a": 2**53 + 1}}, {"q": {"a": 1.0, "b": 2.0}}),
}


def _outcome(path: str, qrels: dict, results: dict):
    with scan(path):
        try:
            res = evaluate(qrels, results, [1, 3], preset="beir")
        except Exception as exc:  # the same typed error, word for word, on both paths
            return type(exc), str(exc)
        return "values", {k: dict(v) for k, v in res.per_query.items()}


@pytest.mark.parametrize("case", list(HANDED_OVER))
def test_inputs_the_compiled_scan_does_not_take_get_the_python_paths_values_or_error(case):
    qrels, results = HANDED_OVER[case]
    compiled = native.scan()
    if compiled is None:
        pytest.skip("the compiled scan is off: not built, or IRMETRICS_PURE_PYTHON set")
    assert compiled.prepare_dicts(list(results.values()), list(results), qrels, True) is None
    before = copy.deepcopy(results), copy.deepcopy(qrels)
    assert _outcome("native", qrels, results) == _outcome("python", qrels, results)
    assert (results, qrels) == before or case == "NaN score"  # NaN != NaN; nothing was changed


def test_float_subclasses_are_read_by_their_own_value_on_both_scans():
    results = {"q": {"a": np.float64(0.5), "b": 2.0, "c": np.float64(2.0)}}
    qrels = {"q": {"a": 1, "c": 2}}
    assert _outcome("native", qrels, results) == _outcome("python", qrels, results)
    assert _prepare("native", qrels, results, True).pair_ranks is not None


def test_a_query_whose_own_id_is_judged_and_retrieved_counts_it_on_neither_scan_when_dropped():
    results = {"q": {"q": 9.0, "a": 1.0, "b": 1.0}}
    qrels = {"q": {"q": 2, "b": 1}}
    for drop in (True, False):
        native = _prepare("native", qrels, results, drop)
        python = _prepare("python", qrels, results, drop)
        assert native.pair_doc == python.pair_doc == (["b"] if drop else ["q", "b"])
        assert native.pair_ranks["trec"].tolist() == judged_ranks(python, "trec").tolist()


@given(S.beir_safe())
def test_beir_preset_values_agree_on_both_scans(data):
    qrels, results = data
    assert _outcome("native", qrels, results) == _outcome("python", qrels, results)


class _NeverEqual(str):
    """A query id whose own ``__eq__`` says no document is it (BEIR compares ``qid == pid``)."""

    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        return False


def test_a_query_id_with_its_own_equality_is_left_to_the_python_path_as_beir_compares_it():
    # the document "q1" is not the query by the id's own __eq__: BEIR keeps it (NDCG@1 0.0)
    q = _NeverEqual("q1")
    qrels, results = {q: {"d1": 1}}, {q: {"q1": 5.0, "d1": 1.0}}
    assert _outcome("native", qrels, results) == _outcome("python", qrels, results)
    assert _outcome("native", qrels, results)[1]["NDCG@1"] == {q: 0.0}


def test_an_empty_first_query_is_scanned_without_reading_unallocated_memory():
    # the working arrays are allocated before the first copy, even for a query of no documents
    qrels, results = {"q": {"a": 1}, "p": {"a": 1}}, {"q": {}, "p": {"a": 1.0}}
    assert _outcome("native", qrels, results) == _outcome("python", qrels, results)


@pytest.mark.parametrize(("value", "used"), [("", True), ("0", True), ("1", False), ("yes", False)])
def test_irmetrics_pure_python_switches_the_compiled_scan_off_unless_empty_or_0(monkeypatch, value, used):
    if native.scan() is None:
        pytest.skip("the compiled scan is off: not built, or IRMETRICS_PURE_PYTHON set")
    monkeypatch.setenv("IRMETRICS_PURE_PYTHON", value)
    monkeypatch.setattr(native, "_SCAN", native._UNSET)  # read the switch again
    assert (native.scan() is not None) is used


@pytest.mark.parametrize(("config", "free"), [(1, True), (0, False), (None, False)])
def test_a_free_threaded_build_is_told_by_its_build_configuration(monkeypatch, config, free):
    real = sysconfig.get_config_var
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: config if name == "Py_GIL_DISABLED" else real(name))
    assert native.free_threaded() is free


def test_a_free_threaded_build_runs_the_python_path_without_importing_the_extension(monkeypatch):
    qrels, results = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}, {"q1": {"a": 0.5, "b": 0.5, "x": 2.0}, "q2": {"c": 1}}
    expected = _outcome("python", qrels, results)
    monkeypatch.delenv("IRMETRICS_PURE_PYTHON", raising=False)
    monkeypatch.setattr(native, "free_threaded", lambda: True)

    def imported():
        raise AssertionError("the extension was imported on a free-threaded build")

    monkeypatch.setattr(native, "load", imported)
    monkeypatch.setattr(native, "_SCAN", native._UNSET)  # decide again
    assert native.scan() is None
    res = evaluate(qrels, results, [1, 3], preset="beir")
    assert ("values", {k: dict(v) for k, v in res.per_query.items()}) == expected
    monkeypatch.setattr(native, "free_threaded", lambda: False)
    monkeypatch.setattr(native, "load", lambda: "the extension")
    monkeypatch.setattr(native, "_SCAN", native._UNSET)
    assert native.scan() == "the extension"  # a build with the GIL imports it


@pytest.mark.parametrize("pure", ["", "1"])
def test_the_extension_is_imported_only_where_it_is_used(pure):
    # a fresh interpreter: switched off, or on a free-threaded build, the package never imports it
    # (there it would turn the GIL back on for the whole process, with a RuntimeWarning naming it)
    code = (
        "import sys; from haystack_irmetrics import evaluate;"
        "evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, [1]);"
        "print('haystack_irmetrics.core._rank' in sys.modules)"
    )
    env = {**os.environ, "IRMETRICS_PURE_PYTHON": pure}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    used = not pure and not native.free_threaded() and native.load() is not None
    assert out.stdout.split() == [str(used)]
    assert "_rank" not in out.stderr


def _qrels(path: str, qrels: dict):
    with scan(path):
        try:
            return Qrels.from_dict(qrels)
        except Exception as exc:
            return type(exc), str(exc)


labels = st.sampled_from([0, 1, 2, -1, 0.5, -0.0, 2**53 - 1, 1e300]) | st.floats(allow_nan=False, allow_infinity=False)


@given(st.dictionaries(st.sampled_from(QIDS), st.dictionaries(st.sampled_from(DOCS), labels, max_size=10), min_size=1))
def test_the_compiled_label_read_equals_the_python_read(qrels):
    native, python = _qrels("native", qrels), _qrels("python", qrels)
    assert native.qids == python.qids
    assert native.offsets.tolist() == python.offsets.tolist()
    assert _bits(native.labels) == _bits(python.labels)


@pytest.mark.parametrize(
    "label",
    [np.float64(0.5), np.int64(2), True, Decimal("0.5"), 2**53 + 1, 10**400, float("nan"), None, "1"],
    ids=repr,
)
def test_labels_the_compiled_read_does_not_take_get_the_python_paths_values_or_error(label):
    compiled = native.scan()
    if compiled is None:
        pytest.skip("the compiled scan is off: not built, or IRMETRICS_PURE_PYTHON set")
    qrels = {"q": {"a": 1, "b": label}}
    assert compiled.flat_values(list(qrels.values()), np.empty(2, np.float64)) is False
    got, want = _qrels("native", qrels), _qrels("python", qrels)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert _bits(got.labels) == _bits(want.labels)


def test_doc_ids_the_compiled_label_read_does_not_take_get_the_python_paths_error():
    compiled = native.scan()
    if compiled is None:
        pytest.skip("the compiled scan is off: not built, or IRMETRICS_PURE_PYTHON set")
    for qrels in ({"q": {"a": 1, 7: 1}}, {"q": {_Str("a"): 1}}, {"q": OrderedDict(a=1)}):
        size = sum(map(len, qrels.values()))
        assert compiled.flat_values(list(qrels.values()), np.empty(size, np.float64)) is False
        got, want = _qrels("native", qrels), _qrels("python", qrels)
        assert (got == want) if isinstance(want, tuple) else _bits(got.labels) == _bits(want.labels)


def test_judgments_a_query_key_equality_shrinks_mid_scan_send_the_scan_to_the_python_path():
    # pass 1 sizes every buffer by the dicts; a qrels key's __eq__ that empties a judged dict during
    # a later lookup must not leave unwritten entries behind (found by a review: garbage ranks)
    def make():
        judged_q1 = {f"d{i}": 1 for i in range(40)}

        class Shrinking(str):
            __hash__ = str.__hash__
            done = False

            def __eq__(self, other: object) -> bool:
                if not Shrinking.done:
                    Shrinking.done = True
                    for i in range(1, 40):
                        del judged_q1[f"d{i}"]
                return str.__eq__(self, other)

        qrels = {"q1": judged_q1, Shrinking("q2"): {"x": 1}, "q9": {"x": 1}}
        results = {"q1": {f"d{i}": float(i) for i in range(40)}, "q2": {"x": 1.0, "y": 2.0}}
        return qrels, results

    assert _outcome("native", *make()) == _outcome("python", *make())


def test_a_reused_qrels_object_gives_the_same_values_on_both_scans():
    # Qrels keeps the labels it read; both scans take those for the queries it holds
    data = {"q1": {"a": 1, "b": 0}}
    qrels = Qrels.from_dict(data)
    data["q1"]["a"], data["q1"]["b"] = 0, 1  # against its read-only contract
    results = {"q1": {"a": 2.0, "b": 1.0}}
    assert _outcome("native", qrels, results) == _outcome("python", qrels, results)
