"""The output folder of ``irmetrics judge``: its one writer (:class:`FolderWriter`) and its one reader
(:meth:`JudgedFolder.read`, which opens each file once).

``DIR/judgments.jsonl`` (one line per judged pair, appended as each is made: ``query_id``, ``doc_id``, ``label``
or null when the answer held no grade, ``judge`` the fingerprint, ``raw`` the answer, ``reask_raw`` and
``label_from`` for a pair asked again; a pair of the agreement sample or of PPI's judged pool has ``human``, its
human label, too), ``DIR/qrels.tsv`` (BEIR's layout: the human qrels and the model's labels for the holes),
``DIR/summary.json`` and, on request, ``DIR/agreement.json``, ``DIR/ppi.json`` and ``DIR/model_qrels.tsv`` (the
model's labels for every pool pair, and no human label).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..checks import Number, is_whole
from ..errors import JudgeError, OutputError, shorten
from .batch import jsonl_line
from .judge import Verdict

#: Every file ``irmetrics judge`` writes in its folder (agreement.json with an agreement sample; ppi.json and
#: model_qrels.tsv with PPI).
FILES = ("judgments.jsonl", "qrels.tsv", "summary.json", "agreement.json", "ppi.json", "model_qrels.tsv")
#: The files of an ``irmetrics judge --ppi`` folder :meth:`JudgedFolder.read` reads (each once).
JUDGED_FILES = ("summary.json", "ppi.json", "judgments.jsonl", "model_qrels.tsv", "qrels.tsv")

QrelsDict = dict[str, dict[str, Any]]


def file_record(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{"path": absolute path, "sha256": of its bytes}`` of a file."""
    import hashlib

    full = Path(path).resolve()
    digest = hashlib.sha256()
    with open(full, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"path": str(full), "sha256": digest.hexdigest()}


def _key(data: dict[str, Any], key: str, path: Path, ok: bool, expected: str) -> Any:
    """``data[key]``, or a :class:`JudgeError` naming the file and the key when it is missing or not ``ok``."""
    if key not in data:
        raise JudgeError(f"{path}: the key {key!r} is missing (a damaged folder of irmetrics judge --ppi?)")
    if not ok:
        raise JudgeError(f"{path}: {key!r} must be {expected}, got {shorten(repr(data[key]))}")
    return data[key]


def _whole_at_least_one(value: Any) -> bool:
    return is_whole(value) and value >= 1


@dataclass(frozen=True)
class JudgedFolder:
    """What an ``irmetrics judge --ppi`` output folder holds, read and checked by :meth:`read`: the depth judged
    (``summary.json``), the interval level and the labelled queries (``ppi.json``), the pairs the judge was
    asked about (``judgments.jsonl``), the model's labels for every pool pair (``model_qrels.tsv``) and the
    filled qrels (``qrels.tsv``)."""

    path: Path
    depth: int
    alpha: float
    labelled: frozenset[str]
    judged: frozenset[tuple[str, str]]
    #: The human qrels the folder was judged against, as ``summary.json`` records them (``path``, ``sha256``), or
    #: ``None`` (a folder of an older version).
    qrels: dict[str, str] | None = None
    model: QrelsDict = field(default_factory=dict)
    filled: QrelsDict = field(default_factory=dict)

    @classmethod
    def read(cls, folder: str | os.PathLike[str]) -> JudgedFolder:
        """The judging ``folder`` records, each of :data:`JUDGED_FILES` opened once and every value checked:
        ``depth`` a whole number of at least 1, ``alpha`` a number in (0, 1), ``labelled`` a list of query ids,
        each judgment a JSON object with a string ``query_id`` and ``doc_id``.

        :raises JudgeError: a file the folder lacks, or a key missing or of the wrong type (naming the file and
            the key).
        :raises ParseError: a file that is not JSON (JSONL) or TSV, naming the file (and the line).
        """
        from ..io.beir_outputs import read_json_object
        from ..io.trec import read_beir_qrels

        base = Path(folder)
        # The JSON files first (their keys say more of a damaged folder), the qrels after them.
        for name in JUDGED_FILES[:3]:
            if not (base / name).is_file():
                raise JudgeError(f"{base} holds no {name}: judge with irmetrics judge ... --ppi -o {base}")
        summary_path, ppi_path = base / JUDGED_FILES[0], base / JUDGED_FILES[1]
        summary = read_json_object(summary_path, "summary")
        depth = _key(
            summary, "depth", summary_path, _whole_at_least_one(summary.get("depth")), "a whole number of at least 1"
        )
        report = read_json_object(ppi_path, "object")
        alpha = report.get("alpha")
        _key(report, "alpha", ppi_path, Number(0, 1, "neither").holds(alpha), "a number between 0 and 1")
        labelled = report.get("labelled")
        listed = isinstance(labelled, list) and all(isinstance(q, str) for q in labelled)
        _key(report, "labelled", ppi_path, listed, "a list of query ids (strings)")
        qrels = summary.get("qrels")
        recorded = isinstance(qrels, dict) and all(isinstance(qrels.get(k), str) for k in ("path", "sha256"))
        if qrels is not None:
            _key(summary, "qrels", summary_path, recorded, "an object with the strings path and sha256")
        for name in JUDGED_FILES[3:]:
            if not (base / name).is_file():
                raise JudgeError(f"{base} holds no {name}: judge with irmetrics judge ... --ppi -o {base}")
        return cls(
            base,
            depth,
            float(alpha),
            frozenset(labelled),
            _judged_pairs(base / JUDGED_FILES[2]),
            qrels if recorded else None,
            # BEIR's layout, as the writer writes both (read so, each file is opened once: no sniffing first)
            read_beir_qrels(base / JUDGED_FILES[3]).data,
            read_beir_qrels(base / JUDGED_FILES[4]).data,
        )

    def recorded_qrels(self, given: str | os.PathLike[str] | None = None) -> Path:
        """The human qrels the folder was judged against: the file its ``summary.json`` records, still there and
        unchanged (its SHA-256). With ``given``, the qrels a command was given: a warning
        (:class:`~haystack_irmetrics.errors.SuspiciousInputWarning`) when they are another file than the record.

        :raises JudgeError: ``given`` is None and the folder records no qrels, or its file is gone or has changed.
        """
        import warnings

        from ..errors import SuspiciousInputWarning

        summary = self.path / JUDGED_FILES[0]
        if given is not None:
            if self.qrels is not None and file_record(given)["sha256"] != self.qrels["sha256"]:
                warnings.warn(
                    f"{self.path} was judged against the qrels {self.qrels['path']}, not {given} (another file): "
                    "'human' is scored on the qrels given",
                    SuspiciousInputWarning,
                    stacklevel=2,
                )
            return Path(given)
        if self.qrels is None:
            raise JudgeError(
                f"{summary} records no qrels (a folder of an older irmetrics judge): give the human qrels it was "
                "judged against (--qrels)"
            )
        path = Path(self.qrels["path"])
        if not path.is_file():
            raise JudgeError(f"the qrels {summary} records, {path}, are gone: give the human qrels (--qrels)")
        if file_record(path)["sha256"] != self.qrels["sha256"]:
            raise JudgeError(
                f"the qrels {summary} records, {path}, changed since the folder was judged: give the human qrels "
                "(--qrels)"
            )
        return path


