"""The nine "light" Model Zoo models shipped in the onnx wheel (offline model cases).

``onnx/backend/test/data/light`` holds ``light_<name>.onnx`` and its expected output
``light_<name>_output_0.pb``; ``data/real/test_<name>/data.json`` holds the tolerances.
No input is shipped: onnx's backend test runner (``Runner._add_model_test`` with
``generate_dummy_data(..., random=False)``) feeds each non-initializer float input with
``np.arange(n).reshape(shape) / n`` as float32, where unknown dims count as 1; the
shipped outputs were computed from exactly those inputs, and ``inputs()`` rebuilds them.

Note that the light models carry (almost) all-zero weights: their outputs are the same
for any input (a uniform 0.001 softmax for eight of them, a constant for densenet121).
They check that the architectures import, compile and run, not numerics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import onnx
from onnx import numpy_helper

from iree_conformance.frontends.onnx.backend_data import (
    BackendModel,
    data_tolerances,
    wheel_data_dir,
)
from iree_conformance.frontends.onnx.values import graph_inputs, value_kind

__all__ = ["LightModelCase", "LightModelError", "light_data_dir", "load_light_models"]

CASE_ID_PREFIX = "onnx-models/light_"


class LightModelError(Exception):
    """The wheel's light-model files are missing or unusable."""


def light_data_dir() -> Path:
    """``onnx/backend/test/data`` of the installed onnx wheel."""
    return wheel_data_dir()


def _dummy_input(vi: onnx.ValueInfoProto, model_path: Path) -> np.ndarray:
    """onnx's ``generate_dummy_data(random=False)`` rule, reproduced."""
    if value_kind(vi.type) != "tensor" or vi.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
        raise LightModelError(
            f"{model_path}: input '{vi.name}' is not a float tensor; onnx's light-model "
            f"inputs are defined for float tensors only"
        )
    shape = tuple(
        d.dim_value if d.HasField("dim_value") else 1 for d in vi.type.tensor_type.shape.dim
    )
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


@dataclass(frozen=True)
class LightModelCase(BackendModel):
    """One light model: ``light_<name>.onnx`` with its shipped expected outputs."""

    ID_PREFIX: ClassVar[str] = CASE_ID_PREFIX

    output_paths: tuple[Path, ...]

    def inputs(self) -> list[np.ndarray]:
        """The inputs the shipped outputs were computed from."""
        model = onnx.load(str(self.model_path), load_external_data=False)
        return [_dummy_input(vi, self.model_path) for vi in graph_inputs(model)]

    def expected_outputs(self) -> list[np.ndarray]:
        return [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in self.output_paths]


def load_light_models(data_dir: Path | None = None) -> list[LightModelCase]:
    """All light models of the wheel (or of ``data_dir``), sorted by name."""
    data_dir = light_data_dir() if data_dir is None else Path(data_dir)
    light = data_dir / "light"
    if not light.is_dir():
        raise LightModelError(
            f"{light} does not exist; the installed onnx wheel ships no light models"
        )
    cases = []
    for model_path in sorted(light.glob("light_*.onnx")):
        name = model_path.stem[len("light_") :]
        outputs = []
        i = 0
        while (light / f"light_{name}_output_{i}.pb").is_file():
            outputs.append(light / f"light_{name}_output_{i}.pb")
            i += 1
        if not outputs:
            raise LightModelError(
                f"{model_path}: no expected output light_{name}_output_0.pb next to it"
            )
        rtol, atol = data_tolerances(data_dir / "real" / f"test_{name}")
        cases.append(LightModelCase(name, model_path, rtol, atol, tuple(outputs)))
    return cases
