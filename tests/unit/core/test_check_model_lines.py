"""check-model's lines about the opset conversion, guessed dims and comparison rules."""

from iree_conformance.cli.check_model import guessed_dim_lines, opset_lines, rule_lines


def test_opset_conversion_names_the_import_option():
    assert opset_lines({"opset_from": 17, "opset_to": 17}, "m.onnx") == []
    assert opset_lines({}, "m.onnx") == []
    head, how = opset_lines({"opset_from": 11, "opset_to": 17}, "d/m.onnx")
    assert "opset 11 was converted to 17" in head
    assert how.strip() == "to reproduce: iree-import-onnx d/m.onnx --opset-version 17 -o model.mlir"


def test_guessed_dims_say_how_to_pin_named_and_unnamed_dims():
    info = {
        "inputs": {
            "shapes": {"x": [1, 3, 320, 320], "wav": [1, 512]},
            "dims": {
                "x[2]": {"size": 320, "rule": "image"},
                "samples": {"size": 512, "rule": "sequence"},
                "given": {"size": 7, "rule": "spec"},
            },
        }
    }
    listed, pin = guessed_dim_lines(info, "dir/m.onnx")
    assert "x[2] = 320 (image rule)" in listed and "samples = 512 (sequence rule)" in listed
    assert "given" not in listed
    assert "--dim samples=SIZE" in pin and "--input-shape x=1x3x320x320" in pin
    assert "m.inputs.toml" in pin and "[dims] samples = SIZE" in pin
    assert guessed_dim_lines({"inputs": {"dims": {"n": {"size": 2, "rule": "spec"}}}}, "m") == []


def test_rule_lines_name_each_outputs_rule():
    metrics = {
        "outputs": [
            {"rule": "quantization-grid", "grid": "<= 2 steps of 0.01", "max_grid_steps": 1.0},
            {"rule": "exact"},
        ],
        "rel_error_scope": "elements with |expected| > atol (0.0001)",
        "compared_elements": 4,
        "max_abs_error": 0.01,
        "max_rel_error": 0.5,
    }
    lines = rule_lines(metrics)
    assert lines[0] == (
        "output 0: judged by the quantization-grid rule: <= 2 steps of 0.01 (found 1 steps apart)"
    )
    assert lines[1] == "output 1: judged by the exact rule"
    assert "rel over elements with |expected| > atol (0.0001)" in lines[2]
