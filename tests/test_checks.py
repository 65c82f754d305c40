"""The one vocabulary of value checks (``haystack_irmetrics/checks.py``): each rule's ends by hand (an end moved
or a comparison flipped fails here), the one message shape, and a scan of the package that finds the phrases of
those messages, or the hand-written ``isinstance(x, bool) or not isinstance(x, int)`` check, nowhere else."""

from __future__ import annotations

import ast
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from haystack_irmetrics.checks import (
    Choice,
    Number,
    Param,
    Whole,
    choice,
    is_number,
    is_whole,
    number,
    shown,
    whole,
)
from haystack_irmetrics.errors import InvalidArgumentError, JudgeError, PoolingError

PACKAGE = Path(__file__).resolve().parent.parent / "haystack_irmetrics"


# ---- whole ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "least", "most"),
    [(1, 1, None), (7, 1, None), (0, 0, 65535), (65535, 0, 65535), (-5, None, None), (3, None, 3), (np.int64(2), 1, 2)],
)
def test_whole_takes_a_whole_number_at_both_ends_of_its_range(value, least, most):
    out = whole(value, "n", least=least, most=most)
    assert out == value and type(out) is int


@pytest.mark.parametrize(
    ("value", "least", "most", "message"),
    [
        (0, 1, None, "n must be a whole number >= 1, got 0"),
        (-1, 0, 65535, "n must be a whole number from 0 to 65535, got -1"),
        (65536, 0, 65535, "n must be a whole number from 0 to 65535, got 65536"),
        (4, None, 3, "n must be a whole number <= 3, got 4"),
        (True, None, None, "n must be a whole number, got True"),
        (np.bool_(True), None, None, "n must be a whole number, got np.True_"),
        (2.0, 1, None, "n must be a whole number >= 1, got 2.0"),
        ("3", 1, None, "n must be a whole number >= 1, got '3'"),
        (None, 1, None, "n must be a whole number >= 1, got None"),
        (math.nan, 1, None, "n must be a whole number >= 1, got nan"),
        (np.timedelta64(3), 1, None, "n must be a whole number >= 1, got np.timedelta64(3)"),
    ],
)
def test_whole_refuses_with_the_one_message(value, least, most, message):
    with pytest.raises(InvalidArgumentError) as raised:
        whole(value, "n", least=least, most=most)
    assert str(raised.value) == message.replace("np.True_", shown(np.bool_(True))).replace(
        "np.timedelta64(3)", shown(np.timedelta64(3))
    )


def test_whole_with_floats_takes_a_float_with_a_whole_value_as_its_int():
    rule = Whole(1, floats=True)
    assert rule.check(2.0, "n") == 2 and type(rule.check(2.0, "n")) is int and rule.check(np.int64(3), "n") == 3
    assert [rule.holds(v) for v in (1.0, 1, 1e300)] == [True, True, True]
    assert [rule.holds(v) for v in (0.0, 2.5, math.inf, math.nan, True, "2")] == [False] * 6
    assert not Whole(1).holds(2.0) and Whole(0, 3).holds(3) and not Whole(0, 3).holds(4)


def test_whole_raises_the_callers_error_and_prints_a_huge_int_safely():
    with pytest.raises(JudgeError, match=r"^--depth must be a whole number >= 1, got 0$"):
        whole(0, "--depth", least=1, error=JudgeError)
    with pytest.raises(PoolingError, match=r"got <int of 33,220 bits>$"):
        whole(-(10**10000), "budget", least=0, error=PoolingError)
    assert whole(10**30, "n", least=1) == 10**30  # no float in the way


# ---- number ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "closed", "inside", "outside"),
    [
        (0, 1, "neither", [1e-300, 0.5, 1 - 1e-16], [0, 1, -0.0]),
        (0, 1, "both", [0, 1, 0.5], [-1e-300, 1 + 2e-16]),
        (0, 1, "left", [0, 0.999], [1, -0.001]),
        (0, 1, "right", [1, 0.001], [0, 1.001]),
        (0, None, "neither", [1e-300, 1e300], [0, -1]),
        (0, None, "both", [0, 5], [-1e-300]),
        (None, 1, "neither", [-1e300, 0.999], [1, 2]),
        (None, 1, "both", [1, -5], [1.0000001]),
        (None, None, "both", [-1e300, 0, 1e300, np.float32(2.5), Fraction(1, 3)], [math.nan, math.inf, -math.inf]),
    ],
)
def test_number_holds_its_ends_as_closed_says(low, high, closed, inside, outside):
    rule = Number(low, high, closed)
    assert [rule.holds(v) for v in inside] == [True] * len(inside)
    assert [rule.holds(v) for v in outside] == [False] * len(outside)
    for v in inside:
        assert number(v, "x", low, high, closed=closed) is v  # the value itself comes back


