"""``irmetrics judge RUN [RUN ...] --qrels QRELS --queries QUERIES --corpus CORPUS --depth K
(--llm MODEL --api-base-url URL | --judge JUDGE.yaml) -o DIR``: fill the holes of the runs' top K with a model's
labels (:mod:`haystack_irmetrics.judges`), the human labels kept.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from .args import named_file, seed

#: The environment variable the API key is read from by default (as Haystack's OpenAI generators read it).
API_KEY_ENV = "OPENAI_API_KEY"
#: What a local server that needs no key is sent as the key when the key's variable is unset.
NO_KEY = "no-key"
#: The files ``irmetrics judge`` writes in its output folder (agreement.json with --agreement; ppi.json and
#: model_qrels.tsv with --ppi).
OUTPUT_FILES = ("judgments.jsonl", "qrels.tsv", "summary.json", "agreement.json", "ppi.json", "model_qrels.tsv")


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``judge`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "judge",
        help="label the unjudged documents of runs' top K with a model (an LLM server or a judge YAML)",
        description="Judge exactly the unjudged (query, document) pairs of the runs' top K, pooled and "
        "deduplicated, with a chat model on an OpenAI-compatible server (--llm, --api-base-url) or the "
        "RelevanceJudge of a pipeline YAML (--judge). Writes DIR/judgments.jsonl, DIR/qrels.tsv (the human "
        "qrels plus the model's labels for the holes), DIR/summary.json and, with --agreement, "
        "DIR/agreement.json. Judgments are cached by the judge's fingerprint and the exact texts: a second run "
        "makes no request, a killed run resumes.",
    )
    p.add_argument("runs", nargs="+", metavar="[NAME=]RUN", help="TREC run files; NAME= labels a run")
    p.add_argument("--qrels", required=True, help="the human qrels: TREC or BEIR TSV (gzip ok)")
    p.add_argument("--queries", required=True, help="BEIR queries.jsonl, or a BEIR folder")
    p.add_argument("--corpus", required=True, help="BEIR corpus.jsonl, or a BEIR folder")
    p.add_argument("--depth", type=int, default=10, help="judge each run's top K")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--llm", metavar="MODEL", help="the chat model's name on the server")
    which.add_argument("--judge", metavar="JUDGE.yaml", help="a pipeline YAML holding one RelevanceJudge")
    p.add_argument("--api-base-url", metavar="URL", help="the OpenAI-compatible server, e.g. http://localhost:8000/v1")
    p.add_argument(
        "--api-key-env",
        default=API_KEY_ENV,
        metavar="VAR",
        help="the environment variable holding the API key (never written anywhere; a server at "
        "--api-base-url is sent a placeholder when it is unset)",
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="the output folder")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    p.add_argument("--retries", type=int, default=4, help="further attempts after a 429, 5xx, time-out or refusal")
    p.add_argument("--backoff", type=float, default=0.5, help="seconds before the first retry (doubling)")
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds one whole request may take, last byte included (--llm)"
    )
    p.add_argument("--max-grade", type=int, default=3, help="the top grade (--llm)")
    p.add_argument("--system-prompt", metavar="FILE", help="replace the default system prompt (--llm)")
    p.add_argument("--template", metavar="FILE", help="replace the user message; holds {query} and {document}")
    p.add_argument(
        "--max-chars", type=int, default=None, metavar="N", help="send at most N characters of a document (--llm)"
    )
    p.add_argument("--agreement", type=int, default=0, metavar="N", help="also judge N human-labelled pairs")
    p.add_argument("--fit", type=int, default=200, metavar="N", help="learn a scorer's cut points on N pairs")
    p.add_argument("--threshold", type=int, default=1, help="relevant = grade >= threshold (agreement's kappa)")
    p.add_argument("--measure", default=None, help="the systems' order for --agreement (default NDCG@K)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the agreement and fit samples")
    p.add_argument(
        "--ppi",
        action="store_true",
        help="also judge the pool pairs people judged and write DIR/ppi.json: prediction-powered intervals of "
        "each run's --measure and of each difference, the queries people judged in full as the labelled set",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="--ppi intervals at level 1 - alpha")
    p.add_argument(
        "--strategy",
        metavar="S",
        help="judge only --budget of the holes, in the order a pooling strategy asks for them (depth, rbp, mtf, "
        "maxmean, stratified: see irmetrics pool); mtf and maxmean choose each batch from the labels so far",
    )
    p.add_argument("--budget", type=int, metavar="N", help="the number of holes to judge with --strategy")
    p.add_argument("--no-cache", action="store_true", help="ask for every pair, keep nothing")
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar (shown on a terminal: pairs judged, cached, ...)"
    )
    p.set_defaults(func=run, paths=paths)
    return p


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics judge`` reads (runs, qrels, queries, corpus, the judge YAML, the prompt files) and writes
    (:data:`OUTPUT_FILES` in ``-o``): the human qrels in DIR/qrels.tsv are refused, never replaced."""
    from ..io.output import Paths

    reads = (*map(named_file, args.runs), args.qrels, _jsonl(args.queries, "queries"), _jsonl(args.corpus, "corpus"))
    out = Path(args.output)
    return Paths(
        reads=(*reads, args.judge, args.system_prompt, args.template),
        writes=tuple(out / name for name in OUTPUT_FILES),
    )


