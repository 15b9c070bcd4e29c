"""Which external data files enter an ONNX model's import key (issue 55's store keys,
issue 58's hostile files): only what the import would read. A location outside the model's
folder, or a device, is refused at prepare and never read while the key is made; data
larger than a process here may hold is refused by its sizes alone, unread."""

from __future__ import annotations

import time
from pathlib import Path

import onnx
import pytest

from iree_conformance.frontends.onnx import large_import
from iree_conformance.frontends.onnx.frontend import OnnxFrontend
from iree_conformance.model.jobs import Program
from tests.support.onnx_testlib import external_data_model


def files_of(path: Path) -> list[Path]:
    program = Program(case_id="x", kind="onnx", source_path=str(path))
    return OnnxFrontend().source_files(program, path.read_bytes())


def test_the_data_file_beside_the_model_is_read(tmp_path: Path) -> None:
    path = external_data_model(tmp_path / "m", 4096)
    assert files_of(path) == [(tmp_path / "m" / "big.bin").resolve()]


@pytest.mark.parametrize("location", ["../secret/w.bin", "/dev/zero"])
def test_a_location_outside_the_folder_or_a_device_is_not_read(
    tmp_path: Path, location: str
) -> None:
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "w.bin").write_bytes(b"\0" * 4096)
    path = external_data_model(tmp_path / "m", 4096)
    model = onnx.load(path, load_external_data=False)
    for entry in model.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = location
    onnx.save(model, path)
    started = time.monotonic()
    assert files_of(path) == []
    assert time.monotonic() - started < 10  # /dev/zero is never hashed


def test_data_larger_than_a_process_may_hold_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = external_data_model(tmp_path / "m", 8192)
    monkeypatch.setattr(large_import, "usable_memory_bytes", lambda: 4096)
    assert files_of(path) == []
