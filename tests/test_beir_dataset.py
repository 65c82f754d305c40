"""The BEIR loader equals GenericDataLoader on real folders and fails clearly on broken ones."""

from __future__ import annotations

import json
import shutil
import zipfile

import pytest

from haystack_irmetrics import ParseError, evaluate
from haystack_irmetrics.beir import (
    BEIR_DATASETS,
    DatasetError,
    DatasetNotFoundError,
    EmptyQueryError,
    MissingDocumentsError,
    load_beir,
    resolve_dataset,
    sample_path,
)
from haystack_irmetrics.beir import dataset as dataset_module


def generic_data_loader(folder, split):
    from beir.datasets.data_loader import GenericDataLoader

    return GenericDataLoader(str(folder)).load(split=split)


def assert_same_as_beir(ds, folder, split):
    corpus, queries, qrels = generic_data_loader(folder, split)
    assert list(ds.corpus.items()) == list(corpus.items())
    assert list(ds.queries.items()) == list(queries.items())
    assert list(ds.qrels.items()) == list(qrels.items())
    assert all(type(v) is int for docs in ds.qrels.values() for v in docs.values())


@pytest.mark.parametrize("split", ["test", "dev"])
def test_sample_loads_exactly_as_generic_data_loader(split):
    ds = load_beir(sample_path(), split)
    assert_same_as_beir(ds, sample_path(), split)
    assert ds.name == "sample" and ds.n_queries_in_file == 48 and ds.warnings == ()


@pytest.mark.parametrize("split", ["test", "train"])
def test_scifact_loads_exactly_as_generic_data_loader(data_dir, split):
    folder = data_dir / "scifact"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    ds = load_beir(folder, split)
    assert_same_as_beir(ds, folder, split)
    if split == "test":
        assert (len(ds.corpus), len(ds.queries), sum(map(len, ds.qrels.values()))) == (5183, 300, 339)


