"""One writer per format (``io/trec.py``): qrels in BEIR's or TREC's layout (``write_qrels``) and TREC runs
(``write_trec_run``), each read back exactly by the readers, written whole or not at all; and the one trec order of
the core (``core.ranking``) that the writer, fusion, the pools and the report share."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_irmetrics.cli import main
from haystack_irmetrics.core.ranking import in_trec_order, out_of_trec_order, trec_order, trec_sorted
from haystack_irmetrics.errors import InvalidArgumentError, InvalidIdError, InvalidLabelError, OutputError
from haystack_irmetrics.io.trec import (
    float_texts,
    read_beir_qrels,
    read_qrels,
    read_run,
    read_trec_qrels,
    write_qrels,
    write_trec_run,
)

from .oracles import trec_order as sorted_order

# Labels as floats (the click-derived qrels: fractions, tiny and whole ones), ints, negatives.
FLOAT_QRELS = {
    "q1": {"d1": 0.1, "d2": 1 / 3, "d3": 1e-07, "d4": 1.0, "d5": 0.0, "d6": 2.5e-05},
    "q2": {"d1": -1.0, "d7": 0.30000000000000004, "d8": 123456789.125},
}
INT_QRELS = {"q1": {"d2": 0, "d1": 3}, "q2": {"d9": 1}, "q3": {"d1": -1}}
# Ids every layout holds: unicode, numbers as text, a '#' past the first field, quotes, commas, the BEIR header's words.
ODD = ["ünï", "007", "1e5", "d#1", 'a"b', "c,d", "query-id", "corpus-id", "x\x1cy", "nbsp\xa0x"]
# Ids only BEIR's layout holds (tab-separated): spaces, a tab, a leading quote, a leading '#'.
BEIR_ONLY = ["d 1", " lead", "tail ", "t\tab", '"quoted"', '"', "#q", ""]


def _odd_qrels(ids: list[str]) -> dict[str, dict[str, float]]:
    return {q: {d: i + j / 4 for j, d in enumerate(ids)} for i, q in enumerate(ids)}


def _same(read: dict, written: dict) -> None:
    """The judgments read back: the same queries and documents in the same order, every label the same value."""
    assert list(read) == list(written)
    for q in written:
        assert list(read[q]) == list(written[q]), q
        assert all(read[q][d] == v and float(read[q][d]).hex() == float(v).hex() for d, v in written[q].items())


@pytest.mark.parametrize("layout", ["beir", "trec"])
@pytest.mark.parametrize("qrels", [FLOAT_QRELS, INT_QRELS, _odd_qrels(ODD)], ids=["floats", "ints", "odd-ids"])
def test_write_qrels_reads_back_exactly_in_either_layout(tmp_path, layout, qrels):
    path = write_qrels(qrels, tmp_path / f"qrels.{layout}", layout=layout)
    _same(read_qrels(path).data, qrels)
    by_layout = read_beir_qrels if layout == "beir" else read_trec_qrels
    _same(by_layout(path).data, qrels)


def test_beir_layout_holds_ids_with_blanks_tabs_and_quotes(tmp_path):
    qrels = _odd_qrels(ODD + BEIR_ONLY)
    path = write_qrels(qrels, tmp_path / "qrels.tsv", layout="beir")
    _same(read_qrels(path).data, qrels)
    with pytest.raises(InvalidIdError, match=r"query id 'd 1' cannot be written to a TREC file"):
        write_qrels({"d 1": {"x": 1}}, tmp_path / "t", layout="trec")


def test_the_layouts_as_written_byte_for_byte(tmp_path):
    beir = write_qrels({"q1": {"d1": 2, "d 2": 0.5}, "q2": {"t\tab": 1}}, tmp_path / "a.tsv", layout="beir")
    assert beir.read_bytes() == b'query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td 2\t0.5\nq2\t"t\tab"\t1\n'
    trec = write_qrels({"q1": {"d1": 2, "d2": 0.5}, "q2": {"d3": 1e-07}}, tmp_path / "a.txt", layout="trec")
    assert trec.read_bytes() == b"q1 0 d1 2\nq1 0 d2 0.5\nq2 0 d3 1e-07\n"
    empty = write_qrels({}, tmp_path / "empty.tsv", layout="beir")
    assert empty.read_bytes() == b"query-id\tcorpus-id\tscore\n"


def test_a_trec_qrels_query_named_query_id_is_not_taken_for_beirs_header(tmp_path):
    qrels = {"query-id": {"d1": 1}, "q2": {"d2": 0}}
    path = write_qrels(qrels, tmp_path / "qrels.txt", layout="trec")
    assert read_qrels(path).data == qrels


@pytest.mark.parametrize(
    ("qrels", "layout", "error", "message"),
    [
        ({"#q": {"d": 1}}, "trec", InvalidIdError, r"query id '#q' cannot be written to a TREC file: a line opening"),
        ({"\ufeffq": {"d": 1}}, "trec", InvalidIdError, r"byte order mark"),
        ({"q": {"d\n2": 1}}, "beir", InvalidIdError, r"document id 'd\\n2' of query 'q' cannot be written to a BEIR"),
        ({"q\r": {"d": 1}}, "beir", InvalidIdError, r"query id 'q\\r' cannot be written to a BEIR qrels file"),
        ({"q": {"\ud800": 1}}, "beir", InvalidIdError, r"cannot be written to a BEIR qrels file"),
        ({"q": {"\ud800": 1}}, "trec", InvalidIdError, r"cannot be written to a TREC file"),
        ({"q": {"d": float("nan")}}, "beir", InvalidLabelError, r"label nan of document 'd' in query 'q'"),
        ({"q": {"d": "1"}}, "trec", InvalidLabelError, r"is str, not a number"),
        ({"q": {"d": 1}}, "csv", InvalidArgumentError, r"unknown qrels layout 'csv': one of 'beir', 'trec'"),
    ],
)
def test_what_would_not_read_back_is_refused_before_anything_is_written(tmp_path, qrels, layout, error, message):
    path = tmp_path / "qrels"
    path.write_text("old\n")
    with pytest.raises(error, match=message):
        write_qrels(qrels, path, layout=layout)
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["qrels"]


def test_a_query_id_opening_with_hash_is_refused_by_the_run_writer_too(tmp_path):
    """Every reader skips a line opening with '#' as a comment: the run's query would vanish on reading."""
    with pytest.raises(InvalidIdError, match=r"query id '#1' cannot be written to a TREC file"):
        write_trec_run({"#1": {"d1": 1.0}, "q2": {"d2": 1.0}}, tmp_path / "run.trec")
    assert not (tmp_path / "run.trec").exists()


