"""Seeded random inputs for models that ship no data set.

Input specs come from the model's graph inputs (initializers excluded) or from a Model
Zoo manifest's ``io_ports``. The rules, which the same seed always reproduces:

* Shapes: a fixed dimension keeps its size. A symbolic dimension (``dim_param`` such
  as ``"N"`` or ``"unk__492"``) takes its size from ``dim_sizes[name]`` when given,
  otherwise ``default_dim`` (1). A dimension with neither value nor name is
  ``default_dim`` too. Unknown dims are mostly batch or sequence lengths, for which
  1 is always a valid size; models needing more pass ``dim_sizes``.
* Values by element type: floating types uniform in [-1, 1); bool uniform random;
  integer types uniform in [``int_low``, ``int_high``) = [0, 10), which keeps
  index-like inputs (Gather indices, token ids, lengths) inside small valid ranges.
  String and non-tensor inputs raise ``InputGenerationError``.
* Determinism: input ``i`` is drawn from ``numpy.random.default_rng([seed, i])``, so
  one input's values do not depend on the inputs before it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper

from iree_conformance.frontends.onnx.values import graph_inputs, value_kind

__all__ = [
    "DEFAULT_DIM",
    "DEFAULT_SEED",
    "INT_RANGE",
    "InputGenerationError",
    "InputSpec",
    "random_inputs",
    "resolve_shape",
    "specs_from_io_ports",
    "specs_from_model",
]

DEFAULT_DIM = 1
DEFAULT_SEED = 0
INT_RANGE = (0, 10)

Dim = int | str | None

# The manifest writes types as in onnxruntime: "tensor(float)", "tensor(int64)".
_PORT_TYPE = re.compile(r"^tensor\((\w+)\)$")
_PORT_DTYPES: dict[str, int] = {
    "float": onnx.TensorProto.FLOAT,
    "float16": onnx.TensorProto.FLOAT16,
    "double": onnx.TensorProto.DOUBLE,
    "bfloat16": onnx.TensorProto.BFLOAT16,
    "int8": onnx.TensorProto.INT8,
    "int16": onnx.TensorProto.INT16,
    "int32": onnx.TensorProto.INT32,
    "int64": onnx.TensorProto.INT64,
    "uint8": onnx.TensorProto.UINT8,
    "uint16": onnx.TensorProto.UINT16,
    "uint32": onnx.TensorProto.UINT32,
    "uint64": onnx.TensorProto.UINT64,
    "bool": onnx.TensorProto.BOOL,
    "string": onnx.TensorProto.STRING,
}


class InputGenerationError(Exception):
    """An input cannot be generated (non-tensor, string or unknown element type)."""


@dataclass(frozen=True)
class InputSpec:
    """Name, shape (ints for fixed dims, names or None for unknown) and ONNX elem type."""

    name: str
    shape: tuple[Dim, ...]
    elem_type: int


def specs_from_model(model: onnx.ModelProto) -> list[InputSpec]:
    """One spec per graph input that is not an initializer, in graph order."""
    specs = []
    for vi in graph_inputs(model):
        kind = value_kind(vi.type)
        if kind != "tensor":
            raise InputGenerationError(
                f"input '{vi.name}' is a {kind} value; random inputs are only made for tensors"
            )
        tensor_type = vi.type.tensor_type
        shape: list[Dim] = []
        for d in tensor_type.shape.dim:
            if d.HasField("dim_value"):
                shape.append(int(d.dim_value))
            elif d.HasField("dim_param"):
                shape.append(d.dim_param)
            else:
                shape.append(None)
        specs.append(InputSpec(vi.name, tuple(shape), int(tensor_type.elem_type)))
    return specs


def specs_from_io_ports(ports: Sequence[Mapping[str, Any]]) -> list[InputSpec]:
    """Specs from a zoo manifest's ``io_ports["inputs"]`` entries (name, shape, type)."""
    specs = []
    for port in ports:
        name = port.get("name", "?")
        match = _PORT_TYPE.match(str(port.get("type", "")))
        if not match or match.group(1) not in _PORT_DTYPES:
            raise InputGenerationError(
                f"input '{name}' has type {port.get('type')!r}; random inputs are only made "
                f"for tensor({'|'.join(_PORT_DTYPES)})"
            )
        shape = tuple(d if isinstance(d, (int, str)) else None for d in port.get("shape", []))
        specs.append(InputSpec(name, shape, _PORT_DTYPES[match.group(1)]))
    return specs


def resolve_shape(
    spec: InputSpec, dim_sizes: Mapping[str, int] | None = None, default_dim: int = DEFAULT_DIM
) -> tuple[int, ...]:
    """Concrete shape by the module's rule: fixed dims, then ``dim_sizes``, then default."""
    sizes = dim_sizes or {}
    shape = []
    for d in spec.shape:
        if isinstance(d, int) and d > 0:
            shape.append(d)
        elif isinstance(d, int) and d == 0:
            shape.append(0)  # a real zero-size dimension
        elif isinstance(d, str) and d in sizes:
            shape.append(int(sizes[d]))
        else:
            shape.append(default_dim)
    return tuple(shape)


def _values(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    elem_type: int,
    name: str,
    int_range: tuple[int, int],
) -> np.ndarray:
    if elem_type == onnx.TensorProto.STRING:
        raise InputGenerationError(f"input '{name}' is a string tensor; no random inputs for it")
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception as e:
        raise InputGenerationError(
            f"input '{name}' has ONNX element type {elem_type}, which has no numpy dtype"
        ) from e
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(int_range[0], int_range[1], size=shape).astype(dtype)
    # float16/32/64 and the ml_dtypes float types (bfloat16, float8) alike.
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(dtype)


def random_inputs(
    specs: Sequence[InputSpec],
    *,
    seed: int = DEFAULT_SEED,
    dim_sizes: Mapping[str, int] | None = None,
    default_dim: int = DEFAULT_DIM,
    int_range: tuple[int, int] = INT_RANGE,
) -> list[np.ndarray]:
    """One array per spec, by the rules in this module's docstring."""
    arrays = []
    for i, spec in enumerate(specs):
        rng = np.random.default_rng([seed, i])
        shape = resolve_shape(spec, dim_sizes, default_dim)
        arrays.append(_values(rng, shape, spec.elem_type, spec.name, int_range))
    return arrays
