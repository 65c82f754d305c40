"""A job's settings built from its function's keywords, one way for every job (standard library only).

A job function (``compare_many``, ``run_beir``, ``judge_runs``, ...) takes its frozen settings value, or its fields
as keywords, or both (each keyword in place of the value's field). A keyword that is no field is refused as Python
refuses an unexpected keyword argument of the function itself, and is never handed on to anything else; the
settings class checks its values in its own ``__post_init__``. Building the class a job hands it is the one call
this module makes up the layers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import fields, replace
from typing import Any, TypeVar

S = TypeVar("S")


def keywords_of(kind: type, options: Mapping[str, Any], caller: str, *, taken: Collection[str] = ()) -> dict[str, Any]:
    """``options`` (a copy) once each is a field of the dataclass ``kind``; ``taken`` are fields the function
    takes as parameters of its own (``run_beir``'s ``retriever``), which are no keywords.

    :raises TypeError: a keyword that is no field, worded as Python words an unknown keyword of ``caller``.
    """
    names = {f.name for f in fields(kind)} - set(taken)
    unknown = sorted(set(options) - names)
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}")
    return dict(options)


def settings_of(kind: type[S], options: Mapping[str, Any], caller: str, *, base: S | None = None) -> S:
    """``base`` (default: ``kind``'s defaults) with the keyword ``options`` in place of its fields, built once
    (its ``__post_init__`` checks the values).

    :raises TypeError: a keyword that is no field (:func:`keywords_of`), or a ``base`` of another class.
    """
    if base is not None and not isinstance(base, kind):
        raise TypeError(f"{caller}() takes a {kind.__name__} as settings, got {type(base).__name__}")
    options = keywords_of(kind, options, caller)
    if base is None:
        return kind(**options)
    return replace(base, **options) if options else base


__all__ = ["keywords_of", "settings_of"]
