"""The docs' commands print and write what they did at the start of issue 50's refactors, but for the changes
listed in :data:`INTENDED`, each with the issue that made it (``scripts/docs_outputs.py``: it records both
revisions in temporary worktrees; the slow test takes minutes). The fast tests hold the recorder's own parts."""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import hashlib
import importlib.util
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

import pytest

from .conftest import ROOT

#: The commit before issue 50's work (and the work of issue 46 that landed beside it).
START = "b3f33ef4c2b911e9fd746c5225c26c17dc1aff84"

_JUDGE = (
    "irmetrics judge examples/data/good.trec examples/data/poor.trec --qrels examples/data/ppi_qrels.tsv --queries "
    "haystack_irmetrics/datasets/sample --corpus haystack_irmetrics/datasets/sample --depth 10 --llm sample-labels "
    "--api-base-url http://127.0.0.1:8766/v1 --ppi -o judged-ppi"
)
_EVALUATE_JUDGED = (
    "irmetrics evaluate examples/data/ppi_qrels.tsv examples/data/good.trec -m NDCG,MRR -k 10 --judged judged-ppi "
    "--format markdown"
)
_TIES = "issue 47.3 (a8514ce, 09feda1)"
#: ``(page, command as written or "file PATH")`` (``*`` as in fnmatch): the differences from START that an issue
#: made on purpose, with the commit.
INTENDED: dict[tuple[str, str], str] = {
    ("*", "file *.irmetrics.lock"): "issue 46.5 (20745c4): the lock file names the command that made the folder",
    ("docs/judging.md", "file judged-ppi/judgments.jsonl"): (
        "issue 46.1-3 (5c6da19): the judge asks for {'grade': N} as response_format, the server answers in that "
        "form (raw), the fingerprint holds the answer form; the labels are the same"
    ),
    ("docs/judging.md", "file judged-ppi/summary.json"): (
        "issue 46.1-3 (5c6da19): reasked, reader, response_format; the prompt asks for the JSON form"
    ),
    ("docs/judging.md", _JUDGE): "issue 46.7 (e45a639): a rate's PPI interval clipped to [0, 1] (NDCG's 1.0005)",
    ("docs/judging.md", "file judged-ppi/ppi.json"): "issue 46.7 (e45a639): the interval clipped to [0, 1]",
    ("docs/judging.md", _EVALUATE_JUDGED): (
        "issue 46.7 (e45a639): --judged tables count each column's queries and clip a rate's interval to [0, 1]"
    ),
    ("docs/pooling.md", "irmetrics pool * --sample-queries *"): "issue 47.2 (8d3a7f1): a new option (exit 2 at START)",
    ("docs/pooling.md", "file sampled.tsv"): "issue 47.2 (8d3a7f1): what --sample-queries writes",
    ("docs/power.md", "irmetrics power *"): "issue 47.5 (b967d2b): power answers in judgments too (text and --json)",
    ("docs/pooling.md", "irmetrics pool *"): (
        f"{_TIES}: ties between runs go by a seeded draw per query over their contents, not the listing (pairs, "
        "a stratified sample by best rank then id, estimate, simulate); simulate --repeats is new"
    ),
    ("docs/pooling.md", "cat pairs.tsv"): f"{_TIES}: maxmean's first batch under seed 0's tie order",
    ("docs/pooling.md", "file *.tsv"): f"{_TIES}: the pairs under seed 0's tie order",
    ("docs/assess.md", "file *.tsv"): f"{_TIES}: a rank's pairs in seed 0's tie order, the labels the same",
    ("docs/usefulness.md", "*"): "issue 48 (874308e): a new command's page, irmetrics usefulness (exit 2 at START)",
    ("*", "file judged/judgments.jsonl"): (
        "issue 47.4 (1e2d487): the judging page's judgments.jsonl has a note and an unsure column (null, false here); "
        f"{_TIES}: docs/assess.md's pairs come in seed 0's tie order"
    ),
    ("*", "file judged/assess.sqlite"): (
        "issue 47.4 (1e2d487): the store's events hold a note and an unsure mark, its prelabels the model's raw answer; "
        f"{_TIES}: docs/assess.md's pairs come in seed 0's tie order"
    ),
    ("docs/workflow.md", "*"): "issue 47.6 (8867560): a new page, From no labels to a decision (absent at START)",
}


def _listed(page: str, subject: str) -> tuple[str, str] | None:
    """The entry of INTENDED that names this difference."""
    for key in INTENDED:
        if all(fnmatch.fnmatchcase(value, pattern) for value, pattern in zip((page, subject), key)):
            return key
    return None


