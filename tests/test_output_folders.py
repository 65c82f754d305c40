"""An output folder is one command's (issue 46.5): ``irmetrics assess -o DIR`` on a folder ``irmetrics judge``
wrote (qrels.tsv, judgments.jsonl, no assess.sqlite) replaced the model's labels and the human qrels with the
page's when the server stopped. Every command that writes a folder of its own (judge, assess and its import and
export, clicks fit, feedback --report, beir) now refuses another command's, before any work, with exit 2 and one
line naming the folder's files, which stay byte for byte; re-running a command into its own folder still works.
The rule is one check in io/ (``io.output.check_folder_owner``, run by ``check_outputs`` and ``output_lock``):
the lock file names the command that made the folder; a folder that names none (written before the rule) is
recognised by its files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from haystack_irmetrics.cli.app import main
from haystack_irmetrics.errors import OutputError
from haystack_irmetrics.io.output import LOCK_FILE, OutputFolder, check_folder_owner, folder_owner, output_lock

from .assess_fixtures import cli, write_pairs
from .conftest import ROOT
from .judge_data import make_case
from .judge_server import JudgeServer
from .test_judge_cli import _args as judge_args

EXAMPLES = ROOT / "examples" / "data"


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """A folder ``irmetrics judge`` wrote (its files, and the case it judged)."""
    pytest.importorskip("haystack")
    case = make_case(tmp_path_factory.mktemp("case") / "data", n_queries=2, per_run=6)
    out = tmp_path_factory.mktemp("judge") / "judged"
    with JudgeServer(case.labels) as server:
        assert main(judge_args(case, server.url, out)) == 0
        case.url = server.url
        yield case, out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def refused(capsys, argv: list[str], folder: Path) -> str:
    """``irmetrics ARGV``: exit 2, one line naming the folder, everything in it byte for byte as it was."""
    before = snapshot(folder)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"irmetrics: error: the output folder {folder} "), err
    assert snapshot(folder) == before
    return err[0]


def assess_pairs(case) -> Path:
    return write_pairs(case.folder / "pairs.tsv", [("q0", "d1"), ("q1", "d2")])


def test_assess_refuses_a_folder_irmetrics_judge_wrote(judged, tmp_path, capsys):
    case, source = judged
    out = tmp_path / "judged"
    shutil.copytree(source, out)
    assert folder_owner(out) == "irmetrics judge"
    held = "judgments.jsonl, qrels.tsv, summary.json"
    # the page is refused before it is served (a subprocess: the old code served it, and its stop replaced the
    # qrels and judgments with the page's)
    pairs = assess_pairs(case)
    before = snapshot(out)
    done = cli("assess", str(pairs), "--queries", str(case.folder), "--corpus", str(case.folder), "-o", str(out),
               "--port", "0", timeout=60)  # fmt: skip
    assert (
        done.returncode == 2
        and done.stdout == ""
        and done.stderr.splitlines()
        == [
            f"irmetrics: error: the output folder {out} is irmetrics judge's (it holds {held}): irmetrics assess writes "
            "only into a new folder or one of its own; nothing was done; give another folder"
        ]
    )
    assert snapshot(out) == before and not (out / "assess.sqlite").exists()
    qrels = EXAMPLES / "second_assessor.tsv"
    line = refused(capsys, ["assess", "import", str(out), "--assessor", "kim", "--qrels", str(qrels)], out)
    assert f"is irmetrics judge's (it holds {held})" in line
    assert "is irmetrics judge's" in refused(capsys, ["assess", "export", str(out)], out)
    # a judge folder written before folders named their command: known by its files
    (out / LOCK_FILE).write_text("")
    line = refused(capsys, ["assess", "import", str(out), "--assessor", "kim", "--qrels", str(qrels)], out)
    assert line == (
        f"irmetrics: error: the output folder {out} holds judgments.jsonl, qrels.tsv, not written by irmetrics assess "
        "(it holds no assess.sqlite): irmetrics assess would replace them; nothing was done; give another folder"
    )
    assert not (out / "assess.sqlite").exists()


def test_judge_refuses_a_judging_folder_and_resumes_its_own(judged, tmp_path, capsys):
    case, source = judged
    own = tmp_path / "own"
    shutil.copytree(source, own)
    with JudgeServer(case.labels) as server:
        assert main(judge_args(case, server.url, own)) == 0  # its own folder: judged again
        assert snapshot(own)["qrels.tsv"] == snapshot(source)["qrels.tsv"]
        folder = tmp_path / "people"
        qrels = case.folder / "qrels.tsv"
        assert main(["assess", "import", str(folder), "--assessor", "kim", "--qrels", str(qrels),
                     "--pairs", str(assess_pairs(case))]) == 0  # fmt: skip
        assert folder_owner(folder) == "irmetrics assess"
        assert main(["assess", "export", str(folder)]) == 0  # its own folder
        assert main(["assess", "import", str(folder), "--assessor", "lee", "--qrels", str(qrels)]) == 0
        line = refused(capsys, judge_args(case, server.url, folder), folder)
        assert "is irmetrics assess's (it holds assess.sqlite, judgments.jsonl, qrels.tsv)" in line
        assert "irmetrics judge writes only into a new folder or one of its own" in line
        (folder / LOCK_FILE).write_text("")  # written before the rule: known by its files
        line = refused(capsys, judge_args(case, server.url, folder), folder)
        assert "holds judgments.jsonl, qrels.tsv, not written by irmetrics judge (it holds no judgments.jsonl and "
        assert "summary.json): irmetrics judge would replace them" in line


def test_clicks_fit_feedback_and_beir_refuse_a_judge_folder_and_judge_refuses_theirs(judged, tmp_path, capsys):
    case, source = judged
    out = tmp_path / "judged"
    shutil.copytree(source, out)
    fit = ["clicks", "fit", str(EXAMPLES / "click_log.csv"), "--model", "dbn", "-o"]
    assert "is irmetrics judge's" in refused(capsys, [*fit, str(out)], out)
    feedback = ["feedback", str(EXAMPLES / "feedback_log.csv"), "--run", str(EXAMPLES / "new.trec"), "--report"]
    assert "is irmetrics judge's" in refused(capsys, [*feedback, str(out)], out)
    assert "is irmetrics judge's" in refused(capsys, ["beir", "sample", "-o", str(out)], out)
    # and the other way: clicks fit takes no lock, so its folder names no command and is known by its files
    clicks = tmp_path / "clicks"
    assert main([*fit, str(clicks)]) == 0
    assert main([*fit, str(clicks)]) == 0  # its own folder again
    assert folder_owner(clicks) is None
    with JudgeServer(case.labels) as server:
        line = refused(capsys, judge_args(case, server.url, clicks), clicks)
    assert "holds qrels.tsv, not written by irmetrics judge" in line
    pairs = assess_pairs(case)
    done = cli("assess", str(pairs), "--queries", str(case.folder), "--corpus", str(case.folder), "-o", str(clicks),
               "--port", "0", timeout=60)  # fmt: skip
    assert done.returncode == 2 and "holds qrels.tsv, not written by irmetrics assess" in done.stderr


def test_the_folder_rule(tmp_path):
    """check_folder_owner itself: a new, empty or own folder passes; another command's, named or recognised by
    its files, is refused; output_lock names its command in a new folder and refuses another's."""
    judge = OutputFolder(tmp_path / "f", "irmetrics judge", ("judgments.jsonl", "qrels.tsv"), ("judgments.jsonl",))
    check_folder_owner(judge)  # absent
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / ".partial.tmp").write_text("x")
    check_folder_owner(judge)  # hidden files only: empty
    with output_lock(folder, "irmetrics assess"):
        pass
    assert (folder / LOCK_FILE).read_text() == "irmetrics assess\n"
    check_folder_owner(judge)  # named, but it holds nothing: nothing to replace
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match=r"is irmetrics assess's \(it holds notes.txt\)"):
        check_folder_owner(judge)
    with pytest.raises(OutputError, match="is irmetrics assess's"), output_lock(folder, "irmetrics judge"):
        pass
    with output_lock(folder, "irmetrics assess"):  # its own: again and again
        pass
    (folder / LOCK_FILE).write_text("")  # named by none
    check_folder_owner(judge)  # nothing it writes there
    (folder / "qrels.tsv").write_text("q\t0\td\t1\n")
    with pytest.raises(OutputError, match=r"holds qrels.tsv, not written by irmetrics judge \(it holds no judgments"):
        check_folder_owner(judge)
    (folder / "judgments.jsonl").write_text("")
    check_folder_owner(judge)  # its signature: its own, written before the rule
    with output_lock(folder, "irmetrics judge"):  # claimed now
        pass
    assert folder_owner(folder) == "irmetrics judge"
    names = [f"f{i}.tsv" for i in range(9)]
    for name in names:
        (folder / name).write_text("")
    with pytest.raises(OutputError, match=r"f4.tsv, f5.tsv and 6 more\)"):
        check_folder_owner(OutputFolder(folder, "irmetrics clicks fit"))
