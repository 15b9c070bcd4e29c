"""The artifact store under faults: a damaged entry is reported once and rebuilt, a
damaged batch module is recompiled (not reported as a batching difference), and a full
or unwritable store is told once at the end of the run (issue 34)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from iree_conformance.common import store_events
from iree_conformance.common.store import ArtifactStore

from .conftest import run_stablehlo_pytest


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


def test_an_unwritable_store_is_told_at_the_end_of_the_run(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    proc = run_stablehlo_pytest("-k", "softmax", "--store-dir", str(blocker / "store"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "the artifact store" in line]
    assert len(lines) == 1, proc.stdout
    assert "cannot be written (Not a directory)" in lines[0] and "were not stored" in lines[0]


def _batch_modules(store: Path) -> list[Path]:
    found = []
    for path in store.glob("vmfb/*/*.bin"):
        header = json.loads(path.read_bytes().split(b"\n")[1])
        if "members" in header.get("meta", {}):
            found.append(path)
    return found


def test_a_damaged_batch_module_is_recompiled_not_a_batching_difference(tmp_path):
    store = tmp_path / "store"
    args = ("-k", "softmax or sort or abs", "--batch-size", "2", "--store-dir", str(store))
    first = run_stablehlo_pytest(*args)
    assert first.returncode == 0, first.stdout + first.stderr
    modules = _batch_modules(store)
    assert modules
    for path in modules:
        os.truncate(path, path.stat().st_size // 2)
    second = run_stablehlo_pytest(*args, "--report-json", str(tmp_path / "r.json"))
    assert second.returncode == 0, second.stdout + second.stderr
    assert "BATCH " not in second.stdout, second.stdout
    (line,) = [line for line in second.stdout.splitlines() if "damaged entries" in line]
    assert f"held {len(modules)} damaged entries" in line
    assert all(ArtifactStore(store).get("vmfb", p.stem) is not None for p in modules)
    third = run_stablehlo_pytest(*args)
    assert "damaged" not in third.stdout and "BATCH " not in third.stdout
