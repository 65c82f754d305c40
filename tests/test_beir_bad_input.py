"""BEIR runs, comparisons and component serialization: bad input is a typed error (found by fuzzing)."""

from __future__ import annotations

import json
import logging
import re

import numpy as np
import pytest
from haystack import Document, Pipeline

from haystack_irmetrics import InvalidIdError, InvalidPolicyError, InvalidScoreError, ParseError
from haystack_irmetrics.beir import load_beir, run_beir, runner
from haystack_irmetrics.cli import main
from haystack_irmetrics.components import IRMetricsEvaluator, NDCGEvaluator, load_pipeline, to_evaluation_run_result
from haystack_irmetrics.components.feedback import FeedbackToGoldDocuments
from haystack_irmetrics.errors import OutputError, PipelineError
from haystack_irmetrics.io import write_trec_run

CORPUS = '{"_id":"d1","text":"alpha beta"}\n{"_id":"d2","text":"gamma"}\n{"_id":"d3","text":"alpha gamma"}\n'
QUERIES = '{"_id":"q1","text":"alpha"}\n{"_id":"q2","text":"gamma"}\n'
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n"
RETRIEVER = """components:
  r:
    type: haystack.components.retrievers.in_memory.bm25_retriever.InMemoryBM25Retriever
    init_parameters:
      document_store: {type: haystack.document_stores.in_memory.document_store.InMemoryDocumentStore, init_parameters: {}}
COMPONENTS
connections: []
"""


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def dataset(root, corpus=CORPUS, queries=QUERIES, qrels=QRELS):
    (root / "qrels").mkdir(parents=True)
    for name, text in (("corpus.jsonl", corpus), ("queries.jsonl", queries), ("qrels/test.tsv", qrels)):
        (root / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


@pytest.mark.parametrize(
    "metadata,message",
    [
        ("metadata:\n  irmetrics:\n    output: []\n", "must name one socket"),
        ("metadata:\n  irmetrics:\n    query_inputs: null\n", "query_inputs .*expected 'component.socket'"),
        ("metadata:\n  irmetrics:\n    top_k_inputs: 5\n", "top_k_inputs .*expected 'component.socket'"),
        ("metadata: [1]\n", "metadata of .* must be a mapping"),
        ("metadata:\n  irmetrics:\n    indexing: broken.yaml\n", r"broken.yaml \(metadata.irmetrics.indexing .*not readable YAML"),
        ("metadata:\n  irmetrics:\n    indexing: latin1.yaml\n", r"latin1.yaml \(metadata.irmetrics.indexing .*not readable YAML"),
        ("metadata:\n  irmetrics:\n    output: b.prompt\n    query_inputs: [r.query, b.query]\n", "where a list of Documents was expected"),
    ],
)  # fmt: skip
def test_a_pipeline_yaml_whose_metadata_or_output_cannot_serve_a_run_exits_2_naming_it(
    tmp_path, capsys, metadata, message
):
    data = dataset(tmp_path / "data")
    (tmp_path / "broken.yaml").write_text("components: {a: [\n")
    (tmp_path / "latin1.yaml").write_bytes(b"# caf\xe9\ncomponents: {}\n")
    builder = "  b:\n    type: haystack.components.builders.prompt_builder.PromptBuilder\n    init_parameters: {template: 'hi {{query}}'}"
    pipe = tmp_path / "pipe.yaml"
    pipe.write_text(RETRIEVER.replace("COMPONENTS", builder if "b.prompt" in metadata else "") + metadata)
    assert main(["beir", str(data), "--retriever", str(pipe), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert __import__("re").search(message, err), err


@pytest.mark.parametrize("names", [["x", "x"], ["delta", "b"], ["a", "paired"]])
def test_compare_refuses_labels_that_would_overwrite_each_other_in_its_json(tmp_path, capsys, names):
    data = dataset(tmp_path / "data")
    qrels = data / "qrels" / "test.tsv"
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 2.0 x\nq2 Q0 d2 1 1.0 x\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d2 1 2.0 x\nq2 Q0 d1 1 1.0 x\n")
    args = [
        "compare",
        str(tmp_path / "a.trec"),
        str(tmp_path / "b.trec"),
        "--qrels",
        str(qrels),
        "-k",
        "1",
        "--format",
        "json",
    ]
    assert main([*args, "--names", ",".join(names)]) == 2
    assert "two different labels" in capsys.readouterr().err
    (tmp_path / "delta").mkdir()
    (tmp_path / "delta" / "run.trec").write_text((tmp_path / "a.trec").read_text())
    assert main(["compare", str(tmp_path / "delta"), *args[2:]]) == 0  # a folder named delta: labels get A:/B:
    metrics = json.loads(capsys.readouterr().out)["metrics"]["NDCG@1"]
    assert set(metrics) == {"A:delta", "B:b", "delta", "paired"}
    assert (metrics["A:delta"], metrics["B:b"], metrics["delta"]) == (1.0, 0.0, -1.0)  # delta = B - A
    assert metrics["paired"]["delta"] == -1.0 and metrics["paired"]["ci"] == [-1.0, -1.0]


@pytest.mark.parametrize(
    "where,line",
    [("corpus.jsonl", 2), ("corpus.jsonl", 3001), ("queries.jsonl", 2), ("qrels/test.tsv", 3)],
)
def test_a_byte_that_is_not_utf8_in_a_beir_file_is_named_on_its_own_line(tmp_path, where, line):
    files = {"corpus.jsonl": CORPUS, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS}
    rows = files[where].splitlines(keepends=True)
    if where == "corpus.jsonl" and line > len(rows):
        rows = [f'{{"_id":"x{i}","text":"t"}}\n' for i in range(line - 1)] + rows
    raw = [r.encode() for r in rows]
    raw[line - 1] = b"\xff" + raw[line - 1][1:]
    files[where] = b"".join(raw)
    with pytest.raises(ParseError, match=rf"{where}:{line}: not UTF-8"):
        load_beir(dataset(tmp_path / "data", **{k.split(".")[0].split("/")[0]: v for k, v in files.items()}))


@pytest.mark.parametrize("where", ["corpus", "queries"])
def test_a_jsonl_line_nested_too_deeply_is_a_parse_error_naming_its_line(tmp_path, capsys, where):
    deep = '{"_id": "d9", "text": "t", "x": ' + "[" * 200_000 + "]" * 200_000 + "}\n"
    files = {"corpus": CORPUS, "queries": QUERIES}
    files[where] = files[where] + deep
    folder = dataset(tmp_path / "data", files["corpus"], files["queries"], QRELS)
    line = len(files[where].splitlines())
    with pytest.raises(ParseError, match=rf"{where}.jsonl:{line}: invalid JSON \(nested too deeply\)"):
        load_beir(folder)
    assert main(["beir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{where}.jsonl:{line}" in err and "Traceback" not in err and len(err) < 4096


def test_a_byte_order_mark_opening_any_beir_file_is_dropped(tmp_path):
    bom = b"\xef\xbb\xbf"
    ds = load_beir(dataset(tmp_path / "data", bom + CORPUS.encode(), bom + QUERIES.encode(), bom + QRELS.encode()))
    assert list(ds.corpus) == ["d1", "d2", "d3"] and list(ds.queries) == ["q1", "q2"]
    assert ds.qrels == {"q1": {"d1": 1}, "q2": {"d2": 1}}


@pytest.mark.parametrize("doc_id", ["doc 1", "d\ud800", ""])
def test_an_id_a_trec_file_cannot_hold_is_refused_before_anything_is_written(tmp_path, doc_id):
    out = tmp_path / "run.trec"
    with pytest.raises(InvalidIdError, match="cannot be written to a TREC file"):
        write_trec_run({"q1": {"d0": 2.0, doc_id: 1.0}}, out)
    assert not out.exists()
    data = dataset(
        tmp_path / "data", corpus=CORPUS.replace('"d1"', '"doc 1"'), qrels=QRELS.replace("\td1\t", "\tdoc 1\t")
    )
    run = run_beir(data, progress=False, k_values=[1])
    assert run.evaluation.means["NDCG@1"] == 1.0  # scored in memory; only the file cannot hold the id
    with pytest.raises(InvalidIdError, match="'doc 1'"):
        run.write(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_write_trec_run_takes_what_read_run_returns_and_ranked_lists(tmp_path):
    from haystack_irmetrics.core.inputs import Run
    from haystack_irmetrics.io import read_run

    first = tmp_path / "first.trec"
    write_trec_run({"q1": {"d1": 2.0, "d2": 1}, "q2": {"d3": 0.5}}, first)
    for run in (read_run(first), Run.from_dict({"q1": {"d1": 2.0, "d2": 1}, "q2": {"d3": 0.5}})):
        again = tmp_path / "again.trec"
        write_trec_run(run, again)
        assert again.read_text() == first.read_text()
    write_trec_run({"q1": ["d2", "d1"]}, tmp_path / "ranked.trec")
    assert [line.split()[2] for line in (tmp_path / "ranked.trec").read_text().splitlines()] == ["d2", "d1"]


@pytest.mark.parametrize(
    "results,error,message",
    [
        ({"q1": {"d1": "2.0"}}, InvalidScoreError, "score '2.0' of document 'd1' in query 'q1'"),
        ({"q1": {"d1": float("nan")}}, InvalidScoreError, "score nan of document 'd1'"),
        ({"q1": {"d1": 10**400}}, InvalidScoreError, "of document 'd1' in query 'q1' cannot be written"),
        ({"q1": {7: 1.0}}, InvalidIdError, "document id 7 of query 'q1'"),
    ],
)
def test_write_trec_run_refuses_what_a_trec_file_cannot_hold_before_writing(tmp_path, results, error, message):
    out = tmp_path / "run.trec"
    with pytest.raises(error, match=re.escape(message)):
        write_trec_run(results, out)
    assert not out.exists()


@pytest.mark.parametrize("value", ["-5", "x", "2.5"])
def test_beir_top_k_must_be_a_whole_number_of_at_least_zero(capsys, value):
    with pytest.raises(SystemExit) as exit_:
        main(["beir", "--top-k", value])
    assert exit_.value.code == 2
    assert "expected a whole number >= 0 (0 keeps the pipeline's own)" in capsys.readouterr().err


def test_a_pipeline_with_an_untrusted_component_says_how_to_trust_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text(
        "from haystack import Document, component\n"
        "@component\nclass Ret:\n"
        "    @component.output_types(documents=list[Document])\n"
        "    def run(self, query: str):\n        return {'documents': []}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    pipe = tmp_path / "custom.yaml"
    pipe.write_text("components:\n  r:\n    type: mypkg.Ret\n    init_parameters: {}\nconnections: []\n")
    assert main(["beir", str(dataset(tmp_path / "data")), "--retriever", str(pipe), "--no-progress"]) == 2
    assert "--allow-module '<package>.*'" in capsys.readouterr().err


@pytest.mark.parametrize("kwargs", [{"top_k": "5"}, {"top_k": True}, {"chunk_words": 2.5}, {"chunk_words": 0}])
def test_run_beir_checks_its_integer_parameters(tmp_path, kwargs):
    with pytest.raises(PipelineError, match="must be a whole number >= 1"):
        run_beir(dataset(tmp_path / "data"), progress=False, **kwargs)


@pytest.mark.parametrize("where", ["a file", "under a file", "unwritable"])
def test_an_output_folder_that_cannot_be_written_fails_before_the_run_starts(tmp_path, monkeypatch, capsys, where):
    data = dataset(tmp_path / "data")
    (tmp_path / "taken").write_text("not a folder")
    out = {
        "a file": tmp_path / "taken",
        "under a file": tmp_path / "taken" / "sub",
        "unwritable": tmp_path / "new" / "out",
    }
    if where == "unwritable":
        monkeypatch.setattr(runner.os, "access", lambda path, mode: False)  # root may write anywhere

    def no_run(*args, **kwargs):
        raise AssertionError("the pipelines were loaded before the output folder was checked")

    monkeypatch.setattr(runner, "load_beir_pipelines", no_run)
    message = "not writable" if where == "unwritable" else "not a folder"
    with pytest.raises(OutputError, match=message):
        run_beir(data, progress=False, output_dir=out[where])
    assert main(["beir", str(data), "--output", str(out[where]), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and str(out[where]) in err and "Traceback" not in err
    assert (tmp_path / "taken").read_text() == "not a folder"
    assert not (tmp_path / "new").exists()


def test_a_full_disk_while_writing_names_the_file_and_leaves_no_temporary_file(tmp_path, monkeypatch, capsys):
    import errno

    from haystack_irmetrics.io import output

    original = output.os.replace

    def full(src, dst):  # the disk fills while run.trec is written (its temporary file renamed last)
        if str(dst).endswith("run.trec"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(src, dst)

    monkeypatch.setattr(output.os, "replace", full)
    data = dataset(tmp_path / "data")
    out = tmp_path / "out"
    with pytest.raises(OutputError, match=rf"cannot write {re.escape(str(out / 'run.trec'))}: No space left on device"):
        run_beir(data, progress=False, output_dir=out)
    assert sorted(p.name for p in out.iterdir()) == [".irmetrics.lock", "metrics.json", "per_query.json"]
    assert main(["beir", str(data), "-o", str(tmp_path / "cli"), "--no-progress"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"irmetrics: error: cannot write {tmp_path / 'cli' / 'data' / 'run.trec'}: No space left on device"


def test_a_failing_checkpoint_write_names_the_batch_file(tmp_path, monkeypatch):
    import errno

    from haystack_irmetrics.beir import outputs

    original = outputs.os.replace

    def full(src, dst):
        if "batch-" in str(dst):
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(src, dst)

    monkeypatch.setattr(outputs.os, "replace", full)
    out = tmp_path / "out"
    with pytest.raises(OutputError, match=r"cannot write .*\.partial/batch-000000\.jsonl: No space left on device"):
        run_beir(dataset(tmp_path / "data"), progress=False, output_dir=out, checkpoint_every=1)
    assert not list((out / ".partial").glob(".*.tmp"))


def test_outputs_never_use_a_temporary_name_another_writer_may_hold(tmp_path):
    data = dataset(tmp_path / "data")
    out = tmp_path / "out"
    out.mkdir()
    # the fixed names earlier versions wrote through: another run's half-written files
    others = {name: f"another run's {name}" for name in (".run.trec.tmp", ".metrics.json.tmp", ".summary.json.tmp")}
    for name, text in others.items():
        (out / name).write_text(text)
    run_beir(data, progress=False, output_dir=out)
    assert {name: (out / name).read_text() for name in others} == others
    assert (out / "run.trec").read_text().startswith("q1 Q0 ")


def test_a_second_run_on_a_locked_output_folder_stops_at_once_naming_it(tmp_path, monkeypatch, capsys):
    from haystack_irmetrics.beir.outputs import output_lock

    data = dataset(tmp_path / "data")
    out = tmp_path / "out"
    monkeypatch.setattr(runner, "load_beir_pipelines", pytest.fail)
    with output_lock(out):  # as another process running on out holds it
        with pytest.raises(OutputError, match=rf"output folder {re.escape(str(out))} is in use by another"):
            run_beir(data, progress=False, output_dir=out)
        assert main(["beir", str(data), "-o", str(out), "--no-progress"]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert "is in use by another irmetrics beir run" in line and str(out) in line
    monkeypatch.undo()
    assert main(["beir", str(data), "-o", str(out), "--no-progress"]) == 0  # released with the block


def test_output_files_get_the_permissions_open_would_give(tmp_path):
    import os
    import stat

    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        run_beir(dataset(tmp_path / "data"), progress=False, output_dir=out)
    finally:
        os.umask(old)
    assert {stat.S_IMODE((out / n).stat().st_mode) for n in ("run.trec", "summary.json", "metrics.md")} == {0o644}


def _round_trip(component) -> dict:
    pipe = Pipeline()
    pipe.add_component("c", component)
    return load_pipeline(pipe.dumps()).get_component("c").to_dict()["init_parameters"]


def test_numpy_numbers_and_a_lone_metric_name_are_stored_as_plain_json_values():
    assert _round_trip(NDCGEvaluator(k=np.int64(5)))["k"] == 5
    assert _round_trip(NDCGEvaluator(relevance_threshold=np.float64(0.5)))["relevance_threshold"] == 0.5
    params = _round_trip(IRMetricsEvaluator(metrics="NDCG", k_values=[np.int64(3), 1]))
    assert params["metrics"] == ["NDCG"] and params["k_values"] == [3, 1]
    out = IRMetricsEvaluator(metrics="NDCG", k_values=[1]).run([[Document(id="a")]], [[Document(id="a")]])
    assert out["means"] == {"NDCG@1": 1.0}


@pytest.mark.parametrize(
    "kwargs,error",
    [({"vote_map": {1: 1.0}}, "vote_map keys are words"), ({"vote_map": "x"}, "vote_map must be a dict"),
     ({"position_base": "1"}, "position_base must be a whole number")],
)  # fmt: skip
def test_feedback_component_parameters_are_checked_at_construction(kwargs, error):
    with pytest.raises(Exception, match=error) as info:
        FeedbackToGoldDocuments(**kwargs)
    assert isinstance(info.value, ValueError)  # every IRMetricsError is one


def test_to_evaluation_run_result_names_what_it_needs():
    out = IRMetricsEvaluator(metrics=["NDCG@1"]).run([[Document(id="a")], [Document(id="b")]], [[Document(id="a")], []])
    with pytest.raises(InvalidPolicyError, match=r"takes the output of IRMetricsEvaluator\.run"):
        to_evaluation_run_result(NDCGEvaluator(k=1).run([[Document(id="a")]], [[Document(id="a")]]), "x")
    with pytest.raises(InvalidPolicyError, match="from a pipeline's output"):
        to_evaluation_run_result({"evaluator": out}, "x")
    with pytest.raises(InvalidPolicyError, match=r"inputs \['q'\] need a list of one value per query \(2\)"):
        to_evaluation_run_result(out, "x", inputs={"q": ["only one"]})
    for inputs in (["x"], {}, "q"):
        with pytest.raises(InvalidPolicyError, match=r"inputs must be a non-empty dict"):
            to_evaluation_run_result(out, "x", inputs=inputs)
    with pytest.raises(InvalidPolicyError, match=r"inputs \['q'\] need a list"):
        to_evaluation_run_result(out, "x", inputs={"q": None})
    with pytest.raises(InvalidPolicyError, match=r"no individual_scores for \['NDCG@1'\]"):
        to_evaluation_run_result({**out, "individual_scores": {}}, "x")
    assert to_evaluation_run_result(out, "x").aggregated_report()["score"] == [0.5]


def test_without_progress_the_model_loaders_bars_are_off_while_warming_up_and_restored_after():
    pytest.importorskip("transformers")
    from transformers.utils import logging as hf_logging

    from haystack_irmetrics.beir.models import model_loading_bars as _model_loading_bars

    assert hf_logging.is_progress_bar_enabled()
    with _model_loading_bars(False):
        assert not hf_logging.is_progress_bar_enabled()
    assert hf_logging.is_progress_bar_enabled()
    with _model_loading_bars(True):
        assert hf_logging.is_progress_bar_enabled()
