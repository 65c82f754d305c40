"""The judgment cache by judge: the server's URL is part of a chat judge's fingerprint (a changed URL misses, the
same one hits, a generator with no server keeps the fingerprint it had), ``irmetrics cache list`` shows each
judge (fingerprint, model, pairs, size), ``irmetrics cache clear --kind judgments [--judge FINGERPRINT]``
deletes one judge's judgments or all, a plain ``irmetrics cache clear`` keeps them, and a cache file written
before judges were kept still answers its keys. Through a real OpenAI-compatible server (tests/judge_server.py)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from haystack_irmetrics.cli.app import main
from haystack_irmetrics.judges.batch import judge_texts
from haystack_irmetrics.judges.cache import CACHE_FILE, JudgmentCache, judgment_key
from haystack_irmetrics.judges.judge import ChatJudge, Verdict, fingerprint_of

from .judge_server import JudgeServer
from .test_judge import _generator, _pairs, _Recorder

pytest.importorskip("haystack")


def _run(judge, texts, server, cache_file):
    before = len(server.requests)
    out = _Recorder()
    judge_texts(judge, texts, cache=JudgmentCache(cache_file), on_verdict=out, concurrency=4)
    return len(server.requests) - before, out


def test_a_changed_server_url_misses_the_cache_and_the_same_url_hits(tmp_path):
    texts, labels = _pairs(10)
    cache_file = tmp_path / "c.sqlite"
    with JudgeServer(labels) as one, JudgeServer(labels) as two:
        assert one.url != two.url
        first, _ = _run(ChatJudge(_generator(one.url)), texts, one, cache_file)
        same, out = _run(ChatJudge(_generator(one.url + "/")), texts, one, cache_file)  # a trailing / is the same
        assert (first, same) == (10, 0) and all(cached for _, cached in out.verdicts.values())
        moved, out = _run(ChatJudge(_generator(two.url)), texts, two, cache_file)
        assert moved == 10 and not any(cached for _, cached in out.verdicts.values())
        assert [out.verdicts[i][0].label for i in range(10)] == [labels[t] for t in texts]
        back, _ = _run(ChatJudge(_generator(one.url)), texts, one, cache_file)
        assert back == 0
    settings = ChatJudge(_generator(one.url)).settings()
    assert settings["server"] == one.url.rstrip("/") and "test-key" not in json.dumps(settings)


def test_a_generator_with_no_server_keeps_the_fingerprint_it_had_before_the_server_was_in_it():
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    judge = ChatJudge(OpenAIChatGenerator(api_key=Secret.from_token("k"), model="gpt-4o-mini"))
    settings = judge.settings()
    assert "server" not in settings and judge.fingerprint() == fingerprint_of(settings)


def test_a_cache_file_written_before_judges_were_kept_still_answers_and_lists_under_no_judge(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE judgments (key TEXT PRIMARY KEY, label INTEGER, raw TEXT, tokens TEXT)")
    key = judgment_key("f" * 64, "a query", "a document")
    db.execute("INSERT INTO judgments VALUES (?, 2, '2', NULL)", (key,))
    db.commit()
    db.close()
    cache = JudgmentCache(path)
    assert cache.get_many([key]) == {key: Verdict(2, "2", {})}
    (entry,) = cache.judges()
    assert entry.fingerprint is None and entry.pairs == 1 and "before" in entry.model
    cache.put(judgment_key("e" * 64, "q", "d"), Verdict(None, "no idea"), "e" * 64)
    assert sorted((e.fingerprint, e.pairs, e.unparseable) for e in cache.judges() if e.fingerprint) == [
        ("e" * 64, 1, 1)
    ]
    cache.close()


def test_cache_list_shows_each_judge_and_clear_deletes_one_judge_or_all(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    texts, labels = _pairs(8)
    cache_file = tmp_path / "cache" / CACHE_FILE
    with JudgeServer(labels) as server:
        _run(ChatJudge(_generator(server.url)), texts, server, cache_file)
        _run(ChatJudge(_generator(server.url, model="another-model")), texts[:3], server, cache_file)
    judge_model = ChatJudge(_generator(server.url)).fingerprint()
    another = ChatJudge(_generator(server.url, model="another-model")).fingerprint()
    capsys.readouterr()
    assert main(["cache", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["judgments"]
    assert listed["path"] == str(cache_file)
    rows = {e["fingerprint"]: e for e in listed["judges"]}
    assert set(rows) == {judge_model, another}
    assert rows[judge_model]["pairs"] == 8 and rows[another]["pairs"] == 3
    assert rows[judge_model]["model"] == f"judge-model at {server.url.rstrip('/')}"
    assert rows[another]["kind"] == "chat" and rows[another]["size_bytes"] > 0
    assert main(["cache", "list"]) == 0
    text = capsys.readouterr().out
    assert "2 judges, 11 pairs" in text and f"| {judge_model[:12]} | chat | judge-model at " in text

    # A plain clear keeps the judgments (they cost requests) and says how to clear them.
    assert main(["cache", "clear"]) == 0
    assert "kept 11 judgments" in capsys.readouterr().out
    # One judge, by the start of its fingerprint: the other keeps its judgments, and they still answer.
    assert main(["cache", "clear", "--kind", "judgments", "--judge", another[:10]]) == 0
    assert capsys.readouterr().out.startswith(f"removed 3 judgments of judge {another[:12]} (another-model at ")
    cache = JudgmentCache(cache_file)
    assert [e.fingerprint for e in cache.judges()] == [judge_model]
    assert len(cache.get_many(judgment_key(judge_model, q, d) for q, d in texts)) == 8
    cache.close()
    # A fingerprint that names no judge (the one just cleared): exit 2, one line.
    assert main(["cache", "clear", "--judge", another[:10]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no judge" in err[0] and another[:10] in err[0], err


def test_cache_clear_of_every_judge_and_a_prefix_that_names_several_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    cache = JudgmentCache()
    for fp in ("ab" + "1" * 62, "ab" + "2" * 62):
        cache.register(fp, {"kind": "scores", "scorer": {"type": "x.Scorer", "init_parameters": {"model": "m"}}})
        cache.put(judgment_key(fp, "q", "d"), Verdict(1, "1"), fp)
    cache.close()
    capsys.readouterr()
    assert main(["cache", "clear", "--kind", "judgments", "--judge", "ab"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2 judges" in err[0], err
    assert main(["cache", "clear", "--kind", "bm25s", "--judge", "ab"]) == 2
    assert "--judge clears judgments" in capsys.readouterr().err
    assert main(["cache", "clear", "--kind", "judgments"]) == 0
    assert "removed 2 judgments (every judge)" in capsys.readouterr().out
    assert main(["cache", "list", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["judgments"]["judges"] == []
