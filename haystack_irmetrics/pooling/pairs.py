"""The pairs file of ``irmetrics pool``: a header ``query_id<TAB>doc_id<TAB>probability`` and one pair to judge
per line, in the order to judge them; written whole or not at all (:mod:`haystack_irmetrics.io.output`)."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

from ..errors import ParseError
from ..io.output import printable, replacing_file
from ..io.text import text_lines
from .strategies import PoolPair

HEADER = ("query_id", "doc_id", "probability")


def write_pairs(pairs: Iterable[PoolPair], path: str | os.PathLike[str]) -> int:
    """Write ``pairs`` to ``path`` (whole or not at all); returns how many.

    :raises OutputError: the file cannot be written.
    """
    lines = ["\t".join(HEADER)]
    for p in pairs:
        lines.append(f"{printable(p.query)}\t{printable(p.doc)}\t{p.probability!r}")
    with replacing_file(path) as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))
    return len(lines) - 1


def read_pairs(path: str | os.PathLike[str]) -> list[PoolPair]:
    """The pairs of a file :func:`write_pairs` wrote.

    :raises ParseError: naming the file and line: no header, a line without three fields, a probability that
        is not a number in (0, 1], a pair listed twice (a second judgment of it would be asked for); a file with
        no pair.
    """
    out = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in text_lines(path):
        fields = line.rstrip("\n").split("\t")
        if lineno == 1:
            if tuple(fields) != HEADER:
                raise ParseError(f"expected the header {chr(9).join(HEADER)!r}", path=str(path), line=1)
            continue
        if fields == [""]:
            continue
        if len(fields) != 3 or not fields[0] or not fields[1]:
            raise ParseError("expected query_id, doc_id and probability separated by tabs", path=str(path), line=lineno)
        try:
            probability = float(fields[2])
        except ValueError:
            probability = math.nan
        if not 0.0 < probability <= 1.0:
            raise ParseError(f"probability {fields[2]!r} is not a number in (0, 1]", path=str(path), line=lineno)
        pair = (fields[0], fields[1])
        if pair in seen:
            raise ParseError(
                f"query {pair[0]!r}, document {pair[1]!r} is listed twice (first on line {seen[pair]})",
                path=str(path),
                line=lineno,
            )
        seen[pair] = lineno
        out.append(PoolPair(fields[0], fields[1], probability))
    if not out:
        what = (
            "a header and no pair" if os.path.getsize(path) else f"empty: expected the header {chr(9).join(HEADER)!r}"
        )
        raise ParseError(f"the pairs file holds {what}", path=str(path))
    return out


__all__ = ["HEADER", "read_pairs", "write_pairs"]
