"""The ``irmetrics`` command line.

``irmetrics evaluate QRELS RUN [-k 1,3,5,10,100,1000] [--preset beir|trec] [--per-query]
[--format json|tsv|markdown] [--digits N]`` scores a TREC run file against TREC or BEIR qrels.

How values are printed: JSON keeps every value exactly as the preset computes it (the beir preset's
means are BEIR's ``round(x, 5)``, the trec preset's are unrounded float64; per-query values are never
rounded); markdown and tsv print every value with a fixed number of decimals (:data:`TABLE_DIGITS`:
5 for beir, as BEIR rounds; 4 for trec, as trec_eval prints). ``--digits N`` rounds every printed
value to N decimals in every format (JSON: ``round(value, N)`` of the unrounded value).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import IRMetricsError

#: Decimals of the markdown and tsv tables per preset (``--digits`` overrides them).
TABLE_DIGITS = {"beir": 5, "trec": 4}


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _digits(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 17:
        raise argparse.ArgumentTypeError(f"expected a number of decimals from 0 to 17, got {text!r}")
    return value


def _names(text: str) -> list[str]:
    # Commas inside parameters separate gains, not measures: "nDCG(gains={0:0,1:1})@10,P@5".
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text + ","):
        depth += ch in "({"
        depth -= ch in ")}"
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    return [x for x in out if x]


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
        lines = [f"{name}\tall\t{_cell(value, d)}" for name, value in _means(result, digits).items()]
        if per_query:
            for name, values in result.per_query.items():
                lines.extend(f"{name}\t{q}\t{_cell(v, d)}" for q, v in values.items())
        return "\n".join(lines)
    if fmt == "markdown":
        table = markdown_table(result, digits)
        return table + "\n\n" + per_query_table(result, digits) if per_query else table
    raise IRMetricsError(f"unknown output format {fmt!r}; use json, tsv or markdown")


def _means(result: Any, digits: int | None) -> Mapping[str, float]:
    # With --digits, tables round the unrounded means (as JSON does), not BEIR's already rounded ones.
    return result.means if digits is None else {name: result.raw_means[name] for name in result.means}


def _cell(value: float, digits: int) -> str:
    return f"{value:.{digits}f}"


def markdown_table(result: Any, digits: int | None = None) -> str:
    """Families (and variants) as rows, cutoffs or recall levels as columns; a measure without one under "all".

    Values have :func:`table_digits` decimals (5 for the beir preset, 4 for trec, or ``digits``).
    """
    d = table_digits(result, digits)
    means = _means(result, digits)
    families: dict[str, dict[str | None, float]] = {}
    for m in result.measures:
        families.setdefault(m.stem, {})[m.at] = means[m.name]
    cutoffs = sorted({k for row in families.values() for k in row}, key=lambda k: -1.0 if k is None else float(k))
    head = "| measure | " + " | ".join("all" if k is None else f"@{k}" for k in cutoffs) + " |"
    sep = "|---|" + "---:|" * len(cutoffs)
    body = [
        f"| {fam} | " + " | ".join(_cell(row[k], d) if k in row else "" for k in cutoffs) + " |"
        for fam, row in families.items()
    ]
    return "\n".join([head, sep, *body])


def per_query_table(result: Any, digits: int | None = None) -> str:
    """One row per query, one column per measure (the values of ``--per-query``); a blank cell is a query
    that measure does not average (e.g. an unanswered query under the beir preset's pytrec measures)."""
    d = table_digits(result, digits)
    names = list(result.per_query)
    columns = [result.per_query[name] for name in names]
    queries = list(dict.fromkeys(q for values in columns for q in values))
    head = "| query | " + " | ".join(names) + " |"
    sep = "|---|" + "---:|" * len(names)
    body = [
        f"| {_md_text(q)} | " + " | ".join(_cell(c[q], d) if q in c else "" for c in columns) + " |" for q in queries
    ]
    return "\n".join([head, sep, *body])


def _md_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .io import evaluate_run_file, read_qrels

    qrels = read_qrels(args.qrels)
    # Streamed in pieces of whole queries when the file allows it: bounded memory, same result.
    result = evaluate_run_file(
        qrels,
        args.run,
        args.k,
        measures=args.measures,
        preset=args.preset,
        relevance_threshold=args.threshold,
        ties=args.ties,
        missing_queries=args.missing_queries,
        ignore_identical_ids=args.ignore_identical_ids,
        no_relevant=args.no_relevant,
    )
    print(format_result(result, args.format, args.per_query, args.digits))
    return 0


def package_version() -> str:
    """The installed distribution's version (package metadata), else the package's ``__version__``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("haystack-irmetrics")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from . import __version__

        return f"{__version__} (not installed)"


class _Version(argparse.Action):
    """``--version``: the version is looked up only when asked for (package metadata costs ~20 ms per run)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"{parser.prog} {package_version()}")  # on stdout, as argparse's own version action
        parser.exit()


