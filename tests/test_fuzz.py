"""A mutation fuzzer over every reader: whatever the bytes, a result or a short typed error.

Seeds are the small well-formed and odd files in ``tests/fuzz_corpus/``; hypothesis mutates them
(bytes flipped, cut, repeated; tokens that readers treat specially spliced in: NUL, CR, quotes,
brackets, a byte order mark, non-UTF-8 bytes, ``nan``, huge numbers, gzip magic) and may gzip or
truncate the result. Every reader (TREC qrels and runs on both paths, BEIR folders, feedback CSV, TSV,
JSONL and Parquet) and the CLI must then answer with a value or an :class:`IRMetricsError` whose
message is under 4 KB, never another exception, a crash or a hang. The line limit is lowered so
the fuzzer reaches it too.

The default suite runs a short seeded run (``derandomize``: the same examples every time);
``make fuzz`` runs ``IRMETRICS_FUZZ_EXAMPLES`` (default there: 3,000) random examples per reader.
"""

from __future__ import annotations

import gzip
import os
import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haystack_irmetrics.errors import IRMetricsError
from haystack_irmetrics.io.limits import ENV_VAR

CORPUS = Path(__file__).parent / "fuzz_corpus"
_LONG_RUN = int(os.environ.get("IRMETRICS_FUZZ_EXAMPLES", "0") or 0)
FUZZ = settings(
    max_examples=_LONG_RUN or 60,
    derandomize=not _LONG_RUN,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
MESSAGE_BOUND = 4096
TOKENS = [
    b"\x00",
    b"\r",
    b"\n",
    b"\r\n",
    b"\t",
    b" ",
    b'"',
    b'""',
    b"{",
    b"[",
    b"]",
    b"}",
    b",",
    b"#",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\x1f\x8b",
    b"nan",
    b"inf",
    b"-inf",
    b"1e400",
    b"-0",
    b"1_0",
    b"\xc2\xa0",
    b"\x0b",
    b"\\",
    b"null",
    b"true",
    b"[" * 3000,
    b"x" * 5000,
    b"\n" * 50,
]


@st.composite
def mutated(draw, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["insert", "replace", "delete", "flip", "repeat", "truncate"]))
        at = draw(st.integers(0, len(data)))
        if op == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=8))
        elif op == "replace" and at < len(data):
            data[at : at + draw(st.integers(1, 8))] = draw(st.sampled_from(TOKENS))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        elif op == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "repeat":
            data[at:at] = bytes(data[at : at + draw(st.integers(1, 40))]) * draw(st.integers(2, 50))
        elif op == "truncate":
            del data[at:]
    if draw(st.booleans()) and draw(st.integers(0, 4)) == 0:
        packed = gzip.compress(bytes(data))
        data = bytearray(packed[: draw(st.integers(2, len(packed)))])  # maybe a truncated gzip stream
    return bytes(data)


def _seeds(prefix: str) -> list[bytes]:
    return [p.read_bytes() for p in sorted(CORPUS.glob(f"{prefix}*"))]


def _answer(call) -> object:
    """The call's value, or the typed error it raised; anything else fails the test."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call()
    except IRMetricsError as e:
        assert len(str(e)) < MESSAGE_BOUND, f"a {len(str(e)):,}-character message"
        return e


@pytest.fixture(autouse=True)
def small_line_limit(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "2048")


@pytest.fixture
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def _file(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


@FUZZ
@given(data=st.sampled_from(_seeds("qrels")).flatmap(mutated))
def test_qrels_readers_answer_any_bytes_with_labels_or_a_typed_error(workdir, data):
    from haystack_irmetrics.io import read_qrels

    _answer(lambda: read_qrels(_file(workdir, "qrels.txt", data)))


@FUZZ
@given(data=st.sampled_from(_seeds("run")).flatmap(mutated), fast=st.booleans())
def test_run_readers_answer_any_bytes_with_a_run_or_a_typed_error_on_both_paths(workdir, data, fast):
    from haystack_irmetrics.io.trec import read_trec_run

    _answer(lambda: read_trec_run(_file(workdir, "run.txt", data), fast=fast))


@FUZZ
@given(
    qrels=st.sampled_from(_seeds("qrels")).flatmap(mutated),
    run=st.sampled_from(_seeds("run")).flatmap(mutated),
    fmt=st.sampled_from(["json", "tsv", "markdown"]),
)
def test_irmetrics_evaluate_exits_0_or_2_on_any_pair_of_files(workdir, capsys, qrels, run, fmt):
    from haystack_irmetrics.cli import main

    args = [str(_file(workdir, "q.txt", qrels)), str(_file(workdir, "r.txt", run)), "-k", "1,3", "--format", fmt]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["evaluate", *args])
    err = capsys.readouterr().err
    assert code in (0, 2) and len(err) < MESSAGE_BOUND


@FUZZ
@given(
    which=st.sampled_from(["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"]),
    data=st.data(),
)
def test_beir_folders_answer_any_bytes_with_a_dataset_or_a_typed_error(workdir, which, data):
    from haystack_irmetrics.beir import load_beir

    folder = workdir / "beir"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "qrels").mkdir(parents=True)
    for name, seed in (
        ("corpus.jsonl", "beir_corpus"),
        ("queries.jsonl", "beir_queries"),
        ("qrels/test.tsv", "beir_qrels"),
    ):
        content = _seeds(seed)[0]
        if name == which:
            content = data.draw(mutated(content))
        (folder / name).write_bytes(content)
    _answer(lambda: load_beir(folder))


@FUZZ
@given(
    seed=st.sampled_from(["feedback.csv", "feedback.tsv", "feedback.jsonl", "feedback.parquet"]),
    data=st.data(),
    on_error=st.sampled_from(["raise", "skip"]),
)
def test_feedback_logs_answer_any_bytes_with_judgments_or_a_typed_error(workdir, seed, data, on_error):
    pytest.importorskip("polars")
    from haystack_irmetrics.feedback import aggregate_feedback

    path = _file(workdir, seed, data.draw(mutated((CORPUS / seed).read_bytes())))

    def aggregate():
        agg = aggregate_feedback(
            path, columns={"user": "user"} if seed != "feedback.parquet" else None, on_error=on_error
        )
        return agg.judgments.height

    _answer(aggregate)
