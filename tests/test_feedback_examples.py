"""The feedback examples run and print the numbers they should."""

from __future__ import annotations

import contextlib
import io
import math
import re
import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_script(name: str, *args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ns = runpy.run_path(str(EXAMPLES / name), run_name="not_main")
        ns["main"](*args)
    return out.getvalue()


def test_every_feedback_example_is_tested_here():
    assert sorted(p.name for p in EXAMPLES.glob("feedback_*.py")) == ["feedback_report.py", "feedback_threshold.py"]


def test_seed_case_example_prints_graded_ndcg_and_thresholded_binary_metrics():
    text = run_script("feedback_threshold.py")
    log3 = math.log2(3)
    q2 = (0.7 + 1.0 / log3) / (1.0 + 0.7 / log3)
    q3 = (0.4 + 0.2 / log3) / (1.0 + 0.4 / log3)
    assert f"  NDCG@2    {(1 + q2 + q3) / 3:.4f}  per query [1.0, {round(q2, 4)}, {round(q3, 4)}]" in text
    assert "  P@2       0.6667  per query [1.0, 1.0, 0.0]" in text
    assert "  MRR@2     0.6667  per query [1.0, 1.0, 0.0]" in text
    assert "'q3': ['doc3', 'doc1', 'doc2', 'doc4']" in text  # BM25 puts the parrot first
    assert "bm25 - logged NDCG@2    +0.2189  p (exact randomization) 0.500" in text
    assert "pipeline: {'NDCG@1': 0.7, 'NDCG@3': 0.89566, 'P@1': 0.66667, 'MRR@3': 0.77778}" in text


def test_report_example_shows_full_and_condensed_lists_disagreeing_and_explains_it(tmp_path):
    text = run_script("feedback_report.py", str(tmp_path))
    assert text.startswith("rows 14222, skipped 3: ['document id is missing or empty'")
    assert "Judged@10: logged 0.4361, new 0.2040" in text
    assert "full      NDCG@10 logged 0.6191  new 0.4038  delta -0.2154" in text
    assert "condensed NDCG@10 logged 0.7653  new 0.8003  delta +0.0350 [+0.0196, +0.0508]  p Holm 0.0048 **" in text
    assert (tmp_path / "report.md").read_text().count("**3 skipped as malformed**") == 1
    assert (tmp_path / "plots" / "delta_new_NDCG_10.png").stat().st_size > 1000


SECTION = "## Score production feedback"
# Written in haystack_irmetrics/feedback/README_SECTION.md and merged into README.md: check every copy.
ROOT = EXAMPLES.parent
DOCS = [
    p
    for p in (ROOT / "haystack_irmetrics" / "feedback" / "README_SECTION.md", ROOT / "README.md")
    if p.exists() and SECTION in p.read_text()
]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_readme_section_snippet_prints_exactly_the_output_it_shows(path):
    text = path.read_text()
    text = text[text.index(SECTION) :]
    match = re.search(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", text, re.S)
    assert match, f"{path.name}: the section lost its snippet / output pair"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(match.group(1), str(path), "exec"), {"__name__": "__readme__"})
    assert out.getvalue() == match.group(2)
