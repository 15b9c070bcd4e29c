"""onnx's backend test data, as the installed wheel ships it (``onnx/backend/test/data``):
its folder, a model's tolerances (onnx's own loader defaults where its ``data.json`` names
none) and the record of one model in it, which the operator tests and the light models
share."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "BackendModel", "data_tolerances", "wheel_data_dir"]

#: onnx's own defaults (``onnx.backend.test.loader``) when a case names no tolerance.
DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-7


def wheel_data_dir() -> Path:
    """``onnx/backend/test/data`` of the installed onnx wheel."""
    import onnx.backend.test

    return Path(onnx.backend.test.__file__).resolve().parent / "data"


def data_tolerances(case_dir: Path) -> tuple[float, float]:
    """(rtol, atol) of the case folder's ``data.json``, else onnx's defaults."""
    data_json = case_dir / "data.json"
    if not data_json.is_file():
        return DEFAULT_RTOL, DEFAULT_ATOL
    data = json.loads(data_json.read_text())
    return float(data.get("rtol", DEFAULT_RTOL)), float(data.get("atol", DEFAULT_ATOL))


@dataclass(frozen=True)
class BackendModel:
    """A model file of the test data, its tolerances, and its case id (``ID_PREFIX``, a
    subclass's, then its name)."""

    ID_PREFIX: ClassVar[str] = ""

    name: str
    model_path: Path
    rtol: float
    atol: float

    @property
    def case_id(self) -> str:
        return f"{self.ID_PREFIX}{self.name}"