def _judged_pairs(path: Path) -> frozenset[tuple[str, str]]:
    from ..io.beir_data import read_jsonl

    judged = set()
    for line, row in read_jsonl(path):
        pair = row.get("query_id"), row.get("doc_id")
        for key, value in zip(("query_id", "doc_id"), pair):
            if not isinstance(value, str):
                raise JudgeError(f"{path}:{line}: {key!r} must be a string, got {shorten(repr(value))}")
        judged.add(pair)
    return frozenset(judged)


class FolderWriter:
    """The one writer of ``irmetrics judge``'s folder: the folder made, ``judgments.jsonl`` opened and each verdict
    appended as it comes (:meth:`judgment`), then the other files written whole (:meth:`finish`).

    :raises OutputError: the folder cannot be made.
    """

    def __init__(self, output: str | os.PathLike[str], fingerprint: str) -> None:
        self.path = Path(output)
        self.fingerprint = fingerprint
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot create the output folder {self.path}: {e.strerror or e}") from None
        self._log: TextIO = open(self.path / FILES[0], "w", encoding="utf-8")  # noqa: SIM115 (closed in close())

    def judgment(self, qid: str, doc: str, verdict: Verdict, cached: bool, human: Any = None) -> None:
        """Append one judgment (``human``: the pair's human label, for the agreement sample and PPI's pool). A new
        one is on disk at once; a cached one is safe in the cache already."""
        extra = {"human": human} if human is not None else {}
        self._log.write(jsonl_line(qid, doc, verdict, self.fingerprint, **extra))
        if not cached:
            self._log.flush()

    def close(self) -> None:
        """Close ``judgments.jsonl``."""
        self._log.close()

    def __enter__(self) -> FolderWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def finish(
        self,
        filled: Mapping[str, Mapping[str, Any]],
        summary: Mapping[str, Any],
        *,
        agreement: Mapping[str, Any] | None = None,
        ppi: Mapping[str, Any] | None = None,
        model: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Write the folder's other files, each whole or not at all: ``agreement.json``, ``ppi.json`` and
        ``model_qrels.tsv`` where given, then ``qrels.tsv`` (the filled qrels) and ``summary.json``."""
        from ..io.output import write_text
        from ..io.tables import json_text
        from ..io.trec import write_qrels

        if agreement is not None:
            write_text(self.path / FILES[3], json_text(agreement, indent=2) + "\n")
        if model is not None:
            write_qrels(model, self.path / FILES[5], layout="beir")
        if ppi is not None:
            write_text(self.path / FILES[4], json_text(ppi, indent=2) + "\n")
        write_qrels(filled, self.path / FILES[1], layout="beir")
        write_text(self.path / FILES[2], json_text(summary, indent=2) + "\n")


__all__ = ["FILES", "JUDGED_FILES", "FolderWriter", "JudgedFolder", "file_record"]
