"""The shape rule, integer roles, static shapes and chosen inputs, on small models of
each kind of symbolic dim (tests/support/symbolic_models.py), checked with onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from iree_conformance.frontends.onnx.inputs import InputSpec, specs_from_model
from iree_conformance.frontends.onnx.integer_roles import integer_roles
from iree_conformance.frontends.onnx.model_inputs import choose_inputs, degenerate
from iree_conformance.frontends.onnx.reference import run_onnxruntime
from iree_conformance.frontends.onnx.shape_policy import CANDIDATES, plan_shapes
from iree_conformance.frontends.onnx.specs import from_command_line, load_toml_spec_text
from iree_conformance.frontends.onnx.static_shapes import StaticShapeError, fix_input_shapes
from tests.support import symbolic_models as sm


def choose(model: onnx.ModelProto, spec=None):
    return choose_inputs(model, specs_from_model(model), spec)


# -- the rule -----------------------------------------------------------------------------
def test_rule_names_each_kind_of_dim():
    specs = [
        InputSpec("image", ("N", 3, "H", "W"), onnx.TensorProto.FLOAT),
        InputSpec("nhwc", (1, "h", "w", 3), onnx.TensorProto.FLOAT),
        InputSpec("tokens", ("N", "T"), onnx.TensorProto.INT64),
        InputSpec("feat", ("N", "T", 80), onnx.TensorProto.FLOAT),
        InputSpec("odd", (2, None, 5, "k"), onnx.TensorProto.FLOAT),
    ]
    plan = plan_shapes(specs)
    rules = {k: d.rule for k, d in plan.dims.items()}
    # N is shared: one dim, its rule the first input's.
    assert rules == {
        "N": "batch",
        "H": "image",
        "W": "image",
        "h": "image",
        "w": "image",
        "T": "sequence",
        "odd[1]": "other",
        "k": "other",
    }
    first = plan.shapes(plan.trials()[0])
    assert first["image"] == (1, 3, 224, 224) and first["nhwc"] == (1, 224, 224, 3)
    assert first["tokens"] == (1, 128) and first["feat"] == (1, 128, 80)
    assert first["odd"] == (2, 16, 5, 16)


def test_trials_move_one_dim_at_a_time_then_all():
    plan = plan_shapes([InputSpec("x", (1, 3, "H", "W"), onnx.TensorProto.FLOAT)])
    trials = [(t["H"], t["W"]) for t in plan.trials()]
    image = CANDIDATES["image"]
    assert trials[0] == (image[0], image[0])
    assert (48, 224) in trials and trials.index((48, 224)) < trials.index((48, 48))
    assert len(trials) == len(set(trials)) <= 12


def test_unnamed_question_mark_dims_are_separate():
    plan = plan_shapes([InputSpec("x", ("?", 3, "?", "?"), onnx.TensorProto.FLOAT)])
    assert set(plan.dims) == {"x[0]", "x[2]", "x[3]"}


def test_spec_dims_and_shapes_win_and_are_checked():
    specs = [InputSpec("x", ("N", 3, "H", "W"), onnx.TensorProto.FLOAT)]
    plan = plan_shapes(specs, from_command_line([("H", 64)]))
    assert plan.dims["H"].rule == "spec" and plan.shapes(plan.trials()[0])["x"] == (1, 3, 64, 224)
    plan = plan_shapes(specs, from_command_line(shapes=[("x", (2, 3, 8, 9))]))
    assert plan.trials() == [{"N": 2, "H": 8, "W": 9}]
    with pytest.raises(ValueError, match="size 3 at axis 1"):
        plan_shapes(specs, from_command_line(shapes=[("x", (1, 4, 8, 8))]))
    with pytest.raises(ValueError, match="rank 4"):
        plan_shapes(specs, from_command_line(shapes=[("x", (1, 3, 8))]))


# -- chosen inputs, checked with onnxruntime ------------------------------------------------
def test_batch_and_image_models_get_realistic_shapes():
    chosen = choose(sm.batch_model())
    assert chosen.shapes == {"x": (1, 4)} and chosen.info["dims"] == {
        "N": {"size": 1, "rule": "batch"}
    }
    chosen = choose(sm.image_model())
    assert chosen.shapes == {"x": (1, 3, 224, 224)} and chosen.problem is None
    assert chosen.reference is not None and chosen.reference[0].shape == (1, 4, 1, 1)
    assert chosen.info["seed"] == 0 and chosen.info["values"]["x"] == "uniform in [-1, 1)"


def test_text_line_model_finds_the_height_that_onnxruntime_accepts():
    chosen = choose(sm.text_line_model())
    assert chosen.shapes == {"x": (1, 3, 48, 224)}, chosen.info
    # The rejected trials are recorded with onnxruntime's reason.
    assert [t["shapes"]["x"][2] for t in chosen.info["tried"]] == [224, 320]
    assert all("onnxruntime failed" in t["why"] for t in chosen.info["tried"])


def test_embedding_indices_stay_inside_the_table():
    roles = integer_roles(sm.embedding_model())
    assert roles["ids"].kind == "index" and roles["ids"].high == 100
    chosen = choose(sm.embedding_model())
    ids = chosen.arrays[0]
    assert ids.shape == (1, 128) and ids.max() >= 10 and ids.max() < 100 and ids.min() >= 0
    assert chosen.info["values"]["ids"].startswith("index in [0, 100)")
    assert chosen.unjudged is None


def test_shape_feeding_and_scalar_inputs_are_no_verdict_without_a_spec():
    assert integer_roles(sm.reshape_model())["shape"].kind == "shape"
    assert integer_roles(sm.scalar_model())["sr"].kind == "scalar"
    chosen = choose(sm.scalar_model())
    assert chosen.reference is not None and chosen.unjudged and "sr" in chosen.unjudged
    assert "value = ..." in chosen.info["unjudged"]["sr"]
    # The spec's constant makes it a verdict, and the Outcome says why.
    spec = load_toml_spec_text('[inputs.sr]\nvalue = 16000\nreason = "sample rate"\n', "s.toml")
    chosen = choose(sm.scalar_model(), spec)
    assert chosen.unjudged is None and int(chosen.arrays[1]) == 16000
    assert chosen.info["values"]["sr"] == "spec: constant 16000 (sample rate)"
    assert chosen.info["spec"]["sources"] == ["s.toml"]
    # A reshape target that onnxruntime rejects gives no reference: a problem naming it.
    chosen = choose(sm.reshape_model())
    assert chosen.problem and "shape" in chosen.problem and "value = ..." in chosen.problem


def test_degenerate_reference_is_a_problem_that_says_what_to_specify():
    chosen = choose(sm.nan_model())
    assert chosen.reference is None and chosen.problem
    assert "non-finite" in chosen.problem and "--dim" in chosen.problem
    assert degenerate([np.zeros((0, 3))]) == "every output is empty"
    assert degenerate([np.zeros((0, 3)), np.ones(2)]) is None
    assert "non-finite" in degenerate([np.array([1.0, np.inf])])


def test_values_spec_range_and_distribution():
    spec = load_toml_spec_text(
        '[inputs.x]\nrange = [0.0, 255.0]\ndistribution = "normal"\n', "s.toml"
    )
    chosen = choose(sm.image_model(), spec)
    x = chosen.arrays[0]
    assert x.min() >= 0 and x.max() <= 255 and 100 < x.mean() < 155
    assert chosen.info["values"]["x"] == "spec: normal in [0, 255)"


# -- static shapes --------------------------------------------------------------------------
def test_fixed_model_computes_what_the_symbolic_one_does():
    model = sm.image_model()
    chosen = choose(model)
    fixed = fix_input_shapes(model, chosen.shapes)
    dims = fixed.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_value for d in dims] == [1, 3, 224, 224]
    assert not any(
        d.HasField("dim_param") for d in fixed.graph.output[0].type.tensor_type.shape.dim
    )
    np.testing.assert_allclose(run_onnxruntime(fixed, chosen.arrays)[0], chosen.reference[0])


def test_fixing_refuses_what_does_not_fit():
    model = sm.image_model()
    with pytest.raises(StaticShapeError, match="rank 4"):
        fix_input_shapes(model, {"x": [1, 3, 8]})
    with pytest.raises(StaticShapeError, match="fixed size 3"):
        fix_input_shapes(model, {"x": [1, 4, 8, 8]})
    with pytest.raises(StaticShapeError, match="no graph input"):
        fix_input_shapes(model, {"y": [1]})
    # -1 is how some exporters write an unknown dim: it is fixed like a symbolic one.
    model.graph.input[0].type.tensor_type.shape.dim[0].Clear()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -1
    fixed = fix_input_shapes(model, {"x": [1, 3, 8, 8]})
    assert fixed.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1


# -- element types and other domains ------------------------------------------------------
def _unary(op: str, elem: int, domain: str = "", opsets=(("", 17),)) -> onnx.ModelProto:
    from onnx import helper

    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], domain=domain)],
        op.lower(),
        [helper.make_tensor_value_info("x", elem, ["N", 8])],
        [helper.make_tensor_value_info("y", elem, ["N", 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    return model


def test_float16_runs_and_bfloat16_without_a_kernel_is_a_skip_naming_the_op():
    half = choose(_unary("Relu", onnx.TensorProto.FLOAT16))
    assert half.arrays[0].dtype == np.float16 and half.reference[0].dtype == np.float16
    brain = choose(_unary("Erf", onnx.TensorProto.BFLOAT16))
    assert brain.skip and "Erf" in brain.skip and "no kernel" in brain.skip, brain


def test_other_domains_run_or_skip_naming_the_op():
    gelu = choose(
        _unary("Gelu", onnx.TensorProto.FLOAT, "com.microsoft", (("", 17), ("com.microsoft", 1)))
    )
    assert gelu.problem is None and gelu.skip is None and gelu.reference is not None
    unknown = choose(
        _unary("Frobnicate", onnx.TensorProto.FLOAT, "com.example", (("", 17), ("com.example", 1)))
    )
    assert unknown.skip and "Frobnicate" in unknown.skip, unknown


def test_string_inputs_are_an_error_that_says_so():
    from iree_conformance.frontends.onnx.inputs import InputGenerationError

    with pytest.raises(InputGenerationError, match="string tensor"):
        choose(_unary("Identity", onnx.TensorProto.STRING))


# -- what the graph says ---------------------------------------------------------------------
def test_a_symbolic_channel_dim_is_read_from_the_first_conv():
    chosen = choose(sm.symbolic_channels_model())
    assert chosen.problem is None and chosen.shapes == {"x": (1, 3, 224, 224)}, chosen.info
    dim = chosen.info["dims"]["num_channels"]
    assert dim["size"] == 3 and dim["rule"] == "graph" and "'w' (4x3x3x3)" in dim["why"]
    assert chosen.info["dims"]["height"]["rule"] == "image"


def test_a_sequence_fits_the_position_embeddings_and_masks_are_0_and_1():
    chosen = choose(sm.positions_model(77))
    assert chosen.problem is None and chosen.shapes["ids"] == (1, 77), chosen.info
    dim = chosen.info["dims"]["sequence"]
    assert dim["size"] == 77 and "'position_embedding' (77x8) have 77 rows" in dim["why"]
    mask = chosen.arrays[1]
    assert set(np.unique(mask)) <= {0, 1} and mask[0, 0] == 1 and mask.sum() >= 39
    assert (np.diff(mask[0]) <= 0).all()  # 1 then 0: padding at the end
    assert chosen.info["values"]["attention_mask"].startswith("a padding mask of 1 then 0")
    # 512 positions: the default 128 fits and stays; 512 is tried, nothing over it.
    plan_dims = choose(sm.positions_model(512)).info["dims"]["sequence"]
    assert plan_dims == {"size": 128, "rule": "sequence"}


def test_a_shape_that_cannot_be_found_names_the_exact_dims_to_give():
    chosen = choose(sm.nan_model())
    assert "--dim N=1" in chosen.problem and "--input-shape" in chosen.problem
    specs = [InputSpec("x", ("N", 5, "H", "k"), onnx.TensorProto.FLOAT)]
    from iree_conformance.frontends.onnx.model_inputs import dim_options

    assert dim_options(plan_shapes(specs)) == "--dim N=1 --dim H=SIZE --dim k=SIZE"


def test_a_channel_dim_given_with_dim_makes_the_others_image_dims():
    specs = [InputSpec("x", ("batch", "num_channels", "height", "width"), onnx.TensorProto.FLOAT)]
    plan = plan_shapes(specs, from_command_line([("num_channels", 3)]))
    assert {k: d.rule for k, d in plan.dims.items()} == {
        "batch": "batch",
        "num_channels": "spec",
        "height": "image",
        "width": "image",
    }


def test_a_dropout_in_training_mode_is_no_verdict_and_says_to_export_in_eval_mode():
    # onnxruntime drops a random part on each run: two runs of the reference differ, and
    # IREE's run, whatever it gives, would be blamed on IREE (issue 55, a dynamo export).
    model = sm.dropout_model(training=True)
    chosen = choose(model)
    assert chosen.problem is None and chosen.reference is not None
    assert chosen.unjudged is not None
    assert "Dropout node 'drop' runs in training mode" in chosen.unjudged
    assert "model.eval()" in chosen.unjudged and chosen.info["random"] == chosen.unjudged
    # Inference mode, or a ratio of 0, is the identity: a verdict as usual.
    for other in (sm.dropout_model(training=False), sm.dropout_model(True, ratio=0.0)):
        chosen = choose(other)
        assert chosen.unjudged is None and "random" not in chosen.info
