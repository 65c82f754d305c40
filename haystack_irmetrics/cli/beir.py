"""``irmetrics beir``: run a Haystack retrieval pipeline over a BEIR dataset and report BEIR's numbers.

Imports only the standard library until it runs (then :mod:`haystack_irmetrics.beir`, and haystack).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core import DEFAULT_K_VALUES
from ..io.tables import json_text
from .args import ints, top_k


def _positive(text: str) -> int:
    """A whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``beir`` to the ``irmetrics`` subcommands."""
    beir = sub.add_parser(
        "beir",
        help="run a Haystack retrieval pipeline over a BEIR dataset and report BEIR's numbers exactly",
        description=(
            "Index a BEIR dataset's corpus with a Haystack pipeline, run every query of the split, keep each corpus "
            "id's best-ranked chunk, and evaluate exactly as BEIR's EvaluateRetrieval.evaluate + evaluate_custom "
            "(MRR, R_cap). Without DATASET it runs on the small sample shipped with haystack_irmetrics. With several "
            "datasets it also prints their leaderboard (average, published references)."
        ),
    )
    beir.add_argument(
        "dataset",
        nargs="*",
        default=[],
        help="BEIR folders (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) or BEIR names, e.g. scifact "
        "(downloaded to --data-dir when absent); a folder of sub-datasets (cqadupstack) is one leaderboard row; "
        "default: the shipped sample",
    )
    beir.add_argument(
        "-r",
        "--retriever",
        default="bm25",
        metavar="bm25|haystack-bm25|dense|dense-qdrant|hybrid|PIPELINE.yaml",
        help="built-in pipeline (pipelines/beir_NAME.yaml: bm25 is bm25s, Lucene's BM25 and English analysis; "
        "haystack-bm25 is Haystack's InMemoryBM25Retriever; dense is all-MiniLM-L6-v2 "
        "with FAISS exact search, dense-qdrant the same in Qdrant's local mode; hybrid fuses bm25 and dense) "
        "or your pipeline YAML",
    )
    beir.add_argument(
        "--no-index",
        action="store_true",
        help="the pipeline's document stores hold the corpus already (filled beforehand, e.g. an Elasticsearch, "
        "OpenSearch, Qdrant or pgvector store): index nothing, only run the queries",
    )
    beir.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write corpus and query embeddings and bm25s indexes in $IRMETRICS_CACHE_DIR",
    )
    beir.add_argument(
        "--joiner",
        metavar="JOINER.yaml",
        help="a tuned fusion for the pipeline's one DocumentJoiner (irmetrics fuse --joiner-yaml writes it; "
        "weights in the order the joiner receives the lists: for hybrid, bm25 then dense)",
    )
    beir.add_argument("--split", default="test", help="qrels split")
    beir.add_argument("-k", type=ints, default=list(DEFAULT_K_VALUES), help="cutoffs")
    beir.add_argument(
        "--top-k",
        type=top_k,
        default=1000,
        help="documents (chunks) retrieved per query, capped at the number indexed; 0 keeps the pipeline's own top_k",
    )
    beir.add_argument(
        "-o",
        "--output",
        type=Path,
        help="write each dataset's metrics.json, per_query.json, run.trec, summary.json, metrics.md to OUTPUT/NAME/ "
        "and leaderboard.json, leaderboard.md to OUTPUT; rerunning resumes (finished datasets are skipped, "
        "an interrupted one continues from its checkpoint); one run at a time writes to OUTPUT",
    )
    beir.add_argument(
        "--overwrite",
        action="store_true",
        help="delete what OUTPUT holds for these datasets (results and checkpoints, of any configuration) and run "
        "them all again (default: skip finished ones, resume interrupted ones, refuse another configuration)",
    )
    beir.add_argument(
        "--checkpoint-every",
        type=_positive,
        default=100,
        metavar="N",
        help="with --output, checkpoint the retrieved queries in batches of N",
    )
    beir.add_argument("--model", help="embedding model (Hugging Face name or local folder) for dense and hybrid")
    beir.add_argument(
        "--batch-size",
        type=int,
        metavar="N",
        help="texts per forward pass of the embedders (default: the pipeline's, else 32 on a CPU, 256 on a GPU)",
    )
    beir.add_argument(
        "--precision",
        metavar="float32|float16|bfloat16",
        help="the embedders' weights and arithmetic (default: the model's own, float32 for all-MiniLM-L6-v2); "
        "float16 and bfloat16 are faster on a GPU and change the vectors (docs/beir.md: what they cost)",
    )
    beir.add_argument(
        "--device",
        metavar="cpu|cuda|cuda:N|mps",
        help="where the embedders run (default: the pipeline's, else the first GPU, else the CPU); several "
        "comma-separated (cuda:0,cuda:1) embed the corpus on each",
    )
    beir.add_argument("--chunk-words", type=int, help="split document texts into chunks of this many words")
    beir.add_argument("--chunk-overlap", type=int, default=0, help="words shared by consecutive chunks")
    beir.add_argument(
        "--data-dir",
        type=Path,
        help="where named BEIR datasets live (default: $IRMETRICS_BEIR_DIR or ~/.cache/haystack_irmetrics/beir)",
    )
    beir.add_argument("--no-download", action="store_true", help="never download a named dataset")
    docs = beir.add_mutually_exclusive_group()
    docs.add_argument(
        "--strict-docs",
        action="store_true",
        help="refuse a dataset whose qrels judge documents absent from its corpus (default: evaluate them as BEIR "
        "does, relevant and unretrievable, with a warning and their count in summary.json)",
    )
    docs.add_argument(
        "--allow-missing-docs",
        action="store_true",
        help="deprecated: what irmetrics beir does by default now",
    )
    beir.add_argument(
        "--allow-module",
        action="append",
        default=[],
        metavar="PATTERN",
        help="let the pipeline YAML use components from these modules, e.g. 'mypkg.*' (repeatable)",
    )
    beir.add_argument("--format", choices=["markdown", "json"], default="markdown", help="what to print")
    beir.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bars (default: on a terminal)"
    )
    beir.set_defaults(func=run, paths=paths)
    return beir


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics beir`` reads that the command line names (the pipeline and joiner YAMLs) and writes
    (``OUTPUT/leaderboard.*``); each dataset's files against ``OUTPUT/NAME`` are checked by the suite, once the
    datasets are found (:func:`haystack_irmetrics.beir.runner.check_dataset_outputs`); OUTPUT is a folder of its
    own (another command's is refused)."""
    from ..io.output import OutputFolder, Paths

    yaml = args.retriever if Path(args.retriever).is_file() else None
    out = args.output
    names = ("leaderboard.json", "leaderboard.md")
    written = () if out is None else tuple(out / name for name in names)
    owned = () if out is None else (OutputFolder(out, "irmetrics beir", names, names),)
    return Paths(reads=(yaml, args.joiner), writes=written, owned=owned)


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics beir``: every dataset (resumable with ``--output``), its table, the leaderboard."""
    from ..beir.lazy_torch import import_haystack_without_torch
    from ..beir.suite import SuiteSteps

    import_haystack_without_torch()  # this process's torch is loaded by a component that uses it, if any
    steps = SuiteSteps(args.dataset, _settings(args), output_dir=args.output)
    first = True
    for entry, run, summary in steps:
        _show(args, entry.name, run, summary, first=first)
        first = False
    result = steps.result
    assert result is not None and result.leaderboard is not None
    if args.format == "json":
        if len(result.summaries) == 1:
            print(json_text(next(iter(result.summaries.values())), indent=2))
        else:
            print(json_text({"datasets": result.summaries, "leaderboard": result.leaderboard.to_dict()}, indent=2))
    elif len(result.summaries) > 1:
        print("\n" + result.leaderboard.markdown().rstrip("\n"))
    if args.output is not None:
        print(
            f"wrote {args.output}/: leaderboard.json, leaderboard.md and, per dataset, <name>/ with metrics.json "
            "per_query.json run.trec summary.json metrics.md",
            file=sys.stderr,
        )
    return 0


def _settings(args: argparse.Namespace) -> Any:
    """The run's :class:`~haystack_irmetrics.beir.settings.BeirSettings` of the options."""
    from ..beir.settings import BeirSettings, joiner_setting

    return BeirSettings(
        args.retriever,
        split=args.split,
        k_values=args.k,
        top_k=args.top_k or None,
        model=args.model,
        chunk_words=args.chunk_words,
        chunk_overlap=args.chunk_overlap,
        progress=args.progress,
        strict_docs=args.strict_docs,
        data_dir=args.data_dir,
        download=not args.no_download,
        allowed_modules=args.allow_module,
        checkpoint_every=args.checkpoint_every,
        overwrite=args.overwrite,
        no_index=args.no_index,
        cache=not args.no_cache,
        joiner=joiner_setting(args.joiner),
        batch_size=args.batch_size,
        precision=args.precision,
        device=args.device,
    )