def test_number_refuses_a_bool_nan_and_where_asked_the_infinities_and_an_int_beyond_any_float():
    for bad in (True, False, np.bool_(True), math.nan, "0.5", None, 1j, [0.5]):
        assert not Number().holds(bad), bad
    assert not Number(0, None, "neither").holds(math.inf) and not Number().holds(10**400)
    assert Number(0, None, "neither", finite=False).holds(math.inf)  # infinity allowed: the range is all that counts
    assert Number(finite=False).holds(10**400) and not Number(finite=False).holds(math.nan)
    assert not Number(None, 0, finite=False).holds(math.inf) and Number(None, 0, finite=False).holds(-math.inf)
    assert is_number(np.float64(1)) and is_number(np.int32(1)) and not is_number(True)
    assert is_number(math.inf) and not is_number(math.inf, finite=True)
    assert is_whole(np.int8(3)) and not is_whole(3.0) and not is_whole(False)


@pytest.mark.parametrize(
    ("rule", "value", "message"),
    [
        (Number(0, 1, "neither"), 1.5, "x must be a number in (0, 1), got 1.5"),
        (Number(0, 1, "right"), 0, "x must be a number in (0, 1], got 0"),
        (Number(0, 1, "left"), 1, "x must be a number in [0, 1), got 1"),
        (Number(0, 1e8, "right"), 1e20, "x must be a number in (0, 1e8], got 1e+20"),
        (Number(0.05, 1, "neither"), 0.01, "x must be a number in (0.05, 1), got 0.01"),
        (Number(1e-150, 1e150, "neither"), 0, "x must be a number in (1e-150, 1e150), got 0"),
        (Number(0, None, "neither"), math.inf, "x must be a finite number > 0, got inf"),
        (Number(0, None, "neither", finite=False), -1, "x must be a number > 0, got -1"),
        (Number(0, None), math.nan, "x must be a finite number >= 0, got nan"),
        (Number(None, 3, "neither"), 3, "x must be a finite number < 3, got 3"),
        (Number(None, 3), 4, "x must be a finite number <= 3, got 4"),
        (Number(), "abc", "x must be a finite number, got 'abc'"),
        (Number(finite=False), True, "x must be a number, got True"),
        (Number(0, 4294967295.0), -1, "x must be a number in [0, 4294967295.0], got -1"),
    ],
)
def test_number_refuses_with_the_one_message(rule, value, message):
    with pytest.raises(InvalidArgumentError) as raised:
        rule.check(value, "x")
    assert str(raised.value) == message


def test_number_raises_the_callers_error_and_an_unknown_closed_is_a_mistake_of_ours():
    with pytest.raises(PoolingError, match=r"^rbp's p must be a number in \(0, 1\), got 0\.0$"):
        number(0.0, "rbp's p", 0, 1, closed="neither", error=PoolingError)
    with pytest.raises(ValueError, match="closed"):
        Number(0, 1, "open")  # type: ignore[arg-type]


# ---- choice ---------------------------------------------------------------------------------------------------


def test_choice_takes_an_option_and_refuses_anything_else_with_the_one_message():
    assert choice("dot_product", "similarity", ("cosine", "dot_product")) == "dot_product"
    assert choice(0, "reask", (0, 1)) == 0
    for bad in ("l2", ["cosine"], {"a": 1}, None, "COSINE"):
        with pytest.raises(InvalidArgumentError) as raised:
            choice(bad, "similarity", ("cosine", "dot_product"))
        assert str(raised.value) == f"similarity must be one of cosine, dot_product, got {bad!r}"
    with pytest.raises(InvalidArgumentError, match=r"^reask must be one of 0, 1, got True$"):
        choice(True, "reask", (0, 1))  # True == 1, but a bool is no option unless one is given
    assert choice(True, "flag", (True, False)) is True
    assert Choice(("a", "b")).describe() == "one of a, b"


# ---- Param ----------------------------------------------------------------------------------------------------


