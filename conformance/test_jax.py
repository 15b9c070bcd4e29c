"""JAX programs compiled and run by IREE, checked against XLA: conformance/jax and --jax-dir."""

import pytest

SUITE = "jax"
pytestmark = pytest.mark.jax


def test_jax(conformance, conformance_case, conformance_target):
    conformance(conformance_case, conformance_target)
