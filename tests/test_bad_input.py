"""Every bad input gets a typed error naming what is wrong, or a documented value."""

from __future__ import annotations

import copy
import gzip
import re
import warnings
from decimal import Decimal

import numpy as np
import pytest

from haystack_irmetrics import (
    DuplicateCutoffError,
    DuplicateDocumentError,
    EmptyInputError,
    InvalidCutoffError,
    InvalidIdError,
    InvalidLabelError,
    InvalidPolicyError,
    InvalidScoreError,
    IRMetricsError,
    NoOverlapError,
    ParseError,
    UnknownMeasureError,
    evaluate,
)
from haystack_irmetrics.io import read_qrels, read_run, read_trec_run

QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
RESULTS = {"q1": {"d1": 0.5, "d2": 0.7}, "q2": {"d3": 0.1, "d4": 0.2}}


def test_all_errors_are_value_errors_of_one_hierarchy():
    for cls in (
        InvalidCutoffError,
        DuplicateCutoffError,
        InvalidScoreError,
        InvalidLabelError,
        ParseError,
        EmptyInputError,
        NoOverlapError,
        DuplicateDocumentError,
        InvalidIdError,
        UnknownMeasureError,
    ):
        assert issubclass(cls, IRMetricsError) and issubclass(cls, ValueError)


@pytest.mark.parametrize("k", [0, -1, 2.5, "10", True, None])
def test_cutoff_that_is_not_a_positive_integer_raises_invalid_cutoff(k):
    with pytest.raises(InvalidCutoffError, match="whole number >= 1"):
        evaluate(QRELS, RESULTS, [1, k])


def test_duplicate_cutoff_raises_instead_of_doubling_like_beir():
    with pytest.raises(DuplicateCutoffError, match="cutoff 10 is given twice"):
        evaluate(QRELS, RESULTS, [10, 5, 10])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), None, "abc", [1.0]])
def test_non_finite_or_non_numeric_score_names_query_and_document(bad):
    results = copy.deepcopy(RESULTS)
    results["q2"]["d4"] = bad
    with pytest.raises(InvalidScoreError, match=r"document 'd4' in query 'q2'"):
        evaluate(QRELS, results, [1])


def test_numeric_string_as_first_score_of_a_query_is_rejected():
    with pytest.raises(InvalidScoreError, match="is str, not a number"):
        evaluate(QRELS, {"q1": {"d1": "0.5"}}, [1])


@pytest.mark.parametrize("bad", [float("nan"), "x", None, float("inf")])
def test_non_finite_or_non_numeric_label_names_query_and_document(bad):
    with pytest.raises(InvalidLabelError, match=r"document 'd9' in query 'q2'"):
        evaluate({"q1": {"d1": 1}, "q2": {"d3": 1, "d9": bad}}, RESULTS, [1])


NOT_SCORES = [np.timedelta64(5, "s"), np.datetime64("2020-01-01"), np.complex64(0.5 + 2j), True, np.bool_(True)]


@pytest.mark.parametrize("bad", NOT_SCORES, ids=lambda v: type(v).__name__)
def test_time_complex_or_bool_value_where_types_are_checked_is_rejected_though_float_converts_it(bad):
    # float() takes each of these; none is a score or a label (a timedelta64 is even a numpy integer).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        with pytest.raises(
            InvalidScoreError, match=rf"of document 'd1' in query 'q1' is {type(bad).__name__}, not a number"
        ):
            evaluate(QRELS, {"q1": {"d1": bad, "d2": 0.1}}, [1])
        with pytest.raises(
            InvalidLabelError, match=rf"of document 'd1' in query 'q1' is {type(bad).__name__}, not a number"
        ):
            evaluate({"q1": {"d1": bad}}, RESULTS, [1])


@pytest.mark.parametrize("good", [np.float16(0.5), np.float32(0.5), np.longdouble(0.5), np.uint8(3), np.int16(3)])
def test_every_real_numpy_scalar_is_a_score_and_a_label(good):
    plain = evaluate({"q1": {"d1": float(good)}}, {"q1": {"d1": float(good), "d2": 0.1}}, [2]).means
    assert evaluate({"q1": {"d1": good}}, {"q1": {"d1": good, "d2": 0.1}}, [2]).means == plain


