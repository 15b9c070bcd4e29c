"""Model Zoo manifest parsing and selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iree_conformance.frontends.onnx.zoo_manifest import (
    ManifestError,
    load_manifest,
    parse_manifest,
    select_entries,
)
from tests.support.onnx_testlib import LoopbackServer

SHARED_MANIFEST = (
    Path(__file__).resolve().parents[4] / "shared" / "onnx-model-zoo" / "ONNX_HUB_MANIFEST.json"
)


def entry(path: str, model: str = "M", opset: int = 12, **meta: object) -> dict:
    metadata = {"model_sha": "ab" * 32, "model_bytes": 100, "tags": ["vision"]}
    metadata.update(meta)
    return {
        "model": model,
        "model_path": path,
        "onnx_version": "1.9",
        "opset_version": opset,
        "metadata": metadata,
    }


SMALL = [
    entry("v/mnist/model/mnist-12.onnx", "MNIST-12", model_bytes=26143),
    entry("v/mnist/model/mnist-8.onnx", "MNIST", opset=8, model_bytes=26454),
    entry(
        "v/sq/model/squeezenet1.1-7.onnx",
        "SqueezeNet 1.1",
        opset=7,
        model_bytes=4956208,
        tags=["vision", "classification"],
        model_with_data_path="v/sq/model/squeezenet1.1-7.tar.gz",
        model_with_data_sha="cd" * 32,
        model_with_data_bytes=6_000_000,
    ),
    entry("t/bert/model/bertsquad-10.onnx", "BERT-Squad", opset=10, tags=["text"]),
]


def parse(entries: list) -> list:
    return parse_manifest(json.dumps(entries), "test.json")


def test_parse_fields() -> None:
    entries = parse(SMALL)
    sq = entries[2]
    assert sq.name == "squeezenet1.1-7" and sq.case_id == "onnx-zoo/squeezenet1.1-7"
    assert sq.opset == 7 and sq.model_bytes == 4956208 and sq.has_data
    assert sq.data_path == "v/sq/model/squeezenet1.1-7.tar.gz" and sq.data_bytes == 6_000_000
    assert not entries[0].has_data and entries[0].data_sha is None


def test_select_by_names_tags_and_size() -> None:
    entries = parse(SMALL)
    picked = select_entries(entries, names="squeezenet1.1-7, onnx-zoo/MNIST-12")
    assert [e.name for e in picked] == ["mnist-12", "squeezenet1.1-7"]  # manifest order
    assert [e.name for e in select_entries(entries, tags="TEXT")] == ["bertsquad-10"]
    assert [e.name for e in select_entries(entries, tags=["classification", "text"])] == [
        "squeezenet1.1-7",
        "bertsquad-10",
    ]
    assert [e.name for e in select_entries(entries, max_bytes=30_000)] == [
        "mnist-12",
        "mnist-8",
        "bertsquad-10",
    ]
    # With data, the tarball's size counts.
    assert "squeezenet1.1-7" in [e.name for e in select_entries(entries, max_bytes=5_000_000)]
    assert "squeezenet1.1-7" not in [
        e.name for e in select_entries(entries, max_bytes=5_000_000, with_data=True)
    ]
    assert select_entries(entries) == entries


def test_unknown_name_lists_near_matches() -> None:
    with pytest.raises(ManifestError, match=r"unknown Model Zoo model 'mnist-13'.*mnist-12"):
        select_entries(parse(SMALL), names="mnist-13")
    with pytest.raises(ManifestError, match="file stems such as"):
        select_entries(parse(SMALL), names="zzzzzzzz")


@pytest.mark.parametrize(
    "text,message",
    [
        ("{not json", "not valid JSON"),
        ('{"a": 1}', "expected a JSON list"),
        ("[1]", r"entry #0 \('\?'\): expected an object"),
    ],
)
def test_broken_manifest_text(text: str, message: str) -> None:
    with pytest.raises(ManifestError, match=rf"^bad\.json: .*{message}"):
        parse_manifest(text, "bad.json")


def test_missing_and_bad_fields_name_the_entry() -> None:
    broken = json.loads(json.dumps(SMALL))
    del broken[1]["metadata"]["model_sha"]
    with pytest.raises(
        ManifestError, match=r"entry #1 \('MNIST'\) metadata: missing field 'model_sha'"
    ):
        parse(broken)
    broken = json.loads(json.dumps(SMALL))
    broken[0]["opset_version"] = "12"
    with pytest.raises(ManifestError, match=r"entry #0 .*'opset_version' is '12'"):
        parse(broken)
    broken = json.loads(json.dumps(SMALL))
    del broken[2]["metadata"]["model_with_data_sha"]
    with pytest.raises(ManifestError, match="missing field 'model_with_data_sha'"):
        parse(broken)
    broken = json.loads(json.dumps(SMALL))
    broken[0]["model_path"] = "../../etc/x.onnx"
    with pytest.raises(ManifestError, match="without '..'"):
        parse(broken)


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ManifestError, match="both name 'mnist-12'"):
        parse([SMALL[0], SMALL[0]])


def test_load_from_path_and_url(tmp_path: Path, server: LoopbackServer) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(SMALL))
    assert len(load_manifest(path)) == 4
    url = server.add("ONNX_HUB_MANIFEST.json", json.dumps(SMALL).encode())
    assert [e.name for e in load_manifest(url)] == [e.name for e in load_manifest(str(path))]
    with pytest.raises(ManifestError, match="HTTP 404"):
        load_manifest(server.url("nope.json"))
    with pytest.raises(ManifestError, match="cannot read the manifest"):
        load_manifest(tmp_path / "absent.json")


@pytest.mark.skipif(not SHARED_MANIFEST.is_file(), reason="shared zoo manifest not present")
def test_real_manifest() -> None:
    entries = load_manifest(SHARED_MANIFEST)
    assert len(entries) == 184
    names = {e.name for e in entries}
    assert {"mnist-12", "squeezenet1.1-7", "resnet50-v1-12"} <= names
    picked = select_entries(entries, names="mnist-12,squeezenet1.1-7")
    assert [(e.name, e.opset) for e in picked] == [("mnist-12", 12), ("squeezenet1.1-7", 7)]
    assert all(len(e.model_sha) == 64 for e in entries)
    small = select_entries(entries, max_bytes=100_000)
    assert small and all(e.model_bytes <= 100_000 for e in small)


@pytest.mark.parametrize("path", ["a\\..\\..\\x.onnx", "C:x.onnx", "c:/x.onnx", "/etc/x.onnx"])
def test_a_path_that_could_leave_the_cache_on_any_os_is_refused(path: str) -> None:
    broken = json.loads(json.dumps(SMALL))
    broken[0]["model_path"] = path
    with pytest.raises(ManifestError, match="must be relative"):
        parse(broken)
