"""The one table of MLIR element types and numpy dtypes, for every frontend and script
that reads or writes MLIR types (the StableHLO interpreter and lit inputs, the printed
results FileCheck reads, JAX's self-checking text, the StableHLO corpus generator).

An MLIR integer type is signless (``i8``), signed (``si8``) or unsigned (``ui8``); numpy's
``int8`` is written as the signless ``i8``, the spelling StableHLO and IREE print.
"""

from __future__ import annotations

import numpy as np

#: MLIR element type -> numpy dtype name. A dtype's first spelling here is the one
#: ``mlir_element_type`` writes.
ELEMENT_TYPES: dict[str, str] = {
    "i1": "bool",
    "i8": "int8",
    "si8": "int8",
    "ui8": "uint8",
    "i16": "int16",
    "si16": "int16",
    "ui16": "uint16",
    "i32": "int32",
    "si32": "int32",
    "ui32": "uint32",
    "i64": "int64",
    "si64": "int64",
    "ui64": "uint64",
    "f16": "float16",
    "bf16": "bfloat16",  # ml_dtypes' type
    "f32": "float32",
    "f64": "float64",
    "complex<f32>": "complex64",
    "complex<f64>": "complex128",
}

_MLIR_OF_NUMPY: dict[str, str] = {}
for _mlir, _numpy in ELEMENT_TYPES.items():
    _MLIR_OF_NUMPY.setdefault(_numpy, _mlir)


def numpy_dtype(element_type: str) -> np.dtype | None:
    """The numpy dtype of an MLIR element type ("f32" -> float32); None for one this table
    does not hold (or bf16 without ml_dtypes installed)."""
    name = ELEMENT_TYPES.get(element_type)
    if name is None:
        return None
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            return None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def mlir_element_type(dtype: np.dtype | type) -> str | None:
    """The MLIR element type of a numpy dtype (int8 -> "i8"); None for one without."""
    return _MLIR_OF_NUMPY.get(np.dtype(dtype).name)
