"""The report names the models that were upgraded to opset 17 before import."""

from iree_conformance.report.markdown import render_markdown


def _outcome(case_id: str, info: dict) -> dict:
    return {
        "case_id": case_id,
        "suite": "onnx_dir",
        "target": "llvm-cpu",
        "stage": "compare",
        "status": "pass",
        "verdict": "pass",
        "info": info,
    }


def test_report_lists_opset_conversions_with_the_import_option():
    data = {
        "schema": 1,
        "metadata": {"targets": ["llvm-cpu"]},
        "outcomes": [
            _outcome("onnx-dir/old.onnx", {"opset_from": 13, "opset_to": 17}),
            _outcome("onnx-dir/new.onnx", {"opset_from": 17, "opset_to": 17}),
            _outcome("onnx-dir/none.onnx", {}),
        ],
    }
    text = render_markdown(data)
    assert "### Converted to a newer opset before import (1; 0 fail without it)" in text
    assert "- `onnx-dir/old.onnx` (llvm-cpu): opset 13 -> 17, pass" in text
    assert "--opset-version N" in text and "new.onnx` (llvm-cpu): opset" not in text
