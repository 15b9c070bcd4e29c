"""``--onnx-dir`` end to end, and the same verdicts from ``check-model``.

The folder this module builds holds small models of its own (tests/support/symbolic_models.py):

* ``image/image.onnx``: x [N, 3, H, W]: the static case passes at 1x3x224x224; its
  ``:dynamic`` twin exists and records that it compiled the symbolic model;
* ``scalar/scalar.onnx`` with ``scalar.inputs.toml`` (sr = 16000): passes;
* ``bare/scalar.onnx`` without a spec: IREE runs it, but a random sample rate is no
  verdict: an error at the reference stage that says to give sr's value;
* ``nan/nan.onnx``: no input gives a finite reference: an error at the reference
  stage, IREE never asked;
* ``data/model.onnx`` with ``test_data_set_0`` (batch 2) and ``_1`` (batch 3): compiled
  at set 0's shapes and checked on it against the shipped output; its ``:dynamic`` twin
  runs both sets;
* ``ext/model.onnx`` with its weights in ``model.onnx.data``: passes; ``ext-missing``
  lacks its data file: an error at prepare that names it;
* ``broken/corrupt.onnx``: not a protobuf: an error at prepare;
* ``badspec/batch.onnx`` whose spec names an input it lacks: an error naming file:line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from iree_conformance.common.errors import EXIT_UNJUDGED
from tests.support import symbolic_models as sm
from tests.support.onnx_testlib import check_model, run_conformance

ROOT = Path(__file__).resolve().parents[3]


def _save(model: onnx.ModelProto, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def _float64_model() -> onnx.ModelProto:
    """Sigmoid on float64 in and out: IREE's default would demote the signature to f32."""
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, [4, 5])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, [4, 5])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Sigmoid", ["x"], ["y"])], "g", [x], [y])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("models")
    _save(sm.image_model(), root / "image" / "image.onnx")
    fixed_scalar = sm.scalar_model()
    for d in fixed_scalar.graph.input[0].type.tensor_type.shape.dim[:1]:
        d.Clear()
        d.dim_value = 2
    _save(fixed_scalar, root / "scalar" / "scalar.onnx")
    (root / "scalar" / "scalar.inputs.toml").write_text(
        '[inputs.sr]\nvalue = 16000\nreason = "the sample rate"\n'
    )
    _save(fixed_scalar, root / "bare" / "scalar.onnx")
    _save(sm.nan_model(), root / "nan" / "nan.onnx")
    dropout = sm.dropout_model(training=True)
    dropout.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2  # one case, no twin
    _save(dropout, root / "dropout" / "dropout.onnx")
    data_model = sm.batch_model()
    _save(data_model, root / "data" / "model.onnx")
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    w = numpy_helper.to_array(data_model.graph.initializer[0])
    ds = root / "data" / "test_data_set_0"
    ds.mkdir()
    (ds / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (ds / "output_0.pb").write_bytes(numpy_helper.from_array(x @ w, "y").SerializeToString())
    ds = root / "data" / "test_data_set_1"  # another batch size: the :dynamic case's
    ds.mkdir()
    x3 = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    (ds / "input_0.pb").write_bytes(numpy_helper.from_array(x3, "x").SerializeToString())
    (ds / "output_0.pb").write_bytes(numpy_helper.from_array(x3 @ w, "y").SerializeToString())
    for name in ("ext", "ext-missing"):
        model = sm.batch_model()
        (root / name).mkdir()
        onnx.save(
            model,
            str(root / name / "model.onnx"),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location="model.onnx.data",
            size_threshold=0,
        )
    (root / "ext-missing" / "model.onnx.data").unlink()
    _save(_float64_model(), root / "f64" / "sigmoid.onnx")
    (root / "broken").mkdir()
    (root / "broken" / "corrupt.onnx").write_bytes(b"\x08\x07this is not a model")
    _save(sm.batch_model(), root / "badspec" / "batch.onnx")
    (root / "badspec" / "batch.inputs.toml").write_text(
        "[dims]\nN = 2\n\n[inputs.image]\nshape = [1]\n"
    )
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store")


@pytest.fixture(scope="module")
def outcomes(folder: Path, store: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("run")
    env = {"IREE_CONFORMANCE_STORE": str(store)}
    return run_conformance(tmp, env, "onnx_dir", "--onnx-dir", str(folder))[1]


def test_every_model_file_is_a_case_and_symbolic_ones_have_a_dynamic_twin(outcomes: dict):
    assert sorted(outcomes) == sorted(
        f"onnx-dir/{p}"
        for p in (
            "bare/scalar.onnx",
            "badspec/batch.onnx",
            "badspec/batch.onnx:dynamic",
            "broken/corrupt.onnx",
            "data/model.onnx",
            "data/model.onnx:dynamic",
            "dropout/dropout.onnx",
            "ext/model.onnx",
            "ext/model.onnx:dynamic",
            "ext-missing/model.onnx",
            "f64/sigmoid.onnx",
            "image/image.onnx",
            "image/image.onnx:dynamic",
            "nan/nan.onnx",
            "nan/nan.onnx:dynamic",
            "scalar/scalar.onnx",
        )
    )


def test_a_float64_model_keeps_float64_and_passes(outcomes: dict):
    """Demoted, its f64 inputs would not fit the module's f32 buffers (OUT_OF_RANGE at run):
    a harness artifact, not IREE's verdict on the model."""
    outcome = outcomes["onnx-dir/f64/sigmoid.onnx"]
    assert outcome["status"] == "pass", outcome


def test_only_models_declaring_float64_keep_it():
    from iree_conformance.model.cases import ONNX_KEEP_F64
    from iree_conformance.suites.model_case import ModelCase

    class Probe(ModelCase):
        pass

    f64 = Probe("p", "onnx_dir", "onnx", source_bytes=_float64_model().SerializeToString())
    f32 = Probe("q", "onnx_dir", "onnx", source_bytes=sm.batch_model().SerializeToString())
    assert ONNX_KEEP_F64 in f64.compile_flags(("--iree-hal-target-device=local",))
    assert ONNX_KEEP_F64 not in f32.compile_flags(("--iree-hal-target-device=local",))


def test_static_case_passes_at_the_chosen_shape(outcomes: dict):
    image = outcomes["onnx-dir/image/image.onnx"]
    assert (image["status"], image["stage"]) == ("pass", "compare"), image
    inputs = image["info"]["inputs"]
    assert inputs["shapes"] == {"x": [1, 3, 224, 224]} and inputs["compiled"] == "static"
    assert inputs["dims"]["H"] == {"size": 224, "rule": "image"} and inputs["seed"] == 0
    dynamic = outcomes["onnx-dir/image/image.onnx:dynamic"]
    assert dynamic["info"]["inputs"]["compiled"] == "dynamic"
    # Whatever IREE does with the symbolic program, it is its own verdict.
    assert dynamic["stage"] != "reference", dynamic


def test_spec_beside_the_model_gives_a_verdict(outcomes: dict):
    scalar = outcomes["onnx-dir/scalar/scalar.onnx"]
    assert scalar["status"] == "pass", scalar
    assert scalar["info"]["inputs"]["values"]["sr"] == "spec: constant 16000 (the sample rate)"


def test_random_scalar_is_no_verdict_and_says_what_to_give(outcomes: dict):
    bare = outcomes["onnx-dir/bare/scalar.onnx"]
    assert (bare["status"], bare["stage"]) == ("error", "reference"), bare
    assert "no verdict" in bare["diagnostics"][0] and "[inputs.sr]" in bare["diagnostics"][0]
    assert "sr" in bare["info"]["inputs"]["unjudged"]


def test_a_training_mode_dropout_is_not_judged_and_names_the_node(outcomes: dict):
    # Its outputs are random: IREE's run and onnxruntime's are two draws, no verdict.
    drop = outcomes["onnx-dir/dropout/dropout.onnx"]
    assert (drop["status"], drop["stage"]) == ("error", "reference"), drop
    assert drop["diagnostics"][0].startswith(
        "IREE ran the model, but the run is no verdict: Dropout node 'drop' runs in training mode"
    ), drop["diagnostics"]
    assert "model.eval()" in drop["info"]["inputs"]["random"]


def test_degenerate_reference_is_an_error_before_iree_is_asked(outcomes: dict):
    nan = outcomes["onnx-dir/nan/nan.onnx"]
    assert (nan["status"], nan["stage"]) == ("error", "reference"), nan
    assert "non-finite" in nan["diagnostics"][0] and "--dim" in nan["diagnostics"][0]
    assert "compile" not in nan["stage_times"]
    assert nan["info"]["inputs"]["tried"]


def test_shipped_data_sets_and_external_data(outcomes: dict):
    # Static: compiled at test_data_set_0's shapes, runs that set; the set of another
    # batch size is the :dynamic case's, which runs both.
    data = outcomes["onnx-dir/data/model.onnx"]
    assert data["status"] == "pass", data
    inputs = data["info"]["inputs"]
    assert inputs["compiled"] == "static" and inputs["shapes"] == {"x": [2, 4]}, inputs
    assert inputs["rule"] == "the shapes of test_data_set_0", inputs
    assert [Path(d).name for d in inputs["data_sets"]] == ["test_data_set_0"], inputs
    assert [Path(d).name for d in inputs["other_shapes"]] == ["test_data_set_1"], inputs
    assert data["metrics"]["compared_elements"] == 2 * 3, data
    dynamic = outcomes["onnx-dir/data/model.onnx:dynamic"]
    assert dynamic["status"] == "pass", dynamic
    assert (
        dynamic["info"]["inputs"]["compiled"] == "dynamic"
        and "rule" not in dynamic["info"]["inputs"]
    ), dynamic
    assert dynamic["metrics"]["compared_elements"] == 2 * 3 + 3 * 3, dynamic
    assert dynamic["info"]["inputs"]["set_shapes"] == [{"x": [2, 4]}, {"x": [3, 4]}], dynamic
    assert "set_shapes" not in inputs, inputs
    assert outcomes["onnx-dir/ext/model.onnx"]["status"] == "pass"
    missing = outcomes["onnx-dir/ext-missing/model.onnx"]
    assert (missing["status"], missing["stage"]) == ("error", "prepare"), missing
    assert "external data file 'model.onnx.data'" in missing["diagnostics"][0], missing


def test_broken_files_and_specs_are_clear_errors(outcomes: dict, folder: Path):
    corrupt = outcomes["onnx-dir/broken/corrupt.onnx"]
    assert corrupt["status"] == "error" and "not a valid ONNX protobuf" in corrupt["diagnostics"][0]
    bad = outcomes["onnx-dir/badspec/batch.onnx"]
    spec = folder / "badspec" / "batch.inputs.toml"
    assert bad["status"] == "error" and bad["diagnostics"][0].startswith(f"{spec}:4:"), bad
    assert "input 'image'" in bad["diagnostics"][0]


def test_check_model_gives_the_same_verdicts(folder: Path, store: Path, outcomes: dict):
    # The store is warm: the default budget could leave onnxruntime out (docs/speed.md).
    image = check_model(
        folder / "image" / "image.onnx", store, "--timing-runs", "2", "--timing-budget", "full"
    )
    assert image.returncode == 0, image.stdout + image.stderr
    assert "verdict: pass" in image.stdout and "dim H = 224 (image)" in image.stdout
    assert "onnxruntime" in image.stdout and "       run " in image.stdout
    nan = check_model(folder / "nan" / "nan.onnx", store)
    assert (
        nan.returncode == EXIT_UNJUDGED and "verdict: not judged (error at reference" in nan.stdout
    ), nan.stdout
    drop = check_model(folder / "dropout" / "dropout.onnx", store)
    assert drop.returncode == EXIT_UNJUDGED and "Dropout node 'drop'" in drop.stdout, drop.stdout
    corrupt = check_model(folder / "broken" / "corrupt.onnx", store)
    assert corrupt.returncode == 2 and "not a valid ONNX protobuf" in corrupt.stderr
    unknown = check_model(folder / "image" / "image.onnx", store, "--dim", "depth=3")
    assert unknown.returncode == 3 and "dim 'depth'" in unknown.stderr
    assert check_model(folder / "nope.onnx", store).returncode == 2
    badspec = check_model(folder / "badspec" / "batch.onnx", store)
    assert badspec.returncode == 3 and "batch.inputs.toml:4" in badspec.stderr, badspec.stderr
    data = check_model(folder / "data" / "model.onnx", store)
    assert data.returncode == 0 and "verdict: pass" in data.stdout, data.stdout + data.stderr
    assert "(static compile, from test_data_set_0): x 2x4" in data.stdout, data.stdout
    assert "test_data_set_1: other shapes, run as exported (--dynamic)" in data.stdout
    dynamic = check_model(folder / "data" / "model.onnx", store, "--dynamic")
    assert (
        dynamic.returncode == 0
        and "(dynamic compile, from test_data_set_0, test_data_set_1)" in (dynamic.stdout)
    ), dynamic.stdout + dynamic.stderr
