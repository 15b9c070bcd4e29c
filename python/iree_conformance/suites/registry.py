"""Maps a suite name to the function that collects its cases for a run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..cases import Case


def _stablehlo(session: Any) -> list[Case]:
    from . import stablehlo

    cases = stablehlo.bundled_cases(session.dir / "stablehlo", session.config.getoption("--reference"))
    for root in session.config.getoption("--stablehlo-dir"):
        cases += stablehlo.external_cases(Path(root))
    return cases


def _onnx_ops(session: Any) -> list[Case]:
    from . import onnx_ops

    return onnx_ops.collect(session)


def _onnx_models(session: Any) -> list[Case]:
    from . import onnx_models

    return onnx_models.collect(session)


PROVIDERS: dict[str, Callable[[Any], list[Case]]] = {
    "stablehlo": _stablehlo,
    "onnx_ops": _onnx_ops,
    "onnx_models": _onnx_models,
}


def collect(suite: str, session: Any) -> list[Case]:
    if suite not in PROVIDERS:
        raise KeyError(f"unknown suite {suite!r}; known: {', '.join(PROVIDERS)}")
    return PROVIDERS[suite](session)
