"""Safe tarball extraction and data-set discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from iree_conformance.frontends.onnx.archive import ArchiveError, find_model_data, safe_extract
from tests.support.onnx_testlib import make_tarball


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "a.tar.gz"
    path.write_bytes(data)
    return path


def test_extracts_and_finds_data_sets(tmp_path: Path) -> None:
    archive = write(
        tmp_path,
        make_tarball(
            {
                "m-12/model.onnx": b"model",
                "m-12/test_data_set_0/input_0.pb": b"i0",
                "m-12/test_data_set_10/input_0.pb": b"i10",
                "m-12/test_data_set_2/input_0.pb": b"i2",
            }
        ),
    )
    root = safe_extract(archive, tmp_path / "out")
    data = find_model_data(root, "m-12")
    assert data.model_path == root / "m-12" / "model.onnx"
    assert [d.name for d in data.data_set_dirs] == [
        "test_data_set_0",
        "test_data_set_2",
        "test_data_set_10",
    ]
    assert [p.name for p in tmp_path.iterdir()] in (["a.tar.gz", "out"], ["out", "a.tar.gz"])


def test_prefers_named_model_when_several(tmp_path: Path) -> None:
    archive = write(tmp_path, make_tarball({"x/other.onnx": b"1", "x/m-7.onnx": b"2"}))
    data = find_model_data(safe_extract(archive, tmp_path / "out"), "m-7")
    assert data.model_path.name == "m-7.onnx" and data.data_set_dirs == ()


@pytest.mark.parametrize(
    "files,links,what",
    [
        ({"../evil.txt": b"x"}, None, "outside the target"),
        ({"ok/../../evil.txt": b"x"}, None, "outside the target"),
        ({"/abs/evil.txt": b"x"}, None, "outside the target"),
        ({"m/model.onnx": b"x"}, {"m/link": "../../etc/passwd"}, "points outside"),
        ({"m/model.onnx": b"x"}, {"m/abs": "/etc/passwd"}, "points outside"),
    ],
)
def test_unsafe_members_are_refused_and_nothing_is_written(
    tmp_path: Path, files: dict, links: dict | None, what: str
) -> None:
    archive = write(tmp_path, make_tarball(files, links))
    with pytest.raises(ArchiveError, match=what):
        safe_extract(archive, tmp_path / "out" / "x")
    assert not (tmp_path / "evil.txt").exists()
    assert list((tmp_path / "out").iterdir()) == []


def test_link_inside_the_tree_is_allowed(tmp_path: Path) -> None:
    archive = write(tmp_path, make_tarball({"m/model.onnx": b"x"}, {"m/alias.onnx": "model.onnx"}))
    root = safe_extract(archive, tmp_path / "out")
    assert (root / "m" / "alias.onnx").read_bytes() == b"x"


def test_corrupt_archive(tmp_path: Path) -> None:
    archive = write(tmp_path, make_tarball({"m/model.onnx": b"x" * 1000})[:40])
    with pytest.raises(ArchiveError, match="cannot unpack"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_archive_without_model(tmp_path: Path) -> None:
    root = safe_extract(write(tmp_path, make_tarball({"readme.txt": b"x"})), tmp_path / "out")
    with pytest.raises(ArchiveError, match="no .onnx model"):
        find_model_data(root)
