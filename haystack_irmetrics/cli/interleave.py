"""``irmetrics interleave LOG [--method M] [--segment COL] [--json]``: which of two interleaved rankers users prefer.

Credits each impression's clicks to teams ``a`` and ``b`` by the method's own rule (team-draft and
probabilistic: the log's team column, as
:class:`~haystack_irmetrics.components.interleaving.InterleavingJoiner` marks the Documents; balanced:
Joachims's rule over the two original rankings, ``--ranking-a`` and ``--ranking-b``) and prints
wins, losses, ties, delta (Chapelle et al. 2012), the sign test's p-value and a bootstrap interval
(:mod:`haystack_irmetrics.clicks.interleaving`, through the job :func:`haystack_irmetrics.clicks.jobs.interleave_log`,
imported when it runs).
"""

from __future__ import annotations

import argparse

from .args import bootstrap_options, bootstrap_settings, click_log_options, click_log_settings, writes_nothing


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``interleave`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "interleave",
        help="which of two interleaved rankers users prefer: wins, losses, ties, delta, p-value, interval",
        description="Credit each impression's clicks to the two rankers of an interleaved log by the method's "
        "own rule (team-draft and probabilistic: the clicks on each team's documents, the team column a or b as "
        "InterleavingJoiner marks them; balanced: Joachims's rule over the original rankings, --ranking-a and "
        "--ranking-b) and compare a with b: wins (a credited more), losses, ties, "
        "delta = (wins + ties/2) / (wins + losses + ties) - 0.5 (Chapelle et al. 2012; impressions with a "
        "click), a two-sided sign test and a percentile bootstrap interval of delta.",
    )
    p.add_argument("log", help="click log with a team column: .jsonl/.ndjson/.json, .csv/.tsv or .parquet")
    p.add_argument(
        "--method",
        choices=["team-draft", "balanced", "probabilistic"],
        default="team-draft",
        help="how the log was interleaved: its credit rule (team-draft and probabilistic: clicks per team; "
        "balanced: Joachims's rule over the two original rankings)",
    )
    p.add_argument("--ranking-a", default=None, metavar="RUN", help="balanced: ranker a's rankings, a TREC run")
    p.add_argument("--ranking-b", default=None, metavar="RUN", help="balanced: ranker b's rankings, a TREC run")
    bootstrap_options(p)
    click_log_options(p, team=True)
    p.set_defaults(func=run, paths=writes_nothing)  # it prints, writes no file
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics interleave``."""
    from ..clicks.jobs import InterleaveSettings, interleave_log
    from ..errors import InvalidArgumentError
    from ..io.tables import json_text, markdown_row, number_cell
    from ..stats.compare import format_p

    balanced = args.method == "balanced"
    given = [x is not None for x in (args.ranking_a, args.ranking_b)]
    if balanced and not all(given):
        raise InvalidArgumentError(
            "--method balanced credits by the two original rankings: give --ranking-a RUN and --ranking-b RUN"
        )
    if any(given) and not balanced:
        raise InvalidArgumentError(
            f"--ranking-a and --ranking-b are balanced interleaving's; {args.method} credits by team"
        )
    settings = InterleaveSettings(
        click_log_settings(args, args.log, team=not balanced, segment=True),
        args.method,
        rankings=(args.ranking_a, args.ranking_b) if balanced else None,
        by_segment=args.segment is not None,
        bootstrap=bootstrap_settings(args),
    )
    result = interleave_log(settings)
    if args.json:
        print(json_text(result.to_dict(), indent=2))
        return 0
    head = ["segment", "impressions", "wins", "losses", "ties", "delta", "p_value", "ci_low", "ci_high"]
    print(markdown_row(head))
    print("|" + "---|" * len(head))
    for name, o in result.outcomes.items():  # a segment's name is the log's text: escaped as a cell
        cells = [name, str(o.impressions), str(o.wins), str(o.losses), str(o.ties)]
        p = "—" if o.wins + o.losses + o.ties == 0 else format_p(o.p_value)  # no click: --json says why
        cells += [number_cell(o.delta), p, number_cell(o.ci_low), number_cell(o.ci_high)]
        print(markdown_row(cells))
    return 0


__all__ = ["add_subcommand", "run"]
