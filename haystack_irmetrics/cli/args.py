"""Argument types, declarations and help rules ``irmetrics`` subcommands share (standard library only; the package's
settings values they build are imported when a command runs).

The list syntax is one for all subcommands: ``-k 1,3,5`` (:func:`ints`), ``-m NDCG,P@5``
(:func:`names`, commas inside a measure's parameters kept), ``--levels 0,0.5,1`` (:func:`floats`).
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from typing import Any

# argparse's message for a value outside ``choices`` (3.10-3.13 quote the choices, 3.14 does not).
_INVALID_CHOICE = re.compile(r"invalid choice: '?([^']*?)'? \(choose from (.*)\)$")
_NUMBER = re.compile(r"^-\.?\d")  # a negative number is a value, never a flag


def closest(name: str, names: Sequence[str]) -> str | None:
    """The name of ``names`` closest to a mistyped ``name`` (difflib's ratio 0.6 or more), or ``None``.

    >>> closest("--budjet", ["--budget", "--strategy", "--seed"]), closest("asess", ["assess", "pool"])
    ('--budget', 'assess')
    """
    found = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return found[0] if found else None


class Parser(argparse.ArgumentParser):
    """The parser of ``irmetrics`` and of each of its commands (a subcommand's parser is of its parent's class):
    a flag the command does not take is named first, with the closest one it does take (``--budjet``: did you
    mean --budget?), before argparse would report a required flag missing; a value outside the choices (a
    subcommand, ``--preset``) gets the closest choice. ``words``: the first words that name an action of the
    command rather than its first file (``irmetrics pool simulate``, ``irmetrics assess export``): a first word
    that is no file and close to one of them is named with it."""

    words: tuple[str, ...] = ()

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        tokens = list(sys.argv[1:] if args is None else args)
        self._check_flags(tokens)
        if self.words and tokens and tokens[0] not in self.words and not tokens[0].startswith("-"):
            import os

            match = closest(tokens[0], self.words)
            if match and not os.path.exists(tokens[0]):
                self.error(f"{tokens[0]!r} is no file and no action: did you mean {self.prog} {match}?")
        return super().parse_known_args(args, namespace)

    def _check_flags(self, tokens: list[str]) -> None:
        known = [s for action in self._actions for s in action.option_strings]
        commands = any(isinstance(a, argparse._SubParsersAction) for a in self._actions)
        for token in tokens:
            if token == "--":
                return
            if not token.startswith("-") or token == "-" or _NUMBER.match(token):
                if commands:  # a subcommand: the flags after it are its parser's to check
                    return
                continue
            name = token.split("=", 1)[0]
            if (
                name in known
                or token[:2] in known
                or (name.startswith("--") and any(s.startswith(name) for s in known))
            ):
                continue  # a flag, "-k10", or an abbreviation argparse expands (or calls ambiguous)
            match = closest(name, [s for s in known if s.startswith("--")])
            self.error(f"unrecognized argument {name}" + (f": did you mean {match}?" if match else ""))

    def error(self, message: str) -> Any:  # type: ignore[override]
        found = _INVALID_CHOICE.search(message)
        if found:
            choices = re.findall(r"'([^']*)'", found.group(2)) or [c.strip() for c in found.group(2).split(",")]
            match = closest(found.group(1), choices)
            if match and "did you mean" not in message and "maybe you meant" not in message:
                message = f"{message}: did you mean {match!r}?"
        super().error(message)


def ints(text: str) -> list[int]:
    """``"1,3,5"`` as ``[1, 3, 5]`` (empty items skipped)."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def floats(text: str) -> list[float]:
    """``"0,0.5,1"`` as ``[0.0, 0.5, 1.0]`` (empty items skipped)."""
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def names(text: str) -> list[str]:
    """Comma-separated names; commas inside parameters separate gains, not measures:
    ``"nDCG(gains={0:0,1:1})@10,P@5"`` is two names."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text + ","):
        depth += ch in "({"
        depth -= ch in ")}"
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    return [x for x in out if x]


def digits(text: str) -> int:
    """A number of decimals, 0 to 17."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 17:
        raise argparse.ArgumentTypeError(f"expected a number of decimals from 0 to 17, got {text!r}")
    return value


def top_k(text: str) -> int:
    """A whole number >= 0 (0 keeps the pipeline's own top_k)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0 (0 keeps the pipeline's own), got {text!r}")
    return value


def seed(text: str) -> int:
    """A seed: a whole number from 0 to 2**32 - 1, checked by the package's one seed check
    (:func:`haystack_irmetrics.stats.significance.seed_value`); every ``--seed`` takes it."""
    from ..stats.significance import seed_value  # numpy: only when a seed is given

    try:
        value: Any = int(text)
    except ValueError:
        value = text  # named as typed in the message
    try:
        return seed_value(value)
    except ValueError as e:  # InvalidSeedError is a ValueError
        raise argparse.ArgumentTypeError(str(e)) from None


def size(text: str) -> tuple[float, float]:
    """``"6.4x4"`` as ``(6.4, 4.0)`` inches (the plot's checks refuse what is not positive and finite)."""
    try:
        w, h = (float(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in inches, e.g. 6.4x4, got {text!r}") from None
    return w, h


def named_file(spec: str) -> str:
    """The file of a ``[NAME=]FILE`` argument, by the one rule of :func:`~haystack_irmetrics.io.run_names.
    split_named` (a path that exists is that path, ``=`` in it or not); an argument that names no file is
    returned as it is (the command itself says so)."""
    from ..errors import InvalidArgumentError
    from ..io.run_names import split_named

    try:
        return split_named(spec)[1]
    except InvalidArgumentError:
        return spec


def files_of(path: str | None, names: tuple[str, ...]) -> list[str]:
    """The files a command reads from ``path``: ``path/NAME`` for each of ``names`` when it is a folder, else
    ``path`` itself (none when it is ``None``), for a command's ``paths``."""
    import os

    if path is None:
        return []
    return [os.path.join(path, name) for name in names] if os.path.isdir(path) else [path]


def writes_nothing(args: argparse.Namespace) -> Any:
    """The ``paths`` of a command that writes no file: nothing for :func:`~haystack_irmetrics.io.output.check_outputs`
    to check."""
    from ..io.output import Paths

    return Paths()


def policy(args: argparse.Namespace) -> Any:
    """The evaluation policy of a subcommand's options, resolved once (a
    :class:`~haystack_irmetrics.core.presets.Preset`): ``--preset`` with whichever of ``--threshold``,
    ``--ties``, ``--missing-queries``, ``--no-relevant`` and ``--ignore-identical-ids`` it has."""
    from ..core.presets import resolve_preset  # numpy: imported when a subcommand runs, not for --help

    return resolve_preset(
        args.preset,
        relevance_threshold=getattr(args, "threshold", None),
        ties=getattr(args, "ties", None),
        missing_queries=getattr(args, "missing_queries", None),
        ignore_identical_ids=getattr(args, "ignore_identical_ids", None),
        no_relevant=getattr(args, "no_relevant", None),
    )


def server_options(p: argparse.ArgumentParser) -> None:
    """``--api-base-url`` and ``--api-key-env``: the OpenAI-compatible server of a chat model (``irmetrics judge``,
    ``irmetrics usefulness``)."""
    from ..judges.settings import API_KEY_ENV

    p.add_argument("--api-base-url", metavar="URL", help="the OpenAI-compatible server, e.g. http://localhost:8000/v1")
    p.add_argument(
        "--api-key-env",
        default=API_KEY_ENV,
        metavar="VAR",
        help="the environment variable holding the API key (never written anywhere; a server at "
        "--api-base-url is sent a placeholder when it is unset)",
    )


def asking_options(p: argparse.ArgumentParser) -> None:
    """``--concurrency``, ``--retries``, ``--backoff`` and ``--timeout``: how a model's requests are sent
    (:func:`haystack_irmetrics.judges.batch.judge_texts`)."""
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    p.add_argument("--retries", type=int, default=4, help="further attempts after a 429, 5xx, time-out or refusal")
    p.add_argument("--backoff", type=float, default=0.5, help="seconds before the first retry (doubling)")
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds one whole request may take, last byte included (--llm)"
    )


def click_log_options(p: argparse.ArgumentParser, *, team: bool = False, propensity: bool = False) -> None:
    """The options of a click log (``irmetrics clicks`` and ``irmetrics interleave``): its format, the column of
    each role (``--team-col`` and ``--segment`` with ``team``, ``--propensity-col`` with ``propensity``), the
    first position, the ranks kept and the error policy (read by :func:`click_log_settings`)."""
    c = p.add_argument_group("log columns")
    c.add_argument(
        "--format", dest="fmt", choices=["jsonl", "csv", "tsv", "parquet"], default=None, help="default: file name"
    )
    c.add_argument("--query-col", default="query_id", help="column of the query ids")
    c.add_argument("--doc-col", default="doc_id", help="column of the document ids")
    c.add_argument("--session-col", default="session", help="column of the session (impression) ids")
    c.add_argument("--position-col", default="position", help="column of the positions shown")
    c.add_argument("--click-col", default="click", help="column of the clicks (0/1, true/false, yes/no)")
    if team:
        c.add_argument("--team-col", default="team", help="column of the interleaving team (a or b)")
        c.add_argument("--segment", default=None, metavar="COL", help="column to break the outcome down by")
    if propensity:
        c.add_argument("--propensity-col", default="propensity", help="column of the logging propensities")
    c.add_argument("--position-base", type=int, default=1, help="first position in the log (1, or 0)")
    c.add_argument("--max-rank", type=int, default=None, help="keep each session's first N positions")
    c.add_argument(
        "--on-error",
        choices=["raise", "skip"],
        default="raise",
        help="malformed rows and sessions: stop at the first (raise) or skip, count and list them",
    )


def bootstrap_options(p: argparse.ArgumentParser) -> None:
    """``--json`` and the bootstrap's ``--confidence``, ``--n-resamples`` and ``--seed`` (estimates, measures,
    windows and ``irmetrics interleave``)."""
    p.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    p.add_argument("--confidence", type=float, default=0.95, help="bootstrap interval level")
    p.add_argument("--n-resamples", type=int, default=10_000, help="bootstrap resamples")
    p.add_argument("--seed", type=seed, default=0, help="seed of the resamples")


def click_log_settings(
    args: argparse.Namespace, path: str, *, team: bool = False, propensity: bool = False, segment: bool = False
) -> Any:
    """The :class:`~haystack_irmetrics.clicks.jobs.LogSettings` of ``path`` from the log options."""
    from ..clicks.jobs import LogSettings

    columns: dict[str, str | None] = {
        "query": args.query_col,
        "doc": args.doc_col,
        "session": args.session_col,
        "position": args.position_col,
        "click": args.click_col,
    }
    if team:
        columns["team"] = args.team_col
    if team or segment:
        columns["segment"] = args.segment
    if propensity:
        columns["propensity"] = args.propensity_col
    if getattr(args, "timestamp_col", None):
        columns["timestamp"] = args.timestamp_col
    options = {"on_error": args.on_error, "position_base": args.position_base, "max_rank": args.max_rank}
    return LogSettings(path, columns, fmt=args.fmt, format_option="--format", **options)


def bootstrap_settings(args: argparse.Namespace) -> Any:
    """``--confidence``, ``--n-resamples`` and ``--seed`` as :class:`~haystack_irmetrics.clicks.jobs.BootstrapSettings`."""
    from ..clicks.jobs import BootstrapSettings

    return BootstrapSettings(confidence=args.confidence, n_resamples=args.n_resamples, seed=args.seed)


def add_threshold_option(parser: argparse.ArgumentParser | Any) -> None:
    """``--threshold``, the relevance threshold of the binary measures, as every command that scores runs against
    qrels takes it (read by :func:`policy`)."""
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="relevance threshold for binary metrics (default: the preset's, 1)",
    )


def add_significance_options(parser: argparse.ArgumentParser, title: str, stats_help: str) -> None:
    """The options of the paired tests every comparing subcommand shares, in a group named ``title``:
    ``--stats/--no-stats``, ``--n-resamples``, ``--seed``, ``--confidence``."""
    sig = parser.add_argument_group(title)
    sig.add_argument(
        "--stats",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"{stats_help} (default: on when scipy is installed)",
    )
    sig.add_argument("--n-resamples", type=int, default=10_000, help="sign patterns and bootstrap resamples")
    sig.add_argument("--seed", type=seed, default=0, help="seed of the resamples")
    sig.add_argument("--confidence", type=float, default=0.95, help="bootstrap interval level")


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


__all__ = [
    "Parser",
    "bootstrap_options",
    "bootstrap_settings",
    "click_log_options",
    "click_log_settings",
    "closest",
    "digits",
    "files_of",
    "floats",
    "ints",
    "named_file",
    "names",
    "seed",
    "show_defaults",
    "size",
    "top_k",
    "writes_nothing",
]
