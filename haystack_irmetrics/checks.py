"""One vocabulary of value checks: a whole number, a number in a range, one of a few choices, and a declared
parameter (:class:`Param`), each stated once with its constraint, as scikit-learn states its parameters.

Every refusal has one shape, written once here: ``NAME must be WHAT, got VALUE``, where ``WHAT`` is the
constraint's description (:meth:`Whole.describe`, :meth:`Number.describe`, :meth:`Choice.describe`) and
``VALUE`` the value as :func:`shown` prints it. The caller names the value (``--port``, ``the budget``,
``rrf's parameter k``) and the exception class, so each part of the package keeps its own error type::

    >>> whole(8080, "--port", least=0, most=65535)
    8080
    >>> number(1.5, "the test fraction", 0, 1, closed="neither")
    Traceback (most recent call last):
    ...
    haystack_irmetrics.errors.InvalidArgumentError: the test fraction must be a number in (0, 1), got 1.5
    >>> choice("l2", "similarity", ("cosine", "dot_product"))
    Traceback (most recent call last):
    ...
    haystack_irmetrics.errors.InvalidArgumentError: similarity must be one of cosine, dot_product, got 'l2'

A bool is no number here (``True`` is an ``int`` to Python, never a count or a rate to a user); numpy's
numbers are numbers. NaN is in no range, and an infinity or an int too large for a float is refused wherever
a finite number is asked for. This module imports :mod:`errors` and the standard library only: every layer,
the core included, may use it (``tests/test_checks.py`` bans the phrases and the hand-written check elsewhere).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal, Protocol

from .errors import InvalidArgumentError

#: Which ends of a range belong to it, as scikit-learn's ``Interval(closed=...)`` says.
Closed = Literal["both", "left", "right", "neither"]
Error = Callable[[str], Exception]
_CLOSED = ("both", "left", "right", "neither")
#: Integer types ``numbers.Integral`` admits that hold no count (numpy's time spans are integers to it).
_NOT_COUNTS = frozenset({"timedelta64"})


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for a message, shortened; an int too long to print is described instead."""
    try:
        text = repr(value)
    except ValueError:  # an int beyond Python's digit limit for str()
        return f"<int of {value.bit_length():,} bits>" if isinstance(value, int) else f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_whole(value: object) -> bool:
    """A whole number: an int or a numpy integer, never a bool (nor a float with a whole value)."""
    return isinstance(value, Integral) and not isinstance(value, bool) and type(value).__name__ not in _NOT_COUNTS


def is_number(value: object, *, finite: bool = False) -> bool:
    """A real number (an int, a float, a numpy number), never a bool; ``finite``: and finite as a float (NaN,
    the infinities and an int beyond any float are not)."""
    if not isinstance(value, Real) or isinstance(value, bool) or type(value).__name__ in _NOT_COUNTS:
        return False
    try:
        return not finite or math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def refuse(value: object, name: str, what: str, error: Error = InvalidArgumentError) -> Exception:
    """The one message of every refusal: ``NAME must be WHAT, got VALUE`` (raise what it returns)."""
    return error(f"{name} must be {what}, got {shown(value)}")


def _bound(x: float) -> str:
    """A range's end as a person writes it: ``1``, ``0.05``, ``1e8``, ``4294967295``."""
    if isinstance(x, Integral):
        return str(int(x))
    text = f"{x:g}"
    if float(text) != x:  # more digits than %g keeps
        return repr(float(x))
    return re.sub(r"e([+-])0*(\d)", lambda m: f"e{'-' if m.group(1) == '-' else ''}{m.group(2)}", text)


@dataclass(frozen=True)
class Whole:
    """A whole number from ``least`` to ``most`` (either end open when ``None``); ``floats``: a float with a
    whole value counts too (``2.0`` is 2), as a grid or a command line may write it."""

    least: int | None = None
    most: int | None = None
    floats: bool = False

    def describe(self) -> str:
        if self.least is not None and self.most is not None:
            return f"a whole number from {self.least} to {self.most}"
        if self.least is not None:
            return f"a whole number >= {self.least}"
        return "a whole number" if self.most is None else f"a whole number <= {self.most}"

    def holds(self, value: object) -> bool:
        """Whether ``value`` is such a number."""
        whole = is_whole(value) or (self.floats and is_number(value, finite=True) and float(value).is_integer())
        return whole and (self.least is None or value >= self.least) and (self.most is None or value <= self.most)

    def check(self, value: Any, name: str, error: Error = InvalidArgumentError) -> int:
        if not self.holds(value):
            raise refuse(value, name, self.describe(), error)
        return int(value)

    def parse(self, text: str) -> int:
        return int(text)


