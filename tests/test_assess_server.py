"""The judging server: its answers and its guards through Starlette's TestClient, and the command as a user runs
it (real uvicorn on a free port of 127.0.0.1): judging over HTTP, SIGTERM exports, kill -9 loses nothing and the
same command resumes, a second server on the folder is refused, bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys

import pytest

pytest.importorskip("starlette", reason="the assess extra (starlette) is not installed")
pytest.importorskip("uvicorn", reason="the assess extra (uvicorn) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx (Starlette's TestClient) is not installed")

from starlette.testclient import TestClient  # noqa: E402

from haystack_irmetrics.assess.scale import default_definitions  # noqa: E402
from haystack_irmetrics.assess.server import create_app  # noqa: E402
from haystack_irmetrics.assess.session import JudgingSession  # noqa: E402
from haystack_irmetrics.assess.store import AssessStore  # noqa: E402
from haystack_irmetrics.errors import AssessError  # noqa: E402
from haystack_irmetrics.io.beir_data import read_beir_qrels_tsv  # noqa: E402

from .assess_fixtures import CORPUS, PAIRS, QUERIES, Server, cli, write_dataset, write_pairs  # noqa: E402


@pytest.fixture
def client(tmp_path):
    store = AssessStore.create(tmp_path / "judged", max_grade=3)
    store.add_pairs([(q, d, 1.0) for q, d in PAIRS])
    session = JudgingSession(store, QUERIES, CORPUS, "ann", default_definitions())
    app = create_app(session, store.token(), allowed_hosts=("testserver",))
    with TestClient(app, base_url="http://testserver") as c:
        c.token = store.token()
        c.store = store
        yield c
    store.close()


def post(client, path, body=None, **headers):
    return client.post(path, json=body or {}, headers={"X-Assess-Token": client.token, **headers})


# -- the app --------------------------------------------------------------------------------------------------


def test_the_page_is_self_contained_under_a_nonce_policy(client):
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    policy = r.headers["content-security-policy"]
    nonce = re.search(r"script-src 'nonce-([^']+)'", policy).group(1)
    assert f"style-src 'nonce-{nonce}'" in policy and "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy and "frame-ancestors 'none'" in policy
    html = r.text
    assert re.findall(r"<script[^>]*>", html) == [f'<script nonce="{nonce}">']
    assert re.findall(r"<style[^>]*>", html) == [f'<style nonce="{nonce}">']
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing loaded from anywhere
    assert f'content="{client.token}"' in html
    for name in ("x-content-type-options", "referrer-policy", "x-frame-options", "cache-control"):
        assert name in r.headers
    assert client.get("/").headers["content-security-policy"] != policy  # a nonce per answer


def test_api_answers_carry_the_state_and_a_policy_that_loads_nothing(client):
    r = client.get("/api/state", headers={"X-Assess-Token": client.token})
    assert r.status_code == 200 and r.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    state = r.json()["state"]
    assert state["pair"]["doc_id"] == "d1" and state["progress"]["budget"] == len(PAIRS)
    r = post(client, "/api/label", {"query_id": "q1", "doc_id": "d1", "label": 2})
    assert r.status_code == 200 and r.json()["state"]["pair"]["doc_id"] == "d2"
    assert [(j.doc_id, j.label) for j in client.store.judgments()] == [("d1", 2)]  # committed before the answer
    assert post(client, "/api/skip", {"query_id": "q1", "doc_id": "d2"}).json()["state"]["pair"]["doc_id"] == "d3"
    undone = post(client, "/api/undo").json()["state"]
    assert undone["pair"]["doc_id"] == "d2" and undone["note"] == "last: q1 · d2 undone"


def test_requests_without_the_token_from_another_origin_or_another_host_are_refused(client):
    body = {"query_id": "q1", "doc_id": "d1", "label": 3}
    assert client.get("/api/state").status_code == 403
    assert client.post("/api/label", json=body, headers={"X-Assess-Token": "guess"}).status_code == 403
    r = post(client, "/api/label", body, Origin="http://evil.example")
    assert r.status_code == 403 and "another origin" in r.json()["error"]
    assert post(client, "/api/label", body, **{"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert client.get("/", headers={"Host": "evil.example"}).status_code == 400  # a DNS-rebound name
    assert client.get("/api/label", headers={"X-Assess-Token": client.token}).status_code == 405
    assert client.store.judgments() == []
    assert post(client, "/api/label", body, Origin="http://testserver").status_code == 200


def test_bad_or_stale_keypresses_record_nothing_and_send_the_current_state(client):
    for body in (
        {"query_id": "q1", "doc_id": "d1", "label": 7},
        {"query_id": "q1", "doc_id": "d1", "label": "2"},
        {"query_id": "q1", "label": 2},
    ):
        r = post(client, "/api/label", body)
        assert r.status_code == 400 and r.json()["error"].startswith("not saved: ") and r.json()["state"]["pair"]
    r = client.post("/api/label", content=b"{not json", headers={"X-Assess-Token": client.token})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]
    r = client.post("/api/label", content=b"[" * 20_000, headers={"X-Assess-Token": client.token})
    assert r.status_code == 400 and "bytes" in r.json()["error"]
    for deep in (b"[" * 8_000 + b"]" * 8_000, b'{"a":' * 2_000 + b"1" + b"}" * 2_000):  # RecursionError, not 500
        r = client.post("/api/label", content=deep, headers={"X-Assess-Token": client.token})
        assert r.status_code == 400 and "nested too deep" in r.json()["error"] and r.json()["state"]["pair"]
    r = post(client, "/api/label", {"query_id": "q2", "doc_id": "d4", "label": 1})  # not the pair shown
    assert r.status_code == 409 and r.json()["state"]["pair"]["doc_id"] == "d1"
    assert client.store.judgments() == []


# -- the command ------------------------------------------------------------------------------------------------


def judge(server: Server, *labels: int | str) -> list[tuple[str, str]]:
    """Press keys through the API as the page does: digits label, ``s`` skips, ``u`` undoes; the pairs shown."""
    shown = []
    with httpx.Client(base_url=server.url, timeout=30) as c:
        html = c.get("/").text
        token = re.search(r'name="assess-token" content="([^"]+)"', html).group(1)
        headers = {"X-Assess-Token": token}
        state = c.get("/api/state", headers=headers).json()["state"]
        for key in labels:
            pair = state["pair"]
            shown.append((pair["query_id"], pair["doc_id"]))
            body = {"query_id": pair["query_id"], "doc_id": pair["doc_id"]}
            if key == "s":
                r = c.post("/api/skip", json=body, headers=headers)
            elif key == "u":
                r = c.post("/api/undo", json={}, headers=headers)
            else:
                r = c.post("/api/label", json={**body, "label": key}, headers=headers)
            assert r.status_code == 200, r.text
            state = r.json()["state"]
    return shown


def test_judging_then_sigterm_exports_the_qrels_and_the_judgments(tmp_path):
    data = write_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    server = Server(data, "-o", str(out), "--assessor", "ann")
    assert server.url.startswith("http://127.0.0.1:")
    assert server.lines[0] == f"{len(PAIRS)} pairs to judge ({len(PAIRS)} new); assessor ann"
    assert judge(server, 3, "s", 0, 2) == [("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q2", "d4")]
    status, rest, err = server.stop(signal.SIGTERM)
    assert status == 0, err
    assert rest.splitlines() == [
        "stopped: ann judged 3 pairs (2 relevant)",
        f"exported 3 labels of 3 pairs -> {out / 'qrels.tsv'}, {out / 'judgments.jsonl'}",
    ]
    assert read_beir_qrels_tsv(out / "qrels.tsv") == {"q1": {"d1": 3, "d3": 0}, "q2": {"d4": 2}}
    rows = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert [(r["doc_id"], r["label"], r["assessor"]) for r in rows] == [
        ("d1", 3, "ann"),
        ("d3", 0, "ann"),
        ("d4", 2, "ann"),
    ]


def test_kill_9_loses_no_keypress_and_the_same_command_resumes(tmp_path):
    data = write_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    server = Server(data, "-o", str(out), "--assessor", "ann")
    judge(server, 2, 1, "s")
    second = cli("assess", str(data / "pairs.tsv"), "--queries", str(data), "--corpus", str(data), "-o", str(out))
    assert second.returncode == 2 and "Traceback" not in second.stderr
    (line,) = second.stderr.splitlines()
    assert line == (
        f"irmetrics: error: output folder {out} is in use by another irmetrics assess run (it holds "
        f"{out / '.irmetrics.lock'}); wait for that run to end, or write to another folder"
    )
    server.kill()
    assert not (out / "qrels.tsv").exists()  # killed: no export ran, and nothing was lost either
    again = Server(data, "-o", str(out), "--assessor", "ann")
    assert again.lines[0] == f"{len(PAIRS)} pairs to judge (0 new), resuming: 2 judged; assessor ann"
    # the skipped d3 comes back last; "u" there takes back d5's label and shows d5 again
    assert judge(again, 0, 3, "u", 1) == [("q2", "d4"), ("q2", "d5"), ("q1", "d3"), ("q2", "d5")]
    assert again.stop(signal.SIGINT)[0] == 0  # Ctrl-C
    assert read_beir_qrels_tsv(out / "qrels.tsv") == {"q1": {"d1": 2, "d2": 1}, "q2": {"d4": 0, "d5": 1}}


def test_the_server_listens_on_127_0_0_1_only(tmp_path):
    data = write_dataset(tmp_path / "data")
    server = Server(data, "-o", str(tmp_path / "judged"))
    try:
        port = int(server.url.rsplit(":", 1)[1].strip("/"))
        others = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
        for address in sorted(others):
            if address.startswith("127."):
                continue
            with socket.socket() as s, pytest.raises(OSError):
                s.settimeout(5)
                s.connect((address, port))
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        server.stop()


def test_two_assessors_in_turn_and_their_agreement_with_each_other_and_a_model(tmp_path):
    data = write_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    model = tmp_path / "model.jsonl"
    model.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "label": 1}) + "\n" for q, d in PAIRS))
    for who, keys in (("ann", (3, 0, 2, 1, 0)), ("bob", (3, 1, 2, 0))):
        server = Server(data, "-o", str(out), "--assessor", who, "--prelabels", str(model))
        judge(server, *keys)
        assert server.stop()[0] == 0
    done = cli("assess", "agreement", str(out), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["assessors"] == {"ann": 5, "bob": 4}
    assert [(e["a"], e["b"], e["pairs"]) for e in result["people"]] == [("ann", "bob", 4)]
    assert [(e["assessor"], e["pairs"]) for e in result["model"]] == [("ann", 5), ("bob", 4)]
    table = cli("assess", "agreement", str(out))
    assert table.returncode == 0 and table.stdout.splitlines()[2].startswith("| ann · bob | 4 |")
    exported = cli("assess", "export", str(out), "--assessor", "bob")
    assert exported.returncode == 0 and exported.stdout.startswith("exported 4 labels of 4 pairs (bob) -> ")
    assert read_beir_qrels_tsv(out / "qrels.tsv") == {"q1": {"d1": 3, "d2": 1, "d3": 2}, "q2": {"d4": 0}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--queries", "{d}"], "irmetrics assess PAIRS needs --corpus, -o"),
        (["--queries", "{d}", "--corpus", "{d}", "-o", "{o}", "--max-grade", "4"], "defines no grade 4"),
        (["--queries", "{d}", "--corpus", "{d}", "-o", "{o}", "--show-prelabels"], "no model labels to show"),
        (["--queries", "{d}", "--corpus", "{d}", "-o", "{o}", "--strategy", "mtf"], "give both"),
        (["--queries", "{d}", "--corpus", "{d}", "-o", "{o}", "--runs", "{d}/run.trec"], "give --strategy too"),
        (["--queries", "{d}", "--corpus", "{d}", "-o", "{o}", "--budget", "0"], "--budget must be a whole number >= 1"),
        (["--queries", "{d}", "--corpus", "{d}", "-o", "{o}", "--port", "70000"], "--port must be a whole number"),
        (["--queries", "{d}", "--corpus", "{d}", "-o", "{o}", "--seed", "3"], "--seed breaks the ties of --strategy"),
        (["--queries", "{d}", "--corpus", "{d}", "-o", "{o}", "--prelabels", "{d}/queries.jsonl"], "'doc_id'"),
    ],
)
def test_bad_judging_arguments_are_one_line_and_exit_2(tmp_path, args, message):
    data = write_dataset(tmp_path / "data")
    args = [a.format(d=data, o=tmp_path / "judged") for a in args]
    done = cli("assess", str(data / "pairs.tsv"), *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("irmetrics: error: ") and message in line


def test_pairs_without_their_texts_or_folders_without_a_store_are_one_line_and_exit_2(tmp_path):
    data = write_dataset(tmp_path / "data")
    write_pairs(data / "missing.tsv", [("q1", "d1"), ("q1", "d99")])
    done = cli(
        "assess", str(data / "missing.tsv"), "--queries", str(data), "--corpus", str(data), "-o", str(tmp_path / "x")
    )
    assert done.returncode == 2 and "document 'd99' is not in" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "x").exists()  # refused before anything was made
    for action in ("export", "agreement"):
        done = cli("assess", action, str(tmp_path / "nothing"))
        assert done.returncode == 2 and "holds no assess.sqlite" in done.stderr, done.stderr
        done = cli("assess", action)
        assert done.returncode == 2 and f"irmetrics assess {action} needs the judging folder" in done.stderr
    done = cli("assess", "export", str(tmp_path), "--json")
    assert done.returncode == 2 and "irmetrics assess export takes no --json" in done.stderr


def test_a_port_in_use_or_out_of_range_is_one_line_and_exit_2_before_the_folder_is_made(tmp_path):
    data = write_dataset(tmp_path / "data")
    serve = ("assess", str(data / "pairs.tsv"), "--queries", str(data), "--corpus", str(data), "-o")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli(*serve, str(tmp_path / "judged"), "--port", str(port))
    assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    done = cli(*serve, str(tmp_path / "judged"), "--port", "70000", "--queries", str(tmp_path / "absent"))
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "irmetrics: error: --port must be a whole number from 0 to 65535, got 70000"  # said before reading
    ]
    assert not (tmp_path / "judged").exists()


def test_a_name_that_is_not_utf8_is_one_line_and_exit_2(tmp_path):
    data = write_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    name = os.fsencode("ann") + b"\xff"  # bytes a shell passes as they are; Python reads them as "ann\udcff"
    serve = ["assess", str(data / "pairs.tsv"), "--queries", str(data), "--corpus", str(data), "-o", str(out)]
    forms = [serve, ["assess", "export", str(out)], ["assess", "import", str(out), "--qrels", str(data / "x.tsv")]]
    for argv in forms:
        done = subprocess.run(
            [sys.executable, "-m", "haystack_irmetrics.cli", *argv, "--assessor", name], capture_output=True
        )
        err = done.stderr.decode("utf-8", "replace").splitlines()
        assert done.returncode == 2 and len(err) == 1, err
        assert (
            err[0]
            == "irmetrics: error: the assessor's name ann\\udcff is not UTF-8 text: give --assessor NAME in UTF-8"
        )
    assert not out.exists()


def test_a_scale_above_9_is_refused_before_the_folder_is_made(tmp_path):
    """The page takes one key per grade: "10" would be two keys, 1 then 0, labelling two pairs."""
    data = write_dataset(tmp_path / "data")
    scale = tmp_path / "scale.txt"
    scale.write_text("".join(f"{g} = grade {g};\n" for g in range(11)))
    out = tmp_path / "judged"
    serve = ("assess", str(data / "pairs.tsv"), "--queries", str(data), "--corpus", str(data), "-o", str(out))
    done = cli(*serve, "--max-grade", "10", "--scale", str(scale))
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "irmetrics: error: --max-grade 10: the judging page takes one key per grade, 0 to 9; judge on a scale of "
        "at most 0..9 (labels judged elsewhere come in with irmetrics assess import)"
    ]
    assert not out.exists()
    store = AssessStore.create(tmp_path / "lib", max_grade=10)
    with pytest.raises(AssessError, match="one key per grade, 0 to 9"):
        JudgingSession(store, QUERIES, CORPUS, "ann", {g: f"grade {g}" for g in range(11)})
    store.close()
    nine = cli(*serve, "--max-grade", "9", "--scale", str(scale), "--port", "-1")  # 0..9 is taken
    assert "--port must be" in nine.stderr


@pytest.mark.parametrize("seed", [0, 5])
def test_a_strategy_asked_live_through_the_command_after_irmetrics_pool_wrote_its_first_batch(tmp_path, seed):
    from .test_assess_store import STRATEGY_RUNS, TRUTH, by_hand

    data = tmp_path / "data"
    data.mkdir()
    (data / "queries.jsonl").write_text('{"_id": "q1", "text": "one"}\n{"_id": "q2", "text": "two"}\n')
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": f"text {d}"}) + "\n" for _, d in TRUTH))
    runs = []
    for i, run in enumerate(STRATEGY_RUNS):
        runs.append(str(data / f"run{i}.trec"))
        lines = [f"{q} Q0 {d} {r + 1} {s} run{i}" for q, docs in run.items() for r, (d, s) in enumerate(docs.items())]
        (data / f"run{i}.trec").write_text("\n".join(lines) + "\n")
    # --seed breaks the strategy's ties between the runs, as irmetrics pool --seed did for the first batch
    seeded = ["--seed", str(seed)]
    pooled = cli("pool", *runs, "--budget", "2", "--strategy", "mtf", *seeded, "-o", str(data / "pairs.tsv"))
    assert pooled.returncode == 0, pooled.stderr
    out = tmp_path / "judged"
    server = Server(data, "-o", str(out), "--strategy", "mtf", "--runs", *runs, "--budget", "6", *seeded)
    shown = []
    with httpx.Client(base_url=server.url, timeout=30) as c:
        token = re.search(r'name="assess-token" content="([^"]+)"', c.get("/").text).group(1)
        state = c.get("/api/state", headers={"X-Assess-Token": token}).json()["state"]
        while state["pair"] is not None:
            pair = (state["pair"]["query_id"], state["pair"]["doc_id"])
            shown.append(pair)
            body = {"query_id": pair[0], "doc_id": pair[1], "label": TRUTH[pair]}
            state = c.post("/api/label", json=body, headers={"X-Assess-Token": token}).json()["state"]
    assert server.stop()[0] == 0
    assert (
        shown == by_hand("mtf", 2, TRUTH, seed)[:6] and state["progress"]["judged"] == state["progress"]["budget"] == 6
    )
    assert read_beir_qrels_tsv(out / "qrels.tsv") == {
        q: {d: TRUTH[q, d] for qq, d in shown if qq == q} for q in dict.fromkeys(q for q, _ in shown)
    }