@pytest.mark.parametrize("write", ["run", "qrels"])
def test_the_writers_create_folders_and_name_a_failure_as_an_output_error(tmp_path, write):
    def put(path):
        if write == "run":
            return write_trec_run({"q1": {"d1": 1.0}}, path, tag="t")
        return write_qrels({"q1": {"d1": 1}}, path, layout="trec")

    deep = tmp_path / "a" / "b" / "out.txt"
    assert put(deep) == deep and deep.is_file()
    with pytest.raises(OutputError, match=r"cannot write .*: Is a directory"):
        put(tmp_path / "a")
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"cannot write .*file/out.txt"):
        put(tmp_path / "file" / "out.txt")
    assert sorted(os.listdir(tmp_path / "a")) == ["b"]  # no temporary file left


def test_a_run_is_written_whole_or_the_old_file_stays(tmp_path):
    """An error while the lines are written (a score that fails mid-way) leaves the file as it was."""

    class Failing(float):  # a finite score whose text fails: the writer has written the queries before it
        def __float__(self) -> float:
            raise RuntimeError("disk gone")

    path = tmp_path / "run.trec"
    write_trec_run({"q1": {"d1": 1.0}}, path, tag="t")
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="disk gone"):
        write_trec_run({"q1": {"d1": 2.0}, "q2": {"d1": Failing(1.0)}}, path, tag="t")
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["run.trec"]


