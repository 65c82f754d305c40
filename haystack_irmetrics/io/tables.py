"""How results are printed and written (``irmetrics`` output, a BEIR run's ``metrics.md``): JSON,
tsv and markdown tables, and the number of decimals.

JSON keeps every value exactly as the preset computes it (the beir preset's means are BEIR's
``round(x, 5)``, the trec preset's are unrounded float64; per-query values are never rounded);
markdown and tsv print every value with a fixed number of decimals (:data:`TABLE_DIGITS`: 5 for
beir, as BEIR rounds; 4 for trec, as trec_eval prints). ``--digits N`` rounds every printed value to
N decimals in every format (JSON: ``round(value, N)`` of the unrounded value).

Text in a table is written so the table stays a table and opens safely:

* markdown (:func:`markdown_cell`, :func:`markdown_row`): ``\\`` and ``|`` are escaped (``\\\\``, ``\\|``)
  and a line end becomes ``<br>``, so a run name, query id or log value cannot end a cell or a row;
* CSV (:func:`write_csv` and :func:`csv_text`, the one CSV writer of the package: ``irmetrics clicks fit``'s
  skipped rows and sessions, the feedback report's files, the report's ``--csv``): a text cell that a
  spreadsheet would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
  return) gets a leading ``'``, as OWASP recommends against CSV injection (:func:`csv_cell`); numbers stay
  numbers (a negative value is written ``-0.25``, and so is the text ``"-0.25"``); a file is written whole
  or not at all (:func:`~haystack_irmetrics.io.output.replacing_file`);
* tsv (``irmetrics evaluate --format tsv``) is trec_eval's layout for programs, not spreadsheets: ids
  are written as they are (a TREC file's ids hold no tab or line end).

JSON the package prints or writes is strict JSON (:func:`json_text`, the one JSON writer): a number that
is not finite (NaN: an undefined value such as 0/0; an infinity) is written ``null``, never the bare
``NaN`` or ``Infinity`` that JSON parsers refuse; where the reason is known, the output says it beside
the value (``irmetrics interleave`` of a log without clicks: ``"reason"``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidArgumentError
from .output import PathLike, replacing_file

#: Decimals of the markdown and tsv tables per preset (``--digits`` overrides them).
TABLE_DIGITS = {"beir": 5, "trec": 4}


def table_digits(result: Any, digits: int | None = None) -> int:
    """Decimals a markdown or tsv table prints: ``digits`` if given, else the preset's :data:`TABLE_DIGITS`."""
    if digits is not None:
        return digits
    preset = result.preset
    return TABLE_DIGITS.get(preset.name, 4 if preset.round_digits is None else preset.round_digits)


def _round(value: float, digits: int) -> float:
    return value if math.isnan(value) else round(value, digits)


def format_result(result: Any, fmt: str, per_query: bool = False, digits: int | None = None) -> str:
    """Render an :class:`~haystack_irmetrics.core.evaluation.EvaluationResult` as json, tsv or markdown.

    JSON keeps the values as computed unless ``digits`` is given; tables print ``table_digits`` decimals.
    """
    if fmt == "json":
        if digits is None:
            return json_text(result.to_dict(per_query))
        out: dict[str, Any] = {name: _round(result.raw_means[name], digits) for name in result.means}
        if per_query:
            out["per_query"] = {
                name: {q: _round(v, digits) for q, v in values.items()} for name, values in result.per_query.items()
            }
        return json_text(out)
    d = table_digits(result, digits)
    if fmt == "tsv":
        counts = _counts(result)
        lines = [f"{name}\tall\t{_cell(value, d, name in counts)}" for name, value in _means(result, digits).items()]
        if per_query:
            for name, values in result.per_query.items():
                lines.extend(f"{name}\t{q}\t{_cell(v, d, name in counts)}" for q, v in values.items())
        return "\n".join(lines)
    if fmt == "markdown":
        table = markdown_table(result, digits)
        return table + "\n\n" + per_query_table(result, digits) if per_query else table
    raise InvalidArgumentError(f"unknown output format {fmt!r}; use json, tsv or markdown")


