"""Abandoned temporaries are removed; fresh ones (a live process's) are kept."""

from __future__ import annotations

import os
import time
from pathlib import Path

from iree_conformance.frontends.onnx.download import Downloader
from iree_conformance.frontends.onnx.progress import NullProgress
from iree_conformance.frontends.onnx.stale import remove_stale
from tests.support.onnx_testlib import LoopbackServer, sha256


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_remove_stale_by_age(tmp_path: Path) -> None:
    old_file, new_file, old_dir = (
        tmp_path / ".a.part-1",
        tmp_path / ".a.part-2",
        tmp_path / ".t.tmp-1",
    )
    old_file.write_bytes(b"x")
    new_file.write_bytes(b"x")
    old_dir.mkdir()
    (old_dir / "f").write_bytes(b"x")
    age(old_file, 7200)
    age(old_dir, 7200)
    assert remove_stale(tmp_path, ".a.part-*") == [old_file]
    assert new_file.exists() and old_dir.exists()
    assert remove_stale(tmp_path, ".t.tmp-*") == [old_dir]
    assert remove_stale(tmp_path / "absent", "*") == []


def test_download_clears_abandoned_partials(server: LoopbackServer, tmp_path: Path) -> None:
    body = b"model bytes" * 100
    abandoned = tmp_path / ".m.onnx.part-deadbeef0000"
    abandoned.write_bytes(b"half")
    age(abandoned, 7200)
    url = server.add("m.onnx", body)
    Downloader(progress=NullProgress).fetch(
        url, tmp_path / "m.onnx", sha256=sha256(body), size=len(body)
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
