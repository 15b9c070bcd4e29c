"""IREE's tools at their defaults beside the documented flow (frontends/onnx/bare_defaults.py)
and the steps the harness takes beyond the file as given (model/preparation.py)."""

from __future__ import annotations

from iree_conformance.cli.check_model import preparation_lines
from iree_conformance.frontends.onnx import bare_defaults
from iree_conformance.frontends.onnx.prepare import prepare_model
from iree_conformance.model.preparation import bare_defaults_line, preparation_steps
from iree_conformance.report import markdown
from tests.support.symbolic_models import legacy_greater_or_equal_model


def test_an_opset_14_greater_or_equal_fails_at_defaults_and_passes_upgraded():
    model = legacy_greater_or_equal_model(14)
    bare = bare_defaults.check(model)
    assert bare["opset"] == 14 and bare["fails_at"] == "compile", bare
    assert bare["first_line"].startswith("error: failed to legalize operation 'torch.operator'")
    assert "onnx.GreaterOrEqual" in bare["first_line"]
    prepared = prepare_model(model)
    assert prepared.upgraded and bare_defaults.check(prepared.model) == {
        "opset": 17,
        "passes": True,
    }


INFO = {
    "opset_from": 14,
    "opset_to": 17,
    "inputs": {"compiled": "static", "dims": {"batch": {"size": 1}, "sequence": {"size": 77}}},
    "f64_kept": True,
    "bare_defaults": {"opset": 14, "fails_at": "compile", "first_line": "error: boom"},
}


def test_each_step_beyond_the_file_is_named_and_the_bare_failure_said():
    assert preparation_steps(INFO) == [
        "opset 14 upgraded to 17 (IREE's documented flow: iree-import-onnx --opset-version 17)",
        "dims fixed: batch=1, sequence=77 (the model as exported is the :dynamic case)",
        "float64 kept (--iree-input-demote-f64-to-f32=false, as IREE's ONNX CI)",
    ]
    # No upgrade where the opset was 17 already, no dims for a dynamic compile.
    assert (
        preparation_steps({"opset_from": 17, "opset_to": 17, "inputs": {"compiled": "dynamic"}})
        == []
    )
    line = bare_defaults_line(INFO)
    assert line and "opset 14) fail at compile: error: boom" in line and "IREE bug" in line
    assert bare_defaults_line({"bare_defaults": {"opset": 14, "passes": True}}) is None
    assert preparation_lines(INFO) == [f"bare defaults: {line}"]  # IREE never ran: no steps
    lines = preparation_lines({**INFO, "preparation": preparation_steps(INFO)})
    assert lines[0].startswith("harness: dims fixed") and lines[-1].startswith("bare defaults: ")


def test_the_report_says_which_conversions_were_needed():
    outcomes = [
        {"case_id": "a", "target": "t", "verdict": "pass", "info": INFO},
        {
            "case_id": "b",
            "target": "t",
            "verdict": "pass",
            "info": {"opset_from": 9, "opset_to": 17},
        },
    ]
    text = "\n".join(markdown.opset_conversion_lines(outcomes))
    assert "### Converted to a newer opset before import (2; 1 fail without it)" in text
    assert "`a` (t): opset 14 -> 17, pass; without it, fails at compile: " in text
    assert "`b` (t): opset 9 -> 17, pass\n" in text + "\n"


def _import(model, options):
    from iree_conformance.frontends.base import ImportContext
    from iree_conformance.frontends.onnx.frontend import OnnxFrontend
    from iree_conformance.model.jobs import Program

    program = Program("onnx-dir/m.onnx", "onnx", import_options=options)
    context = ImportContext(lambda stage: None, lambda: None, lambda: "")
    text, meta = OnnxFrontend().prepare_and_import(program, model.SerializeToString(), context)
    return text.decode(), meta


def test_the_frontend_records_the_bare_check_only_for_an_upgraded_users_model():
    from iree_conformance.model.jobs import BARE_CHECK_OPTION

    _, meta = _import(legacy_greater_or_equal_model(14), {BARE_CHECK_OPTION: True})
    assert meta["opset_from"] == 14 and meta["bare_defaults"]["fails_at"] == "compile"
    _, meta = _import(legacy_greater_or_equal_model(14), {})  # not a user's model
    assert "bare_defaults" not in meta
    _, meta = _import(legacy_greater_or_equal_model(17), {BARE_CHECK_OPTION: True})
    assert "bare_defaults" not in meta  # nothing was upgraded


def test_the_frontend_fixes_every_named_dim_for_the_other_preparation():
    from iree_conformance.frontends.onnx.static_shapes import EVERY_DIM_OPTION, STATIC_OPTION
    from tests.support.symbolic_models import symbolic_channels_model

    model = symbolic_channels_model()
    sizes = {"batch": 1, "num_channels": 3, "height": 8, "width": 8}
    text, _ = _import(model, {STATIC_OPTION: {"x": [1, 3, 8, 8]}, EVERY_DIM_OPTION: sizes})
    assert "!torch.vtensor<[1,3,8,8],f32>" in text and "[1,4,1,1]" in text and "?" not in text