def write_dataset(root, corpus=None, queries=None, qrels=None, split="test"):
    """A tiny BEIR folder; each argument is the raw file text."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels").mkdir(exist_ok=True)
    (root / "corpus.jsonl").write_text(
        corpus
        if corpus is not None
        else '{"_id": "d1", "title": "Bikes", "text": "Fix a flat tyre."}\n'
        '{"_id": "d2", "title": "", "text": "Prune roses in spring."}\n'
        '{"_id": "d3", "text": "Compost turns scraps into soil."}\n'
    )
    (root / "queries.jsonl").write_text(
        queries
        if queries is not None
        else '{"_id": "q1", "text": "flat tyre"}\n{"_id": "q2", "text": "roses"}\n{"_id": "q3", "text": "unjudged"}\n'
    )
    (root / "qrels" / f"{split}.tsv").write_text(
        qrels if qrels is not None else "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t0\nq2\td2\t1\n"
    )
    return root


def test_tiny_folder_matches_generic_data_loader_including_missing_title(tmp_path):
    root = write_dataset(tmp_path / "tiny")
    ds = load_beir(root)
    assert_same_as_beir(ds, root, "test")
    assert ds.corpus["d3"] == {"text": "Compost turns scraps into soil.", "title": None}
    assert list(ds.queries) == ["q1", "q2"]


def test_blank_lines_are_skipped_not_errors(tmp_path):
    root = write_dataset(tmp_path / "t", qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\n\nq2\td2\t1\n")
    (root / "corpus.jsonl").write_text((root / "corpus.jsonl").read_text() + "\n  \n")
    ds = load_beir(root)
    assert len(ds.corpus) == 3 and ds.qrels == {"q1": {"d1": 1}, "q2": {"d2": 1}}


def test_missing_folder_and_missing_files_are_named(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_beir(tmp_path / "nope")
    root = write_dataset(tmp_path / "t")
    (root / "queries.jsonl").unlink()
    with pytest.raises(DatasetError, match=r"missing .*queries\.jsonl"):
        load_beir(root)


def test_missing_split_lists_the_splits_that_exist(tmp_path):
    root = write_dataset(tmp_path / "t")
    with pytest.raises(DatasetError, match=r"qrels/dev\.tsv.*splits here: test"):
        load_beir(root, "dev")


def test_folder_of_sub_datasets_points_at_them(tmp_path):
    write_dataset(tmp_path / "cqa" / "android")
    with pytest.raises(DatasetError, match="sub-datasets here: android"):
        load_beir(tmp_path / "cqa")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"_id": "d9", "text": "unterminated}', "invalid JSON"),
        ('["d9", "text"]', "expected a JSON object, found list"),
        ('{"title": "no id", "text": "x"}', "no '_id' field"),
        ('{"_id": 9, "text": "x"}', "'_id' must be a string"),
        ('{"_id": "d9", "text": ["x"]}', "'text' must be a string"),
    ],
)
def test_malformed_corpus_line_names_file_and_line_number(tmp_path, line, message):
    root = write_dataset(tmp_path / "t")
    (root / "corpus.jsonl").write_text((root / "corpus.jsonl").read_text() + line + "\n")
    with pytest.raises(ParseError, match=message) as err:
        load_beir(root)
    assert err.value.line == 4 and err.value.path.endswith("corpus.jsonl")
    assert "corpus.jsonl:4: " in str(err.value)


def test_malformed_query_line_names_file_and_line_number(tmp_path):
    root = write_dataset(tmp_path / "t", queries='{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b"\n')
    with pytest.raises(ParseError, match=r"queries\.jsonl:2: invalid JSON"):
        load_beir(root)


def test_duplicate_ids_name_both_lines(tmp_path):
    root = write_dataset(tmp_path / "t")
    (root / "corpus.jsonl").write_text((root / "corpus.jsonl").read_text() + '{"_id": "d2", "text": "again"}\n')
    with pytest.raises(ParseError, match=r"corpus\.jsonl:4: document id 'd2' appears twice \(first on line 2\)"):
        load_beir(root)
    root = write_dataset(tmp_path / "u", queries='{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n')
    with pytest.raises(ParseError, match=r"queries\.jsonl:2: query id 'q1' appears twice"):
        load_beir(root)


@pytest.mark.parametrize(
    ("qrels", "message", "line"),
    [
        ("query-id\tcorpus-id\tscore\nq1\td1\tnan\n", "score 'nan' is not a finite number", 2),
        ("query-id\tcorpus-id\tscore\nq1\td1\n", "expected 3 tab-separated fields", 2),
        ("q1\td1\t1\nq2\td2\t1\n", "the first line is a judgment, not a header", 1),
        (
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq1\td1\t2\n",
            r"document 'd1' is judged twice for query 'q1' \(first on line 2\)",
            4,
        ),
    ],
)
def test_malformed_qrels_line_names_file_and_line_number(tmp_path, qrels, message, line):
    root = write_dataset(tmp_path / "t", qrels=qrels)
    with pytest.raises(ParseError, match=message) as err:
        load_beir(root)
    assert err.value.line == line


def test_qrels_with_only_a_header_is_an_error(tmp_path):
    root = write_dataset(tmp_path / "t", qrels="query-id\tcorpus-id\tscore\n")
    with pytest.raises(DatasetError, match="no judgments"):
        load_beir(root)


def test_qrels_queries_absent_from_queries_file_are_counted_with_examples(tmp_path):
    root = write_dataset(tmp_path / "t", qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq7\td2\t1\nq8\td2\t1\n")
    with pytest.raises(
        DatasetError, match=r"2 of the 3 query ids .* are not in .*queries\.jsonl, e\.g\. \['q7', 'q8'\]"
    ):
        load_beir(root)


@pytest.mark.parametrize("text", ['""', '"   "', "null"])
def test_query_without_text_in_the_split_is_an_error_naming_it(tmp_path, text):
    root = write_dataset(tmp_path / "t", queries=f'{{"_id": "q1", "text": "ok"}}\n{{"_id": "q2", "text": {text}}}\n')
    with pytest.raises(EmptyQueryError, match=r"1 queries of split 'test' have no text .* \['q2'\]"):
        load_beir(root)


def test_query_without_text_outside_the_split_is_dropped_like_beir(tmp_path):
    root = write_dataset(
        tmp_path / "t", queries='{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b"}\n{"_id": "q9", "text": ""}\n'
    )
    assert list(load_beir(root).queries) == ["q1", "q2"]


MISSING_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tgone1\t2\nq2\tgone2\t0\nq2\td2\t1\n"


def test_judged_documents_missing_from_the_corpus_are_kept_as_beir_keeps_them_with_one_warning(tmp_path):
    root = write_dataset(tmp_path / "t", qrels=MISSING_QRELS)
    ds = load_beir(root)  # the default: evaluated as BEIR does, not refused
    assert_same_as_beir(ds, root, "test")  # the judgments stay in the qrels, as GenericDataLoader keeps them
    assert ds.qrels["q1"] == {"d1": 1, "gone1": 2}
    (warning,) = [w for w in ds.warnings if "absent from" in w]
    assert "2 judgments" in warning and "1 of them relevant, for 2 queries" in warning
    assert "2 documents absent from" in warning and "q1/gone1, q2/gone2" in warning
    assert "relevant and unretrievable, as in BEIR" in warning and "--strict-docs" in warning
    assert ds.missing_documents == (("q1", "gone1", 2), ("q2", "gone2", 0))
    assert ds.missing_documents_summary()["judged_documents_missing_from_corpus"] == 2
    assert evaluate(ds.qrels, {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}, [10]).means["Recall@10"] == 0.75


def test_strict_docs_refuses_judged_documents_missing_from_the_corpus_with_count_and_examples(tmp_path):
    root = write_dataset(tmp_path / "t", qrels=MISSING_QRELS)
    with pytest.raises(MissingDocumentsError) as err:
        load_beir(root, strict_docs=True)
    message = str(err.value)
    assert "2 judgments" in message and "1 of them relevant, for 2 queries" in message
    assert "q1/gone1, q2/gone2" in message and "--strict-docs" in message


def test_allow_missing_docs_is_a_deprecated_alias(tmp_path):
    root = write_dataset(tmp_path / "t", qrels=MISSING_QRELS)
    with pytest.warns(DeprecationWarning, match="strict_docs"), pytest.raises(MissingDocumentsError):
        load_beir(root, allow_missing_docs=False)  # what the old default spelled: refuse
    with pytest.warns(DeprecationWarning):
        assert load_beir(root, allow_missing_docs=True).missing_documents
    with pytest.warns(DeprecationWarning), pytest.raises(DatasetError, match="contradict"):
        load_beir(root, strict_docs=True, allow_missing_docs=True)


def test_a_subset_counts_the_missing_documents_of_its_own_queries(tmp_path):
    ds = load_beir(write_dataset(tmp_path / "t", qrels=MISSING_QRELS))
    sub = ds.subset(["q2"])
    assert sub.missing_documents == (("q2", "gone2", 0),)
    assert [w for w in sub.warnings if "absent from" in w] == [sub.missing_documents_warning()]
    assert "1 judgments" in sub.missing_documents_warning()
    assert ds.subset(["q1"]).subset(["q1"]).warnings == ds.subset(["q1"]).warnings


def test_documents_without_title_and_text_are_reported(tmp_path):
    root = write_dataset(tmp_path / "t")
    (root / "corpus.jsonl").write_text((root / "corpus.jsonl").read_text() + '{"_id": "d4", "title": "", "text": ""}\n')
    assert load_beir(root).warnings == (f"1 documents of {root / 'corpus.jsonl'} have neither title nor text",)


def test_subset_keeps_the_corpus_and_restricts_queries_and_qrels():
    ds = load_beir(sample_path())
    sub = ds.subset(["q03", "q01"])
    assert list(sub.queries) == ["q03", "q01"] and list(sub.qrels) == ["q03", "q01"]
    assert sub.corpus is ds.corpus
    with pytest.raises(DatasetError, match="not in split 'test'"):
        ds.subset(["nope"])


# --- naming a dataset ---


def test_none_and_sample_resolve_to_the_shipped_sample():
    assert resolve_dataset(None) == sample_path() == resolve_dataset("sample")
    assert (sample_path() / "corpus.jsonl").is_file()


def test_an_existing_folder_wins_over_names(tmp_path):
    assert resolve_dataset(tmp_path) == tmp_path


def test_unknown_name_lists_the_beir_names(tmp_path):
    with pytest.raises(DatasetNotFoundError, match=r"neither a folder nor a BEIR dataset name.*scifact"):
        resolve_dataset("not-a-dataset", data_dir=tmp_path)


def test_named_dataset_is_found_in_the_data_dir_without_downloading(tmp_path, monkeypatch):
    monkeypatch.setattr(dataset_module, "_download", pytest.fail)
    write_dataset(tmp_path / "scifact")
    assert resolve_dataset("SciFact", data_dir=tmp_path) == tmp_path / "scifact"
    monkeypatch.setenv("IRMETRICS_BEIR_DIR", str(tmp_path))
    assert resolve_dataset("scifact") == tmp_path / "scifact"


def test_failed_download_says_where_to_put_the_unzipped_folder(tmp_path, monkeypatch):
    def offline(url, root):
        raise OSError("Temporary failure in name resolution")

    monkeypatch.setattr(dataset_module, "_download", offline)
    with pytest.raises(DatasetNotFoundError) as err:
        resolve_dataset("nfcorpus", data_dir=tmp_path)
    message = str(err.value)
    assert "could not be downloaded (OSError: Temporary failure in name resolution)" in message
    assert "nfcorpus.zip" in message and str(tmp_path / "nfcorpus" / "corpus.jsonl") in message


def test_no_download_says_where_to_put_the_unzipped_folder(tmp_path):
    with pytest.raises(DatasetNotFoundError, match=r"downloading is off.*fiqa/corpus\.jsonl"):
        resolve_dataset("fiqa", data_dir=tmp_path, download=False)


def test_download_uses_beir_util_and_removes_a_corrupt_zip(tmp_path, monkeypatch):
    from beir import util

    calls = []

    def fake(url, out_dir):
        calls.append(url)
        (tmp_path / "scidocs.zip").write_bytes(b"<html>not a zip</html>")
        raise zipfile.BadZipFile("File is not a zip file")

    monkeypatch.setattr(util, "download_and_unzip", fake)
    with pytest.raises(DatasetNotFoundError, match="BadZipFile"):
        resolve_dataset("scidocs", data_dir=tmp_path)
    assert calls == [dataset_module.BEIR_URL.format(name="scidocs")]
    assert not (tmp_path / "scidocs.zip").exists()


def test_successful_download_returns_the_unzipped_folder(tmp_path, monkeypatch):
    from beir import util

    def fake(url, out_dir):
        shutil.copytree(sample_path(), tmp_path / "quora")

    monkeypatch.setattr(util, "download_and_unzip", fake)
    assert resolve_dataset("quora", data_dir=tmp_path) == tmp_path / "quora"


def test_every_listed_name_is_lowercase_and_unique():
    assert list(BEIR_DATASETS) == sorted(set(BEIR_DATASETS)) and all(n == n.lower() for n in BEIR_DATASETS)


def test_sample_corpus_is_valid_json_per_line():
    for line in (sample_path() / "corpus.jsonl").read_text().splitlines():
        assert set(json.loads(line)) == {"_id", "title", "text"}
