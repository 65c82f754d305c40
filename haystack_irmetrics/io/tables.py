"""How results are printed and written (``irmetrics`` output, a BEIR run's ``metrics.md``): JSON,
tsv and markdown tables, and the number of decimals.

JSON keeps every value exactly as the preset computes it (the beir preset's means are BEIR's
``round(x, 5)``, the trec preset's are unrounded float64; per-query values are never rounded);
markdown and tsv print every value with a fixed number of decimals (:data:`TABLE_DIGITS`: 5 for
beir, as BEIR rounds; 4 for trec, as trec_eval prints). ``--digits N`` rounds every printed value to
N decimals in every format (JSON: ``round(value, N)`` of the unrounded value).

Text in a table is written so the table stays a table and opens safely:

* markdown (:func:`markdown_cell`): ``\\`` and ``|`` are escaped (``\\\\``, ``\\|``) and a line end
  becomes ``<br>``, so a run name or query id cannot end a cell or a row;
* CSV (:func:`csv_cell`, the report's ``--csv`` and the feedback report's CSV files): a text cell that a
  spreadsheet would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
  return) gets a leading ``'``, as OWASP recommends against CSV injection; numbers stay numbers (a
  negative value is written ``-0.25``);
* tsv (``irmetrics evaluate --format tsv``) is trec_eval's layout for programs, not spreadsheets: ids
  are written as they are (a TREC file's ids hold no tab or line end).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidArgumentError

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
    """Render an :class:`~haystack_irmetrics.core.evaluate.EvaluationResult` as json, tsv or markdown.

    JSON keeps the values as computed unless ``digits`` is given; tables print ``table_digits`` decimals.
    """
    if fmt == "json":
        if digits is None:
            return result.to_json(per_query=per_query)
        out: dict[str, Any] = {name: _round(result.raw_means[name], digits) for name in result.means}
        if per_query:
            out["per_query"] = {
                name: {q: _round(v, digits) for q, v in values.items()} for name, values in result.per_query.items()
            }
        return json.dumps(out)
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


def markdown_cell(text: object) -> str:
    r"""``text`` as one cell of a markdown table: ``\`` and ``|`` escaped, each line end a ``<br>``.

    >>> markdown_cell("a|b\nc")
    'a\\|b<br>c'
    """
    out = str(text).replace("\\", "\\\\").replace("|", "\\|")
    return out.replace("\r\n", "<br>").replace("\r", "<br>").replace("\n", "<br>")


#: First characters of a CSV text cell a spreadsheet reads as a formula (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    r"""``value`` for a CSV file a spreadsheet may open: text starting with one of :data:`FORMULA_STARTS`
    gets a leading ``'`` (the spreadsheet shows it as text, not as a formula's result); anything else,
    numbers included, is returned as it is.

        >>> csv_cell('=HYPERLINK("http://x")'), csv_cell("bm25"), csv_cell(-0.25)
        ('\'=HYPERLINK("http://x")', 'bm25', -0.25)
    """
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


__all__ = [
    "FORMULA_STARTS",
    "TABLE_DIGITS",
    "csv_cell",
    "format_result",
    "markdown_cell",
    "markdown_table",
    "per_query_table",
    "table_digits",
]
