"""The file and column paths give the same numbers as the dict path, and fall back correctly."""

from __future__ import annotations

import gzip
import random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from haystack_irmetrics import DuplicateDocumentError, ParseError, evaluate
from haystack_irmetrics.core.inputs import ColumnarRun, Run
from haystack_irmetrics.io import _fast, read_run, read_trec_run
from tests import strategies as S

needs_polars = pytest.mark.skipif(not _fast.available(), reason="polars (extra 'columnar') is not installed")


def _write_run(path, results, shuffle_seed=None, sep=" ", compress=False):
    rows = [(q, d, s) for q, docs in results.items() for d, s in docs.items()]
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(rows)
    text = "".join(f"{q}{sep}Q0{sep}{d}{sep}0{sep}{s!r}{sep}tag\n" for q, d, s in rows)
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _ids_ok(results):
    # Whitespace in ids cannot be written to a TREC file.
    return all(" " not in q and all(" " not in d for d in docs) for q, docs in results.items())


@needs_polars
@given(S.qrels(), S.runs(), S.k_values, st.sampled_from(["beir", "trec"]), st.integers(0, 3), st.booleans())
def test_fast_file_path_equals_dict_path(tmp_path_factory, qrels, results, ks, preset, seed, tab):
    results = {q: docs for q, docs in results.items() if docs}
    assume(results and _ids_ok(results) and any(qrels.get(q) for q in results))
    path = _write_run(tmp_path_factory.mktemp("run") / "run", results, shuffle_seed=seed, sep="\t" if tab else " ")
    run = read_run(path)
    assert isinstance(run, ColumnarRun)
    # Row order in the file is the insertion order within each query.
    expected = evaluate(qrels, read_trec_run(path, fast=False), ks, preset=preset)
    got = evaluate(qrels, run, ks, preset=preset)
    assert got.means == expected.means
    assert dict(got.per_query.items()) == dict(expected.per_query.items())


@needs_polars
def test_fast_path_reads_numeric_query_ids_as_strings_and_gzip(tmp_path):
    path = _write_run(tmp_path / "run.gz", {"301": {"10": 1.0, "9": 1.0}}, compress=True)
    run = read_run(path)
    assert isinstance(run, ColumnarRun) and run.qids == ["301"]
    assert run.data == {"301": {"10": 1.0, "9": 1.0}}


@needs_polars
def test_fast_path_duplicate_falls_back_to_line_numbered_error(tmp_path):
    path = _write_run(tmp_path / "run", {"q1": {"d1": 1.0, "d2": 0.5}})
    path.write_text(path.read_text() + "q1 Q0 d1 0 0.1 tag\n")
    with pytest.raises(DuplicateDocumentError, match=r"rows 1 and 3"):
        read_run(path)


@needs_polars
def test_fast_path_bad_score_falls_back_to_line_numbered_error(tmp_path):
    path = tmp_path / "run"
    path.write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 inf t\n")
    with pytest.raises(ParseError, match=r"run:2: score 'inf'"):
        read_run(path)


def test_columns_api_builds_the_same_run_as_a_dict():
    run = Run.from_columns(["q1", "q2", "q1"], ["d1", "d1", "d2"], [0.5, 0.7, 0.9])
    assert run.data == {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d1": 0.7}}
    with pytest.raises(DuplicateDocumentError, match=r"rows 1 and 3"):
        Run.from_columns(["q1", "q2", "q1"], ["d1", "d1", "d1"], [0.5, 0.7, 0.9])
