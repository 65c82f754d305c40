"""Every script in examples/ runs, prints the numbers it should, and the README snippet prints what it shows."""

from __future__ import annotations

import contextlib
import io
import math
import re
import runpy
from pathlib import Path

import pytest
import pytrec_eval

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_script(name: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return out.getvalue()


# Examples and the test file that runs each (the first three run here).
TESTED_IN = {
    "evaluate_retriever.py": "tests/test_examples.py",
    "compare_retrievers.py": "tests/test_examples.py",
    "graded_feedback.py": "tests/test_examples.py",
    "feedback_threshold.py": "tests/test_feedback_examples.py",
    "feedback_report.py": "tests/test_feedback_examples.py",
    "plot_curves.py": "tests/test_plots.py",
    "make_feedback_data.py": "tests/test_docs_commands.py",  # writes examples/data/, which the docs' commands read
    "make_click_data.py": "tests/test_clicks_cli.py",  # writes the click logs and runs of examples/data/
    "judge_experiment.py": "tests/docs_tabled.py",  # docs/judging.md's SciFact experiment, tabled (it embeds)
    "make_diversity_qrels.py": "tests/test_clicks_cli.py",  # writes examples/data/diversity_qrels.txt
    "make_ppi_qrels.py": "tests/test_judge_trust.py",  # writes examples/data/ppi_qrels.tsv, which --ppi reads
    "make_qa_sample.py": "tests/test_usefulness_data.py",  # writes examples/data/qa/, which irmetrics usefulness reads
}


def test_every_example_script_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(TESTED_IN)
    root = EXAMPLES.parent
    for name, test_file in TESTED_IN.items():
        assert name in (root / test_file).read_text(), f"{test_file} does not run {name}"


def test_evaluate_retriever_example_prints_beir_table_of_its_bm25_run():
    text = run_script("evaluate_retriever.py")
    assert "q1 ['d5', 'd2', 'd3']" in text
    # q1: relevant d2 at rank 2 -> NDCG 1/log2(3); q3: d8 at 1 and d1 at 3 -> (1 + 1/2) / (1 + 1/log2(3)).
    q1, q3 = 1 / math.log2(3), 1.5 / (1 + 1 / math.log2(3))
    assert f"NDCG@3 {round((q1 + 1 + q3 + 1) / 4, 4)} [{round(q1, 4)}, 1.0, {round(q3, 4)}, 1.0]" in text
    assert "MRR@3      0.875" in text
    assert "P@3        0.41667" in text  # 5 relevant of 12 slots
    assert "MRR@3 per query {'q1': 0.5, 'q2': 1.0, 'q3': 1.0, 'q4': 1.0}" in text


def test_compare_retrievers_example_prints_comparative_detailed_report_of_both_runs():
    text = run_script("compare_retrievers.py")
    assert re.search(
        r"^question +\['kittens', 'how to train a puppy', 'talking birds', 'domesticated dogs'\]$", text, re.M
    )
    for column in ("bm25_NDCG@3", "bm25_MRR@3", "embedding_NDCG@3", "embedding_Recall@3"):
        assert re.search(rf"^{re.escape(column)} +\[", text, re.M), column
    assert "bm25 {'MRR@3': 0.5, 'NDCG@3': 0.3066, 'Recall@3': 0.25}" in text


def test_graded_feedback_example_uses_float_votes_and_threshold_half():
    text = run_script("graded_feedback.py")
    log3 = math.log2(3)
    ideal = 1.0 + 0.5 / log3
    dog, parrot = (0.3 + 0.5 / log3) / ideal, (0.3 + 1.0 / log3) / ideal  # returned 0.3 first, then 0.5 / 1.0
    assert f"NDCG@2    {round((1 + dog + parrot) / 3, 5)}" in text
    assert f"per query [1.0, {round(dog, 4)}, {round(parrot, 4)}]" in text
    assert "MAP@2     0.5      per query [1.0, 0.25, 0.25]" in text
    assert "P@2       0.66667  per query [1.0, 0.5, 0.5]" in text
    # BEIR's rules on the same votes: only 1.0 is relevant for P, and any vote > 0 for MRR.
    assert "'P@2': 0.33333" in text and "'MRR@2': 1.0" in text


def test_pytrec_eval_refuses_the_float_votes_of_the_graded_feedback_example():
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator({"q": {"doc1": 1.0, "doc2": 0.5}}, {"ndcg_cut.2"})


SECTION = "## Use in a Haystack pipeline"
# The section is written in examples/README_SECTION.md and merged into README.md: check every copy.
DOCS = [
    p
    for p in (EXAMPLES / "README_SECTION.md", EXAMPLES.parent / "README.md")
    if p.exists() and SECTION in p.read_text()
]


def readme_snippet(path: Path) -> tuple[str, str]:
    text = path.read_text()
    text = text[text.index(SECTION) :]
    match = re.search(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", text, re.S)
    assert match, f"{path.name}: the section lost its snippet / output pair"
    return match.group(1), match.group(2)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_readme_section_snippet_prints_exactly_the_output_it_shows(path):
    code, expected = readme_snippet(path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README_SECTION.md", "exec"), {"__name__": "__readme__"})
    assert out.getvalue() == expected
