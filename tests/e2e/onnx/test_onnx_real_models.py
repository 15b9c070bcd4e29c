"""The shape rule on production models nobody here wrote, shipped inside PyPI wheels.

* rapidocr-onnxruntime 1.4.4: PaddleOCR v4 text detection (x [?, 3, ?, ?], a DBNet:
  any multiple of 32), text recognition (x [?, 3, ?, ?], an SVTR whose height must pool
  to 1: 48) and the mobile v2 angle classifier;
* silero-vad 6.2.3: the 16 kHz voice-activity detector (input [batch, sequence], state
  [2, batch, 128], an int64 scalar sr: the sample rate) and its float16 variant (float16 inside, float32 inputs);
* magika 1.0.3: Google's byte-level file-type classifier (int32 bytes [?, 2048]).

The wheels are fetched with ``pip download --no-deps`` into a cache folder
(``$IREE_CONFORMANCE_REAL_MODELS``, else the user cache dir) and never committed; the
tests skip with the reason where that cannot be done (offline). Most tests run only
onnxruntime (IREE's verdicts on these models are checked by ``--onnx-dir`` runs, README);
one serves the angle classifier as a private Model Zoo with two test data sets that
onnxruntime made, at batch 1 and batch 2, and runs ``pytest conformance`` on it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import platformdirs
import pytest
from onnx import numpy_helper

from iree_conformance.frontends.onnx.inputs import specs_from_model
from iree_conformance.frontends.onnx.model_inputs import choose_inputs
from iree_conformance.frontends.onnx.specs import load_toml_spec_text
from tests.support.installer import install_command
from tests.support.onnx_testlib import make_tarball, run_conformance, sha256

ROOT = Path(__file__).resolve().parents[3]

WHEELS = {
    "rapidocr-onnxruntime==1.4.4": [
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
    ],
    "silero-vad==6.2.3": [
        "silero_vad/data/silero_vad_16k_op15.onnx",
        "silero_vad/data/silero_vad_half.onnx",
    ],
    "magika==1.0.3": ["magika/models/standard_v3_3/model.onnx"],
}


def _cache() -> Path:
    env = os.environ.get("IREE_CONFORMANCE_REAL_MODELS")
    return (
        Path(env) if env else Path(platformdirs.user_cache_dir("iree-conformance")) / "real-models"
    )


@pytest.fixture(scope="module")
def models() -> dict[str, Path]:
    root = _cache()
    found: dict[str, Path] = {}
    for requirement, members in WHEELS.items():
        wanted = {m: root / m for m in members}
        if not all(p.is_file() for p in wanted.values()):
            wheels = root / "wheels"
            wheels.mkdir(parents=True, exist_ok=True)
            _fetch(requirement, members, wanted, wheels)
        for m, p in wanted.items():
            if not p.is_file():
                pytest.skip(f"{requirement} holds no {m}")
            found[Path(m).name] = p
    return found


def _fetch(requirement: str, members: list[str], wanted: dict[str, Path], wheels: Path) -> None:
    """The wheel's members into the cache: ``pip download`` where there is pip, else (an
    environment made by ``uv venv``) ``uv pip install --target``; a skip if offline."""
    if importlib.util.find_spec("pip") is None:
        where = wheels / requirement.replace("==", "-")
        command = install_command(sys.executable)
        command += ["--no-deps", "--target", str(where), requirement]
    else:
        where = None
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", requirement]
        command += ["-d", str(wheels)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.skip(f"cannot fetch {requirement} (offline?): {proc.stderr.strip()[-300:]}")
    if where is not None:
        for m in members:
            if (where / m).is_file():
                wanted[m].parent.mkdir(parents=True, exist_ok=True)
                wanted[m].write_bytes((where / m).read_bytes())
        return
    name = requirement.split("==")[0].replace("-", "_")
    for wheel in wheels.glob(f"{name}-*.whl"):
        with zipfile.ZipFile(wheel) as z:
            for m in members:
                if m in z.namelist():
                    wanted[m].parent.mkdir(parents=True, exist_ok=True)
                    wanted[m].write_bytes(z.read(m))


def choose(path: Path, spec=None):
    model = onnx.load(str(path), load_external_data=False)
    return choose_inputs(model, specs_from_model(model), spec, source=path)


def test_ocr_detector_and_recognizer_get_the_shapes_their_users_feed(models):
    det = choose(models["ch_PP-OCRv4_det_infer.onnx"])
    assert det.shapes == {"x": (1, 3, 224, 224)} and det.problem is None
    rec = choose(models["ch_PP-OCRv4_rec_infer.onnx"])
    # A height of 224 does not pool to 1 in the recognizer: onnxruntime says so, and
    # the rule moves on to the text-line height.
    assert rec.shapes == {"x": (1, 3, 48, 224)} and rec.problem is None, rec.info
    assert rec.info["tried"] and "Reshape" in rec.info["tried"][0]["why"]
    cls = choose(models["ch_ppocr_mobile_v2.0_cls_infer.onnx"])
    assert cls.problem is None and cls.shapes["x"][2] > 1


def test_voice_activity_detector_sample_rate_needs_a_spec(models):
    vad = choose(models["silero_vad_16k_op15.onnx"])
    assert vad.shapes["input"] == (1, 512), vad.info  # 128 samples are too few for its STFT
    assert vad.unjudged and "sr" in vad.unjudged
    spec = load_toml_spec_text('[inputs.sr]\nvalue = 16000\nreason = "sample rate"\n', "vad.toml")
    vad = choose(models["silero_vad_16k_op15.onnx"], spec)
    assert vad.unjudged is None and vad.reference is not None
    half = choose(models["silero_vad_half.onnx"])
    # float32 inputs and outputs around float16 weights and arithmetic.
    assert half.problem is None and half.reference is not None


def test_byte_classifier(models):
    magika = choose(models["model.onnx"])
    assert magika.shapes == {"bytes": (1, 2048)} and magika.problem is None


def _zoo_with_data_sets(model_path: Path, root: Path, name: str, shapes) -> Path:
    """A one-model zoo mirror: the Model Zoo's tarball layout, one data set per shape,
    inputs uniform in [0, 1) and outputs from onnxruntime; returns the manifest."""
    data = model_path.read_bytes()
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    (port,) = session.get_inputs()
    rng = np.random.default_rng(7)
    files = {f"{name}/model.onnx": data}
    for i, shape in enumerate(shapes):
        x = rng.uniform(0, 1, shape).astype(np.float32)
        outputs = session.run(None, {port.name: x})
        folder = f"{name}/test_data_set_{i}"
        files[f"{folder}/input_0.pb"] = numpy_helper.from_array(x, port.name).SerializeToString()
        for k, (out, value) in enumerate(zip(session.get_outputs(), outputs)):
            files[f"{folder}/output_{k}.pb"] = numpy_helper.from_array(
                value, out.name
            ).SerializeToString()
    tarball = make_tarball(files)
    (root / f"{name}.onnx").write_bytes(data)
    (root / f"{name}.tar.gz").write_bytes(tarball)
    model = onnx.load_from_string(data)
    ports = {
        "inputs": [{"name": port.name, "shape": port.shape, "type": port.type}],
        "outputs": [
            {"name": o.name, "shape": o.shape, "type": o.type} for o in session.get_outputs()
        ],
    }
    entry = {
        "model": name,
        "model_path": f"{name}.onnx",
        "onnx_version": "1.10",
        "opset_version": max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
        "metadata": {
            "model_sha": sha256(data),
            "model_bytes": len(data),
            "tags": ["real"],
            "io_ports": ports,
            "model_with_data_path": f"{name}.tar.gz",
            "model_with_data_sha": sha256(tarball),
            "model_with_data_bytes": len(tarball),
        },
    }
    manifest = root / "ONNX_HUB_MANIFEST.json"
    manifest.write_text(json.dumps([entry]))
    return manifest


def test_zoo_classifier_with_data_sets_compiles_static_and_dynamic(models, tmp_path: Path):
    """The angle classifier (x [?, 3, ?, ?]) with sets at 1x3x48x192 and 2x3x48x192:
    ``onnx-zoo/cls`` is compiled at set 0's shapes and runs it; ``cls:dynamic`` runs
    both. Both pass in IREE 3.13 (onnxruntime's outputs within the model tolerance)."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    manifest = _zoo_with_data_sets(
        models["ch_ppocr_mobile_v2.0_cls_infer.onnx"],
        mirror,
        "cls",
        [(1, 3, 48, 192), (2, 3, 48, 192)],
    )
    env = {
        "IREE_CONFORMANCE_STORE": str(tmp_path / "store"),
        "IREE_CONFORMANCE_ZOO_CACHE": str(tmp_path / "zoo-cache"),
    }
    zoo = ("--zoo-manifest", str(manifest), "--zoo-mirror", str(mirror) + "/{model_path}")
    _, outcomes = run_conformance(tmp_path, env, "onnx_models", "-k", "onnx-zoo", *zoo)
    static, dynamic = outcomes["onnx-zoo/cls"], outcomes["onnx-zoo/cls:dynamic"]
    assert (static["status"], static["stage"]) == ("pass", "compare"), static
    inputs = static["info"]["inputs"]
    assert (inputs["compiled"], inputs["shapes"]) == ("static", {"x": [1, 3, 48, 192]}), inputs
    assert [Path(d).name for d in inputs["other_shapes"]] == ["test_data_set_1"], inputs
    assert (dynamic["status"], dynamic["info"]["inputs"]["compiled"]) == ("pass", "dynamic"), (
        dynamic
    )
    assert dynamic["metrics"]["compared_elements"] == 3 * static["metrics"]["compared_elements"]
