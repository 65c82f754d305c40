"""``irmetrics beir``: run a Haystack retrieval pipeline over a BEIR dataset and report BEIR's numbers.

Imports only the standard library until it runs (then :mod:`haystack_irmetrics.beir`, and haystack).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core import DEFAULT_K_VALUES
from .args import ints, top_k


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``beir`` to the ``irmetrics`` subcommands."""
    beir = sub.add_parser(
        "beir",
        help="run a Haystack retrieval pipeline over a BEIR dataset and report BEIR's numbers exactly",
        description=(
            "Index a BEIR dataset's corpus with a Haystack pipeline, run every query of the split, keep each corpus "
            "id's best-ranked chunk, and evaluate exactly as BEIR's EvaluateRetrieval.evaluate + evaluate_custom "
            "(MRR, R_cap). Without DATASET it runs on the small sample shipped with haystack_irmetrics."
        ),
    )
    beir.add_argument(
        "dataset",
        nargs="?",
        default=None,
        help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) or BEIR name, e.g. scifact "
        "(downloaded to --data-dir when absent); default: the shipped sample",
    )
    beir.add_argument(
        "-r",
        "--retriever",
        default="bm25",
        metavar="bm25|dense|hybrid|PIPELINE.yaml",
        help="built-in pipeline (pipelines/beir_NAME.yaml) or your pipeline YAML",
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
        "-o", "--output", type=Path, help="write metrics.json, per_query.json, run.trec, summary.json, metrics.md here"
    )
    beir.add_argument("--model", help="embedding model (Hugging Face name or local folder) for dense and hybrid")
    beir.add_argument("--chunk-words", type=int, help="split document texts into chunks of this many words")
    beir.add_argument("--chunk-overlap", type=int, default=0, help="words shared by consecutive chunks")
    beir.add_argument(
        "--data-dir",
        type=Path,
        help="where named BEIR datasets live (default: $IRMETRICS_BEIR_DIR or ~/.cache/haystack_irmetrics/beir)",
    )
    beir.add_argument("--no-download", action="store_true", help="never download a named dataset")
    beir.add_argument(
        "--allow-missing-docs",
        action="store_true",
        help="evaluate although the qrels judge documents absent from the corpus (they count as unretrievable)",
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
    beir.set_defaults(func=run)
    return beir


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics beir``: evaluate, print the summary (markdown or JSON), write ``--output``."""
    from ..beir.runner import run_beir

    run = run_beir(
        args.dataset,
        args.retriever,
        split=args.split,
        k_values=args.k,
        top_k=args.top_k or None,
        model=args.model,
        chunk_words=args.chunk_words,
        chunk_overlap=args.chunk_overlap,
        output_dir=args.output,
        progress=args.progress,
        allow_missing_docs=args.allow_missing_docs,
        data_dir=args.data_dir,
        download=not args.no_download,
        allowed_modules=args.allow_module,
    )
    for warning in run.warnings:
        print(f"irmetrics: warning: {warning}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(run.summary(), indent=2))
    else:
        info, t = run.info, run.timings
        per_query = 1000 * t["retrieval"] / max(info["n_queries"], 1)
        print(
            f"{info['dataset']} ({info['split']}): {info['n_queries']} queries, {info['n_documents']} documents "
            f"({info['n_indexed']} indexed) | pipeline {info['pipeline']} | "
            f"top_k {info['top_k'] if info['top_k'] is not None else 'as the pipeline sets it'}\n"
        )
        print(run.markdown())
        print(
            f"\nindexing {t['indexing']:.1f} s, retrieval {t['retrieval']:.1f} s ({per_query:.1f} ms/query), "
            f"evaluation {t['evaluation']:.2f} s, total {t['total']:.1f} s"
        )
    if args.output is not None:
        print(f"wrote {args.output}/: metrics.json per_query.json run.trec summary.json metrics.md", file=sys.stderr)
    return 0


__all__ = ["add_subcommand", "run"]