def test_label_given_as_string_is_rejected():
    with pytest.raises(InvalidLabelError, match="is str, not a number"):
        evaluate({"q1": {"d1": "1"}}, RESULTS, [1])


@pytest.mark.parametrize("qrels,results", [({}, RESULTS), (QRELS, {}), ([], RESULTS), (QRELS, None)])
def test_empty_or_non_dict_inputs_raise_empty_input(qrels, results):
    with pytest.raises(EmptyInputError):
        evaluate(qrels, results, [1])


def test_no_shared_query_raises_no_overlap_naming_examples():
    with pytest.raises(NoOverlapError, match=r"e\.g\. 'x1'.*e\.g\. 'q1'"):
        evaluate(QRELS, {"x1": {"d1": 1.0}}, [1])


def test_only_empty_qrels_dicts_shared_raises_no_overlap():
    with pytest.raises(NoOverlapError, match="the qrels judge no document"):
        evaluate({"q1": {}}, {"q1": {"d1": 1.0}}, [1])
    with pytest.raises(NoOverlapError, match=r"non-empty qrels \(1 queries, e.g. 'q2'\)"):
        evaluate({"q1": {}, "q2": {"d1": 1}}, {"q1": {"d1": 1.0}}, [1])


def test_integer_ids_raise_invalid_id():
    with pytest.raises(InvalidIdError, match="query id 1"):
        evaluate({1: {"d1": 1}}, RESULTS, [1])
    with pytest.raises(InvalidIdError, match="document id 7 in query 'q1'"):
        evaluate(QRELS, {"q1": {7: 1.0}}, [1])


@pytest.mark.parametrize("preset", ["beir", "trec"])
def test_an_unsampled_integer_id_tied_with_a_judged_document_is_a_typed_error(preset):
    # Ids are type-checked on the first document of sampled queries; a later one surfaces where
    # a tie has to compare it (trec: by id; BEIR: by identity), never as a bare TypeError.
    with pytest.raises(InvalidIdError, match="document id 1 in query 'q1' is int"):
        evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0, 1: 1.0}}, [1], preset=preset)


def test_unknown_preset_policy_and_measure_raise():
    with pytest.raises(InvalidPolicyError, match="unknown preset"):
        evaluate(QRELS, RESULTS, [1], preset="ranx")
    with pytest.raises(InvalidPolicyError, match="ties"):
        evaluate(QRELS, RESULTS, [1], ties="random")
    with pytest.raises(InvalidPolicyError, match="relevance_threshold"):
        evaluate(QRELS, RESULTS, [1], relevance_threshold=0)
    with pytest.raises(UnknownMeasureError, match="unknown measure"):
        evaluate(QRELS, RESULTS, [1], measures=["BLEU"])
    with pytest.raises(UnknownMeasureError, match="cannot parse"):
        evaluate(QRELS, RESULTS, [1], measures=["NDCG@@10"])


def test_r_cap_of_a_query_without_relevant_document_is_zero_not_zero_division():
    qrels = {"q1": {"d1": 1}, "q2": {"d3": 0}}
    res = evaluate(qrels, RESULTS, [1, 10])
    assert res.per_query["R_cap@10"] == {"q1": 1.0, "q2": 0.0}
    assert res.n_queries["R_cap@10"] == 2


def test_results_query_missing_from_qrels_is_ignored_not_key_error():
    res = evaluate(QRELS, {**RESULTS, "unjudged": {"d1": 1.0}}, [10])
    assert "unjudged" not in res.per_query["MRR@10"]
    assert res.means == evaluate(QRELS, RESULTS, [10]).means


def test_no_relevant_skip_policy_leaves_such_queries_out_of_means():
    qrels = {"q1": {"d1": 1}, "q2": {"d3": 0}}
    res = evaluate(qrels, RESULTS, [10], no_relevant="skip")
    assert res.per_query["Recall@10"] == {"q1": 1.0}
    assert res.n_queries["Recall@10"] == 1


