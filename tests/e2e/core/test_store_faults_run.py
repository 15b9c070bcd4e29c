"""Store faults in a pytest conformance run: an unwritable store told at the end, a damaged
batch module compiled again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from iree_conformance.common.store import ArtifactStore
from tests.support.core_helpers import run_conformance_pytest


def test_an_unwritable_store_is_told_at_the_end_of_the_run(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    proc = run_conformance_pytest("-k", "softmax", "--store-dir", str(blocker / "store"))
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
    first = run_conformance_pytest(*args)
    assert first.returncode == 0, first.stdout + first.stderr
    modules = _batch_modules(store)
    assert modules
    for path in modules:
        os.truncate(path, path.stat().st_size // 2)
    second = run_conformance_pytest(*args, "--report-json", str(tmp_path / "r.json"))
    assert second.returncode == 0, second.stdout + second.stderr
    assert "BATCH " not in second.stdout, second.stdout
    (line,) = [line for line in second.stdout.splitlines() if "damaged entries" in line]
    assert f"held {len(modules)} damaged entries" in line
    assert all(ArtifactStore(store).get("vmfb", p.stem) is not None for p in modules)
    third = run_conformance_pytest(*args)
    assert "damaged" not in third.stdout and "BATCH " not in third.stdout
