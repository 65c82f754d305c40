"""The documentation: the site builds with ``mkdocs build --strict`` (offline), and the README and the
pages speak to users, with no reference to files or material outside the repository."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 300
# Words that point at things a person who cloned the repository does not have (any case; the upper-case
# SEMANTICS.md file name exactly, since docs/semantics.md is a page of the site).
INTERNAL = ("../shared", "shared/data", "seed text", "seed post", "lecture")
INTERNAL_EXACT = ("SEMANTICS.md",)


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (the docs extra)")
def test_the_site_builds_strictly(tmp_path):
    for module in ("material", "mkdocstrings", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    site = tmp_path / "site"
    for page in _pages():
        rel = page.relative_to(DOCS).with_suffix("")
        built = site / ("index.html" if rel.name == "index" else f"{rel}/index.html")
        assert built.is_file(), f"{page.name} was not built"
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in (
        "haystack_irmetrics.core.evaluation.evaluate",
        "haystack_irmetrics.core.evaluation.Evaluation",
        "IRMetricsEvaluator",
        "read_qrels",
        "run_beir",
        "evaluate_feedback",
        "paired_t_test",
        "parse_measure",
    ):
        assert name in api, f"the API reference lost {name}"


def test_the_site_fetches_nothing_at_build_time():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "font: false" in config  # no Google Fonts download
    for feature in ("inventories", "privacy", "social", "import:"):
        assert feature not in config, feature


def test_every_page_is_in_the_nav():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in _pages():
        assert f" {page.relative_to(DOCS).as_posix()}" in config, f"{page.name} is not in mkdocs.yml's nav"


def test_the_readme_is_a_short_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"


@pytest.mark.parametrize("path", [README, *_pages()], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_internal_references(path):
    text = path.read_text(encoding="utf-8")
    found = [word for word in INTERNAL if word.lower() in text.lower()]
    found += [word for word in INTERNAL_EXACT if word in text]
    assert not found, f"{path.relative_to(ROOT)} mentions {found}"


def test_readme_links_into_the_docs_resolve():
    import re

    text = README.read_text(encoding="utf-8")
    targets = {m.split("#")[0] for m in re.findall(r"\]\((docs/[^)\s]+)\)", text)}
    assert targets, "the README links to no docs page"
    missing = [t for t in sorted(targets) if not (ROOT / t).exists()]
    assert not missing, missing


def test_the_cli_page_lists_every_subcommand_and_option():
    import argparse

    from haystack_irmetrics.cli import build_parser

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        assert f"## irmetrics {name}" in page, f"docs/cli.md has no section for irmetrics {name}"
        for action in sub._actions:
            for option in action.option_strings:
                assert option in page, f"docs/cli.md does not mention irmetrics {name} {option}"
    for action in parser._actions:
        for option in action.option_strings:
            assert option in page, f"docs/cli.md does not mention irmetrics {option}"
