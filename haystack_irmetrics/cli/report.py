"""``irmetrics report``: one self-contained HTML page comparing any number of runs, and its exports.

Imports only the standard library until it runs (then :mod:`haystack_irmetrics.report`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core import DEFAULT_K_VALUES
from .args import add_significance_options, add_threshold_option, files_of, ints, named_file, names, policy


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``report`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "report",
        help="one HTML page comparing any number of runs: summary, significance, curves, per-query drill-down",
        description="Evaluate every run against the same qrels and write one self-contained HTML page (it opens "
        "offline): the means with significance against the baseline, curves, a sortable per-query table and each "
        "query's ranked lists side by side with their judgments.",
    )
    p.add_argument(
        "runs",
        nargs="+",
        metavar="[NAME=]RUN",
        help="TREC run files or 'irmetrics beir --output' folders; NAME= labels a run",
    )
    p.add_argument(
        "--qrels",
        default=None,
        help="qrels file: TREC or BEIR TSV (default: the dataset a beir run folder names, or --corpus's qrels/test.tsv)",
    )
    p.add_argument("-o", "--output", required=True, help="the HTML file to write")
    p.add_argument("-k", type=ints, default=list(DEFAULT_K_VALUES), help="cutoffs")
    p.add_argument("-m", "--measures", type=names, default=None, help="families or names, e.g. NDCG,Recall or P@5")
    p.add_argument(
        "--names", type=names, default=None, help="labels of the runs, e.g. bm25,dense (default: file or folder names)"
    )
    p.add_argument("--baseline", default=None, help="the run the others are compared with (default: the first)")
    p.add_argument("--preset", choices=["beir", "trec"], default="beir", help="beir 2.2.0 or trec_eval conventions")
    add_threshold_option(p)
    p.add_argument("--title", default=None, help="the page's title")
    text = p.add_argument_group("query texts and documents (for the drill-down)")
    docs = text.add_mutually_exclusive_group()
    docs.add_argument("--corpus", default=None, metavar="BEIR_FOLDER", help="BEIR dataset folder: titles and snippets")
    docs.add_argument("--docs", default=None, metavar="FILE", help="documents: JSONL (_id, title, text) or id<TAB>text")
    text.add_argument("--queries", default=None, metavar="FILE", help="query texts: JSONL (_id, text) or id<TAB>text")
    text.add_argument("--depth", type=int, default=20, help="documents of each ranked list shown per query")
    add_significance_options(
        p,
        "significance (each run against the baseline)",
        "paired t-test and randomization p-values (Holm over runs x measures), bootstrap intervals",
    )
    holes = p.add_argument_group("holes: documents nobody judged")
    holes.add_argument(
        "--judged",
        metavar="DIR",
        default=None,
        help="the output folder of irmetrics judge ... --ppi (--qrels: the human qrels): also show each measure "
        "with the filled qrels and its prediction-powered estimate and interval",
    )
    holes.add_argument(
        "--bounds",
        type=float,
        default=None,
        metavar="GRADE",
        help="also show beside each mean the summary shows by default (nDCG, MAP, P, Recall, MRR, ...) the "
        "interval it lies in once each unjudged document of a query's top k is judged 0 or GRADE",
    )
    out = p.add_argument_group("exports of the summary (from the same numbers)")
    out.add_argument("--latex", default=None, metavar="FILE", help="LaTeX table (booktabs, ranx's superscripts)")
    out.add_argument("--csv", default=None, metavar="FILE", help="CSV: one row per run and measure")
    out.add_argument("--markdown", default=None, metavar="FILE", help="markdown tables")
    p.set_defaults(func=run, paths=paths)
    return p


def _run_files(spec: str) -> list[str]:
    """The files a ``[NAME=]RUN`` argument reads: the file, or a beir output folder's ``run.trec`` and
    ``summary.json`` (its own, or those of its one dataset folder)."""
    from pathlib import Path

    path = Path(named_file(spec))
    if not path.is_dir():
        return [str(path)]
    found = ("run.trec", "summary.json", "*/run.trec", "*/summary.json")
    return [str(p) for pattern in found for p in path.glob(pattern)]


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics report`` reads (runs, qrels, texts, the judged folder) and writes (the page, the exports)."""
    from ..io.output import Paths
    from ..judges.folder import JUDGED_FILES

    reads = [f for spec in args.runs for f in _run_files(spec)]
    reads += [args.qrels, args.docs, args.queries]
    reads += files_of(args.corpus, ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"))
    reads += files_of(args.judged, JUDGED_FILES)
    return Paths(reads=reads, writes=(args.output, args.latex, args.csv, args.markdown))


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics report``: write the page (and the exports asked for); say where on stderr."""
    from ..checks import whole
    from ..io.output import write_text
    from ..io.run_names import split_runs
    from ..report import ReportSettings, build_report, to_csv, to_latex, to_markdown, write_report

    whole(args.depth, "--depth", least=1)
    runs, labels = split_runs(args.runs, args.names)
    settings = ReportSettings(
        k_values=args.k,
        measures=args.measures,
        names=labels,
        baseline=args.baseline,
        preset=policy(args),
        queries=args.queries,
        corpus=args.corpus,
        docs=args.docs,
        depth=args.depth,
        significance=args.stats,
        n_resamples=args.n_resamples,
        seed=args.seed,
        confidence=args.confidence,
        title=args.title,
        judged=args.judged,
        bounds=args.bounds,
    )
    data = build_report(runs, args.qrels, settings)
    written = [write_report(data, args.output)]
    for path, export in ((args.latex, to_latex), (args.csv, to_csv), (args.markdown, to_markdown)):
        if path:
            written.append(write_text(path, export(data)))  # whole or not at all, as the page
    for note in data.notes:
        print(f"irmetrics: note: {note}", file=sys.stderr)
    print(f"report: {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0


__all__ = ["add_subcommand", "paths", "run"]
