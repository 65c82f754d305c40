"""What people judged, out of the store: the qrels and the judgments (``irmetrics assess export``), a model's
labels to compare them with (``--prelabels``), labels judged elsewhere brought in as an assessor's
(``irmetrics assess import``), and the agreement between people, and between people and the model
(``irmetrics assess agreement``).

- ``DIR/qrels.tsv``: BEIR's layout, as ``irmetrics judge`` writes it (the package's one qrels writer,
  :func:`~haystack_irmetrics.io.trec.write_qrels`). One label per pair: the assessor's (``assessor``), or,
  where several people labelled a pair, the median of their labels, the lower middle one for an even count (a
  disagreement rounds towards "less relevant").
- ``DIR/judgments.jsonl``: every live label, in the order given: ``query_id``, ``doc_id``, ``label``,
  ``assessor``, ``time`` (ISO 8601, UTC) and ``seconds`` (how long the pair was shown; ``null`` when unknown).

The agreement figures are the judge's (:func:`~haystack_irmetrics.judges.agreement.label_agreement`): Cohen's
kappa at the relevance threshold, weighted kappa (quadratic) over the grades and Krippendorff's alpha (ordinal),
on the pairs both sides labelled. A figure that is undefined (one grade only on both sides, no shared pair) is
``null``, with the reason in ``undefined`` (``{figure: reason}``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checks import is_whole, whole
from ..errors import AssessError, ParseError
from ..io.tables import json_text
from .store import AssessStore, Judgment, judging_folder

#: The agreement figures that can be undefined, and why.
_FIGURES = ("kappa", "weighted_kappa", "weighted_kappa_linear", "alpha")
_WHY = "the labels leave chance agreement at 1 (one grade everywhere)"
_NONE = "no pair labelled by both"


@dataclass(frozen=True)
class Exported:
    """What :func:`export` wrote: the two files, the labelled pairs, the labels and who gave them."""

    qrels: Path
    judgments: Path
    pairs: int
    labels: int
    assessors: tuple[str, ...]


def consensus(labels: list[int]) -> int:
    """One label from several people's: the median, the lower middle one for an even count.

    >>> consensus([2]), consensus([0, 3, 2]), consensus([1, 2]), consensus([3, 0, 3, 1])
    (2, 2, 1, 1)
    """
    ordered = sorted(labels)
    return ordered[(len(ordered) - 1) // 2]


def qrels_of(judgments: list[Judgment]) -> dict[str, dict[str, int]]:
    """``{query: {doc: label}}`` of the judgments, several people's labels for one pair by :func:`consensus`,
    the pairs in the order they were first labelled."""
    by_pair: dict[tuple[str, str], list[int]] = {}
    for j in judgments:
        by_pair.setdefault((j.query_id, j.doc_id), []).append(j.label)
    qrels: dict[str, dict[str, int]] = {}
    for (q, d), labels in by_pair.items():
        qrels.setdefault(q, {})[d] = consensus(labels)
    return qrels


def export(folder: str | os.PathLike[str], assessor: str | None = None) -> Exported:
    """Write ``folder``'s ``qrels.tsv`` and ``judgments.jsonl`` from its store (each file whole or not at all).

    :param assessor: only this person's labels (default: everyone's, one label per pair by :func:`consensus`).
    :raises AssessError: no store in ``folder``, or no label by ``assessor``.
    """
    from ..io.output import write_text
    from ..io.trec import write_qrels

    out = Path(folder)
    with AssessStore.open(out) as store:
        judgments = store.judgments(assessor)
        if assessor is not None and not judgments:
            known = ", ".join(store.assessors()) or "none yet"
            raise AssessError(f"{assessor!r} labelled no pair in {out} (assessors: {known})")
    qrels = qrels_of(judgments)
    lines = "".join(json_text(j.to_dict(), ensure_ascii=False) + "\n" for j in judgments)
    written_qrels = write_qrels(qrels, out / "qrels.tsv", layout="beir")
    written_judgments = write_text(out / "judgments.jsonl", lines)
    return Exported(
        written_qrels,
        written_judgments,
        sum(len(d) for d in qrels.values()),
        len(judgments),
        tuple(dict.fromkeys(j.assessor for j in judgments)),
    )


@dataclass(frozen=True)
class Imported:
    """What :func:`import_labels` recorded: the labels, and the judgments of the file that are not pairs to
    judge in the folder (left out)."""

    labels: int
    left_out: int


def import_labels(
    folder: str | os.PathLike[str],
    assessor: str,
    qrels: str | os.PathLike[str],
    pairs: list[tuple[str, str, float]] | None = None,
    max_grade: int | None = None,
) -> Imported:
    """Record the labels of a qrels file (TREC or BEIR, :func:`~haystack_irmetrics.io.read_qrels`) as
    ``assessor``'s, as if they had judged on the page: an earlier assessment, another tool's, for the agreement
    and the export. Only pairs to judge in the folder get a label (``pairs`` are added to them first); the
    file's other judgments are counted, not recorded.

    :param max_grade: the scale the labels are on (default: the folder's, or 0..3 for a new folder).
    :raises AssessError: a label that is not a whole grade of the folder's scale (naming the pair), an empty
        assessor name; nothing is recorded then. :raises OutputError: a server judges into the folder.
    """
    from ..io import read_qrels

    if not assessor or not assessor.strip():
        raise AssessError("the assessor's name is empty: give --assessor NAME")
    judged = read_qrels(qrels).data
    with judging_folder(folder, max_grade) as store:
        if pairs:
            store.add_pairs(pairs)
        top = store.max_grade
        wanted = [(q, d) for q, d, _ in store.pairs()]
        found = [(q, d, judged[q][d]) for q, d in wanted if d in judged.get(q, {})]
        for q, d, label in found:
            if label != int(label) or not 0 <= label <= top:
                raise AssessError(f"{qrels}: label {label:g} of query {q!r}, document {d!r} is not a grade of 0..{top}")
        store.label_many(assessor, [(q, d, int(label)) for q, d, label in found])
    total = sum(len(docs) for docs in judged.values())
    return Imported(len(found), total - len(found))


def read_prelabels(path: str | os.PathLike[str], max_grade: int | None = None) -> dict[tuple[str, str], int]:
    """A model's labels: ``{(query, doc): label}`` of a ``judgments.jsonl`` (``irmetrics judge``'s, or an
    export of this page's): each line an object with ``query_id``, ``doc_id`` and ``label`` (a line whose
    label is ``null``, an answer that held no grade, is left out).

    :raises ParseError: naming the file and line: a line without the fields, ids that are not strings, a label
        that is not a whole number (or above ``max_grade``), a pair labelled twice with different labels.
    """
    from ..io.beir_data import read_jsonl

    where = str(path)
    out: dict[tuple[str, str], int] = {}
    lines: dict[tuple[str, str], int] = {}
    for lineno, obj in read_jsonl(path):
        q, d = obj.get("query_id"), obj.get("doc_id")
        if not isinstance(q, str) or not isinstance(d, str):
            raise ParseError("expected string 'query_id' and 'doc_id' fields", path=where, line=lineno)
        if "label" not in obj:
            raise ParseError("no 'label' field", path=where, line=lineno)
        label = obj["label"]
        if label is None:
            continue
        if not is_whole(label) or label < 0:
            raise ParseError(f"label {label!r} is not a whole number of at least 0", path=where, line=lineno)
        if max_grade is not None and label > max_grade:
            raise ParseError(f"label {label} is above the scale's top grade {max_grade}", path=where, line=lineno)
        if (q, d) in out and out[q, d] != label:
            raise ParseError(
                f"pair ({q!r}, {d!r}) is labelled {out[q, d]} on line {lines[q, d]} and {label} here",
                path=where,
                line=lineno,
            )
        out[q, d], lines[q, d] = label, lineno
    return out


def _figures(a: list[int], b: list[int], threshold: int) -> dict[str, Any]:
    """The judge's agreement figures on paired labels, JSON-safe: a figure that is undefined is ``null``, and
    ``undefined`` says why (``{figure: reason}``)."""
    from ..judges.agreement import label_agreement

    if not a:
        return {"pairs": 0, **{f: None for f in _FIGURES}, "exact": None, "undefined": dict.fromkeys(_FIGURES, _NONE)}
    figures = label_agreement(a, b, threshold)
    out = {"pairs": figures.pairs, **{f: figures[f] for f in _FIGURES}, "exact": figures.exact}
    undefined = dict(figures.undefined)
    for f in _FIGURES:
        if out[f] is None or (isinstance(out[f], float) and math.isnan(out[f])):
            out[f] = None
            undefined.setdefault(f, _WHY)
    if undefined:
        out["undefined"] = {f: undefined[f] for f in _FIGURES if f in undefined}
    out["confusion"] = figures.confusion
    return out


def agreement(
    folder: str | os.PathLike[str], prelabels: str | os.PathLike[str] | None = None, threshold: int = 1
) -> dict[str, Any]:
    """The agreement of the people who judged into ``folder``, each pair of them, and of each with a model.

    :param prelabels: a model's ``judgments.jsonl`` (default: the one the server was given, kept in the store).
    :param threshold: relevant = label >= threshold, for Cohen's kappa.
    :returns: ``threshold``; ``assessors`` (``{name: labels}``); ``people``: one entry per pair of assessors
        (``a``, ``b`` and the figures); ``model`` (with prelabels): one per assessor (``assessor`` and the
        figures). Figures: ``pairs``, ``kappa``, ``weighted_kappa``, ``weighted_kappa_linear``, ``alpha``,
        ``exact``, ``confusion`` (``{a's label: {b's label: count}}``).
    :raises AssessError: no store, or nothing to compare (one assessor and no model labels).
    """
    whole(threshold, "the relevance threshold", least=1, error=AssessError)
    with AssessStore.open(folder) as store:
        judgments = store.judgments()
        model = read_prelabels(prelabels) if prelabels is not None else store.prelabels()
    labels: dict[str, dict[tuple[str, str], int]] = {}
    for j in judgments:
        labels.setdefault(j.assessor, {})[j.query_id, j.doc_id] = j.label
    names = list(labels)
    if len(names) < 2 and not model:
        raise AssessError(
            f"{folder} holds the labels of {len(names)} assessor{'s' if len(names) != 1 else ''} and no model labels: "
            "agreement needs two assessors (--assessor) or a model's labels (--prelabels)"
        )
    people = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = [p for p in labels[a] if p in labels[b]]
            people.append(
                {"a": a, "b": b, **_figures([labels[a][p] for p in shared], [labels[b][p] for p in shared], threshold)}
            )
    out: dict[str, Any] = {
        "threshold": threshold,
        "assessors": {name: len(pairs) for name, pairs in labels.items()},
        "people": people,
    }
    if model:
        out["model"] = []
        for name in names:
            shared = [p for p in labels[name] if p in model]
            figures = _figures([labels[name][p] for p in shared], [model[p] for p in shared], threshold)
            out["model"].append({"assessor": name, **figures})
    return out


def agreement_table(result: dict[str, Any]) -> str:
    """:func:`agreement` as a markdown table: one row per pair of assessors, then per assessor and the model."""
    from ..io.tables import markdown_cell

    def cell(value: float | None, digits: int = 3) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    rows = [(f"{e['a']} · {e['b']}", e) for e in result["people"]]
    rows += [(f"{e['assessor']} · model", e) for e in result.get("model", [])]
    lines = [
        f"| between | pairs | kappa (>= {result['threshold']}) | weighted kappa | alpha | exact |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, e in rows:
        lines.append(
            f"| {markdown_cell(name)} | {e['pairs']} | {cell(e['kappa'])} | {cell(e['weighted_kappa'])} | "
            f"{cell(e['alpha'])} | {cell(e['exact'], 2)} |"
        )
    notes = [
        f"{name}: {figure} undefined ({why})"
        for name, e in rows
        if e["pairs"]
        for figure, why in (e.get("undefined") or {}).items()
    ]
    disjoint = [name for name, e in rows if not e["pairs"]]
    if disjoint:  # no figure means anything there: say why once, and how to get an overlap
        notes.append(
            f"{', '.join(disjoint)}: no pair labelled by both, so no figure: have the model judge the pairs people "
            "judged (irmetrics judge --pairs PAIRS.tsv, the pairs file the page was given), or people the model's"
        )
    return "\n".join(lines + (["", *notes] if notes else []))


__all__ = [
    "Exported",
    "Imported",
    "agreement",
    "agreement_table",
    "consensus",
    "export",
    "import_labels",
    "qrels_of",
    "read_prelabels",
]
