"""ONNX models from --onnx-dir folders: each .onnx file, static and (if symbolic) :dynamic."""

import pytest

SUITE = "onnx_dir"
pytestmark = pytest.mark.onnx_dir


def test_onnx_dir(conformance, conformance_case, conformance_target):
    conformance(conformance_case, conformance_target)
