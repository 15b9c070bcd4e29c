"""Model Zoo models end to end: `pytest conformance` on a tiny zoo this module builds.

The zoo has one model (Gemm + Relu, opset 13) under four manifest names: ``tiny-13``
with a data set whose shipped output is right, ``wrong-13`` whose shipped output is
wrong, ``nodata-13`` without a tarball (seeded random inputs, onnxruntime) and
``nooutput-13`` whose data set lacks its output file. The
model bytes are the same, so the module's shared artifact store compiles it once.
``symbolic-13`` is the model with a symbolic batch dim and data sets at batch 2 and 3:
compiled at set 0's shapes, and as exported by its ``:dynamic`` twin.
It is served from a local folder and from an HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from iree_conformance.model.outcome import Outcome
from tests.support.onnx_testlib import make_tarball, sha256

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = "ONNX_HUB_MANIFEST.json"
RNG = np.random.default_rng(13)
W = RNG.uniform(-1, 1, (4, 3)).astype(np.float32)
B = RNG.uniform(-1, 1, (3,)).astype(np.float32)
X = RNG.uniform(-1, 1, (2, 4)).astype(np.float32)
X3 = RNG.uniform(-1, 1, (3, 4)).astype(np.float32)
Y = np.maximum(X @ W + B, 0).astype(np.float32)
IO_PORTS = {
    "inputs": [{"name": "x", "shape": [2, 4], "type": "tensor(float)"}],
    "outputs": [{"name": "y", "shape": [2, 3], "type": "tensor(float)"}],
}
SYMBOLIC_PORTS = {
    "inputs": [{"name": "x", "shape": ["N", 4], "type": "tensor(float)"}],
    "outputs": [{"name": "y", "shape": ["N", 3], "type": "tensor(float)"}],
}


def tiny_model() -> bytes:
    """y = Relu(Gemm(x, W, b)): two layers, opset 13."""
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "W", "b"], ["h"], name="gemm0"),
            helper.make_node("Relu", ["h"], ["y"], name="relu0"),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model.SerializeToString()


def symbolic_model() -> bytes:
    """The tiny model with a symbolic batch dim: x [N, 4] -> y [N, 3]."""
    model = onnx.load_from_string(tiny_model())
    for value in (model.graph.input[0], model.graph.output[0]):
        value.type.tensor_type.shape.dim[0].Clear()
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    return model.SerializeToString()


def symbolic_tarball(name: str, model: bytes) -> bytes:
    """Two data sets at batch 2 and batch 3, with the right outputs."""
    files = {f"{name}/model.onnx": model}
    for i, x in enumerate((X, X3)):
        y = np.maximum(x @ W + B, 0).astype(np.float32)
        files[f"{name}/test_data_set_{i}/input_0.pb"] = numpy_helper.from_array(
            x, "x"
        ).SerializeToString()
        files[f"{name}/test_data_set_{i}/output_0.pb"] = numpy_helper.from_array(
            y, "y"
        ).SerializeToString()
    return make_tarball(files)


def data_tarball(name: str, model: bytes, output: np.ndarray | None) -> bytes:
    """Laid out as the Model Zoo ships it: ``<name>/model.onnx`` and one data set
    (without ``output_0.pb`` when ``output`` is None)."""
    files = {
        f"{name}/model.onnx": model,
        f"{name}/test_data_set_0/input_0.pb": numpy_helper.from_array(X, "x").SerializeToString(),
    }
    if output is not None:
        files[f"{name}/test_data_set_0/output_0.pb"] = numpy_helper.from_array(
            output, "y"
        ).SerializeToString()
    return make_tarball(files)


def add_model(
    root: Path, name: str, model: bytes, tarball: bytes | None, io_ports: dict = IO_PORTS
) -> dict:
    """Writes the files under ``root`` at their manifest paths; returns the manifest entry."""
    folder = "validated/test/tiny/model"
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / f"{name}.onnx").write_bytes(model)
    meta: dict = {
        "model_sha": sha256(model),
        "model_bytes": len(model),
        "tags": ["test"],
        "io_ports": io_ports,
    }
    if tarball is not None:
        (root / folder / f"{name}.tar.gz").write_bytes(tarball)
        meta.update(
            model_with_data_path=f"{folder}/{name}.tar.gz",
            model_with_data_sha=sha256(tarball),
            model_with_data_bytes=len(tarball),
        )
    return {
        "model": "Tiny",
        "model_path": f"{folder}/{name}.onnx",
        "onnx_version": "1.8",
        "opset_version": 13,
        "metadata": meta,
    }


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mirror folder; its manifest is ``<zoo>/ONNX_HUB_MANIFEST.json``."""
    root = tmp_path_factory.mktemp("zoo mirror")
    model = tiny_model()
    entries = [
        add_model(root, "tiny-13", model, data_tarball("tiny-13", model, Y)),
        add_model(root, "wrong-13", model, data_tarball("wrong-13", model, Y + 1.0)),
        add_model(root, "nodata-13", model, None),
        add_model(root, "nooutput-13", model, data_tarball("nooutput-13", model, None)),
        add_model(
            root,
            "symbolic-13",
            symbolic_model(),
            symbolic_tarball("symbolic-13", symbolic_model()),
            SYMBOLIC_PORTS,
        ),
    ]
    (root / MANIFEST).write_text(json.dumps(entries, indent=1))
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store")