def _tool():
    spec = importlib.util.spec_from_file_location("docs_outputs", ROOT / "scripts" / "docs_outputs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


def _record(pages: list[dict], rev: str = "A") -> dict:
    return {"rev": rev, "commit": "0" * 40, "native": True, "pages": pages}


def _page(output: str = "ok\n", code: int = 0, files: dict | None = None) -> dict:
    command = {"line": 3, "text": "irmetrics beir", "shown": None, "exit": code, "output": output}
    return {"page": "docs/x.md", "commands": [command], "files": files or {}, "checkout_changes": []}


def test_the_normaliser_names_the_folders_and_masks_only_the_moments_durations_and_memory_of_the_run(tmp_path):
    sandbox = tmp_path / "pages" / "docs_x.md"
    normal = TOOL.normaliser(tmp_path, sandbox, time.time() - 5)
    now = datetime.now(timezone.utc)
    text = (
        f'{{"seconds": 1.25, "finished_at": "{now:%Y-%m-%dT%H:%M:%S}Z", "pairs": 3, "query_seconds": 2, '
        f'"timings_s": {{\n "load": 1.4\n}}, "window": "2026-02-26T00:00:00Z"}}\n{sandbox}/out'
    )
    assert normal(text) == (
        '{"seconds": "<VOLATILE>", "finished_at": "<NOW>", "pairs": 3, "query_seconds": 2, '
        '"timings_s": "<VOLATILE>", "window": "2026-02-26T00:00:00Z"}\n<SANDBOX>/out'
    )
    assert normal(f"{tmp_path / 'checkout'}/examples {tmp_path / 'cache'} {tmp_path}/x") == (
        "<CHECKOUT>/examples <CACHE> <TMP>/x"
    )
    assert normal('{"seconds":-1.5e-3}') == '{"seconds":"<VOLATILE>"}'
    skipped = f"skipped: finished earlier ({datetime.now():%Y-%m-%d %H:%M} UTC): indexing 0.5 s, retrieval 1.1 s "
    assert normal(skipped + "(3.8 ms/query), evaluation 0.47 s, total 4.1 s; 2 s") == (
        "skipped: finished earlier (<NOW> UTC): indexing # s, retrieval # s (# ms/query), evaluation # s, total # s; 2 s"
    )
    assert normal(f"{now - timedelta(minutes=10):%Y-%m-%dT%H:%M}") != "<NOW>"  # before the recording began
    svg = '<svg><path id="m0123456789"/><use xlink:href="#m0123456789"/><g clip-path="url(#pabcdef0123)"/>'
    svg += f"<dc:date>{now.isoformat()}</dc:date></svg>"
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    assert normal(f'<img src="{uri}"> m0123456789') == (
        '<img src="data:image/svg+xml;decoded,<svg><path id="<ID0>"/><use xlink:href="#<ID0>"/>'
        '<g clip-path="url(#<ID1>)"/><dc:date><NOW></dc:date></svg>"> <ID0>'
    )
    assert normal("m0123456789 p0123456789") == "m0123456789 p0123456789"  # no figure, no ids


def test_the_files_of_a_page_leave_out_the_clone_and_hash_the_normalised_text(tmp_path):
    sandbox = tmp_path / "pages" / "p"
    (sandbox / "out").mkdir(parents=True)
    (sandbox / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    (sandbox / "out" / "summary.json").write_text('{"seconds": 9.5}', encoding="utf-8")
    (sandbox / "plot.png").write_bytes(b"\x89PNG\xff")
    for folder in ("judged", "assessed"):  # irmetrics judge's folder (summary.json) and another
        (sandbox / folder).mkdir()
        (sandbox / folder / "judgments.jsonl").write_text('{"q": "b"}\n{"q": "a"}\n', encoding="utf-8")
    (sandbox / "judged" / "summary.json").write_text("{}", encoding="utf-8")
    with contextlib.closing(sqlite3.connect(sandbox / "a.sqlite")) as db:
        db.execute("CREATE TABLE events (label INTEGER, time TEXT)")
        db.execute("INSERT INTO events VALUES (2, ?)", (datetime.now(timezone.utc).isoformat(),))
        db.commit()
    found = TOOL.files_of(sandbox, TOOL.normaliser(tmp_path, sandbox, time.time() - 5))
    assert sorted(found) == [
        "a.sqlite",
        "assessed/judgments.jsonl",
        "judged/judgments.jsonl",
        "judged/summary.json",
        "out/summary.json",
        "plot.png",
    ]
    assert found["judged/judgments.jsonl"]["text"] == '{"q": "a"}\n{"q": "b"}\n'
    assert found["assessed/judgments.jsonl"]["text"] == '{"q": "b"}\n{"q": "a"}\n'
    assert found["out/summary.json"]["text"] == '{"seconds": "<VOLATILE>"}'
    assert (
        found["a.sqlite"]["text"] == 'CREATE TABLE events (label INTEGER, time TEXT)\n{"label": 2, "time": "<NOW>"}\n'
    )
    (sandbox / "out" / "summary.json").write_text('{"seconds": 1.0}', encoding="utf-8")
    assert TOOL.files_of(sandbox, TOOL.normaliser(tmp_path, sandbox, time.time() - 5)) == found
    assert found["plot.png"] == {"sha256": hashlib.sha256(b"\x89PNG\xff").hexdigest(), "bytes": 5}


def test_the_launcher_keeps_the_tests_interpreter_flags_and_puts_the_revision_first(tmp_path):
    launch = TOOL.Launch(tmp_path)
    cli = launch.argv(["irmetrics", "beir", "-o", "x"])
    assert cli[:3] == ["python", "-u", "-c"] and cli[4:] == ["haystack_irmetrics.cli", "beir", "-o", "x"]
    assert launch.argv(["python", "-m", "haystack_irmetrics.judges.server", "--port", "1"])[3:] == [
        "haystack_irmetrics.judges.server",
        "--port",
        "1",
    ]
    assert launch.argv(["python", "-c", "print(1)"])[3:] == ["print(1)"] and launch.argv(["cat", "a"]) == ["cat", "a"]
    assert f"sys.path.insert(0, {str(tmp_path)!r})" in cli[3]
    probe = "import sys as s; print(__name__, s.argv, __loader__, sorted(set(dir()) - {'s'}))"
    done = [
        subprocess.run([sys.executable, "-I", "-c", *argv], capture_output=True, text=True).stdout
        for argv in ([launch.code, probe], [probe])
    ]
    assert done[0] == done[1] and "__main__ ['-c']" in done[0]  # as python -c runs it: nothing of the launcher's left


def test_an_intended_change_is_named_by_its_page_and_subject():
    assert _listed("docs/beir.md", "file runs/bm25/fiqa/.irmetrics.lock") == ("*", "file *.irmetrics.lock")
    assert _listed("docs/judging.md", _JUDGE) == ("docs/judging.md", _JUDGE)
    assert _listed("docs/power.md", _JUDGE) is None and _listed("docs/judging.md", "file judged-ppi/qrels.tsv") is None


def test_every_difference_is_found_and_shown():
    same = TOOL.differences(_record([_page()]), _record([_page()], "B"))
    assert same == []
    text = {"sha256": "a", "text": "one\n"}
    before = _record([_page("ok\n", 0, {"out/a.txt": text, "gone.txt": text})])
    after = _record([_page("ok\nmore\n", 2, {"out/a.txt": {"sha256": "b", "text": "two\n"}})], "B")
    found = {d.subject: d.detail for d in TOOL.differences(before, after)}
    assert sorted(found) == ["file gone.txt", "file out/a.txt", "irmetrics beir"]
    assert found["irmetrics beir"].startswith("exit 0 -> 2\n--- A\n+++ B\n") and "+more\n" in found["irmetrics beir"]
    assert "-one\n+two\n" in found["file out/a.txt"] and found["file gone.txt"] == "written only at A\n"
    moved = _record([{**_page(), "commands": [{**_page()["commands"][0], "line": 4}]}], "B")
    assert [d.subject for d in TOOL.differences(_record([_page()]), moved)] == ["commands"]


@pytest.mark.slow
def test_the_docs_commands_print_and_write_what_they_did_at_the_start_commit():
    known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{START}^{{commit}}"], capture_output=True)
    if known.returncode != 0:
        pytest.skip(f"the start commit {START} is not in this clone's history")
    before = TOOL.record(START)
    after = TOOL.record("HEAD", TOOL.plan_of(before))
    found = TOOL.differences(before, after)
    unexpected = [TOOL.describe(d) for d in found if _listed(d.page, d.subject) is None]
    where = f"{START[:10]} and HEAD = {after['commit'][:10]}"
    assert not unexpected, f"the docs' commands print or write otherwise ({where}):\n" + "\n".join(unexpected)
    stale = sorted(set(INTENDED) - {_listed(d.page, d.subject) for d in found})
    assert not stale, f"INTENDED lists changes that are no longer there: {stale}"
