"""The shape rule on production models nobody here wrote, shipped inside PyPI wheels.

* rapidocr-onnxruntime 1.4.4: PaddleOCR v4 text detection (x [?, 3, ?, ?], a DBNet:
  any multiple of 32), text recognition (x [?, 3, ?, ?], an SVTR whose height must pool
  to 1: 48) and the mobile v2 angle classifier;
* silero-vad 6.2.3: the 16 kHz voice-activity detector (input [batch, sequence], state
  [2, batch, 128], an int64 scalar sr: the sample rate) and its float16 variant (float16 inside, float32 inputs);
* magika 1.0.3: Google's byte-level file-type classifier (int32 bytes [?, 2048]).

The wheels are fetched with ``pip download --no-deps`` into a cache folder
(``$IREE_CONFORMANCE_REAL_MODELS``, else the user cache dir) and never committed; the
tests skip with the reason where that cannot be done (offline). Only onnxruntime runs
here: IREE's verdicts on these models are checked by ``--onnx-dir`` runs (README).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import onnx
import platformdirs
import pytest

from iree_conformance.frontends.onnx.inputs import specs_from_model
from iree_conformance.frontends.onnx.model_inputs import choose_inputs
from iree_conformance.frontends.onnx.specs import load_toml_spec_text

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
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    requirement,
                    "-d",
                    str(wheels),
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if proc.returncode != 0:
                pytest.skip(
                    f"cannot pip download {requirement} (offline?): {proc.stderr.strip()[-300:]}"
                )
            name = requirement.split("==")[0].replace("-", "_")
            for wheel in wheels.glob(f"{name}-*.whl"):
                with zipfile.ZipFile(wheel) as z:
                    for m in members:
                        if m in z.namelist():
                            wanted[m].parent.mkdir(parents=True, exist_ok=True)
                            wanted[m].write_bytes(z.read(m))
        for m, p in wanted.items():
            if not p.is_file():
                pytest.skip(f"{requirement} holds no {m}")
            found[Path(m).name] = p
    return found


def choose(path: Path, spec=None):
    model = onnx.load(str(path), load_external_data=False)
    return choose_inputs(model, specs_from_model(model), spec, source=path)


def test_ocr_detector_and_recognizer_get_the_shapes_their_users_feed(models):
    det = choose(models["ch_PP-OCRv4_det_infer.onnx"])
    assert det.shapes == {"x": (1, 3, 320, 320)} and det.problem is None
    rec = choose(models["ch_PP-OCRv4_rec_infer.onnx"])
    # A height of 320 does not pool to 1 in the recognizer: onnxruntime says so, and
    # the rule moves on to the text-line height.
    assert rec.shapes == {"x": (1, 3, 48, 320)} and rec.problem is None, rec.info
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
