"""Bounded reading of hostile input: the line limit of every reader, gzip bombs, deep JSON, quoted newlines.

Each reader stops at the first line over ``IRMETRICS_MAX_LINE_BYTES`` (1 MiB by default) and names the
file and line; memory stays bounded by the limit, not by the file.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import InvalidPolicyError, ParseError
from haystack_irmetrics.io import read_qrels, read_run
from haystack_irmetrics.io.limits import DEFAULT_MAX_LINE_BYTES, ENV_VAR, capped, line_at, max_line_bytes
from haystack_irmetrics.io.trec import read_trec_run

_END = re.compile(rb"\r\n|\r|\n")


def _lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` without their ends, split as the readers split them."""
    parts = _END.split(data)
    return parts[:-1] if parts[-1] == b"" else parts


@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"x").replace(b"\n", b"y")), max_size=12),
    ends=st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=12, max_size=12),
    limit=st.integers(1, 45),
    last_end=st.booleans(),
)
def test_the_capped_stream_stops_exactly_at_the_first_line_over_the_limit(lines, ends, limit, last_end):
    data = b"".join(line + end for line, end in zip(lines, ends))
    if lines and not last_end:
        data = data[: len(data) - len(ends[len(lines) - 1])]
    expected = _lines(data)
    long = next((i for i, line in enumerate(expected) if len(line) > limit), None)
    stream = capped(io.BytesIO(data), limit)
    got = _lines(stream.read())
    assert stream.raw.overlong == (long is not None)
    if long is None:
        assert got == expected
    else:  # every line before the long one as it is, then the long one cut, over the limit
        assert got[:long] == expected[:long] and len(got) == long + 1
        assert expected[long].startswith(got[long]) and len(got[long]) > limit


@given(data=st.binary(max_size=200), offset=st.integers(0, 200))
def test_line_at_counts_line_ends_as_the_readers_split_them(data, offset):
    offset = min(offset, len(data))
    assert line_at(io.BytesIO(data), offset) == len(_END.findall(data[:offset])) + 1