def _means(result: Any, digits: int | None) -> Mapping[str, float]:
    # With --digits, tables round the unrounded means (as JSON does), not BEIR's already rounded ones.
    return result.means if digits is None else {name: result.raw_means[name] for name in result.means}


def _counts(result: Any) -> set[str]:
    """Names of the measures that are counts (``num_ret``, ...): printed as whole numbers, as trec_eval does."""
    return {m.name for m in result.measures if m.spec.unit == "count"}


def _cell(value: float, digits: int, count: bool = False) -> str:
    if count and float(value).is_integer():
        return str(int(value))
    return f"{value:.{digits}f}"


def markdown_table(result: Any, digits: int | None = None) -> str:
    """Families (and variants) as rows, cutoffs or recall levels as columns; a measure without one under "all".

    Values have :func:`table_digits` decimals (5 for the beir preset, 4 for trec, or ``digits``).
    """
    d = table_digits(result, digits)
    means = _means(result, digits)
    counts = _counts(result)
    families: dict[str, dict[str | None, float]] = {}
    for m in result.measures:
        families.setdefault(m.stem, {})[m.at] = means[m.name]
    cutoffs = sorted({k for row in families.values() for k in row}, key=lambda k: -1.0 if k is None else float(k))
    head = "| measure | " + " | ".join("all" if k is None else f"@{k}" for k in cutoffs) + " |"
    sep = "|---|" + "---:|" * len(cutoffs)
    body = [
        f"| {markdown_cell(fam)} | "
        + " | ".join(_cell(row[k], d, fam in counts) if k in row else "" for k in cutoffs)
        + " |"
        for fam, row in families.items()
    ]
    return "\n".join([head, sep, *body])


