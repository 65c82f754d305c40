"""Many BEIR datasets in one run, resumable, with one leaderboard (``irmetrics beir A B C -o DIR``).

Each dataset's outputs go to ``DIR/<name>/`` (:meth:`~haystack_irmetrics.beir.runner.BeirRun.write`);
``DIR/leaderboard.json`` and ``DIR/leaderboard.md`` (:mod:`~haystack_irmetrics.beir.leaderboard`)
are written at the end. A folder whose datasets are in sub-folders (CQADupStack's forums) runs each
sub-dataset into ``DIR/<name>/<sub>/`` and makes one leaderboard row.

Resume: before anything runs, each dataset's recorded configuration (``summary.json``, or the
checkpoint's ``config.json``) is compared with this run's. The same: a finished dataset is skipped
(its folder is not touched) and an unfinished one continues from its checkpoint. Another, or a
``summary.json`` that cannot be read: the run refuses (:class:`~haystack_irmetrics.errors.ConfigurationChangedError`,
naming what changed). ``overwrite`` deletes every dataset's outputs and checkpoint, whatever they
hold, and runs them all again; it never deletes through a symbolic link (a linked ``DIR/<name>`` is
refused). ``DIR`` is locked (:func:`~haystack_irmetrics.beir.outputs.output_lock`) while the suite runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._settings import keywords_of
from ..checks import is_number
from ..errors import ConfigurationChangedError, DatasetError, shorten
from .checkpoint import PARTIAL, Checkpoint, differences
from .dataset import resolve_dataset, sample_path, strict_docs_setting
from .leaderboard import Leaderboard, build_leaderboard
from .outputs import check_not_linked, output_lock, remove_file, write_atomic
from .pipelines import pipeline_digest
from .progress import bar
from .runner import BeirRun, check_dataset_outputs, check_output_dir, run_dataset
from .settings import BeirSettings

#: The files :meth:`BeirRun.write` puts in a dataset folder (``--overwrite`` deletes these and ``.partial``).
OUTPUT_FILES = ("metrics.json", "per_query.json", "run.trec", "summary.json", "metrics.md")
#: Queries per checkpoint batch unless told otherwise.
DEFAULT_CHECKPOINT_EVERY = 100


@dataclass(frozen=True)
class SuiteDataset:
    """One dataset of a suite.

    :ivar name: its output folder under ``DIR`` and its leaderboard key (``group/sub`` for a sub-dataset).
    :ivar folder: the BEIR folder.
    :ivar group: the row a sub-dataset averages into (``cqadupstack``), else ``None``.
    """

    name: str
    folder: Path
    group: str | None = None


def expand_datasets(
    datasets: Sequence[str | os.PathLike[str] | None],
    *,
    data_dir: str | os.PathLike[str] | None = None,
    download: bool = True,
) -> list[SuiteDataset]:
    """The datasets of a suite: folders, BEIR names (downloaded when absent) or ``None``/``"sample"``
    for the shipped sample; a folder of sub-datasets becomes one :class:`SuiteDataset` per sub-folder.

    :raises DatasetError: when two datasets would share an output folder name.
    """
    out: list[SuiteDataset] = []
    for spec in datasets or [None]:
        folder = resolve_dataset(spec, data_dir=data_dir, download=download)
        name = "sample" if folder == sample_path() else folder.resolve().name
        subs = (
            sorted(p.parent for p in folder.glob("*/corpus.jsonl")) if not (folder / "corpus.jsonl").is_file() else []
        )
        if subs:
            out += [SuiteDataset(f"{name}/{sub.name}", sub, name) for sub in subs]
        else:
            out.append(SuiteDataset(name, folder))
    seen: dict[str, Path] = {}
    for entry in out:
        if entry.name in seen:
            raise DatasetError(
                f"two datasets are named {entry.name!r} ({seen[entry.name]} and {entry.folder}); their outputs "
                "would share DIR/<name>/: give one of the folders another name"
            )
        seen[entry.name] = entry.folder
    return out


@dataclass(frozen=True)
class SuiteResult:
    """The outcome of :func:`run_beir_suite` (frozen).

    :ivar datasets: the suite's datasets, in order.
    :ivar summaries: ``{name: summary}`` of every dataset (read from ``summary.json`` when skipped).
    :ivar runs: ``{name: BeirRun}`` of the datasets this call ran (not the skipped ones).
    :ivar skipped: names of the datasets finished by an earlier run of the same configuration.
    :ivar leaderboard: every dataset's numbers and their average.
    """

    datasets: list[SuiteDataset]
    summaries: dict[str, dict[str, Any]]
    runs: dict[str, BeirRun] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    leaderboard: Leaderboard | None = None

    @property
    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for entry in self.datasets:
            if entry.group is not None:
                out.setdefault(entry.group, []).append(entry.name)
        return out


def run_beir_suite(
    datasets: Sequence[str | os.PathLike[str] | None],
    retriever: str | os.PathLike[str] = "bm25",
    *,
    output_dir: str | os.PathLike[str] | None = None,
    allow_missing_docs: bool | None = None,
    on_dataset: Callable[[SuiteDataset, BeirRun | None, dict[str, Any]], None] | None = None,
    **options: Any,
) -> SuiteResult:
    """Run :func:`~haystack_irmetrics.beir.runner.run_beir` over several datasets, resumably, and build the leaderboard.

    :param datasets: folders, BEIR names, ``None`` or ``"sample"``; an empty list means the sample.
    :param output_dir: ``DIR``: each dataset's outputs in ``DIR/<name>/``, checkpoints in
        ``DIR/<name>/.partial/``, ``leaderboard.json`` and ``leaderboard.md``. Without it nothing is
        written and nothing resumes.
    :param allow_missing_docs: deprecated; ``False`` is ``strict_docs=True``.
    :param on_dataset: called after each dataset with its entry, its run (``None`` when skipped) and its summary.
    :returns: a :class:`SuiteResult`.
    :raises ConfigurationChangedError: before anything runs, when ``DIR`` holds results or checkpoints
        of another configuration, or a damaged ``summary.json``, and ``overwrite`` is false.
    :raises OutputError: when another run is writing to ``DIR``, when ``overwrite`` would delete through a
        symbolic link, or naming a file that cannot be written.

    The keywords (``options``) are the fields of :class:`~haystack_irmetrics.beir.settings.BeirSettings`, as
    :func:`~haystack_irmetrics.beir.runner.run_beir` takes them (an unknown one is a ``TypeError``);
    :func:`run_suite` takes the settings as one value. Those that read differently here:

    * ``overwrite``: delete what ``DIR`` holds for these datasets (outputs and checkpoints, of any
      configuration, damaged or not) and run them all again; without it, finished datasets of this
      configuration are skipped, interrupted ones resume, and another configuration is refused.
    * ``strict_docs``: refuse a dataset whose qrels judge documents absent from its corpus (by default
      they count as relevant and unretrievable, as in BEIR, with a warning).
    * ``checkpoint_every``: queries per checkpoint batch (default :data:`DEFAULT_CHECKPOINT_EVERY`).
    * ``batch_size``: the embedders' batch size; ``precision``, ``device``: theirs (as :func:`run_beir`'s).
    """
    options = keywords_of(BeirSettings, options, "run_beir_suite", taken=("retriever",))
    options.setdefault("checkpoint_every", DEFAULT_CHECKPOINT_EVERY)
    # the deprecated spelling, read here (its warning names the caller's line)
    options["strict_docs"] = strict_docs_setting(options.get("strict_docs", False), allow_missing_docs)
    settings = BeirSettings(retriever, **options)
    return run_suite(datasets, settings, output_dir=output_dir, on_dataset=on_dataset)


def run_suite(
    datasets: Sequence[str | os.PathLike[str] | None],
    settings: BeirSettings,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    on_dataset: Callable[[SuiteDataset, BeirRun | None, dict[str, Any]], None] | None = None,
) -> SuiteResult:
    """:func:`run_beir_suite` with its configuration as one value: every dataset is run with ``settings``
    (:func:`~haystack_irmetrics.beir.runner.run_dataset`), checkpointed every ``settings.checkpoint_every``
    queries when ``output_dir`` is given."""
    steps = SuiteSteps(datasets, settings, output_dir=output_dir)
    for entry, run, summary in steps:
        if on_dataset is not None:
            on_dataset(entry, run, summary)
    assert steps.result is not None
    return steps.result


class SuiteSteps:
    """A suite run, dataset by dataset: iterating runs each dataset (or skips a finished one) and yields
    ``(entry, run, summary)`` (``run`` is ``None`` for a skipped dataset); when the iteration ends, the
    leaderboard is built and written and :attr:`result` holds the :class:`SuiteResult`.

    The caller keeps control between datasets (``irmetrics beir`` prints each table as it comes) without
    handing the runner a callback.
    """

    def __init__(
        self,
        datasets: Sequence[str | os.PathLike[str] | None],
        settings: BeirSettings,
        *,
        output_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.datasets = datasets
        self.settings = settings
        self.output_dir = output_dir
        self.result: SuiteResult | None = None

    def __iter__(self) -> Iterator[tuple[SuiteDataset, BeirRun | None, dict[str, Any]]]:
        settings = self.settings
        out = check_output_dir(self.output_dir) if self.output_dir is not None else None
        # DIR is locked for the whole suite: a second run on it stops at once instead of interleaving files
        with output_lock(out) if out is not None else nullcontext():
            entries = expand_datasets(self.datasets, data_dir=settings.data_dir, download=settings.download)
            finished: dict[str, dict[str, Any]] = {}
            if out is not None:
                for entry in entries:  # before _plan, which may clear DIR/<name>
                    check_dataset_outputs(entry.folder, settings, out / entry.name)
                finished = _plan(entries, out, settings)
            summaries: dict[str, dict[str, Any]] = {}
            runs: dict[str, BeirRun] = {}
            with bar(len(entries), "datasets", "dataset", settings.progress) as suite_bar:
                for entry in entries:
                    if entry.name in finished:
                        summary = finished[entry.name]
                        run = None
                    else:
                        run = run_dataset(entry.folder, settings, None if out is None else out / entry.name)
                        summary = run.summary()
                        runs[entry.name] = run
                    summaries[entry.name] = summary
                    yield entry, run, summary
                    suite_bar.update()
            skipped = [entry.name for entry in entries if entry.name in finished]
            done = SuiteResult(entries, summaries, runs, skipped)
            result = replace(done, leaderboard=build_leaderboard(summaries, done.groups))
            if out is not None:
                write_atomic(out / "leaderboard.json", result.leaderboard.to_json())
                write_atomic(out / "leaderboard.md", result.leaderboard.markdown())
            self.result = result


def _plan(entries: list[SuiteDataset], out: Path, settings: BeirSettings) -> dict[str, dict[str, Any]]:
    """The summaries of the datasets finished with this configuration; refuses datasets recorded with
    another one or with a damaged ``summary.json``. With ``overwrite`` it clears every dataset's
    folder instead (refusing one reached through a symbolic link before deleting anything). Nothing
    has run yet when it refuses."""
    if settings.overwrite:
        folders = [check_not_linked(out, entry.name) for entry in entries]  # all checked before any deletion
        for folder in folders:
            for file in OUTPUT_FILES:
                remove_file(folder / file)
            Checkpoint(folder / PARTIAL, {}).remove()
        return {}
    digest: list[str] = []  # the pipeline is read once, and only when something was recorded

    def configuration(entry: SuiteDataset, previous: dict[str, Any] | None) -> dict[str, Any]:
        if not digest:
            digest.append(pipeline_digest(settings.retriever, settings.joiner))
        return settings.configuration(entry.folder, settings.split, digest[0], previous=previous)

    finished: dict[str, dict[str, Any]] = {}
    changed: dict[str, list[str]] = {}
    for entry in entries:
        folder = out / entry.name
        summary_file = folder / "summary.json"
        if summary_file.is_file():
            summary, damage = _read_summary(summary_file)
            if damage:
                changed[entry.name] = [f"its summary.json is damaged ({damage})"]
                continue
            diff = differences(summary.get("configuration"), configuration(entry, summary.get("configuration")))
            if not diff:
                finished[entry.name] = summary
                continue
            changed[entry.name] = diff
            continue
        recorded = Checkpoint(folder / PARTIAL, {}).recorded_configuration()
        if recorded is not None:
            diff = differences(recorded, configuration(entry, recorded))
            if diff:
                changed[entry.name] = diff
        elif any((folder / name).exists() for name in OUTPUT_FILES):
            changed[entry.name] = ["it holds output files but no summary.json (not written by this suite?)"]
    if changed:
        listed = "; ".join(f"{name}: {', '.join(diff)}" for name, diff in changed.items())
        raise ConfigurationChangedError(
            f"{out} holds results of another configuration for {len(changed)} dataset(s) ({listed}). "
            "Nothing was run. Pass --overwrite (overwrite=True) to run every dataset again, or use another output folder"
        )
    return finished


#: What a finished dataset's summary.json must hold to be skipped: its table, the leaderboard and the
#: comparison of two suites read these.
_SUMMARY_FIELDS: dict[str, type | tuple[type, ...]] = {
    "dataset": str,
    "split": str,
    "pipeline": str,
    "n_queries": int,
    "n_documents": int,
    "n_indexed": int,
    "top_k": (int, type(None)),
    "timings_s": dict,
    "metrics": dict,
    "raw_metrics": dict,
    "configuration": dict,
}


#: Fields a summary may lack (older versions) but that must have these types when present.
_OPTIONAL_FIELDS: dict[str, type] = {
    "warnings": list,
    "models": list,
    "queries_from_checkpoint": int,
    "judged_documents_missing_from_corpus": int,
    "finished_at": str,
    "holes": dict,
    "hole_bounds": dict,
}


def _read_summary(path: Path) -> tuple[dict[str, Any], str | None]:
    """``(summary, None)``, or ``({}, what is wrong)`` when the file cannot be read or lacks what a skip needs."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as e:
        return {}, shorten(str(e), 120)
    if not isinstance(value, dict):
        return {}, f"a JSON {type(value).__name__}, not an object"
    for key, kind in _SUMMARY_FIELDS.items():  # JSON's exact types: a bool is no int here
        if type(value.get(key)) not in (kind if isinstance(kind, tuple) else (kind,)):
            expected = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            return {}, f"{key!r} is missing or not of type {expected}"
    for key in ("metrics", "raw_metrics", "timings_s"):
        if not all(is_number(v) for v in value[key].values()):
            return {}, f"{key!r} holds a value that is not a number"
    if value["raw_metrics"].keys() != value["metrics"].keys():
        return {}, "'metrics' and 'raw_metrics' name different measures"
    for key, kind in _OPTIONAL_FIELDS.items():
        item = value.get(key)
        if item is not None and type(item) is not kind:
            return {}, f"{key!r} is not of type {kind.__name__}"
        if isinstance(item, list) and not all(isinstance(x, str) for x in item):
            return {}, f"{key!r} holds something that is not a string"
    return value, None


__all__ = [
    "DEFAULT_CHECKPOINT_EVERY",
    "OUTPUT_FILES",
    "SuiteDataset",
    "SuiteResult",
    "SuiteSteps",
    "expand_datasets",
    "run_beir_suite",
    "run_suite",
]
