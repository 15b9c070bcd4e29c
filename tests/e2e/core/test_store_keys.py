"""A stored verdict belongs to the program on disk and to the IREE that made it (issue 55
item 6): what decides a verdict is in the store's keys."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.support.onnx_testlib import check_model, external_data_model


def _verdict(path: Path, store: Path, out: Path) -> dict:
    proc = check_model(path, store, "--no-benchmark", "--json", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(out.read_text())


def test_external_data_rewritten_at_the_same_size_is_imported_again(tmp_path):
    path = external_data_model(tmp_path / "m", 4096, name="m")  # w: zeros
    store = tmp_path / "store"
    first = _verdict(path, store, tmp_path / "1.json")
    assert first["status"] == "pass", first
    data = tmp_path / "m" / "m.bin"
    size = data.stat().st_size
    data.write_bytes(np.linspace(1, 2, size // 4, dtype=np.float32).tobytes())  # same size
    assert data.stat().st_size == size
    again = _verdict(path, store, tmp_path / "2.json")
    # Was: the zero weights' module from the store, "fail" (4096 of 4096 elements differ).
    assert again["status"] == "pass", again
    assert again["info"]["cache_hits"] == {"import": False, "compile": False}
    warm = _verdict(path, store, tmp_path / "3.json")
    assert warm["info"]["cache_hits"] == {"import": True, "compile": True}
