"""``irmetrics usefulness RUN [RUN ...] --queries QUERIES --corpus CORPUS --answers ANSWERS.jsonl (--llm MODEL
--api-base-url URL | --generator GEN.yaml) --depth K --answer-metric {exact_match,f1,contains} -o DIR``: label each
document of the runs' top K by what a RAG pipeline's generator answers from it alone
(:mod:`haystack_irmetrics.usefulness`), and score the runs on those labels.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .args import asking_options, named_file, names, server_options

#: The files ``irmetrics usefulness`` writes in its output folder (end_to_end.jsonl with --end-to-end).
OUTPUT_FILES = ("qrels.tsv", "generations.jsonl", "metrics.json", "summary.json", "end_to_end.jsonl")
#: The files that, all present, show a folder is this command's.
SIGNATURE = ("generations.jsonl", "summary.json")
COMMAND = "irmetrics usefulness"


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``usefulness`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "usefulness",
        help="label runs' top K by what a RAG generator answers from each document alone, and score the runs",
        description="Ask the generator of a RAG pipeline (--llm on an OpenAI-compatible server, or the chat "
        "generator of a pipeline YAML, --generator) to answer each question from each document of the runs' top K "
        "alone, pooled (a pair several runs retrieved is asked once), and label the document by the answer "
        "metric against the reference answers (eRAG, Salemi and Zamani, SIGIR 2024). Writes DIR/qrels.tsv, "
        "DIR/generations.jsonl, DIR/metrics.json (each run's measures) and DIR/summary.json. Answers are cached "
        "by the generator's fingerprint, the prompt and the exact texts: a second run makes no request, a killed "
        "run resumes.",
    )
    p.add_argument("runs", nargs="+", metavar="[NAME=]RUN", help="TREC run files; NAME= labels a run")
    p.add_argument("--queries", required=True, help="BEIR queries.jsonl, or a BEIR folder")
    p.add_argument("--corpus", required=True, help="BEIR corpus.jsonl, or a BEIR folder")
    p.add_argument("--answers", required=True, metavar="ANSWERS.jsonl", help="reference answers: query_id, answers")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--llm", metavar="MODEL", help="the chat model's name on the server")
    which.add_argument("--generator", metavar="GEN.yaml", help="a pipeline YAML holding one chat generator")
    server_options(p)
    p.add_argument("--depth", type=int, default=10, help="label each run's top K")
    p.add_argument(
        "--answer-metric",
        default="exact_match",
        choices=("exact_match", "f1", "contains"),
        help="how an answer is scored against the references (SQuAD's exact match or F1, or containment)",
    )
    p.add_argument(
        "--measures", type=names, metavar="M,M", help="the measures of each run (default NDCG@K,P@K,MRR@K,Success@K)"
    )
    p.add_argument(
        "--end-to-end",
        type=int,
        metavar="N",
        help="also ask with each run's top N together, and correlate each measure with that answer's score",
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="the output folder")
    p.add_argument("--prompt", metavar="FILE", help="replace the prompt; holds {question} and {document} (--llm)")
    p.add_argument("--max-chars", type=int, metavar="N", help="send at most N characters of a document (--llm)")
    asking_options(p)
    p.add_argument("--no-cache", action="store_true", help="ask for every pair, keep nothing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (shown on a terminal)")
    p.set_defaults(func=run, paths=paths)
    return p


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics usefulness`` reads (runs, queries, corpus, answers, the generator YAML, the prompt file) and
    writes (:data:`OUTPUT_FILES` in ``-o``, a folder of its own: another command's is refused)."""
    from ..io.beir_data import beir_file
    from ..io.output import OutputFolder, Paths

    reads = (*map(named_file, args.runs), beir_file(args.queries, "queries"), beir_file(args.corpus, "corpus"))
    out = Path(args.output)
    return Paths(
        reads=(*reads, args.answers, args.generator, args.prompt),
        writes=tuple(out / name for name in OUTPUT_FILES),
        owned=(OutputFolder(out, COMMAND, OUTPUT_FILES, SIGNATURE),),
    )


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics usefulness``: the settings and the asker, the job (the output folder locked first), what it
    did printed."""
    from ..usefulness.job import UsefulnessJob, run_usefulness
    from ..usefulness.settings import UsefulnessSettings

    settings = UsefulnessSettings(
        depth=args.depth,
        answer_metric=args.answer_metric,
        measures=args.measures or None,
        end_to_end=args.end_to_end,
        concurrency=args.concurrency,
        retries=args.retries,
        backoff=args.backoff,
        progress=False if args.no_progress else None,
    )
    job = UsefulnessJob(args.runs, args.queries, args.corpus, args.answers, args.output, settings, not args.no_cache)
    result = run_usefulness(job, _asker(args))
    _print_result(result, args.output)
    return 0


def _asker(args: argparse.Namespace) -> Any:
    """The asker the options name: a chat model on a server (``--llm``) or a pipeline YAML's generator."""
    from ..usefulness.asker import AnswerAsker, load_generator
    from ..usefulness.job import chat_asker

    if args.generator is not None:
        return AnswerAsker(load_generator(args.generator), max_chars=args.max_chars, prompt=_read(args.prompt))
    return chat_asker(args.llm, args.api_base_url, args.api_key_env, args.timeout, _read(args.prompt), args.max_chars)