def test_the_limit_is_one_mib_unless_the_environment_says_otherwise(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert max_line_bytes() == DEFAULT_MAX_LINE_BYTES == 1 << 20
    monkeypatch.setenv(ENV_VAR, "4096")
    assert max_line_bytes() == 4096
    for bad in ("0", "-1", "1e6", "lots"):
        monkeypatch.setenv(ENV_VAR, bad)
        with pytest.raises(InvalidPolicyError, match=ENV_VAR):
            max_line_bytes()


QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.8 t\nq2 Q0 d3 1 0.7 t\n"


def _write(path, text: str, gz: bool = False):
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(
    "kind,read",
    [
        ("qrels", read_qrels),
        ("run", read_run),
        ("run-lines", lambda p: read_trec_run(p, fast=False)),
    ],
)
def test_a_trec_line_over_the_limit_is_named_by_file_and_line(tmp_path, monkeypatch, kind, read, gz):
    monkeypatch.setenv(ENV_VAR, "64")
    text = (QRELS if kind == "qrels" else RUN).splitlines(keepends=True)
    text.insert(2, "q1 0 " + "d" * 100 + " 1\n" if kind == "qrels" else "q1 Q0 " + "d" * 100 + " 3 0.1 t\n")
    path = _write(tmp_path / f"{kind}.txt", "".join(text), gz)
    with pytest.raises(ParseError, match=rf"{kind}.txt:3: a line longer than 64 bytes .*{ENV_VAR}"):
        read(path)


def test_lines_up_to_the_limit_read_as_before(tmp_path, monkeypatch):
    longest = max(len(line) for line in RUN.splitlines())
    monkeypatch.setenv(ENV_VAR, str(longest))
    run = _write(tmp_path / "run.txt", RUN)
    qrels = read_qrels(_write(tmp_path / "qrels.txt", QRELS))
    fast, lines = (evaluate(qrels, read_trec_run(run, fast=f), k_values=[1, 3]) for f in (True, False))
    assert fast.per_query == lines.per_query and fast.means["NDCG@3"] > 0
    monkeypatch.setenv(ENV_VAR, str(longest - 1))
    with pytest.raises(ParseError, match=r"run\.txt:1: a line longer"):
        read_trec_run(run)


def test_a_bad_line_before_the_long_one_is_the_one_reported(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, "64")
    path = _write(tmp_path / "run.txt", "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 nan t\nq1 Q0 " + "d" * 100 + " 3 0.1 t\n")
    with pytest.raises(ParseError, match=r"run\.txt:2: score 'nan'"):
        read_run(path)


def _beir(folder, corpus: str, queries: str, qrels: str = "query-id\tcorpus-id\tscore\nq1\td1\t1\n"):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(corpus)
    (folder / "queries.jsonl").write_text(queries)
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


@pytest.mark.parametrize("where", ["corpus", "queries", "qrels/test"])
def test_a_beir_line_over_the_limit_exits_2_naming_file_and_line(tmp_path, monkeypatch, capsys, where):
    monkeypatch.setenv(ENV_VAR, "80")
    files = {
        "corpus": '{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"}\n',
        "queries": '{"_id": "q1", "text": "a"}\n',
        "qrels/test": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    }
    long = {
        "corpus": '{"_id": "d3", "text": "' + "x" * 200 + '"}\n',
        "queries": '{"_id": "q2", "text": "' + "x" * 200 + '"}\n',
        "qrels/test": "q1\t" + "d" * 200 + "\t1\n",
    }
    files[where] += long[where]
    folder = _beir(tmp_path / "data", files["corpus"], files["queries"], files["qrels/test"])
    line = len(files[where].splitlines())
    assert main(["beir", str(folder)]) == 2
    assert f"{where}.{'tsv' if where.startswith('qrels') else 'jsonl'}:{line}: a line longer than 80 bytes" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_feedback_line_over_the_limit_exits_2_naming_file_and_line(tmp_path, monkeypatch, capsys, fmt):
    pytest.importorskip("polars")
    monkeypatch.setenv(ENV_VAR, "100")
    if fmt == "csv":
        text = "query_id,doc_id,position,vote\nq1,d1,1,1\nq1,d2,2," + "1" * 300 + "\nq1,d3,3,1\n"
    else:
        row = {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1}
        text = json.dumps(row) + "\n" + json.dumps({**row, "doc_id": "d" * 300}) + "\n" + json.dumps(row) + "\n"
    log = tmp_path / f"log.{fmt}"
    log.write_text(text)
    assert main(["feedback", str(log)]) == 2
    line = 3 if fmt == "csv" else 2
    assert f"log.{fmt}:{line}: a line longer than 100 bytes" in capsys.readouterr().err


_MEMORY_PROBE = textwrap.dedent(
    """
    import resource, sys
    from haystack_irmetrics.cli import main
    import polars, pyarrow.csv, pyarrow.json  # imported before the baseline, as main would import them
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = main(sys.argv[1:])
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(code, (after - before) // 1024)
    """
)


def _peak_mb_above_imports(args: list[str], env_limit: int) -> tuple[int, int, str]:
    env = {**os.environ, ENV_VAR: str(env_limit)}
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, *args], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.stdout.strip(), out.stderr[-3000:]
    code, mb = out.stdout.split()
    return int(code), int(mb), out.stderr


@pytest.mark.parametrize("what", ["qrels", "run", "run.gz", "csv", "jsonl"])
def test_a_50mb_stream_without_line_ends_stops_at_the_limit_in_bounded_memory(tmp_path, what):
    pytest.importorskip("polars")
    blob = b"\x00" * (50 << 20)  # 50 MB of NUL bytes, no line end
    good = tmp_path / "good.txt"
    good.write_text(QRELS)
    if what == "run.gz":
        path = tmp_path / "run.txt"
        path.write_bytes(gzip.compress(RUN.encode() + blob, 9))  # a gzip bomb: ~50 KB holding 50 MB
    else:
        path = tmp_path / {"qrels": "qrels.txt", "run": "run.txt", "csv": "log.csv", "jsonl": "log.jsonl"}[what]
        head = {"qrels": QRELS, "run": RUN, "csv": "query_id,doc_id,position,vote\nq1,d1,1,1\n"}.get(what, "")
        path.write_bytes(head.encode() + blob)
    if what.startswith("run"):
        args = ["evaluate", str(good), str(path)]
    elif what == "qrels":
        args = ["evaluate", str(path), str(good)]
    else:
        args = ["feedback", str(path)]
    code, mb, err = _peak_mb_above_imports(args, 1 << 20)
    line = {"qrels": 4, "run": 4, "run.gz": 4, "csv": 3, "jsonl": 1}[what]
    assert code == 2 and f":{line}: a line longer than 1,048,576 bytes" in err, err
    assert len(err) < 4096
    assert mb < 40, f"{mb} MB above the imports for a 50 MB line"  # the whole line would be >= 50


