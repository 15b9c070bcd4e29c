"""The artifact store under faults: a damaged entry is reported once and rebuilt, a full
store is told once (issue 34). In a run: tests/e2e/core/test_store_faults_run.py."""

from __future__ import annotations

import errno
import os

import pytest

from iree_conformance.common import store_events
from iree_conformance.common.store import ArtifactStore


@pytest.fixture
def events(tmp_path, monkeypatch):
    path = tmp_path / "events.jsonl"
    path.write_text("")
    monkeypatch.setenv(store_events.EVENTS_ENV, str(path))
    return path


def test_a_truncated_entry_is_reported_once_and_dropped(tmp_path, events):
    store = ArtifactStore(tmp_path / "store")
    path = store.put("vmfb", "ab" * 32, b"x" * 1000, {"m": 1})
    assert path is not None
    os.truncate(path, path.stat().st_size - 10)
    assert store.get("vmfb", "ab" * 32) is None
    assert not path.exists()  # the next writer stores it again
    assert store.get("vmfb", "ab" * 32) is None  # absent now: no second report
    (line,) = store_events.summary(events)
    assert "held 1 damaged entries (vmfb ababababab" in line and "truncated" in line
    store.put("vmfb", "ab" * 32, b"x" * 1000, {"m": 1})
    assert store.get("vmfb", "ab" * 32) == ({"m": 1}, b"x" * 1000)


def test_a_full_store_is_told_once_with_what_was_not_stored(tmp_path, events, monkeypatch):
    from iree_conformance.engine.worker.store import ModuleCache

    store = ArtifactStore(tmp_path / "store")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "put", full)
    cache = ModuleCache(store)
    cache.put("vmfb", "1" * 64, b"m", {})
    cache.put("mlir", "2" * 64, b"i", {})
    cache.put("mlir", "2" * 64, b"i", {})  # the same entry twice counts once
    (line,) = store_events.summary(events)
    assert f"the artifact store {tmp_path / 'store'} is full (No space left on device)" in line
    assert "2 entries were not stored (1 imports, 1 compiled modules)" in line
    assert "--store-dir" in line