def _read(path: str | None) -> str | None:
    return None if path is None else Path(path).read_text(encoding="utf-8")


def _print_result(result: Any, output: str) -> None:
    """What ``irmetrics usefulness`` prints: what labelling cost, each run's measures (a markdown table) and, end to
    end, each run's mean in the table and the correlations of each measure with it."""
    from ..io.tables import markdown_row, number_cell, plural

    s, e2e = result.summary, result.summary["end_to_end"]
    print(
        f"labelled {plural(s['pairs'], 'pair')} of {plural(s['queries'], 'query', 'queries')} "
        f"({plural(s['requests'], 'request')}, {s['cache_hits']} cached, {s['empty_generations']} empty; "
        f"{s['useful_pairs']} useful by {s['answer_metric']}) -> {output}"
    )
    if e2e is not None:
        print(
            f"asked with each run's top {e2e['top']} together {plural(e2e['asked'], 'time')} "
            f"({plural(e2e['requests'], 'request')}, {e2e['cache_hits']} cached, {e2e['empty_generations']} empty)"
        )
    measures = s["measures"]
    head = [*measures, f"end to end (top {e2e['top']})"] if e2e is not None else measures
    lines = [markdown_row(["run", *head]), markdown_row(["---", *("---:" for _ in head)])]
    for name, scores in result.scores.items():
        cells = [number_cell(scores.means[m]) for m in measures]
        if e2e is not None:
            cells.append(number_cell(result.end_to_end[name].mean))
        lines.append(markdown_row([name, *cells]))
    print("\n".join(lines))
    if e2e is not None:
        _print_correlations(result, measures)


def _print_correlations(result: Any, measures: list[str]) -> None:
    """Kendall's tau (Spearman's rho) of each measure with the end-to-end score: a row per run, across its
    queries, and one across the runs (3 runs or more)."""
    from ..io.tables import markdown_row

    rows = [(name, e2e.correlation) for name, e2e in result.end_to_end.items()]
    if result.across_runs is not None:
        rows.append((f"across the {len(result.scores)} runs", result.across_runs))
    print("\nKendall's tau (Spearman's rho) with the end-to-end score, across each run's queries:")
    print(markdown_row(["run", *measures]))
    print(markdown_row(["---", *("---:" for _ in measures)]))
    for name, by_measure in rows:
        print(markdown_row([name, *(_pair(by_measure[m]) for m in measures)]))
    if any(_pair(by_measure[m]) == "n/a" for _, by_measure in rows for m in measures):
        print("n/a: not defined where the measure or the end-to-end score is the same for every query (or run)")


def _pair(coefficients: dict[str, Any]) -> str:
    """``tau (rho)`` with 2 decimals, ``n/a`` where either is undefined (a constant input, fewer than two items)."""
    tau, rho = coefficients["kendall"], coefficients["spearman"]
    if any(c is None or c.statistic != c.statistic for c in (tau, rho)):
        return "n/a"
    return f"{tau.statistic:.2f} ({rho.statistic:.2f})"


__all__ = ["add_subcommand", "paths", "run"]