def test_a_csv_field_spanning_lines_is_refused_at_the_line_it_opens_on(tmp_path, capsys):
    pytest.importorskip("polars")
    log = tmp_path / "log.csv"
    log.write_text('query_id,doc_id,position,vote\nq1,d1,1,1\n"q\n2",d2,2,1\nq1,d3,3,1\nq1,d4,4,bad\n')
    assert main(["feedback", str(log)]) == 2
    err = capsys.readouterr().err
    assert "log.csv:3: a quoted field spans lines" in err


def test_quoted_fields_on_one_line_still_read(tmp_path):
    pytest.importorskip("polars")
    from haystack_irmetrics.feedback import aggregate_feedback

    log = tmp_path / "log.csv"
    log.write_text('query_id,doc_id,position,vote\nq1,"d,1",1,1\nq1,"d""2",2,0\r\nq1,d3,3,1\n')
    judged = aggregate_feedback(log).judgments.sort("doc")["doc"].to_list()
    assert judged == ['d"2', "d,1", "d3"]


def test_a_repeated_csv_column_is_a_schema_error(tmp_path, capsys):
    pytest.importorskip("polars")
    log = tmp_path / "log.csv"
    log.write_text("query_id,doc_id,position,vote,vote\nq1,d1,1,1,0\n")
    assert main(["feedback", str(log)]) == 2
    assert "names column(s) ['vote'] more than once" in capsys.readouterr().err


def test_a_jsonl_line_nested_60000_deep_is_a_named_malformed_row_not_a_crash(tmp_path):
    pytest.importorskip("polars")
    row = '{"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1}'
    deep = '{"query_id": "q2", "doc_id": "d1", "position": 1, "vote": 1, "x": ' + "[" * 60_000 + "]" * 60_000 + "}"
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join([row, row, deep, row]) + "\n")
    # In a child process: the parser this guards against dies with SIGSEGV, which no except catches.
    out = subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", "feedback", str(log)], capture_output=True, text=True
    )
    assert out.returncode == 2, out.stderr[-2000:]
    assert "row 3 (line 3): invalid JSON: nested too deeply" in out.stderr
    skipped = subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", "feedback", str(log), "--on-error", "skip"],
        capture_output=True,
        text=True,
    )
    assert skipped.returncode == 0 and "1 skipped as malformed" in skipped.stdout


def test_a_jsonl_block_opening_with_null_is_a_malformed_row_not_a_crash(tmp_path):
    pytest.importorskip("polars")
    # pyarrow 26's JSON parser segfaults on a block whose first line is `null` (found by test_fuzz).
    log = tmp_path / "log.jsonl"
    log.write_text('null\n{"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1}\n')
    out = subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", "feedback", str(log), "--on-error", "skip"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "1 skipped as malformed" in out.stdout


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
@pytest.mark.parametrize("kind", ["qrels", "run", "csv", "jsonl"])
def test_dev_zero_as_any_input_stops_at_the_line_limit(tmp_path, monkeypatch, capsys, kind):
    pytest.importorskip("polars")
    monkeypatch.setenv(ENV_VAR, str(1 << 16))
    good = _write(tmp_path / "good.txt", QRELS)
    if kind == "qrels":
        args = ["evaluate", "/dev/zero", str(good)]
    elif kind == "run":
        args = ["evaluate", str(good), "/dev/zero"]
    else:
        args = ["feedback", "/dev/zero", "--format", kind]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "/dev/zero:1: a line longer than 65,536 bytes" in err and len(err) < 4096