def test_the_run_writer_replaces_a_link_when_told_not_to_follow_it(tmp_path):
    target = tmp_path / "target.trec"
    target.write_text("kept\n")
    link = tmp_path / "run.trec"
    link.symlink_to(target)
    write_trec_run({"q1": {"d1": 1.0}}, link, tag="t", follow_link=False)
    assert not link.is_symlink() and target.read_text() == "kept\n"
    assert read_run(link).data == {"q1": {"d1": 1.0}}


def test_fuse_into_a_missing_folder_creates_it(tmp_path, capsys):
    for name, docs in (("a", "d1 d2"), ("b", "d2 d3")):
        lines = [f"q1 Q0 {d} {r} {3 - r} {name}\n" for r, d in enumerate(docs.split(), 1)]
        (tmp_path / f"{name}.trec").write_text("".join(lines))
    out = tmp_path / "new" / "deeper" / "fused.trec"
    assert main(["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "-o", str(out)]) == 0
    assert list(read_run(out).data["q1"]) == ["d2", "d1", "d3"]
    capsys.readouterr()
    (tmp_path / "blocked").write_text("a file where the folder should be")
    assert (
        main(["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "-o", str(tmp_path / "blocked" / "x")]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("irmetrics: error: cannot write ") and "Errno" not in err[0]


def test_clicks_fit_writes_the_judges_layout_and_its_float_labels_read_back_exactly(tmp_path):
    """``irmetrics clicks fit`` and ``irmetrics judge`` write one layout (BEIR's); a query's text may be its id."""
    from haystack_irmetrics.clicks import ClickLog, fit_model
    from haystack_irmetrics.clicks.simulate import log_rows, model_with, sessions_from_rankings, simulate

    shown = sessions_from_rankings([("how to fit", ["d1", "d 2", "d3"]), ("q2", ["d3", "d1"])] * 300)
    truth = model_with("pbm", shown, attractiveness=lambda q, d: 0.7 if d == "d1" else 0.2, examination=[1, 0.6, 0.3])
    fit = fit_model("dbn", ClickLog(log_rows(simulate(truth, shown, seed=3))).sessions())
    qrels_path, _ = fit.write(tmp_path / "new" / "fit")
    header = qrels_path.read_text().splitlines()[0]
    assert header == "query-id\tcorpus-id\tscore"
    expected = {q: {d: docs[d] for d in sorted(docs)} for q, docs in sorted(fit.qrels().items())}
    _same(read_qrels(qrels_path).data, expected)
    assert any(0 < v < 1 and v != round(v, 6) for docs in expected.values() for v in docs.values())


# -- the one trec order --------------------------------------------------------------------------------


def _ranking(rng: random.Random, n: int) -> dict[str, float]:
    """Tie-heavy scores, near-ties that only float32 merges, -0.0 and 0.0, ids whose str order is not numeric."""
    pool = [0.0, -0.0, 1.0, 0.5, 0.5 + 1e-9, 3e38, 1e39, -1.0, 2.0]
    ids = rng.sample([f"d{i}" for i in range(3 * n)] + ["Z", "é", "d", "10", "9"], n)
    return {d: rng.choice(pool) if rng.random() < 0.7 else rng.uniform(-2, 2) for d in ids}


def test_trec_order_and_its_checks_agree_with_sorting_every_query():
    rng = random.Random(7)
    queries = [_ranking(rng, rng.randint(0, 12)) for _ in range(400)]
    queries += [dict(zip(trec_order(q), q.values())) for q in queries[:50]]  # ids relabelled: some come ordered
    queries += [{d: q[d] for d in sorted_order(q)} for q in queries[:100]]  # in trec order already
    for q in queries:
        expected = sorted_order(q)
        assert trec_order(q) == expected, q
        assert trec_sorted(list(q), np.fromiter(q.values(), float, len(q))) == expected
        assert in_trec_order(q) is (list(q) == expected), q
    # Many queries as flat rows (fusion's packed runs): the rows that break the order name exactly the queries out of it.
    ids = [d for q in queries for d in q]
    scores = np.array([s for q in queries for s in q.values()], float)
    offsets = np.cumsum([0, *map(len, queries)])
    broken = out_of_trec_order(ids, scores, offsets)
    owners = set((np.searchsorted(offsets, broken, side="right") - 1).tolist())
    assert owners == {i for i, q in enumerate(queries) if list(q) != sorted_order(q)}


_EDGES = [0.0, -0.0, 1e-4, -1e-4, 9.999999999999999e-05, 1e-05, 5e-324, 2.2250738585072014e-308, 1e16, -1e16,
          9999999999999998.0, 1.7976931348623157e308, 0.1 + 0.2, 1 / 3, 123456789012345.67, 1.0, 100.0, 1e15]  # fmt: skip


@settings(max_examples=200)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(_EDGES), min_size=0, max_size=200))
def test_a_runs_scores_are_written_as_repr_writes_them(values):
    """``float_texts`` (orjson for the digits where they agree) against ``repr``, the oracle: every float,
    edges of the range included (the two notations part below 1e-4 and from 1e16)."""
    assert float_texts(values) == list(map(repr, values))
    assert float_texts([*values, *_EDGES, *values]) == list(map(repr, [*values, *_EDGES, *values]))


def test_scores_beyond_the_finite_numbers_still_read_as_repr_and_the_writer_keeps_its_bytes(tmp_path):
    rng = np.random.default_rng(7)
    values = [*(rng.standard_normal(500) * 10.0 ** rng.integers(-8, 20, 500)).tolist(), float("nan"), float("inf")]
    assert float_texts(values) == list(map(repr, values))
    run = {f"q{i}": {f"d{j}": float(s) for j, s in enumerate(rng.random(300) * 30)} for i in range(3)}
    path = write_trec_run(run, tmp_path / "run.trec")
    expected = "".join(
        f"{q} Q0 {d} {rank} {docs[d]!r} haystack_irmetrics\n"
        for q, docs in run.items()
        for rank, d in enumerate(sorted_order(docs), 1)
    )
    assert path.read_text() == expected


def test_without_orjson_every_score_goes_through_repr(monkeypatch):
    import sys

    from haystack_irmetrics.io import trec

    monkeypatch.setitem(sys.modules, "orjson", None)  # an import of it now fails, as where it is not installed
    trec._orjson.cache_clear()
    try:
        values = [*_EDGES, *(np.random.default_rng(3).random(100) * 20).tolist()]
        assert trec._orjson() is None
        assert float_texts(values) == list(map(repr, values))
    finally:
        trec._orjson.cache_clear()


def test_an_orjson_that_writes_other_digits_is_not_trusted(monkeypatch):
    """Another orjson version could format floats otherwise: it is checked against repr on probe values
    first, and one that writes ``%.17g`` (every float to 17 digits) is left unused."""
    import sys
    import types

    from haystack_irmetrics.io import trec

    other = types.ModuleType("orjson")
    other.dumps = lambda values: ("[" + ",".join("%.17g" % v for v in values) + "]").encode()  # noqa: UP031
    monkeypatch.setitem(sys.modules, "orjson", other)
    trec._orjson.cache_clear()
    try:
        assert trec._orjson() is None
        values = (np.random.default_rng(5).random(100) * 20).tolist()
        assert float_texts(values) == list(map(repr, values))
    finally:
        trec._orjson.cache_clear()