def _default_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(x) for x in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Append "(default: X)" to the help of every option of every subcommand that has a default and
    does not state it already (one place, so evaluate, beir, compare, feedback and plot read alike).

    Options without a help string get one; ``None`` defaults (the preset's or the pipeline's choice),
    flags and ``--help`` are left as they are.
    """
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for sub in subparsers:
        for command in sub.choices.values():
            for action in command._actions:
                default = action.default
                if (
                    not action.option_strings
                    or action.help == argparse.SUPPRESS
                    or default is None
                    or default is argparse.SUPPRESS
                    or isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction)
                    or (isinstance(default, list | tuple) and not default)
                    or "default" in (action.help or "")
                ):
                    continue
                shown = _default_text(default).replace("%", "%%")
                action.help = f"{action.help} (default: {shown})" if action.help else f"default: {shown}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="irmetrics", description="Exact retrieval evaluation (BEIR / trec_eval).")
    parser.add_argument("--version", action=_Version, help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser(
        "evaluate",
        help="score a TREC run file against qrels (TREC or BEIR TSV)",
        description="Score a TREC run file against qrels. JSON prints values exactly as the preset computes "
        "them (beir: BEIR's means rounded to 5 decimals; trec: unrounded), markdown and tsv print "
        f"{TABLE_DIGITS['beir']} decimals (beir) or {TABLE_DIGITS['trec']} (trec); --digits N rounds every "
        "printed value to N decimals in every format.",
    )
    ev.add_argument("qrels", help="qrels file: TREC 'qid iter docid rel' or BEIR TSV with header (gzip ok)")
    ev.add_argument("run", help="TREC run file 'qid Q0 docid rank score tag' (rank ignored; gzip ok)")
    ev.add_argument("-k", type=_ints, default=[1, 3, 5, 10, 100, 1000], help="cutoffs, e.g. 1,3,5,10")
    ev.add_argument(
        "-m",
        "--measures",
        type=_names,
        default=None,
        help="families or names, e.g. NDCG,MRR or nDCG@10,nDCG_exp@10,P@5,Rprec,bpref,iP@0.3,Judged@10 "
        "(default: BEIR's six: NDCG,MAP,Recall,P,MRR,R_cap)",
    )
    ev.add_argument("--preset", choices=["beir", "trec"], default="beir", help="beir 2.2.0 or trec_eval conventions")
    ev.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="relevance threshold for binary metrics (default: the preset's, 1)",
    )
    ev.add_argument("--ties", choices=["trec", "stable"], default=None, help="tie order (default: the preset's)")
    ev.add_argument(
        "--missing-queries",
        choices=["skip", "zero"],
        default=None,
        help="judged queries the run does not answer (default: the preset's)",
    )
    ev.add_argument(
        "--no-relevant",
        choices=["zero", "skip"],
        default=None,
        help="queries without a relevant document (default: the preset's, zero)",
    )
    ev.add_argument(
        "--ignore-identical-ids",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="drop documents whose id is the query id (default: the preset's: on for beir, off for trec)",
    )
    ev.add_argument("--per-query", action="store_true", help="also print per-query values (in every format)")
    ev.add_argument("--format", choices=["json", "tsv", "markdown"], default="json", help="output format")
    ev.add_argument(
        "--digits",
        type=_digits,
        default=None,
        metavar="N",
        help="round every printed value to N decimals (default: JSON exact; tables "
        f"{TABLE_DIGITS['beir']} for beir, {TABLE_DIGITS['trec']} for trec)",
    )
    ev.set_defaults(func=_cmd_evaluate)
    from .beir.cli import add_subcommands as add_beir_subcommands  # beir, compare: handlers in haystack_irmetrics.beir

    add_beir_subcommands(sub)
    from .feedback.cli import add_subcommand as add_feedback  # feedback: handler in haystack_irmetrics.feedback

    add_feedback(sub)
    from .plotting import add_subcommand as add_plot  # plot: handler in haystack_irmetrics.plotting

    add_plot(sub)
    show_defaults(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except IRMetricsError as e:
        print(f"irmetrics: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except OSError as e:  # a path that cannot be read or written (missing, a directory, no permission)
        print(f"irmetrics: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