@pytest.fixture
def http_zoo(zoo: Path) -> Iterator[tuple[str, list[str]]]:
    """The zoo folder over HTTP on 127.0.0.1: (base URL, paths requested)."""
    requested: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            requested.append(self.path)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(zoo)))
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", requested
    finally:
        httpd.shutdown()
        httpd.server_close()


def _environment(monkeypatch: pytest.MonkeyPatch, tmp: Path, store: Path) -> None:
    monkeypatch.setenv("IREE_CONFORMANCE_STORE", str(store))
    monkeypatch.setenv("IREE_CONFORMANCE_ZOO_CACHE", str(tmp / "zoo-cache"))
    monkeypatch.delenv("IREE_CONFORMANCE_ZOO_MIRROR", raising=False)


def run(cmd: list[str], tmp: Path, store: Path) -> subprocess.CompletedProcess:
    """A command-line tool (``iree-conformance run-bundle``) in the same environment."""
    env = {
        **os.environ,
        "IREE_CONFORMANCE_STORE": str(store),
        "IREE_CONFORMANCE_ZOO_CACHE": str(tmp / "zoo-cache"),
    }
    env.pop("IREE_CONFORMANCE_ZOO_MIRROR", None)
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def run_conformance(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp: Path,
    store: Path,
    manifest: str,
    mirror: str,
    models: str,
    *extra: str,
) -> tuple[pytest.RunResult, dict]:
    """``pytest conformance`` on the zoo models through pytester; returns its RunResult
    and the Outcomes by case id."""
    _environment(monkeypatch, tmp, store)
    (tmp / "expectations").mkdir(exist_ok=True)
    report = tmp / "results.json"
    result = pytester.runpytest_subprocess(
        str(ROOT / "conformance" / "test_conformance.py"),
        "-m",
        "onnx_models",
        "-p",
        "no:cacheprovider",
        "-k",
        "onnx-zoo",
        "--zoo-manifest",
        manifest,
        "--zoo-models",
        models,
        "--zoo-mirror",
        mirror,
        "--expectations-dir",
        str(tmp / "expectations"),
        "--report-json",
        str(report),
        *extra,
        timeout=600,
    )
    output = result.stdout.str() + result.stderr.str()
    assert report.exists(), output
    outcomes = {o["case_id"]: o for o in json.loads(report.read_text())["outcomes"]}
    return result, outcomes


