"""Which column of a feedback log holds what, and how votes are spelled.

A feedback log has one row per (query, shown document, position, vote): a document shown to a user
at a position of a result list, with the user's vote or grade on it, if any. The column names are
configurable with :class:`FeedbackColumns`; ``None`` switches an optional column off.

Canonical names (what every later step sees):

==============  ==========  ===================================================================
name            type        meaning
==============  ==========  ===================================================================
``row``         int64       1-based data row of the source (header excluded)
``line``        int64       physical line of a CSV / JSONL source (null otherwise)
``query``       str         query id (required, non-empty)
``doc``         str         document id (required, non-empty)
``position``    int64       1-based position the document was shown at (``position_base`` shifts it)
``vote``        float64     the vote or grade; null = shown without feedback (an impression)
``user``        str         user id (optional; per-user de-duplication)
``session``     str         session id (optional; ``dedup_by="session"``)
``timestamp``   float64     epoch microseconds or any numeric order (optional; orders a user's votes)
``segment``     str         a breakdown key such as locale or device (optional)
``query_text``  str         the text to replay through a pipeline (optional; default the query id)
==============  ==========  ===================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from .errors import FeedbackSchemaError

CANONICAL = ("query", "doc", "position", "vote", "user", "session", "timestamp", "segment", "query_text")
REQUIRED = ("query", "doc")

#: Spelled-out votes understood by default (case-insensitive, surrounding blanks ignored). Numbers,
#: numeric strings and booleans (``true``/``false``) need no entry. A ``vote_map`` replaces these words.
DEFAULT_VOTE_MAP: Mapping[str, float] = {
    "up": 1.0,
    "down": 0.0,
    "thumbs_up": 1.0,
    "thumbs_down": 0.0,
    "thumbsup": 1.0,
    "thumbsdown": 0.0,
    "like": 1.0,
    "dislike": 0.0,
    "relevant": 1.0,
    "not_relevant": 0.0,
    "irrelevant": 0.0,
    "yes": 1.0,
    "no": 0.0,
    "true": 1.0,
    "false": 0.0,
}


@dataclass(frozen=True)
class FeedbackColumns:
    """Source column names of each canonical field (``None``: the log has no such column).

    Usage::

        >>> FeedbackColumns(query="qid", vote="grade", segment="locale").source_names()
        {'qid': 'query', 'doc_id': 'doc', 'position': 'position', 'grade': 'vote', 'locale': 'segment'}
    """

    query: str = "query_id"
    doc: str = "doc_id"
    position: str | None = "position"
    vote: str | None = "vote"
    user: str | None = None
    session: str | None = None
    timestamp: str | None = None
    segment: str | None = None
    query_text: str | None = None

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for f in fields(self):
            name = getattr(self, f.name)
            if name is None:
                if f.name in REQUIRED:
                    raise FeedbackSchemaError(f"the {f.name!r} column is required; give its name")
                continue
            if not isinstance(name, str) or not name:
                raise FeedbackSchemaError(f"column name for {f.name!r} must be a non-empty str, got {name!r}")
            if name in seen and f.name != "query_text":
                raise FeedbackSchemaError(f"column {name!r} is given for both {seen[name]!r} and {f.name!r}")
            seen.setdefault(name, f.name)

    def source_names(self) -> dict[str, str]:
        """``{source column: canonical name}`` of the configured columns (a source column read once)."""
        out: dict[str, str] = {}
        for canonical, source in asdict(self).items():
            if source is not None and source not in out:
                out[source] = canonical
        return out

    def configured(self) -> dict[str, str]:
        """``{canonical name: source column}`` of the configured columns."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def coerce(cls, value: FeedbackColumns | Mapping[str, str | None] | None) -> FeedbackColumns:
        if value is None:
            return cls()
        if isinstance(value, FeedbackColumns):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - set(CANONICAL)
            if unknown:
                raise FeedbackSchemaError(f"unknown column roles {sorted(unknown)}; known: {list(CANONICAL)}")
            return cls(**value)
        raise FeedbackSchemaError(f"columns must be a FeedbackColumns or a dict, got {type(value).__name__}")


__all__ = ["CANONICAL", "DEFAULT_VOTE_MAP", "REQUIRED", "FeedbackColumns"]