def _show(args: argparse.Namespace, name: str, run: Any, summary: dict, *, first: bool) -> None:
    """What ``irmetrics beir`` says of one dataset as it comes: skipped or resumed and its warnings on stderr,
    its table (markdown) on stdout."""
    if run is None:
        print(
            f"irmetrics: {name}: finished earlier ({_when(summary, args.output / name)}), skipped; "
            "--overwrite to run again",
            file=sys.stderr,
        )
        for warning in summary.get("warnings") or []:
            print(f"irmetrics: warning: {name}: {warning}", file=sys.stderr)
    else:
        if run.queries_from_checkpoint:
            print(
                f"irmetrics: {name}: resumed, {run.queries_from_checkpoint} of {run.info['n_queries']} "
                "queries from the checkpoint",
                file=sys.stderr,
            )
        for warning in run.warnings:
            print(f"irmetrics: warning: {name}: {warning}", file=sys.stderr)
    if args.format == "markdown":
        if run is not None:
            text = _describe(summary, run.markdown())
        else:
            folder = args.output / name
            text = _describe(summary, _stored_table(folder), finished=_when(summary, folder))
        print(("" if first else "\n") + text)


def _stored_table(folder: Path) -> str:
    path = folder / "metrics.md"
    try:
        return path.read_text(encoding="utf-8").rstrip("\n")
    except FileNotFoundError:
        return "(metrics.md is missing)"
    except (OSError, ValueError) as e:  # shown in place of the table: the numbers are in summary.json
        return f"(metrics.md cannot be read: {e})"


