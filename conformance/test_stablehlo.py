"""StableHLO programs: the bundled corpus and any --stablehlo-dir corpus."""

import pytest

SUITE = "stablehlo"
pytestmark = pytest.mark.stablehlo


def test_stablehlo(conformance, conformance_case, conformance_target):
    conformance(conformance_case, conformance_target)
