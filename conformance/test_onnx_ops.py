"""The ONNX backend operator tests, against their shipped expected outputs."""

import pytest

SUITE = "onnx_ops"
pytestmark = pytest.mark.onnx_ops


def test_onnx_ops(conformance, conformance_case, conformance_target):
    conformance(conformance_case, conformance_target)