def _when(summary: dict, folder: Path) -> str:
    """When a finished dataset ran: its summary's ``finished_at``, else summary.json's modification time."""
    from datetime import datetime, timezone

    stamp = summary.get("finished_at")
    try:
        when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ") if isinstance(stamp, str) else None
        if when is None:  # written before summaries recorded it
            when = datetime.fromtimestamp((folder / "summary.json").stat().st_mtime, timezone.utc)
    except (OSError, ValueError, OverflowError):
        return "at an unknown time"
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _describe(summary: dict, table: str, finished: str | None = None) -> str:
    """A dataset's header line, its metrics table and its wall times (``finished``: when a skipped dataset ran)."""
    t = summary["timings_s"]
    per_query = 1000 * t.get("retrieval", 0) / max(summary["n_queries"] - summary.get("queries_from_checkpoint", 0), 1)
    top_k = summary["top_k"] if summary["top_k"] is not None else "as the pipeline sets it"
    cost = (
        f"indexing {t.get('indexing', 0):.1f} s, retrieval {t.get('retrieval', 0):.1f} s ({per_query:.1f} ms/query), "
        f"evaluation {t.get('evaluation', 0):.2f} s, total {t.get('total', 0):.1f} s"
    )
    if finished is not None:  # not this process's times: say when they were measured
        cost = f"skipped: finished earlier ({finished}): {cost}; --overwrite to run again"
    return (
        f"{summary['dataset']} ({summary['split']}): {summary['n_queries']} queries, {summary['n_documents']} "
        f"documents ({summary['n_indexed']} indexed) | pipeline {summary['pipeline']} | top_k {top_k}\n\n"
        f"{table}\n\n{_holes_line(summary)}{cost}"
    )


def _holes_line(summary: dict) -> str:
    """What the run's holes leave open: Hole@k at the bounded measures' k, and their bounds ('' for an old summary)."""
    holes, bounds = summary.get("holes") or {}, summary.get("hole_bounds") or {}
    names = dict.fromkeys("Hole@" + m.split("@")[1] for m in bounds)
    shown = [f"{name} {holes[name]:.5f}" for name in names if name in holes]
    if not shown:
        return ""
    ranges = ", ".join(f"{m} in [{b['low']:.5f}, {b['high']:.5f}]" for m, b in bounds.items())
    return f"Unjudged in the top k (BEIR's hole): {', '.join(shown)}. Judged 0 or 1, the holes would put {ranges}.\n\n"


__all__ = ["add_subcommand", "paths", "run"]
