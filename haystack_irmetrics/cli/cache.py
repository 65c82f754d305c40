"""``irmetrics cache list|clear``: the corpus and query embeddings and bm25s indexes cached under ``$IRMETRICS_CACHE_DIR``
(:mod:`haystack_irmetrics.beir.cache`). Imports only the standard library and numpy until it runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io.tables import json_text, markdown_row
from .args import writes_nothing


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``cache`` to the ``irmetrics`` subcommands."""
    cache = sub.add_parser(
        "cache",
        help="list or clear the cached corpus and query embeddings and bm25s indexes of irmetrics beir, and the "
        "judgments of irmetrics judge",
        description=(
            "irmetrics beir caches corpus and query embeddings (keyed by model, embedder settings and the exact texts, so by "
            "corpus content and chunking) and bm25s indexes (keyed by documents and BM25 parameters) under "
            "$IRMETRICS_CACHE_DIR (default ~/.cache/haystack_irmetrics). An entry is checked when read; a damaged one "
            "is recomputed. clear deletes only the entries irmetrics wrote (ok or damaged), follows no symbolic link "
            "and reports what it leaves alone. Named BEIR datasets ($IRMETRICS_BEIR_DIR) are not cache entries and "
            "are never cleared. The judgments of irmetrics judge (one SQLite file, judgments/judgments.sqlite) are "
            "listed by judge (fingerprint, model, pairs, size); only clear --kind judgments deletes them (--judge: one "
            "judge's)."
        ),
    )
    actions = cache.add_subparsers(dest="action", required=True)
    listing = actions.add_parser(
        "list",
        help="list the entries: kind, key, status (ok or damaged), size, items, what they hold; the judgments by judge",
    )
    listing.add_argument("--format", choices=["markdown", "json"], default="markdown", help="what to print")
    clear = actions.add_parser(
        "clear",
        help="delete the entries (all, or one kind), ok or damaged; leave links and what irmetrics did not write alone",
    )
    clear.add_argument("--kind", choices=["embeddings", "bm25s", "judgments"], help="delete only this kind of entry")
    clear.add_argument(
        "--judge",
        metavar="FINGERPRINT",
        default=None,
        help="delete only the judgments of this judge (its fingerprint or the start of it, as listed)",
    )
    # No input file: it lists and deletes only the entries it wrote under $IRMETRICS_CACHE_DIR (never a dataset).
    cache.set_defaults(func=run, paths=writes_nothing)
    return cache


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics cache list`` or ``irmetrics cache clear``."""
    from ..beir.cache import cache_root, clear_cache_report
    from ..beir.cache_admin import scan_cache, scan_json
    from ..errors import InvalidArgumentError
    from ..judges.cache import cache_listing, clear_judgments

    root = cache_root()
    if args.action == "clear" and (args.kind == "judgments" or args.judge is not None):
        if args.kind not in (None, "judgments"):
            raise InvalidArgumentError(f"--judge clears judgments, not --kind {args.kind}")
        print("\n".join(clear_judgments(root, args.judge) or [f"no judgment cache under {root}"]))
        return 0
    if args.action == "clear":
        done = clear_cache_report(args.kind, root)
        size = sum(e.size_bytes for e in done.removed)
        print(f"removed {len(done.removed)} cache entries ({size / 1e6:.1f} MB) from {root}")
        for e in done.removed:
            state = "" if e.status == "ok" else f", damaged: {e.problem}"
            print(f"  removed {_rel(e.path, root)} ({e.size_bytes / 1e6:.1f} MB, {e.description}{state})")
        for path in done.unfinished:
            print(f"  removed {_rel(path, root)} (an unfinished write)")
        if done.left_alone:
            print(f"left alone {len(done.left_alone)} item{'s' if len(done.left_alone) != 1 else ''}:")
            for item in done.left_alone:
                print(f"  {_rel(item.path, root)}: {item.reason}")
        kept = cache_listing(root)["judges"] if args.kind is None else []
        if kept:  # judgments cost requests to a model: cleared only when asked for by name
            print(f"kept {sum(e['pairs'] for e in kept)} judgments of irmetrics judge: --kind judgments clears them")
        return 0
    scan = scan_cache(root=root)
    judgments = cache_listing(root)
    if args.format == "json":
        import json

        print(json_text({**json.loads(scan_json(scan)), "judgments": judgments}, indent=2))
        return 0
    entries = scan.entries
    damaged = sum(e.status != "ok" for e in entries)
    note = f", {damaged} damaged" if damaged else ""
    print(f"cache: {root} ({len(entries)} entries{note}, {sum(e.size_bytes for e in entries) / 1e6:.1f} MB)")
    if entries:
        print("\n| kind | key | status | MB | items | holds |\n|---|---|---|---:|---:|---|")
        for e in entries:
            status = "ok" if e.status == "ok" else f"damaged: {e.problem}"
            cells = [e.kind, e.key, status, f"{e.size_bytes / 1e6:.1f}", e.items, e.description]
            print(markdown_row(cells))  # a description holds paths and names: escaped as cells
    if scan.left_alone:
        print(f"\nnot cache entries ({len(scan.left_alone)}; irmetrics cache clear leaves them alone):")
        for item in scan.left_alone:
            print(f"  {_rel(item.path, root)}: {item.reason}")
    for line in _judgment_lines(judgments):
        print(line)
    return 0


def _judgment_lines(listing: dict) -> list[str]:
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
    for e in judges:
        judge = e["fingerprint"][:12] if e["fingerprint"] else "-"
        cells = (judge, e["kind"], e["model"], e["pairs"], e["unparseable"], f"{e['size_bytes'] / 1e3:.1f}")
        lines.append(markdown_row(cells))  # a model's name is the server's text: its "|" escaped
    return lines


__all__ = ["add_subcommand", "run"]
