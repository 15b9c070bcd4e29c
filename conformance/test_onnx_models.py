"""ONNX Model Zoo models: the light models shipped with onnx, and zoo models by manifest."""

import pytest

SUITE = "onnx_models"
pytestmark = pytest.mark.onnx_models


def test_onnx_models(conformance, conformance_case, conformance_target):
    conformance(conformance_case, conformance_target)
