"""``irmetrics cache list|clear``: the corpus and query embeddings and bm25s indexes cached under ``$IRMETRICS_CACHE_DIR``
(:mod:`haystack_irmetrics.beir.cache`). Imports only the standard library and numpy until it runs.
"""

from __future__ import annotations

import argparse
import json


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``cache`` to the ``irmetrics`` subcommands."""
    cache = sub.add_parser(
        "cache",
        help="list or clear the cached corpus and query embeddings and bm25s indexes of irmetrics beir",
        description=(
            "irmetrics beir caches corpus and query embeddings (keyed by model, embedder settings and the exact texts, so by "
            "corpus content and chunking) and bm25s indexes (keyed by documents and BM25 parameters) under "
            "$IRMETRICS_CACHE_DIR (default ~/.cache/haystack_irmetrics). Named BEIR datasets kept there are not "
            "cache entries and are never cleared."
        ),
    )
    actions = cache.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="list the entries: kind, key, size, items, what they hold")
    listing.add_argument("--format", choices=["markdown", "json"], default="markdown", help="what to print")
    clear = actions.add_parser("clear", help="delete the entries (all, or one kind)")
    clear.add_argument("--kind", choices=["embeddings", "bm25s"], help="delete only this kind of entry")
    cache.set_defaults(func=run)
    return cache


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics cache list`` or ``irmetrics cache clear``."""
    from ..beir.cache import cache_entries, cache_root, clear_cache

    root = cache_root()
    if args.action == "clear":
        removed = clear_cache(args.kind)
        size = sum(e.size_bytes for e in removed)
        print(f"removed {len(removed)} cache entries ({size / 1e6:.1f} MB) from {root}")
        return 0
    entries = cache_entries()
    if args.format == "json":
        rows = [
            {"kind": e.kind, "key": e.key, "path": str(e.path), "size_bytes": e.size_bytes, "items": e.items,
             "description": e.description}
            for e in entries
        ]  # fmt: skip
        print(json.dumps({"root": str(root), "entries": rows}, indent=2))
        return 0
    print(f"cache: {root} ({len(entries)} entries, {sum(e.size_bytes for e in entries) / 1e6:.1f} MB)")
    if entries:
        print("\n| kind | key | MB | items | holds |\n|---|---|---:|---:|---|")
        for e in entries:
            print(f"| {e.kind} | {e.key} | {e.size_bytes / 1e6:.1f} | {e.items} | {e.description} |")
    return 0


__all__ = ["add_subcommand", "run"]
