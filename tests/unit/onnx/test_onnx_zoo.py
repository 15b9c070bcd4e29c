"""ZooStore end to end against a loopback mirror: models, tarballs, real data sets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from onnx import numpy_helper

from iree_conformance.frontends.onnx.archive import ArchiveError
from iree_conformance.frontends.onnx.download import Downloader, DownloadError, DownloadSkipped
from iree_conformance.frontends.onnx.progress import NullProgress
from iree_conformance.frontends.onnx.reference import run_onnxruntime
from iree_conformance.frontends.onnx.values import load_data_set
from iree_conformance.frontends.onnx.zoo import (
    DEFAULT_MIRROR,
    MIRROR_ENV,
    ZooError,
    ZooStore,
    file_url,
    mirror_template,
    unsupported_reason,
    zoo_cases,
)
from iree_conformance.frontends.onnx.zoo_manifest import parse_manifest
from tests.support.onnx_testlib import (
    LoopbackServer,
    add_model,
    assert_cache_holds_only,
    make_tarball,
    sha256,
)

MODEL = add_model(name="tiny").SerializeToString()
X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
Y = X + np.arange(3, dtype=np.float32)


def data_tarball(extra: dict[str, bytes] | None = None) -> bytes:
    files = {
        "tiny-12/model.onnx": MODEL,
        "tiny-12/test_data_set_0/input_0.pb": numpy_helper.from_array(X, "x").SerializeToString(),
        "tiny-12/test_data_set_0/output_0.pb": numpy_helper.from_array(Y, "y").SerializeToString(),
    }
    files.update(extra or {})
    return make_tarball(files)


def manifest_entry(model: bytes, tarball: bytes | None, name: str = "tiny-12") -> dict:
    meta: dict = {
        "model_sha": sha256(model),
        "model_bytes": len(model),
        "tags": ["test"],
        "io_ports": {"inputs": [{"name": "x", "shape": [2, 3], "type": "tensor(float)"}]},
    }
    if tarball is not None:
        meta.update(
            model_with_data_path=f"validated/t/model/{name}.tar.gz",
            model_with_data_sha=sha256(tarball),
            model_with_data_bytes=len(tarball),
        )
    return {
        "model": "Tiny",
        "model_path": f"validated/t/model/{name}.onnx",
        "onnx_version": "1.14",
        "opset_version": 17,
        "metadata": meta,
    }


def store(tmp_path: Path, server: LoopbackServer, **kw: object) -> ZooStore:
    downloader = Downloader(sleep=lambda s: None, progress=NullProgress, timeout=(2, 5))
    return ZooStore(
        tmp_path / "cache", mirror=server.base + "/hf/{model_path}", downloader=downloader, **kw
    )  # type: ignore[arg-type]


def test_model_and_tarball_with_real_data(tmp_path: Path, server: LoopbackServer) -> None:
    tarball = data_tarball()
    server.add("hf/validated/t/model/tiny-12.onnx", MODEL)
    server.add("hf/validated/t/model/tiny-12.tar.gz", tarball)
    (entry,) = parse_manifest(json.dumps([manifest_entry(MODEL, tarball)]), "m.json")
    zoo = store(tmp_path, server)

    bare = zoo.fetch(entry, with_data=False)
    assert bare.model_path.read_bytes() == MODEL and bare.data_set_dirs == ()

    data = zoo.fetch(entry)
    assert len(data.data_set_dirs) == 1
    inputs, outputs = load_data_set(data.data_set_dirs[0])
    np.testing.assert_array_equal(inputs[0], X)
    np.testing.assert_allclose(run_onnxruntime(data.model_path, inputs)[0], outputs[0])
    # The tarball is dropped once unpacked; the verified model file stays.
    files = {p.name for p in (tmp_path / "cache" / "onnx-zoo" / "files").iterdir()}
    assert files == {f"{entry.model_sha[:16]}-tiny-12.onnx"}
    # Second time: nothing is downloaded again.
    before = len(server.requests)
    zoo.fetch(entry)
    zoo.fetch(entry, with_data=False)
    assert len(server.requests) == before


def test_tarball_with_parent_path_is_refused(tmp_path: Path, server: LoopbackServer) -> None:
    tarball = data_tarball({"../escape.txt": b"gotcha"})
    server.add("hf/validated/t/model/tiny-12.tar.gz", tarball)
    (entry,) = parse_manifest(json.dumps([manifest_entry(MODEL, tarball)]), "m.json")
    with pytest.raises(ArchiveError, match=r"'\.\./escape\.txt' would be written outside"):
        store(tmp_path, server).fetch(entry)
    assert not (tmp_path / "escape.txt").exists()
    assert not (tmp_path / "cache" / "escape.txt").exists()
    # Only the verified (if hostile) tarball is in the cache: no partial unpacking.
    assert_cache_holds_only(
        tmp_path / "cache", {f"{sha256(tarball)[:16]}-tiny-12.tar.gz": sha256(tarball)}
    )
    assert list((tmp_path / "cache" / "onnx-zoo" / "unpacked").iterdir()) == []


def test_mirror_serving_another_file(tmp_path: Path, server: LoopbackServer) -> None:
    server.add("hf/validated/t/model/tiny-12.onnx", add_model(name="tinz").SerializeToString())
    (entry,) = parse_manifest(json.dumps([manifest_entry(MODEL, None)]), "m.json")
    with pytest.raises(DownloadError, match=r"tiny-12\.onnx: content does not match"):
        store(tmp_path, server).fetch(entry)
    assert_cache_holds_only(tmp_path / "cache", {})


def test_offline_store_skips(tmp_path: Path, server: LoopbackServer) -> None:
    (entry,) = parse_manifest(json.dumps([manifest_entry(MODEL, None)]), "m.json")
    zoo = ZooStore(
        tmp_path / "cache",
        mirror="https://example.invalid/{model_path}",
        downloader=Downloader(offline=True),
    )
    with pytest.raises(DownloadSkipped) as info:
        zoo.fetch(entry)
    assert info.value.reason == "offline"


def test_local_folder_mirror(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror" / "validated" / "t" / "model"
    mirror.mkdir(parents=True)
    (mirror / "tiny-12.onnx").write_bytes(MODEL)
    (entry,) = parse_manifest(json.dumps([manifest_entry(MODEL, None)]), "m.json")
    zoo = ZooStore(
        tmp_path / "cache",
        mirror=str(tmp_path / "mirror") + "/{model_path}",
        downloader=Downloader(offline=True),
    )
    assert zoo.fetch(entry).model_path.read_bytes() == MODEL


def test_mirror_template_setting() -> None:
    assert mirror_template(environ={}) == DEFAULT_MIRROR
    assert "huggingface.co/onnxmodelzoo" in DEFAULT_MIRROR
    assert mirror_template(environ={MIRROR_ENV: "http://m/{file_name}"}) == "http://m/{file_name}"
    assert mirror_template("http://cli/{model_path}", {MIRROR_ENV: "x/{model_path}"}).startswith(
        "http://cli/"
    )
    with pytest.raises(ZooError, match="must contain"):
        mirror_template("http://m/static.onnx", {})
    with pytest.raises(ZooError, match="unknown: \\['nme'\\]"):
        mirror_template("http://m/{nme}/{model_path}", {})
    assert (
        file_url(DEFAULT_MIRROR, "validated/a/b/m-12.onnx", "ab")
        == "https://huggingface.co/onnxmodelzoo/legacy_models/resolve/main/validated/a/b/m-12.onnx"
    )
    assert file_url("http://m/{sha256}/{file_name}", "a/b/m.onnx", "ff") == "http://m/ff/m.onnx"


def test_unsupported_inputs_and_case_selection(tmp_path: Path) -> None:
    raw = [manifest_entry(MODEL, None, "tiny-12"), manifest_entry(MODEL, None, "seq-9")]
    raw[1]["metadata"]["io_ports"]["inputs"][0]["type"] = "seq(tensor(uint8))"
    path = tmp_path / "m.json"
    path.write_text(json.dumps(raw))
    cases = zoo_cases(path)
    assert [c.case_id for c in cases] == ["onnx-zoo/tiny-12", "onnx-zoo/seq-9"]
    assert cases[0].unsupported_reason is None
    assert cases[1].unsupported_reason == "sequence input 'x' is unsupported by the runtime path"
    assert [c.name for c in zoo_cases(path, names="seq-9")] == ["seq-9"]
    assert unsupported_reason(cases[0].zoo_entry) is None


def test_zoo_cases_run_the_modules_function_not_the_manifest_entry(tmp_path: Path) -> None:
    """Case.entry_function names the function the worker runs; a zoo case keeps its manifest
    entry elsewhere (it once shadowed the function name, and every zoo model failed at run)."""
    from iree_conformance.suites.onnx_models import zoo_model_cases
    from iree_conformance.suites.run_options import RunOptions

    path = tmp_path / "m.json"
    path.write_text(json.dumps([manifest_entry(MODEL, None, "tiny-12")]))
    values = {"zoo_manifest": str(path), "zoo_mirror": str(tmp_path / "{model_path}")}
    (case,) = zoo_model_cases(values, RunOptions(offline=True))
    assert case.entry_function is None
    assert case.zoo_entry.name == "tiny-12"
