"""The cache is safe: `irmetrics cache clear` deletes only what this package wrote and follows no link, a
malformed entry is listed as damaged (never a traceback), a damaged or planted entry is warned about
and computed again, distinct texts never share a key, a full disk only warns, a model that fails to
load leaves nothing, and the tests themselves never touch the user's cache."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from haystack import Document

from haystack_irmetrics.beir import run_beir
from haystack_irmetrics.beir.cache import (
    CacheWarning,
    CachingEmbeddingBackend,
    cache_entries,
    cache_root,
    clear_cache,
    clear_cache_report,
)
from haystack_irmetrics.cli import main
from haystack_irmetrics.integration import cache_entry as entry_module
from haystack_irmetrics.integration.cache_entry import payload_sha256
from haystack_irmetrics.integration.stores.bm25s_store import BM25sDocumentStore

from .test_beir_cache import DENSE, FakeBackend, _tiny

DOCS = [
    Document(id="a", content="Running shoes for the marathon runner"),
    Document(id="b", content="The history of the marathon"),
    Document(id="c", content="Cooking pasta at home"),
]
KEY_E = "e" * 32  # an embeddings entry's folder name: a cache key
KEY_B = "b" * 32


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(entry_module, "_warned", set())  # each test sees its own first warnings
    return folder


def _bm25s_entry() -> tuple[BM25sDocumentStore, Path]:
    store = BM25sDocumentStore()
    store.write_documents(DOCS)
    store.build_index()
    [folder] = (cache_root() / "bm25s").iterdir()
    return store, folder


def _embeddings_entry(root: Path, key: str = KEY_E) -> Path:
    folder = root / "embeddings" / key
    CachingEmbeddingBackend(FakeBackend(), folder, {"model": "fake"}).embed(["a cat", "two dogs"])
    return folder


def _cache_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, CacheWarning)]


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) if folder.exists() else []


# 1. clear deletes only what this package wrote, follows no link, and says what it left alone


def test_clear_deletes_only_entries_this_package_wrote_and_says_what_it_left_alone(cache_dir, capsys):
    _, bm25s = _bm25s_entry()
    embeddings = _embeddings_entry(cache_dir)
    notes = cache_dir / "embeddings" / "my-notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("keep me")
    (cache_dir / "bm25s" / "readme.txt").write_text("keep me too")
    mixed = cache_dir / "bm25s" / ("c" * 32)  # named like a key, but holds a file this package never writes
    (mixed / "index").mkdir(parents=True)
    (mixed / "entry.json").write_text(json.dumps({"kind": "bm25s", "n_documents": 1, "k1": 1, "b": 1}))
    (mixed / "photo.jpg").write_bytes(b"\xff\xd8")
    assert main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert not bm25s.exists() and not embeddings.exists()
    assert (notes / "todo.txt").read_text() == "keep me" and (cache_dir / "bm25s" / "readme.txt").is_file()
    assert (mixed / "photo.jpg").is_file() and (mixed / "entry.json").is_file()
    assert out.startswith("removed 2 cache entries") and f"removed bm25s/{bm25s.name}" in out
    assert f"removed embeddings/{KEY_E}" in out and "left alone 3 items:" in out
    assert "embeddings/my-notes: not a cache entry: its name is not a cache key" in out
    assert "bm25s/readme.txt: a file, not a cache entry" in out
    assert f"bm25s/{'c' * 32}: not safely a cache entry: it holds photo.jpg (a file)" in out


def test_clear_follows_no_symlink_and_deletes_no_link_target(cache_dir, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    precious = _embeddings_entry(elsewhere)  # looks exactly like an entry, but outside the cache
    cache_dir.mkdir()
    (cache_dir / "embeddings").symlink_to(elsewhere / "embeddings", target_is_directory=True)
    outside_index = tmp_path / "outside-index"
    outside_index.mkdir()
    (outside_index / "entry.json").write_text(json.dumps({"kind": "bm25s", "n_documents": 3, "k1": 1, "b": 1}))
    (cache_dir / "bm25s").mkdir()
    (cache_dir / "bm25s" / KEY_B).symlink_to(outside_index, target_is_directory=True)
    before = _tree(elsewhere) + _tree(outside_index)
    done = clear_cache_report()
    assert done.removed == [] and done.unfinished == []
    assert {(x.path.name, x.reason.split(" (")[0]) for x in done.left_alone} == {
        ("embeddings", "a symbolic link"),
        (KEY_B, "a symbolic link"),
    }
    assert _tree(elsewhere) + _tree(outside_index) == before and precious.is_dir()
    assert (cache_dir / "embeddings").is_symlink() and (cache_dir / "bm25s" / KEY_B).is_symlink()
    assert main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert "removed 0 cache entries" in out and "left alone 2 items:" in out
    assert f"embeddings: a symbolic link (to {elsewhere / 'embeddings'}): not followed" in out


def test_clear_removes_unfinished_writes_and_reports_them(cache_dir, capsys):
    _bm25s_entry()
    tmp = cache_dir / "bm25s" / f".{KEY_B}.0123abcd.tmp"
    (tmp / "index").mkdir(parents=True)
    (tmp / "index" / "data.csc.index.npy").write_bytes(b"half")
    assert main(["cache", "clear", "--kind", "bm25s"]) == 0
    out = capsys.readouterr().out
    assert not tmp.exists() and f"removed bm25s/{tmp.name} (an unfinished write)" in out
    assert list((cache_dir / "bm25s").iterdir()) == []


# 2. a malformed entry.json is listed as damaged, never a traceback

MALFORMED = {
    "not-json": b"{not json",
    "not-utf8": b'{"kind": "bm25s", "stemmer": "\xff\xfe"}',
    "a-list": b"[]",
    "wrong-types": json.dumps({"kind": "bm25s", "n_documents": "many", "k1": "x", "b": None}).encode(),
    "missing-keys": b"{}",
    "huge": json.dumps({"kind": "bm25s", "n_documents": 3, "k1": 0.9, "b": 0.4, "pad": "x" * (2 << 20)}).encode(),
    "deeply-nested": b"[" * 200_000,
}


@pytest.mark.parametrize("content", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_entry_json_is_listed_as_damaged_and_cleared(cache_dir, capsys, content):
    _, folder = _bm25s_entry()
    (folder / "entry.json").write_bytes(content)
    assert main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert "1 damaged" in out and f"| bm25s | {folder.name} | damaged: its entry.json" in out
    assert main(["cache", "list", "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["entries"]
    assert row["status"] == "damaged" and row["problem"].startswith("its entry.json")
    assert main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert "removed 1 cache entries" in out and "damaged: its entry.json" in out and not folder.exists()


def test_a_malformed_model_json_is_listed_as_damaged(cache_dir):
    folder = _embeddings_entry(cache_dir)
    (folder / "model.json").write_text('{"kind": "embeddings", "model": 42}')
    [entry] = cache_entries()
    assert (entry.status, entry.problem) == ("damaged", "its model.json has a model that is not a string")
    assert entry.items == 2  # the batches are still counted


def test_a_damaged_entry_that_holds_foreign_files_is_left_alone_with_the_reason(cache_dir):
    _, folder = _bm25s_entry()
    (folder / "entry.json").write_bytes(b"\x00garbage")
    (folder / "index" / "mine.txt").write_text("not written by irmetrics")
    done = clear_cache_report()
    assert done.removed == [] and (folder / "index" / "mine.txt").is_file()
    [left] = done.left_alone
    assert left.path == folder
    assert (
        left.reason
        == "not safely a cache entry: it holds index/mine.txt (a file), which this package does not write there"
    )


# 3. a damaged, planted or stale entry warns once naming it and is computed again (and overwritten)


def _rewrite_batch(npy: Path, vectors: np.ndarray, consistent: bool) -> None:
    """Replace a batch's vectors; ``consistent`` also rewrites its metadata to match (checksum included),
    as a buggy writer would, so that the shape checks themselves are what catches it."""
    with npy.open("wb") as f:
        np.save(f, vectors, allow_pickle=False)
    if consistent:
        dim = vectors.shape[1] if vectors.ndim == 2 else 3
        info = {"n_texts": 2, "dim": dim, "dtype": str(vectors.dtype), "sha256": entry_module.file_sha256(npy)}
        npy.with_suffix(".json").write_text(json.dumps(info))


BAD_VECTORS = {
    "0-d": np.float32(1.0),
    "1-d": np.ones(2, dtype=np.float32),
    "nan": np.array([[np.nan, 1, 1], [1, 1, 1]], dtype=np.float32),
    "wrong-dimension": np.ones((2, 4), dtype=np.float32),
    "wrong-row-count": np.ones((3, 3), dtype=np.float32),
    "planted": np.zeros((2, 3), dtype=np.float32),  # the right shape: only the checksum tells
}


# a planted batch of the right shape whose metadata matches it is indistinguishable from a valid one
DAMAGE = [
    (name, consistent)
    for name in BAD_VECTORS
    for consistent in (False, True)
    if (name, consistent) != ("planted", True)
]


@pytest.mark.parametrize(
    ("bad", "consistent"), DAMAGE, ids=[f"{n}-{'matching' if c else 'stale'}-checksum" for n, c in DAMAGE]
)
def test_a_damaged_embedding_batch_warns_once_naming_it_and_is_embedded_again(cache_dir, bad, consistent):
    bad = BAD_VECTORS[bad]
    texts = ["a cat", "two dogs"]
    model = FakeBackend()
    expected = CachingEmbeddingBackend(model, cache_dir / "m").embed(texts)
    [npy] = (cache_dir / "m").glob("*.npy")
    _rewrite_batch(npy, bad, consistent)
    backend = CachingEmbeddingBackend(model, cache_dir / "m")
    with pytest.warns(CacheWarning) as record:
        assert backend.embed(texts) == expected
    assert _cache_warnings(record) == [_cache_warnings(record)[0]] and str(npy) in _cache_warnings(record)[0]
    assert (backend.hits, backend.misses, len(model.calls)) == (0, 1, 2)
    again = CachingEmbeddingBackend(model, cache_dir / "m")  # rewritten: read back, no warning
    assert again.embed(texts) == expected and (again.hits, len(model.calls)) == (1, 2)


def test_a_batch_of_another_dimension_than_the_model_is_embedded_again(cache_dir):
    model = FakeBackend()
    backend = CachingEmbeddingBackend(model, cache_dir / "m", {"model": "fake"})
    backend.embed(["one"])
    backend.embed(["two", "three"])
    npy = next(p for p in (cache_dir / "m").glob("*.npy") if np.load(p).shape[0] == 2)
    _rewrite_batch(npy, np.ones((2, 5), dtype=np.float32), consistent=True)  # consistent, but 5 != 3
    with pytest.warns(CacheWarning, match="dimension 5, the model's have 3"):
        assert CachingEmbeddingBackend(model, cache_dir / "m").embed(["two", "three"])[0][0] == 3.0


def _damage_postings(folder: Path, consistent: bool) -> None:
    path = folder / "index" / "indices.csc.index.npy"
    indices = np.load(path)
    indices[0] = 10**6  # a posting of a document that does not exist
    np.save(path, indices, allow_pickle=False)
    if consistent:  # as a buggy writer would: the checksum matches, only the bounds check catches it
        meta = json.loads((folder / "entry.json").read_text())
        (folder / "entry.json").write_text(json.dumps({**meta, "payload_sha256": payload_sha256(folder)}))


@pytest.mark.parametrize("consistent", [False, True], ids=["stale-checksum", "matching-checksum"])
def test_a_bm25s_entry_with_an_out_of_range_posting_warns_and_is_rebuilt(cache_dir, consistent):
    first, folder = _bm25s_entry()
    expected = first.bm25_retrieval("marathon", top_k=3)
    _damage_postings(folder, consistent)
    second = BM25sDocumentStore()
    second.write_documents(DOCS)
    with pytest.warns(CacheWarning) as record:
        assert second.bm25_retrieval("marathon", top_k=3) == expected
    [message] = _cache_warnings(record)
    assert str(folder) in message and "computed again" in message and not second.built_from_cache
    third = BM25sDocumentStore()  # the entry was rewritten: loaded, no warning
    third.write_documents(DOCS)
    assert third.bm25_retrieval("marathon", top_k=3) == expected and third.built_from_cache


def test_a_bm25s_entry_of_an_older_version_is_rebuilt_once_and_said_so(cache_dir):
    first, folder = _bm25s_entry()
    meta = json.loads((folder / "entry.json").read_text())
    del meta["payload_sha256"]  # what version 1 wrote
    (folder / "entry.json").write_text(json.dumps(meta))
    second = BM25sDocumentStore()
    second.write_documents(DOCS)
    with pytest.warns(CacheWarning, match="was written by an older version, without a checksum: it is computed again"):
        assert second.bm25_retrieval("marathon") == first.bm25_retrieval("marathon")
    assert "payload_sha256" in json.loads((folder / "entry.json").read_text())


# 4. texts that differ only where a NUL falls do not share a key


def test_texts_that_differ_only_in_where_a_nul_falls_get_their_own_vectors(cache_dir):
    model = FakeBackend()
    backend = CachingEmbeddingBackend(model, cache_dir / "m")
    first = backend.embed(["a\0b", "c"])
    second = backend.embed(["a", "b\0c"])
    assert second == np.asarray(FakeBackend().embed(["a", "b\0c"]), dtype=np.float32).tolist() != first
    assert (backend.hits, backend.misses) == (0, 2)


# 5. a full cache disk warns once and the run goes on


def _full_disk(monkeypatch) -> None:
    real = entry_module.write_file

    def full(path: Path, data: bytes) -> None:
        real(path, data[: len(data) // 2])  # half written, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(entry_module, "write_file", full)


def test_an_embedding_batch_that_cannot_be_written_warns_once_and_the_vectors_are_returned(cache_dir, monkeypatch):
    _full_disk(monkeypatch)
    model = FakeBackend()
    backend = CachingEmbeddingBackend(model, cache_dir / "embeddings" / KEY_E)
    with pytest.warns(CacheWarning) as record:
        assert backend.embed(["a b"]) == [[3.0, 1.0, 0.25]]
        assert backend.embed(["c"]) == [[1.0, 0.0, 0.5]]
    [message] = _cache_warnings(record)
    assert "No space left on device" in message and str(cache_dir / "embeddings" / KEY_E) in message
    assert ".npy" in message and _tree(cache_dir / "embeddings") == []  # no partial, no tmp file


def test_a_bm25s_index_that_cannot_be_written_warns_and_the_store_still_answers(cache_dir, monkeypatch):
    import bm25s

    real = bm25s.BM25.save

    def save_on_a_full_disk(self, path, **kwargs):
        real(self, path, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bm25s.BM25, "save", save_on_a_full_disk)
    uncached = BM25sDocumentStore(cache=False)
    uncached.write_documents(DOCS)
    store = BM25sDocumentStore()
    store.write_documents(DOCS)
    with pytest.warns(CacheWarning, match=r"could not write the cache entry .*bm25s.*No space left") as record:
        assert store.bm25_retrieval("marathon", top_k=3) == uncached.bm25_retrieval("marathon", top_k=3)
    assert len(_cache_warnings(record)) == 1
    assert _tree(cache_dir / "bm25s") == []  # the temporary folder is gone


def test_a_run_whose_cache_cannot_be_created_warns_and_gives_its_numbers(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "a-file" / "cache"))  # even root cannot write it
    reference = run_beir(progress=False, cache=False)
    with pytest.warns(CacheWarning, match="could not write the cache entry"):
        run = run_beir(progress=False)
    assert run.means == reference.means


# 6. the tests never write into the user's cache


def test_the_suite_runs_with_a_temporary_cache_never_the_users(private_cache, tmp_path_factory):
    from haystack_irmetrics.beir import default_data_dir

    home_cache = Path.home() / ".cache" / "haystack_irmetrics"
    explicit = os.environ.get("IRMETRICS_TEST_CACHE_DIR")
    base = tmp_path_factory.getbasetemp()
    assert private_cache.is_relative_to(base) or (explicit and private_cache == Path(explicit).expanduser())
    assert private_cache.resolve() != home_cache.resolve()
    assert default_data_dir().is_relative_to(base)  # named datasets too: never downloaded into the home folder


def test_the_doctests_outside_tests_write_nothing_into_the_home_folder(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRMETRICS_")}
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'bt'}",
            "docs/beir.md",
        ],
        cwd=root,
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not (home / ".cache" / "haystack_irmetrics").exists()


# 7. a model that fails to load leaves no cache entry


@pytest.mark.skipif(not DENSE, reason="the dense extra (sentence-transformers-haystack)")
def test_a_model_that_fails_to_load_leaves_no_cache_entry(cache_dir, tmp_path):
    from haystack_irmetrics.errors import PipelineError

    with pytest.raises(PipelineError, match="no-such-model-anywhere"):
        run_beir(_tiny(tmp_path / "tiny"), "dense", model="irmetrics-tests/no-such-model-anywhere", progress=False)
    assert _tree(cache_dir / "embeddings") == []
    assert cache_entries() == [] and clear_cache() == []


# the hostile layer: `irmetrics cache list/clear` on a hostile cache exits 0 or 2, never with a traceback


def _hostile_cache(root: Path, outside: Path) -> None:
    for name, content in MALFORMED.items():
        folder = root / "bm25s" / f"{abs(hash(name)):032x}"[-32:]
        (folder / "index").mkdir(parents=True)
        (folder / "entry.json").write_bytes(content)
    bad = root / "embeddings" / KEY_E
    bad.mkdir(parents=True)
    (bad / "model.json").write_bytes(b"\xff" * 10)
    for i, vectors in enumerate(BAD_VECTORS.values()):
        np.save(bad / f"{i:032x}.npy", vectors, allow_pickle=False)
        (bad / f"{i:032x}.json").write_text(["{", "[]", '{"n_texts": "x"}', "null", "1e999", "{}"][i])
    (root / "embeddings" / ("f" * 32)).symlink_to(outside, target_is_directory=True)
    (root / "bm25s" / "stray.bin").write_bytes(os.urandom(64))
    (root / "bm25s" / ("d" * 32)).mkdir()
    (root / "bm25s" / ("d" * 32) / "entry.json").mkdir()  # a folder where a file should be


def test_the_cache_commands_on_a_hostile_cache_exit_0_or_2_without_a_traceback(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("mine")
    root = tmp_path / "hostile"
    _hostile_cache(root, outside)
    (tmp_path / "a-file").write_text("")
    for cache in (root, tmp_path / "a-file", tmp_path / "missing"):
        for args in (["list"], ["list", "--format", "json"], ["clear", "--kind", "bm25s"], ["clear"]):
            proc = subprocess.run(
                [sys.executable, "-m", "haystack_irmetrics.cli", "cache", *args],
                env={**os.environ, "IRMETRICS_CACHE_DIR": str(cache)},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr, (cache, args, proc.stderr)
    assert (outside / "precious.txt").read_text() == "mine"
    assert not (root / "embeddings" / KEY_E).exists()  # damaged, but ours: cleared
    assert (root / "bm25s" / "stray.bin").is_file() and (root / "embeddings" / ("f" * 32)).is_symlink()


def test_bm25s_index_keys_tell_apart_ids_and_texts_that_differ_only_in_where_a_nul_falls():
    from haystack import Document

    from haystack_irmetrics.integration.stores.bm25s_store import _index_key

    params = {"k1": 0.9, "b": 0.4}
    a = _index_key(params, [Document(id="a\0b", content="c")])
    b = _index_key(params, [Document(id="a", content="b\0c")])
    assert a != b
    # a lone surrogate in a text is hashed, not refused with a UnicodeEncodeError
    assert _index_key(params, [Document(id="d", content="x\ud800")]) != _index_key(
        params, [Document(id="d", content="x")]
    )