def _jsonl(path: str, name: str) -> Path:
    p = Path(path)
    return p / f"{name}.jsonl" if p.is_dir() else p


def _read_text(path: str | None) -> str | None:
    return None if path is None else Path(path).read_text(encoding="utf-8")


def _llm_judge(args: argparse.Namespace) -> Any:
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    from ..errors import JudgeError
    from ..judges.http import check_timeout, deadline_client_kwargs
    from ..judges.judge import ChatJudge

    check_timeout(args.timeout)
    variable = args.api_key_env
    if not os.environ.get(variable) and not args.api_base_url:
        raise JudgeError(f"no API key: set {variable} (or point --api-base-url at a server that needs none)")
    key = Secret.from_env_var(variable) if os.environ.get(variable) else Secret.from_token(NO_KEY)
    generator = OpenAIChatGenerator(
        api_key=key,
        model=args.llm,
        api_base_url=args.api_base_url,
        timeout=args.timeout,
        max_retries=0,  # the judge retries, counted and bounded
        http_client_kwargs=deadline_client_kwargs(args.timeout),  # --timeout bounds the whole request
    )
    return ChatJudge(
        generator,
        system_prompt=_read_text(args.system_prompt),
        user_template=_read_text(args.template),
        max_grade=args.max_grade,
        max_document_chars=args.max_chars,
    )


