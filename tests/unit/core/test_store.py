import multiprocessing
import os

import pytest

from iree_conformance.common.store import ArtifactStore, make_key


def test_roundtrip_and_missing(tmp_path):
    store = ArtifactStore(tmp_path)
    key = make_key("a", b"b")
    assert store.get("vmfb", key) is None
    store.put("vmfb", key, b"payload", {"entry": "main"})
    assert store.get("vmfb", key) == ({"entry": "main"}, b"payload")


def test_key_parts_are_length_prefixed():
    assert make_key("ab", "c") != make_key("a", "bc")


def test_disabled_store_reads_and_writes_nothing(tmp_path):
    store = ArtifactStore(None)
    assert store.put("vmfb", "k" * 64, b"x") is None
    assert store.get("vmfb", "k" * 64) is None


def test_truncated_or_corrupt_entry_is_not_valid(tmp_path):
    store = ArtifactStore(tmp_path)
    key = make_key("x")
    path = store.put("vmfb", key, b"0123456789")
    data = path.read_bytes()
    path.write_bytes(data[:-3])  # a torn write
    assert store.get("vmfb", key) is None
    path.write_bytes(data[:-1] + b"X")  # same length, other bytes
    assert store.get("vmfb", key) is None


def _writer(root, key, payload, n):
    store = ArtifactStore(root)
    for _ in range(n):
        store.put("vmfb", key, payload)
        got = store.get("vmfb", key)
        assert got is None or got[1] == payload


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path):
    key = make_key("same")
    payload = os.urandom(1 << 20)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(tmp_path, key, payload, 20)) for _ in range(4)]
    for p in procs:
        p.start()
    reader = ArtifactStore(tmp_path)
    seen = 0
    while any(p.is_alive() for p in procs):
        got = reader.get("vmfb", key)
        if got is not None:
            assert got[1] == payload
            seen += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert reader.get("vmfb", key)[1] == payload
    leftovers = [p for p in (tmp_path / "vmfb").rglob("*") if p.is_file() and p.suffix == ".tmp"]
    assert leftovers == []


def test_a_file_digest_sees_a_rewrite_at_the_same_size_and_is_kept(tmp_path, monkeypatch):
    from iree_conformance.common import file_digest as fd

    monkeypatch.setattr(fd, "_store", lambda: ArtifactStore(tmp_path / "digests"))
    data = tmp_path / "w.bin"
    data.write_bytes(b"\0" * 4096)
    first = fd.file_digest(data)
    data.write_bytes(b"\1" * 4096)  # the same size
    second = fd.file_digest(data)
    assert second != first
    fd._memo.clear()  # another process: the kept digest answers, the file is not read again
    monkeypatch.setattr(fd, "_hash", lambda path: pytest.fail("hashed again"))
    assert fd.file_digest(data) == second