def test_local_folder_zoo_right_wrong_and_random_inputs(
    zoo: Path,
    store: Path,
    tmp_path: Path,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, outcomes = run_conformance(
        pytester,
        monkeypatch,
        tmp_path,
        store,
        str(zoo / MANIFEST),
        str(zoo) + "/{model_path}",
        "tiny-13,wrong-13,nodata-13,nooutput-13",
    )
    out = result.stdout.str() + result.stderr.str()
    # The wrong shipped output fails the run; the data set without outputs is not judged.
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    right, wrong, nodata = (outcomes[f"onnx-zoo/{n}"] for n in ("tiny-13", "wrong-13", "nodata-13"))
    assert (right["status"], right["stage"], right["verdict"]) == ("pass", "compare", "pass"), right
    assert (wrong["status"], wrong["stage"], wrong["verdict"]) == ("fail", "compare", "fail"), wrong
    assert Outcome.from_json(wrong).failure_kind == "fail-numerics"
    assert wrong["metrics"]["mismatch_count"] == Y.size and wrong["metrics"][
        "max_abs_error"
    ] == pytest.approx(1.0, abs=1e-4)
    assert "unexpected fail-numerics: onnx-zoo/wrong-13" in out
    assert (nodata["status"], nodata["stage"], nodata["verdict"]) == ("pass", "compare", "pass"), (
        nodata
    )
    assert right["metrics"]["max_abs_error"] < 1e-4 and nodata["metrics"]["outputs"], (
        right,
        nodata,
    )
    broken = outcomes["onnx-zoo/nooutput-13"]  # nothing to check against: not judged
    assert (broken["status"], broken["stage"], broken["verdict"]) == (
        "error",
        "reference",
        "skip",
    ), broken
    assert broken["reason"].startswith("not judged: ")
    assert "holds no output_*.pb files" in broken["diagnostics"][0]


def test_http_zoo_downloads_and_passes(
    zoo: Path,
    store: Path,
    tmp_path: Path,
    http_zoo: tuple[str, list[str]],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, requested = http_zoo
    result, outcomes = run_conformance(
        pytester,
        monkeypatch,
        tmp_path,
        store,
        f"{base}/{MANIFEST}",
        base + "/{model_path}",
        "tiny-13,nodata-13",
    )
    result.assert_outcomes(passed=2)
    assert {k: (o["status"], o["verdict"]) for k, o in outcomes.items()} == {
        "onnx-zoo/tiny-13": ("pass", "pass"),
        "onnx-zoo/nodata-13": ("pass", "pass"),
    }
    folder = "/validated/test/tiny/model"
    assert {f"/{MANIFEST}", f"{folder}/tiny-13.tar.gz", f"{folder}/nodata-13.onnx"} <= set(
        requested
    ), requested
    cached = {p.name for p in (tmp_path / "zoo-cache").rglob("*") if p.is_file()}
    assert any(name.endswith("nodata-13.onnx") for name in cached), cached


def test_compile_only_bundle_then_run_bundle(
    zoo: Path,
    store: Path,
    tmp_path: Path,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundle = tmp_path / "bundle"
    result, outcomes = run_conformance(
        pytester,
        monkeypatch,
        tmp_path,
        store,
        str(zoo / MANIFEST),
        str(zoo) + "/{model_path}",
        "tiny-13,wrong-13,nodata-13",
        "--compile-only",
        "--bundle",
        str(bundle),
    )
    result.assert_outcomes(passed=3)
    assert {o["stage"] for o in outcomes.values()} == {"compile"}
    records = json.loads((bundle / "manifest.json").read_text())["cases"]
    assert {r["case_id"]: r["entry_function"] for r in records} == dict.fromkeys(outcomes, None)

    report = tmp_path / "bundle-results.json"
    proc = run(
        [
            sys.executable,
            "-m",
            "iree_conformance.cli.main",
            "run-bundle",
            str(bundle),
            "--driver",
            "local-task",
            "--report-json",
            str(report),
        ],
        tmp_path,
        store,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # wrong-13 fails there too
    verdicts = {
        o["case_id"]: (o["status"], o["stage"], o["verdict"])
        for o in json.loads(report.read_text())["outcomes"]
    }
    assert verdicts == {
        "onnx-zoo/tiny-13": ("pass", "compare", "pass"),
        "onnx-zoo/nodata-13": ("pass", "compare", "pass"),
        "onnx-zoo/wrong-13": ("fail", "compare", "fail"),
    }


def test_symbolic_zoo_model_with_data_sets_is_static_and_has_a_dynamic_twin(
    zoo: Path,
    store: Path,
    tmp_path: Path,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, outcomes = run_conformance(
        pytester,
        monkeypatch,
        tmp_path,
        store,
        str(zoo / MANIFEST),
        str(zoo) + "/{model_path}",
        "symbolic-13",
    )
    result.assert_outcomes(passed=2)
    static, dynamic = outcomes["onnx-zoo/symbolic-13"], outcomes["onnx-zoo/symbolic-13:dynamic"]
    assert (static["status"], static["stage"]) == ("pass", "compare"), static
    inputs = static["info"]["inputs"]
    assert (inputs["compiled"], inputs["shapes"]) == ("static", {"x": [2, 4]}), inputs
    assert [Path(d).name for d in inputs["other_shapes"]] == ["test_data_set_1"], inputs
    assert static["metrics"]["compared_elements"] == 2 * 3, static
    assert (dynamic["status"], dynamic["info"]["inputs"]["compiled"]) == ("pass", "dynamic"), (
        dynamic
    )
    assert dynamic["metrics"]["compared_elements"] == 2 * 3 + 3 * 3, dynamic