def _yaml_judge(path: str) -> Any:
    from ..components.judge import RelevanceJudge
    from ..errors import JudgeError
    from ..integration.loading import load_pipeline

    try:
        pipeline = load_pipeline(path)
    except Exception as e:  # Haystack wraps a component's own error; the CLI says it on one line
        from ..errors import IRMetricsError

        cause: BaseException = e
        while cause.__cause__ is not None and not isinstance(cause, IRMetricsError):
            cause = cause.__cause__
        if isinstance(e, OSError):
            raise
        text = " ".join(str(cause).split())
        raise JudgeError(f"cannot load the judge {path}: {text}") from None
    judges = [c for _, c in pipeline.walk() if isinstance(c, RelevanceJudge)]
    if len(judges) != 1:
        raise JudgeError(f"the judge YAML {path} must hold one RelevanceJudge component, it holds {len(judges)}")
    generator = judges[0].generator
    timeout = getattr(generator, "timeout", None)
    if generator is not None and getattr(generator, "http_client_kwargs", False) is None and timeout is not None:
        # An OpenAI generator of the YAML with no client settings of its own: its time-out bounds whole requests.
        from ..judges.http import check_timeout, deadline_client_kwargs

        generator.http_client_kwargs = deadline_client_kwargs(check_timeout(timeout))
    scorer = judges[0].scorer
    if isinstance(getattr(scorer, "model", None), str):  # MiniLM's name: the offline copy, as irmetrics beir does
        from ..beir.models import resolve_model

        scorer.model = resolve_model(scorer.model)
    return judges[0].judge


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics judge``: judge, write the folder, print one line of what it did. The folder is locked
    first, as ``irmetrics beir`` locks its own: a second judge writing there stops at once, before any work."""
    from ..io.output import output_lock

    with output_lock(args.output, "irmetrics judge"):
        return _judge(args)


def _judge(args: argparse.Namespace) -> int:
    from ..errors import JudgeError
    from ..io import read_qrels
    from ..io.beir_data import read_beir_corpus, read_beir_queries
    from ..judges.cache import JudgmentCache
    from ..judges.runs import judge_runs
    from .plot import read_runs

    if args.llm is not None and not args.api_base_url and not os.environ.get(args.api_key_env):
        raise JudgeError(f"no API key: set {args.api_key_env} (or point --api-base-url at a server that needs none)")
    queries_path, corpus_path = _jsonl(args.queries, "queries"), _jsonl(args.corpus, "corpus")
    qrels = read_qrels(args.qrels).data
    runs = {name: run.data for name, run in read_runs(args.runs).items()}
    queries = read_beir_queries(queries_path)
    corpus = read_beir_corpus(corpus_path)
    judge = _llm_judge(args) if args.llm is not None else _yaml_judge(args.judge)
    cache = JudgmentCache(enabled=not args.no_cache)
    try:
        result = judge_runs(
            judge,
            runs,
            qrels,
            queries,
            corpus,
            args.output,
            depth=args.depth,
            concurrency=args.concurrency,
            retries=args.retries,
            backoff=args.backoff,
            cache=cache,
            agreement=args.agreement,
            seed=args.seed,
            threshold=args.threshold,
            measure=args.measure,
            fit=args.fit,
            ppi=args.ppi,
            alpha=args.alpha,
            sources=(str(queries_path), str(corpus_path)),
            progress=False if args.no_progress else None,
            strategy=args.strategy,
            budget=args.budget,
        )
    finally:
        cache.close()
    s = result.summary
    if s.get("cut_points_learned_on"):
        cuts = ", ".join(f"{c:.4g}" for c in judge.cut_points)
        print(f"cut points {cuts} learned on {s['cut_points_learned_on']} human-labelled pairs")
    print(
        f"judged {s['pairs']} pairs ({s['requests']} requests, {s['cache_hits']} cached, "
        f"{s['unparseable']} unparseable) -> {args.output}"
    )
    holes = s.get(f"Hole@{s['depth']}") or {}
    shown = [f"{name} {_share(h['before'])} -> {_share(h['after'])}" for name, h in holes.items()]
    if shown:
        print(f"Hole@{s['depth']} (BEIR's, before -> after): " + ", ".join(shown))
    if result.agreement and result.agreement["labels"]:
        labels, systems = result.agreement["labels"], result.agreement["systems"]
        kappa, weighted, alpha, tau = (
            _figure(x) for x in (labels["kappa"], labels["weighted_kappa"], labels["alpha"], systems["tau"])
        )
        print(
            f"agreement on {labels['pairs']} pairs: kappa {kappa}, weighted kappa {weighted}, alpha {alpha}; "
            f"systems' tau {tau}"
        )
    if result.ppi:
        for name, row in result.ppi["runs"].items():
            print(
                f"{name}: {result.ppi['measure']} {row['estimate']:.4f} [{row['low']:.4f}, {row['high']:.4f}] "
                f"(PPI, {row['n']} labelled + {row['N']} queries); filled qrels {row['filled']:.4f}"
            )
    return 0


def _figure(value: float | None) -> str:
    """An agreement figure, ``n/a`` where it is undefined (``agreement.json`` says why)."""
    return "n/a" if value is None or value != value else f"{value:.3f}"


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _judgment_cache(root: Path) -> Any:
    """The judgment cache under ``root``, or ``None`` when there is none (nothing is created)."""
    from ..errors import JudgeError
    from ..judges.cache import CACHE_FILE, JudgmentCache

    path = root / CACHE_FILE
    if not path.is_file():
        return None
    cache = JudgmentCache(path)
    if not cache.available:
        raise JudgeError(f"the judgment cache {path} cannot be opened")
    return cache


def cache_listing(root: Path) -> dict[str, Any]:
    """The judgment cache under ``root`` by judge, as JSON (``irmetrics cache list``): ``path``, ``judges``."""
    from ..judges.cache import CACHE_FILE

    cache = _judgment_cache(root)
    if cache is None:
        return {"path": str(root / CACHE_FILE), "judges": []}
    try:
        return {"path": str(cache.path), "judges": [e.to_dict() for e in cache.judges()]}
    finally:
        cache.close()


def cache_listing_lines(listing: dict[str, Any]) -> list[str]:
    """``irmetrics cache list``'s lines of the judgment cache (none when it holds nothing)."""
    judges = listing["judges"]
    if not judges:
        return []
    pairs = sum(e["pairs"] for e in judges)
    size = sum(e["size_bytes"] for e in judges)
    lines = [
        f"\njudgments: {listing['path']} ({len(judges)} judge{'s' if len(judges) != 1 else ''}, {pairs} pairs, "
        f"{size / 1e6:.1f} MB)",
        "\n| judge | kind | model | pairs | unparseable | kB |\n|---|---|---|---:|---:|---:|",
    ]
    from ..io.tables import markdown_row

    for e in judges:
        judge = e["fingerprint"][:12] if e["fingerprint"] else "-"
        cells = (judge, e["kind"], e["model"], e["pairs"], e["unparseable"], f"{e['size_bytes'] / 1e3:.1f}")
        lines.append(markdown_row(cells))  # a model's name is the server's text: its "|" escaped
    return lines


def cache_clear_lines(root: Path, fingerprint: str | None) -> list[str]:
    """Delete the judgments of the judge whose fingerprint starts with ``fingerprint`` (all, when ``None``);
    what ``irmetrics cache clear`` prints of it.

    :raises InvalidArgumentError: no judge, or several, match ``fingerprint``.
    """
    from ..errors import InvalidArgumentError
    from ..judges.cache import CACHE_FILE

    cache = _judgment_cache(root)
    if cache is None:
        if fingerprint is not None:
            raise InvalidArgumentError(f"there is no judgment cache ({root / CACHE_FILE}): no judge {fingerprint!r}")
        return []
    try:
        if fingerprint is None:
            return [f"removed {cache.clear()} judgments (every judge) from {cache.path}"]
        full = cache.resolve(fingerprint)
        model = next(e.model for e in cache.judges() if e.fingerprint == full)
        return [f"removed {cache.clear(full)} judgments of judge {full[:12]} ({model}) from {cache.path}"]
    finally:
        cache.close()


__all__ = ["add_subcommand", "cache_clear_lines", "cache_listing", "cache_listing_lines", "run"]