@dataclass(frozen=True)
class Number:
    """A real number between ``low`` and ``high`` (an end ``None``: unbounded), ``closed`` saying which ends
    belong; ``finite``: the infinities refused too (NaN always is). Described as ``a number in (0, 1]``,
    ``a finite number > 0``, ``a number >= 0`` (infinity allowed)."""

    low: float | None = None
    high: float | None = None
    closed: Closed = "both"
    finite: bool = True

    def __post_init__(self) -> None:
        if self.closed not in _CLOSED:
            raise ValueError(f"closed is one of {_CLOSED}, got {self.closed!r}")

    def describe(self) -> str:
        left, right = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.low is not None and self.high is not None:
            ends = f"{'[' if left else '('}{_bound(self.low)}, {_bound(self.high)}{']' if right else ')'}"
            return f"a number in {ends}"
        kind = "a finite number" if self.finite else "a number"
        if self.low is not None:
            return f"{kind} {'>=' if left else '>'} {_bound(self.low)}"
        return kind if self.high is None else f"{kind} {'<=' if right else '<'} {_bound(self.high)}"

    def holds(self, value: object) -> bool:
        """Whether ``value`` is such a number."""
        if not is_number(value, finite=self.finite) or value != value:  # NaN is in no range
            return False
        left, right = self.closed in ("both", "left"), self.closed in ("both", "right")
        above = self.low is None or (value >= self.low if left else value > self.low)
        return above and (self.high is None or (value <= self.high if right else value < self.high))

    def check(self, value: Any, name: str, error: Error = InvalidArgumentError) -> Any:
        if not self.holds(value):
            raise refuse(value, name, self.describe(), error)
        return value

    def parse(self, text: str) -> float:
        return float(text)


@dataclass(frozen=True)
class Choice:
    """One of ``options`` (compared by equality; a bool is refused unless an option is one)."""

    options: tuple[Any, ...]

    def describe(self) -> str:
        return "one of " + ", ".join(str(o) for o in self.options)

    def holds(self, value: object) -> bool:
        """Whether ``value`` is one of the options."""
        try:
            return value in self.options and (not isinstance(value, bool) or any(o is value for o in self.options))
        except TypeError:  # an unhashable value against hashable options that compare oddly
            return False

    def check(self, value: Any, name: str, error: Error = InvalidArgumentError) -> Any:
        if not self.holds(value):
            raise refuse(value, name, self.describe(), error)
        return value

    def parse(self, text: str) -> str:
        return text


class Rule(Protocol):
    """What a constraint is: :class:`Whole`, :class:`Number`, :class:`Choice`, or a registry's own (a pooling
    strategy's strata edges)."""

    def describe(self) -> str: ...

    def holds(self, value: object) -> bool: ...

    def check(self, value: Any, name: str, error: Error = ...) -> Any: ...

    def parse(self, text: str) -> Any: ...


def whole(
    value: Any, name: str, *, least: int | None = None, most: int | None = None, error: Error = InvalidArgumentError
) -> int:
    """``value`` as an int if it is a whole number from ``least`` to ``most``; else ``error`` (one message:
    ``NAME must be a whole number >= 1, got X``, ``... from 0 to 65535, got X``)."""
    return Whole(least, most).check(value, name, error)


def number(
    value: Any,
    name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    closed: Closed = "both",
    finite: bool = True,
    error: Error = InvalidArgumentError,
) -> Any:
    """``value`` if it is a number in the range (see :class:`Number`); else ``error`` (``NAME must be a number
    in (0, 1), got X``, ``NAME must be a finite number > 0, got X``)."""
    return Number(low, high, closed, finite).check(value, name, error)


def choice(value: Any, name: str, options: Iterable[Any], *, error: Error = InvalidArgumentError) -> Any:
    """``value`` if it is one of ``options``; else ``error`` (``NAME must be one of a, b, got X``)."""
    return Choice(tuple(options)).check(value, name, error)


@dataclass(frozen=True)
class Param:
    """A declared parameter of a registry's entry (a pooling strategy's, a fusion method's, a click model's, a
    measure family's): its name, its constraint (``rule``), its default (``None``: none, it must be given), what
    it is (``doc``), the exception its refusals raise (``error``, the registry's own) and what one value of it
    is per (``over``: ``"one"``, a single value; a click model's parameters are arrays, one value per
    ``"pair"`` or per ``"rank"``, each under the rule). One class for every registry, as ir_measures has one
    ``ParamInfo``."""

    name: str
    rule: Rule
    default: Any = None
    doc: str = ""
    error: Error = InvalidArgumentError
    over: str = "one"

    @property
    def low(self) -> float | None:
        """The rule's lower end, where it has one (a :class:`Number`'s ``low``, a :class:`Whole`'s ``least``)."""
        return getattr(self.rule, "low", getattr(self.rule, "least", None))

    @property
    def high(self) -> float | None:
        """The rule's upper end, where it has one."""
        return getattr(self.rule, "high", getattr(self.rule, "most", None))

    @property
    def range(self) -> str:
        """What a value must be, in words: ``a number in (0, 1)``."""
        return self.rule.describe()

    def inside(self, value: object) -> bool:
        """Whether ``value`` is one the rule takes."""
        return self.rule.holds(value)

    def check(self, value: Any, error: Error | None = None, name: str | None = None) -> Any:
        """``value`` checked (``name``: how the message names it, by default ``parameter NAME``; ``error``: by
        default the parameter's)."""
        return self.rule.check(value, f"parameter {self.name}" if name is None else name, error or self.error)

    def parse(self, text: str, error: Error | None = None, name: str | None = None) -> Any:
        """The value of ``text`` (a command line's ``--param NAME=VALUE``), checked."""
        try:
            value = self.rule.parse(text)
        except ValueError:
            value = text  # refused below with the text as written
        return self.check(value, error, name)


__all__ = [
    "Choice",
    "Closed",
    "Number",
    "Param",
    "Rule",
    "Whole",
    "choice",
    "is_number",
    "is_whole",
    "number",
    "refuse",
    "shown",
    "whole",
]