def test_no_relevant_skip_with_a_threshold_skips_by_gain_for_ndcg_and_by_the_threshold_for_binary_families():
    # Labels 1 and 2 are below the threshold 3: no relevant document for P, but positive gains for NDCG.
    qrels = {"a": {"x": 1, "y": 2}, "b": {"z": 3}}
    results = {"a": {"x": 1.0, "y": 0.5}, "b": {"z": 1.0}}
    res = evaluate(qrels, results, [10], measures=["NDCG", "P"], relevance_threshold=3, no_relevant="skip")
    assert res.n_queries == {"NDCG@10": 2, "P@10": 1}
    assert list(res.per_query["P@10"]) == ["b"]
    assert res.per_query["NDCG@10"]["a"] == evaluate(qrels, results, [10], measures=["NDCG"]).per_query["NDCG@10"]["a"]


def test_a_mean_over_no_query_is_nan_not_zero():
    """Every query skipped (no_relevant="skip", none has a relevant document): nothing to average."""
    res = evaluate({"q1": {"d1": 0}, "q2": {"d3": 0}}, RESULTS, [10], no_relevant="skip")
    assert all(np.isnan(v) for v in res.means.values()) and all(np.isnan(v) for v in res.raw_means.values())
    assert set(res.n_queries.values()) == {0} and all(res.per_query[m] == {} for m in res.per_query)


def test_inputs_are_never_modified_even_with_identical_ids_dropped():
    qrels = {"q1": {"q1": 1, "d1": 1}}
    results = {"q1": {"q1": 9.0, "d1": 0.5}}
    before = copy.deepcopy((qrels, results))
    res = evaluate(qrels, results, [1])
    assert (qrels, results) == before
    assert res.per_query["P@1"] == {"q1": 1.0}  # q1 itself was dropped, d1 moved to rank 1


def _write(tmp_path, name, text, compress=False):
    path = tmp_path / name
    if compress:
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


