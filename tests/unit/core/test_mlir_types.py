"""The one MLIR element type <-> numpy dtype table (frontends/mlir_types.py), and its users."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from iree_conformance.frontends.mlir_types import ELEMENT_TYPES, mlir_element_type, numpy_dtype

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("element_type", sorted(ELEMENT_TYPES))
def test_every_type_round_trips_to_its_canonical_spelling(element_type):
    dtype = numpy_dtype(element_type)
    assert dtype is not None and dtype.name == ELEMENT_TYPES[element_type]
    canonical = mlir_element_type(dtype)
    assert numpy_dtype(canonical) == dtype
    # numpy's integers are written signless: int8 -> i8, never si8.
    assert not canonical.startswith("si")


def test_spellings():
    assert mlir_element_type(np.int8) == "i8" and mlir_element_type(np.uint16) == "ui16"
    assert mlir_element_type(np.bool_) == "i1" and mlir_element_type(np.complex64) == "complex<f32>"
    assert numpy_dtype("si32") == np.int32 and numpy_dtype("bf16").name == "bfloat16"
    assert numpy_dtype("f8E4M3") is None and mlir_element_type(np.dtype("datetime64[s]")) is None


def test_the_users_read_the_one_table():
    from iree_conformance.frontends.jax_export.mlir_text import tensor_type
    from iree_conformance.frontends.stablehlo.iree_output import format_buffer_view
    from iree_conformance.frontends.stablehlo.lit_runs import parse_input

    for element_type in ("i8", "ui32", "f16", "f64", "i1"):
        value = parse_input(f"2x{element_type}")
        assert value.dtype == numpy_dtype(element_type)
        assert tensor_type(value) == f"tensor<2x{element_type}>"
        assert format_buffer_view(value).startswith(f"2x{element_type}=")


def test_no_other_table():
    """A second table would be a line that maps a spelling to a dtype, e.g.
    ``"f32": np.float32`` or ``"float32": "f32"``."""
    pattern = re.compile(r'"(?:f32|float32)":\s*(?:np\.float32|"f32"|"float32")')
    own = REPO / "python" / "iree_conformance" / "frontends" / "mlir_types.py"
    found = [
        str(path.relative_to(REPO))
        for folder in ("python", "conformance", "benchmarks", "ci", "devtools")
        for path in (REPO / folder).rglob("*.py")
        if path != own and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