def test_a_param_checks_and_parses_through_its_rule_with_the_callers_error():
    p = Param("p", Number(0, 1, "neither"), 0.8, "RBP persistence")
    assert p.range == "a number in (0, 1)" and p.default == 0.8 and p.doc == "RBP persistence"
    assert p.check(0.95) == 0.95 and p.parse("0.25", PoolingError) == 0.25
    with pytest.raises(PoolingError, match=r"^parameter p must be a number in \(0, 1\), got 1\.0$"):
        p.parse("1", PoolingError)
    with pytest.raises(PoolingError, match=r"^parameter p must be a number in \(0, 1\), got 'abc'$"):
        p.parse("abc", PoolingError)
    with pytest.raises(InvalidArgumentError, match=r"^rrf's parameter p must be"):
        p.check(2, name="rrf's parameter p")
    with pytest.raises(PoolingError, match=r"^parameter q must be a number in \[0, 1\], got 2$"):
        Param("q", Number(0, 1), error=PoolingError).check(2)  # the registry's own error, unless the caller's
    with pytest.raises(JudgeError):
        Param("q", Number(0, 1), error=PoolingError).check(2, JudgeError)
    assert p.inside(0.5) and not p.inside(1) and (p.low, p.high, p.over) == (0, 1, "one")
    assert (Param("w", Whole(0, 9)).low, Param("w", Whole(0, 9)).high) == (0, 9) and Param(
        "c", Choice(("a",))
    ).low is None
    n = Param("n_segments", Whole(1), None)
    assert n.parse("3") == 3 and n.range == "a whole number >= 1"
    with pytest.raises(InvalidArgumentError, match=r"got '2\.5'"):
        n.parse("2.5")


# ---- no check written by hand elsewhere -----------------------------------------------------------------------

#: The phrases of the messages :mod:`haystack_irmetrics.checks` writes, once.
PHRASES = ("must be a whole number", "must be a number", "must be a finite number", "must be one of")
#: Modules (a path ending in ``/``: a folder's) not converted yet, and why; an entry no longer needed fails the
#: test below (remove it then).
PENDING: dict[str, str] = {}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions (a doctest shows a message)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _isinstance_of(node: ast.expr) -> tuple[str, str] | None:
    """``(subject, type)`` of ``isinstance(subject, type)`` or ``not isinstance(...)``, as source text."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node = node.operand
    call = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
    if call and len(node.args) == 2:
        return ast.dump(node.args[0]), ast.unparse(node.args[1])
    return None


def hand_written_checks(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` of every message phrase outside a docstring and every ``isinstance(x, bool)`` joined
    by ``and``/``or`` to another ``isinstance`` of the same ``x`` (the hand-written number check, either way)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found += [(node.lineno, phrase) for phrase in PHRASES if phrase in node.value]
        elif isinstance(node, ast.BoolOp):
            tests = [t for t in map(_isinstance_of, node.values) if t]
            bools = {subject for subject, kind in tests if kind == "bool"}
            if any(subject in bools and kind != "bool" for subject, kind in tests):
                found.append((node.lineno, "isinstance(x, bool) beside isinstance(x, ...)"))
    return sorted(set(found))


def _pending(path: str, entry: str | None = None) -> bool:
    """Whether ``path`` is pending: named in :data:`PENDING` (or only by ``entry``), or in a folder named there."""
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in ([entry] if entry else PENDING))


def _package_findings() -> dict[str, list[tuple[int, str]]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel != "checks.py":
            found = hand_written_checks(path.read_text(encoding="utf-8"))
            if found:
                out[rel] = found
    return out


def test_no_module_but_checks_py_writes_a_value_check_or_its_message_by_hand():
    found = _package_findings()
    assert {k: v for k, v in found.items() if not _pending(k)} == {}
    assert [p for p in PENDING if not any(_pending(k, p) for k in found)] == [], "converted: remove it from PENDING"


def test_the_scan_finds_each_phrase_and_the_idiom_either_way_but_not_a_docstring():
    source = (
        '"""A doctest: seed must be a whole number from 0 to 9."""\n'
        'def f(x, name):\n    """x must be one of them."""\n'
        '    if isinstance(x, bool) or not isinstance(x, int):\n        raise E(f"{name} must be a whole number")\n'
        "    ok = isinstance(x.y, int | float) and not isinstance(x.y, bool)\n"
        '    raise E(f"{name} must be a number in (0, 1), got {x}" "must be a finite number")\n'
        '    raise E(f"x must be one of {X}")\n'
        "    flag = not isinstance(x, bool) or isinstance(y, int)\n"
        '    raise E("must be a " "whole number")\n'
    )
    assert hand_written_checks(source) == [
        (4, "isinstance(x, bool) beside isinstance(x, ...)"),
        (5, "must be a whole number"),
        (6, "isinstance(x, bool) beside isinstance(x, ...)"),
        (7, "must be a finite number"),
        (7, "must be a number"),
        (8, "must be one of"),
        (10, "must be a whole number"),  # joined by the parser: one constant
    ]