def per_query_table(result: Any, digits: int | None = None) -> str:
    """One row per query, one column per measure (the values of ``--per-query``); a blank cell is a query
    that measure does not average (e.g. an unanswered query under the beir preset's pytrec measures)."""
    d = table_digits(result, digits)
    counts = _counts(result)
    names = list(result.per_query)
    columns = [result.per_query[name] for name in names]
    queries = list(dict.fromkeys(q for values in columns for q in values))
    head = "| query | " + " | ".join(markdown_cell(n) for n in names) + " |"
    sep = "|---|" + "---:|" * len(names)
    body = [
        f"| {markdown_cell(q)} | "
        + " | ".join(_cell(c[q], d, n in counts) if q in c else "" for n, c in zip(names, columns))
        + " |"
        for q in queries
    ]
    return "\n".join([head, sep, *body])


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` agreeing in number: ``many`` (default ``word + "s"``) unless ``n`` is 1.

    >>> plural(1, "pair"), plural(2, "pair"), plural(1, "query", "queries"), plural(0, "query", "queries")
    ('1 pair', '2 pairs', '1 query', '0 queries')
    """
    return f"{n} {word if n == 1 else many or word + 's'}"


def markdown_cell(text: object) -> str:
    r"""``text`` as one cell of a markdown table: ``\`` and ``|`` escaped, each line end a ``<br>``.

    >>> markdown_cell("a|b\nc")
    'a\\|b<br>c'
    """
    out = str(text).replace("\\", "\\\\").replace("|", "\\|")
    return out.replace("\r\n", "<br>").replace("\r", "<br>").replace("\n", "<br>")


def markdown_row(cells: Iterable[object]) -> str:
    r"""One row of a markdown table, every cell through :func:`markdown_cell`.

    >>> markdown_row(["a|b", 0.5, "x\ny"])
    '| a\\|b | 0.5 | x<br>y |'
    """
    return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"


def number_cell(value: float | None, spec: str = ".4f") -> str:
    """``value`` formatted by ``spec`` for a printed table; ``—`` for None or a number that is not finite (an
    undefined value, which JSON writes ``null``), never ``nan``.

    >>> number_cell(0.12345), number_cell(float("nan")), number_cell(-1.5, "+.2f")
    ('0.1235', '—', '-1.50')
    """
    if value is None or not math.isfinite(value):
        return "—"
    return format(value, spec)


#: First characters of a CSV text cell a spreadsheet reads as a formula (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: A plain decimal number, which a spreadsheet reads as that number whatever its sign: no formula.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: object) -> object:
    r"""``value`` for a CSV file a spreadsheet may open: text starting with one of :data:`FORMULA_STARTS`
    gets a leading ``'`` (the spreadsheet shows it as text, not as a formula's result), unless it is a plain
    number (``"-0.25"``, ``"+3"``); anything else, numbers included, is returned as it is.

        >>> csv_cell('=HYPERLINK("http://x")'), csv_cell("bm25"), csv_cell(-0.25), csv_cell("-0.25")
        ('\'=HYPERLINK("http://x")', 'bm25', -0.25, '-0.25')
        >>> csv_cell("-1+2"), csv_cell("@SUM(A1)"), csv_cell("\t=1")
        ("'-1+2", "'@SUM(A1)", "'\t=1")
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _csv_value(value: object) -> object:
    """A CSV cell's value: neutralised text (:func:`csv_cell`); empty for None and for a number that is not
    finite (as JSON's ``null``); a numpy scalar as its Python value."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return csv_cell(value)


def csv_text(fields: Sequence[str], rows: Iterable[Mapping[str, Any] | Sequence[Any]]) -> str:
    """CSV of ``rows`` (mappings keyed by ``fields``, a missing key an empty cell, or sequences in ``fields``'
    order) under a header of ``fields``: RFC 4180 (``\r\n`` line ends, so the csv module quotes a text
    holding a lone ``\r`` too), every cell, header included, through :func:`csv_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([_csv_value(f) for f in fields])
    for row in rows:
        cells = [row.get(f) for f in fields] if isinstance(row, Mapping) else list(row)
        writer.writerow([_csv_value(c) for c in cells])
    return buffer.getvalue()


def write_csv(path: PathLike, fields: Sequence[str], rows: Iterable[Mapping[str, Any] | Sequence[Any]]) -> PathLike:
    """Write :func:`csv_text` to ``path`` (UTF-8) whole or not at all; returns ``path``.

    :raises OutputError: the file cannot be written (:func:`~haystack_irmetrics.io.output.replacing_file`).
    """
    data = csv_text(fields, rows).encode("utf-8", "backslashreplace")
    with replacing_file(path) as f:
        f.write(data)
    return path


#: Mapping keys :func:`json.dumps` writes itself (as text); any other key is written as ``str(key)``.
_JSON_KEYS = (str, int, float, bool, type(None))


def json_ready(value: Any) -> Any:
    """``value`` as strict JSON values: a number that is not finite (NaN, an infinity; numpy's too) as
    ``None``, numpy scalars and arrays as Python numbers and lists, tuples as lists.

        >>> json_ready({"a": float("nan"), "b": (1, float("inf")), "c": np.float32(0.5)})
        {'a': None, 'b': [1, None], 'c': 0.5}
    """
    if isinstance(value, Mapping):
        return {k if isinstance(k, _JSON_KEYS) else str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [json_ready(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_text(value: Any, *, indent: int | None = None, **options: Any) -> str:
    """``value`` as strict JSON text (:func:`json_ready`: a number that is not finite is ``null``): the one
    way the package prints or writes JSON. ``options`` go to :func:`json.dumps` (``ensure_ascii``,
    ``separators``, ``sort_keys``); ``allow_nan=False`` guards what :func:`json_ready` let through.

        >>> json_text({"delta": float("nan"), "wins": 0})
        '{"delta": null, "wins": 0}'
    """
    try:  # the common case, every number finite and no numpy value: json's C encoder alone
        return json.dumps(value, indent=indent, allow_nan=False, **options)
    except (ValueError, TypeError):
        return json.dumps(json_ready(value), indent=indent, allow_nan=False, **options)


__all__ = [
    "FORMULA_STARTS",
    "TABLE_DIGITS",
    "csv_cell",
    "csv_text",
    "format_result",
    "json_ready",
    "json_text",
    "markdown_cell",
    "markdown_row",
    "markdown_table",
    "number_cell",
    "per_query_table",
    "plural",
    "table_digits",
    "write_csv",
]