def test_duplicate_doc_in_one_query_of_a_run_file_names_both_lines(tmp_path):
    run = _write(tmp_path, "run", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n")
    with pytest.raises(DuplicateDocumentError, match=r"'d1' appears twice for query 'q1' \(rows 1 and 3\)"):
        read_run(run)


def test_duplicate_doc_in_a_non_contiguous_query_block_is_found(tmp_path):
    run = _write(tmp_path, "run", "q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 3 0.5 t\n")
    with pytest.raises(DuplicateDocumentError, match=r"rows 1 and 3"):
        read_run(run)


def test_malformed_run_line_names_file_and_line(tmp_path):
    run = _write(tmp_path, "run", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2\n")
    with pytest.raises(ParseError, match=r"run:2: expected 6 .* found 4"):
        read_run(run)


def test_non_numeric_score_in_run_file_names_line(tmp_path):
    run = _write(tmp_path, "run", "q1 Q0 d1 1 2.0 t\n\nq1 Q0 d2 2 abc t\n")
    with pytest.raises(ParseError, match=r"run:3: score 'abc' is not a finite number"):
        read_run(run)


@pytest.mark.parametrize("fast", [True, False])
def test_the_first_bad_line_of_a_file_is_reported_whatever_its_kind(tmp_path, fast):
    # A bad score on line 2 and a short line on line 4 (one block for the line reader): line 2.
    run = _write(tmp_path, "run", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 x t\nq1 Q0 d3 3 1.0 t\nq1 Q0 d4\n")
    with pytest.raises(ParseError, match=r"run:2: score 'x'"):
        read_trec_run(run, fast=fast)
    # The other way round: the short line comes first.
    run = _write(tmp_path, "run2", "q1 Q0 d1 1 2.0 t\nq1 Q0 d4\nq1 Q0 d2 2 x t\n")
    with pytest.raises(ParseError, match=r"run2:2: expected 6"):
        read_trec_run(run, fast=fast)
    qrels = _write(tmp_path, "qrels", "q1 0 d1 1\nq1 0 d2 high\nq1 0 d3 1 extra\n")
    with pytest.raises(ParseError, match=r"qrels:2: label 'high'"):
        read_qrels(qrels)


@pytest.mark.parametrize("line2", [b"q1 Q0 d2 2", b"q1 Q0 d2 2 x t"])
def test_a_byte_that_is_not_utf8_after_a_bad_line_leaves_the_bad_line_reported(tmp_path, line2):
    run = tmp_path / "run"
    run.write_bytes(b"q1 Q0 d1 1 1.0 t\n" + line2 + b"\nq1 Q0 d\xff3 3 0.5 t\n")
    for fast in (True, False):
        with pytest.raises(ParseError, match=r"run:2: (expected 6|score 'x')"):
            read_trec_run(run, fast=fast)
    run.write_bytes(b"q1 Q0 d1 1 1.0 t\nq1 Q0 d\xff3 3 0.5 t\n" + line2 + b"\n")
    with pytest.raises(ParseError, match=r"run:2: not UTF-8 text \(invalid start byte\)"):
        read_trec_run(run, fast=False)


def test_a_bad_label_before_a_byte_that_is_not_utf8_is_reported_by_every_qrels_reader(tmp_path):
    trec = tmp_path / "qrels"
    trec.write_bytes(b"q1 0 d1 1\nq1 0 d2 high\nq1 0 d\xff3 1\n")
    beir = tmp_path / "test.tsv"
    beir.write_bytes(b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\thigh\nq1\td\xff3\t1\n")
    for path, line in ((trec, 2), (beir, 3)):
        with pytest.raises(ParseError, match=rf"{path.name}:{line}: (label|score) 'high'"):
            read_qrels(path)
    header = tmp_path / "bad_header.tsv"
    header.write_bytes(b"query-id\tcorpus-id\tsc\xffore\nq1\td1\t1\n")
    with pytest.raises(ParseError, match=r"bad_header.tsv:1: not UTF-8"):
        read_qrels(header)


def test_nan_score_in_run_file_names_line(tmp_path):
    run = _write(tmp_path, "run", "q1 Q0 d1 1 nan t\n")
    with pytest.raises(ParseError, match=r"run:1: score 'nan'"):
        read_run(run)


def test_missing_file_and_empty_file_raise_parse_error(tmp_path):
    with pytest.raises(ParseError, match="file not found"):
        read_run(tmp_path / "nope")
    with pytest.raises(ParseError, match="no score lines"):
        read_run(_write(tmp_path, "empty", ""))


def test_gzip_run_and_qrels_are_read(tmp_path):
    run = _write(tmp_path, "run.gz", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n", compress=True)
    qrels = _write(tmp_path, "qrels.gz", "q1 0 d2 1\n", compress=True)
    res = evaluate(read_qrels(qrels), read_run(run), [1, 2], preset="trec")
    assert res.per_query["MRR@2"] == {"q1": 0.5}


def test_beir_tsv_reads_a_fraction_as_a_float_label_and_refuses_what_is_no_number(tmp_path):
    """A graded label with a fraction (the click-derived qrels.tsv of irmetrics clicks fit) reads as TREC qrels
    read it; BEIR's loader reads int(score) and would refuse it, so would these readers before."""
    tsv = _write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0.5\n")
    assert read_qrels(tsv).data == {"q1": {"d1": 1, "d2": 0.5}}
    bad = _write(tmp_path, "bad.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\thalf\n")
    with pytest.raises(ParseError, match=r"bad.tsv:3: score 'half' is not a finite number"):
        read_qrels(bad)


def test_trec_qrels_accept_float_labels(tmp_path):
    qrels = read_qrels(_write(tmp_path, "qrels", "q1 0 d1 0.5\nq1 0 d2 1\n"))
    assert qrels.data == {"q1": {"d1": 0.5, "d2": 1.0}}


# -- found by fuzzing every entry point (2026-11-22) ---------------------------------------------


@pytest.mark.parametrize("k_values", [[10**20], [2**63], 5, "10"])
def test_a_cutoff_beyond_any_ranking_or_k_values_that_is_no_list_is_a_cutoff_error(k_values):
    with pytest.raises(InvalidCutoffError):
        evaluate(QRELS, RESULTS, k_values)
    with pytest.raises(InvalidCutoffError, match="at most 2,147,483,647"):
        evaluate(QRELS, RESULTS, None, measures=["P@99999999999999999999999"])


def test_a_threshold_beyond_any_float_is_a_policy_error():
    with pytest.raises(InvalidPolicyError, match="beyond any float"):
        evaluate(QRELS, RESULTS, [1], relevance_threshold=10**400)


@pytest.mark.parametrize("chunks", [None, RESULTS, 3])
def test_evaluate_chunks_of_something_that_is_no_list_of_pieces_is_a_typed_error(chunks):
    from haystack_irmetrics import evaluate_chunks

    with pytest.raises(EmptyInputError, match="chunks must be a list"):
        evaluate_chunks(QRELS, chunks, [1])


def test_an_exponential_gain_beyond_any_float_names_its_label_document_and_query():
    with pytest.raises(InvalidLabelError, match=r"label 1024 of document 'd9' in query 'q1'.*nDCG_exp@2"):
        evaluate({"q1": {"d1": 1, "d9": 1024}}, RESULTS, None, measures=["nDCG_exp@2"])
    assert evaluate({"q1": {"d1": 1023}}, RESULTS, None, measures=["nDCG_exp@2"]).means["nDCG_exp@2"] < 1


def test_a_numeric_string_label_is_rejected_wherever_it_is_missing_query_policies_included():
    qrels = {"q1": {"d1": 1}, "q3": {"x": 0, "y": "1"}}  # q3 is judged but never retrieved
    with pytest.raises(InvalidLabelError, match=r"label '1' of document 'y' in query 'q3' is str"):
        evaluate(qrels, RESULTS, None, measures=["P@1"], missing_queries="zero", no_relevant="skip")


@pytest.mark.parametrize(
    "values",
    [np.array([1 + 5j, 0j]), np.array(["2020-01-01", "2020-01-02"], "M8[D]"), np.array([True, False]), [1, True],
     ["1", 2], [1, 10**400], np.array(["1", "2"])],
    ids=lambda v: str(v)[:25],
)  # fmt: skip
def test_columns_of_anything_but_real_numbers_are_a_typed_error_naming_the_row(values):
    from haystack_irmetrics import Qrels, Run

    with pytest.raises(InvalidLabelError, match=r"qrels row \d"):
        Qrels.from_columns(["q1", "q1"], ["a", "b"], values)
    with pytest.raises(InvalidScoreError, match=r"run row \d"):
        Run.from_columns(["q1", "q1"], ["a", "b"], values)


def test_columns_of_numpy_or_python_reals_are_read():
    from haystack_irmetrics import Qrels

    for values in (np.array([1, 2], np.uint8), [np.float16(1), 2.0], [Decimal(1), 2]):
        assert Qrels.from_columns(["q1", "q1"], ["a", "b"], values).data == {"q1": {"a": 1, "b": 2}}


def test_a_byte_order_mark_opening_a_file_is_no_part_of_the_first_query_id(tmp_path):
    from haystack_irmetrics.io import evaluate_run_file
    from haystack_irmetrics.io.trec import read_trec_run

    def bom(name, text):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8-sig")
        return path

    assert read_qrels(bom("qrels", "q1 0 a 1\nq1 0 b 1\n")).data == {"q1": {"a": 1, "b": 1}}
    assert read_qrels(bom("q.tsv", "query-id\tcorpus-id\tscore\nq1\ta\t1\n")).data == {"q1": {"a": 1}}
    for text in ("q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\n", "q1  Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\n"):
        run = bom("run", text)
        assert read_trec_run(run, fast=False).data == {"q1": {"a": 0.9, "b": 0.5}}
        assert read_trec_run(run).qids == ["q1"]
        assert evaluate_run_file({"q1": {"b": 1}}, run, [1, 2]).means["MRR@2"] == 0.5


@pytest.mark.parametrize("space", ["\xa0", "\x1c", "\u2003", "\u3000"])
def test_only_ascii_whitespace_separates_fields_as_in_trec_eval_whichever_reader_reads(tmp_path, space):
    from haystack_irmetrics.io.trec import read_trec_run

    lines = f"q1 Q0 a{space}x 1 0.9 t\nq1 Q0 b 2 0.5 t\n"
    fast = _write(tmp_path, "fast", lines)
    slow = _write(tmp_path, "slow", "# a comment sends the file to the line reader\n" + lines)
    expected = {"q1": {f"a{space}x": 0.9, "b": 0.5}}
    assert read_trec_run(fast, fast=False).data == expected
    assert read_trec_run(slow).data == expected
    assert {
        q: dict(zip(r.ids_at(np.arange(2)), r.scores.tolist())) for q, r in [("q1", read_trec_run(fast))]
    } == expected
    assert read_qrels(_write(tmp_path, "qrels", f"q1 0 a{space}x 1\n")).data == {"q1": {f"a{space}x": 1}}


_STRAY_WHITESPACE = {
    # (text, what the line reader reads): ASCII whitespace other than the separator splits there
    # (a tab on the first line would make the fast reader take tabs as the separator)
    "tab in a space-separated line": ("q1 Q0 b 1 2.0 t\nq1 Q0 d\t9 2 0.5 t\n", {"q1": {"b": 2.0, "d": 2.0}}),
    "vertical tab": ("q1 Q0 d\x0b9 1 2.0 t\nq1 Q0 b 2 0.5 t\n", {"q1": {"d": 1.0, "b": 0.5}}),
    "form feed": ("q1 Q0 d\x0c9 1 2.0 t\nq1 Q0 b 2 0.5 t\n", {"q1": {"d": 1.0, "b": 0.5}}),
    "space in a tab-separated line": ("q1\tQ0\td 9\t1\t2.0\tt\nq1\tQ0\tb\t2\t0.5\tt\n", {"q1": {"d": 1.0, "b": 0.5}}),
    # universal newlines: a lone \r ends the line, which then has too few fields (polars drops a \r
    # that ends a field, so the bytes must tell)
    "lone carriage return": ("q1 Q0 a 1 0.9 t\nq1 Q0 d\r9 2 0.5 t\n", ParseError),
    "carriage return ending a field": ("q1 Q0 a 1 0.9 t\nq1 Q0 d 2 0.5\r t\n", ParseError),
    "carriage return ending the doc id": ("q1 Q0 a 1 0.9 t\nq1 Q0 d\r 2 0.5 t\n", ParseError),
    # a field missing or empty anywhere in the line, the columns never used included
    "no tag": ("q1 Q0 a 1 0.9 t\nq1 Q0 d 2 0.5\n", ParseError),
    "empty Q0 (two blanks)": ("q1 Q0 a 1 0.9 t\nq1  d 2 0.5 t\n", ParseError),
    "empty rank (two blanks)": ("q1 Q0 a 1 0.9 t\nq1 Q0 d  0.5 t\n", ParseError),
    # a line short of a field and a later one with a field too many are not two good lines
    "shifted fields": ("q1 Q0 a 1 0.9\nq1 Q0 Q0 d 2 0.5 t\n", ParseError),
    # a comment is a line whose first field starts with "#", indented or not
    "indented comment": ("q1 Q0 a 1 0.9 t\n  # Q0 d 2 0.5 t\nq1 Q0 d 3 0.4 t\n", {"q1": {"a": 0.9, "d": 0.4}}),
    # what Python's float() takes but a C reader does not
    "underscore in a score": ("q1 Q0 a 1 0.9 t\nq1 Q0 d 2 1_000 t\n", ParseError),
    "non-ASCII digit in a score": ("q1 Q0 a 1 0.9 t\nq1 Q0 d 2 \u0661 t\n", ParseError),
}


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("case", list(_STRAY_WHITESPACE))
def test_whitespace_inside_a_line_reads_as_the_line_reader_reads_it_whichever_reader_runs(tmp_path, case, gz):
    """polars splits at one separator only: such a file goes to the line reader, never a different number."""
    from haystack_irmetrics.io import _fast, evaluate_run_file
    from haystack_irmetrics.io.trec import read_trec_run

    text, expected = _STRAY_WHITESPACE[case]
    path = tmp_path / ("run.gz" if gz else "run")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    qrels = {"q1": {"d": 1, "a": 1}}
    if expected is ParseError:
        for read in (
            lambda: read_trec_run(path, fast=False),
            lambda: read_trec_run(path),
            lambda: evaluate_run_file(qrels, path, [1]),
        ):
            with pytest.raises(ParseError, match=r"run(\.gz)?:[12]: (expected 6|score)"):
                read()
        return
    assert read_trec_run(path, fast=False).data == expected
    assert read_trec_run(path).data == expected
    got = evaluate_run_file(qrels, path, [1, 2], preset="trec")
    assert dict(got.per_query.items()) == dict(evaluate(qrels, expected, [1, 2], preset="trec").per_query.items())
    if _fast.available() and not gz and case != "indented comment":
        with pytest.raises(_fast.NotStreamable):
            list(_fast.iter_trec_run_chunks(path, 1))


def test_crlf_line_ends_stay_on_the_fast_reader_and_read_as_plain_lines(tmp_path):
    from haystack_irmetrics.io import _fast
    from haystack_irmetrics.io.trec import read_trec_run

    if not _fast.available():
        pytest.skip("polars (extra 'columnar') is not installed")
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 a 1 0.9 t\r\nq1 Q0 b 2 0.5 t\r\n")
    run = read_trec_run(path)
    assert type(run).__name__ == "ColumnarRun" and run.data == {"q1": {"a": 0.9, "b": 0.5}}
    pieces = list(_fast.iter_trec_run_chunks(path, 1))
    assert [p.data for p in pieces] == [{"q1": {"a": 0.9, "b": 0.5}}]


def test_a_truncated_or_corrupt_gzip_file_is_a_parse_error_naming_it(tmp_path):
    from haystack_irmetrics.cli import main

    good = gzip.compress(b"q1 Q0 a 1 0.9 t\n" * 50)
    for name, data in [("run.gz", good[:-8]), ("bad.gz", b"\x1f\x8bxx")]:
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(ParseError, match=rf"{name}.*(truncated or corrupt|not a gzipped)"):
            read_run(path)
        with pytest.raises(ParseError, match=name):
            read_qrels(path)
        assert main(["evaluate", str(path), str(path)]) == 2


@pytest.mark.parametrize("line", [1, 3])
def test_a_byte_that_is_not_utf8_is_a_parse_error_naming_its_line(tmp_path, line):
    rows = [b"q1 Q0 a 1 0.9 t", b"q1 Q0 b 2 0.5 t", b"q1 Q0 c 3 0.1 t"]
    rows[line - 1] = rows[line - 1].replace(b" a ", b" \xe9 ").replace(b" c ", b" \xe9 ")
    run = tmp_path / "run"
    run.write_bytes(b"\n".join(rows) + b"\n")
    with pytest.raises(ParseError, match=rf"run:{line}: not UTF-8"):
        read_run(run)
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"\n".join(r.replace(b"Q0", b"0").rsplit(b" ", 3)[0] + b" 1" for r in rows) + b"\n")
    with pytest.raises(ParseError, match=rf"qrels:{line}: not UTF-8"):
        read_qrels(qrels)


def test_a_beir_label_beyond_int64_keeps_its_value_instead_of_wrapping(tmp_path):
    tsv = _write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t10000000000000000000\nq1\td2\t1\n")
    assert read_qrels(tsv).data == {"q1": {"d1": 1e19, "d2": 1.0}}


# -- measure names, columns, curves and correlations (fuzzing, second round) -------------------------


@pytest.mark.parametrize(
    "name,error,message",
    [
        ("F(beta=2,beta=3)@10", UnknownMeasureError, "sets 'beta' twice"),
        ("nDCG(gains={0:0,1:5},gain=exp)@10", UnknownMeasureError, "sets 'gain' twice"),
        ("nDCG_exp(gain=linear)@10", UnknownMeasureError, "by its name and by a parameter"),
        ("P@\uff11\uff10", InvalidCutoffError, "ASCII digits"),
        ("F(beta=1e155)@2", UnknownMeasureError, "beta must be a number in (1e-150, 1e150)"),
    ],
)
def test_a_measure_name_that_says_two_things_or_would_compute_nan_is_refused(name, error, message):
    with pytest.raises(error, match=re.escape(message)):
        evaluate(QRELS, RESULTS, None, measures=[name])


def test_column_ids_are_checked_whatever_the_column_type():
    from haystack_irmetrics import Qrels, Run

    with pytest.raises(InvalidIdError, match=r"document id 7 \(run row 2\) is int"):
        Run.from_columns(["q1", "q1"], np.array(["d1", 7], dtype=object), [0.5, 0.4])
    with pytest.raises(InvalidIdError, match=r"query id \('a', 1\) \(run row 1\) is tuple"):
        Run.from_columns([("a", 1), ("b", 2)], ["d1", "d2"], [0.5, 0.4])
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    expected = {"q1": {"d1": 0.5, "d2": 0.4}}
    assert Run.from_columns(pa.array(["q1", "q1"]), pa.array(["d1", "d2"]), pa.array([0.5, 0.4])).data == expected
    assert Run.from_columns(pl.Series(["q1", "q1"]), pl.Series(["d1", "d2"]), pl.Series([0.5, 0.4])).data == expected
    with pytest.raises(InvalidLabelError, match="qrels row 1: label None"):
        Qrels.from_columns(pa.array(["q1"]), pa.array(["d1"]), pa.array([None], pa.int64()))


@pytest.mark.parametrize(
    "scores,offsets",
    [(np.array(["x", None], dtype=object), [0, 2]), (np.array([True, False]), [0, 2]), ([0.5, 0.4], [0, 2]),
     (np.array([0.5, 0.4]), [0, 3]), (np.array([0.5, 0.4]), [0, 2, 1])],
)  # fmt: skip
def test_a_columnar_run_of_parts_that_do_not_fit_is_a_typed_error(scores, offsets):
    from haystack_irmetrics.core.inputs import ColumnarRun

    with pytest.raises((InvalidScoreError, EmptyInputError)):
        ColumnarRun(["q1"], np.asarray(offsets), scores, lambda rows: [], lambda c: (np.zeros(0), np.zeros(0)))


def test_correlations_and_gain_vectors_take_finite_real_numbers_only():
    from haystack_irmetrics.core.curves import gain_vectors, measure_at_k
    from haystack_irmetrics.stats.correlation import per_query_correlation, rank_correlation

    for bad in ("3", True, 10**400):
        with pytest.raises(InvalidScoreError, match=r"score .* of 'a' is not a finite number"):
            rank_correlation({"a": bad, "b": 1.0}, {"a": 1.0, "b": 2.0})
    res = evaluate(QRELS, RESULTS, [1])
    with pytest.raises(InvalidPolicyError, match="NDCG@5 is not among the evaluated measures"):
        per_query_correlation(res, res, "NDCG@5")
    for labels in ([3, float("nan")], [3, None], ["1", 2], [10**400]):
        with pytest.raises(InvalidLabelError, match=r"labels\[\d\] = .* is not a finite number"):
            gain_vectors(labels)
    with pytest.raises(InvalidLabelError, match="ideal must be a sequence"):
        gain_vectors([3, 1], ideal="12")
    with pytest.raises(InvalidLabelError, match="beyond any float"):
        gain_vectors([2000], gain="exp")
    curve = measure_at_k({"q": {"a": 1}}, {"q": {"x": 0.9, "a": 0.8}}, "P", iter([1, 2]))
    assert curve.ks.tolist() == [1, 2] and curve.mean.tolist() == [0.0, 0.5]


def test_shorten_keeps_short_text_and_cuts_long_text_saying_how_long_it_was():
    from haystack_irmetrics.errors import ECHO_LIMIT, shorten

    assert shorten("abc") == "abc"
    cut = shorten("x" * 1_000_000)
    assert len(cut) <= ECHO_LIMIT and cut.endswith("... [1,000,000 characters]")


def test_every_library_error_message_is_bounded_whatever_it_echoes():
    from haystack_irmetrics.errors import MESSAGE_LIMIT, IRMetricsError, ParseError

    error = ParseError("bad value " + "\\x00" * 5_000_000, path="run.txt", line=7)
    text = str(error)
    assert len(text) <= MESSAGE_LIMIT and text.startswith("run.txt:7: bad value") and error.line == 7
    assert str(IRMetricsError("short")) == "short"


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_10mb_line_of_nul_bytes_is_reported_in_a_short_message(tmp_path, capsys, which):
    from haystack_irmetrics.cli import main

    good = {"qrels": b"q1 0 d1 1\n", "run": b"q1 Q0 d1 1 1.0 x\n"}
    files = {}
    for kind, line in good.items():
        files[kind] = tmp_path / f"{kind}.txt"
        files[kind].write_bytes(line + (b"\x00" * 10_000_000 + b"\n" if kind == which else b""))
    assert main(["evaluate", str(files["qrels"]), str(files["run"])]) == 2
    err = capsys.readouterr().err
    assert f"{which}.txt:2:" in err and len(err) < 1024
