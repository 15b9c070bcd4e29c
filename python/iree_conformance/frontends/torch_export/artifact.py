"""What an export leaves in the store: the torch-dialect MLIR IREE compiles, the inputs
and torch eager's outputs on them, and what the export recorded (versions, the
preparation). One ``.npz`` payload; bfloat16 arrays ride as their uint16 bits (numpy's
file format has no bfloat16) with their dtype in ``info``. No torch here: the pytest
process reads an export back without importing it."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import numpy as np

from iree_conformance.frontends.mlir_types import numpy_dtype


@dataclasses.dataclass
class Exported:
    text: str  # torch-dialect MLIR, function @main
    inputs: list[np.ndarray]
    expected: list[np.ndarray]
    info: dict[str, Any]

    def to_bytes(self) -> bytes:
        arrays: dict[str, Any] = {}
        dtypes: dict[str, str] = {}
        for prefix, values in (("input_", self.inputs), ("expected_", self.expected)):
            for i, a in enumerate(values):
                key = f"{prefix}{i}"
                if a.dtype.name == "bfloat16":
                    dtypes[key] = "bf16"
                    a = a.view(np.uint16)
                arrays[key] = np.array(a, order="C")  # ascontiguousarray makes a scalar 1-d
        meta = {
            "info": self.info,
            "dtypes": dtypes,
            "counts": [len(self.inputs), len(self.expected)],
        }
        arrays["text"] = np.frombuffer(self.text.encode("utf-8"), dtype=np.uint8)
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> Exported:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            text = z["text"].tobytes().decode("utf-8")
            dtypes = meta["dtypes"]

            def read(key: str) -> np.ndarray:
                a = z[key]
                if key in dtypes:
                    dtype = numpy_dtype(dtypes[key])
                    if dtype is None:
                        raise ValueError("bfloat16 values need ml_dtypes: pip install ml_dtypes")
                    a = a.view(dtype)
                return a

            count_in, count_out = meta["counts"]
            inputs = [read(f"input_{i}") for i in range(count_in)]
            expected = [read(f"expected_{i}") for i in range(count_out)]
        return cls(text, inputs, expected, meta["info"])
