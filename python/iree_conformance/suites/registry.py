"""Maps a suite name to the function that collects its cases for a run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..cases import Case

if TYPE_CHECKING:
    from ..run_options import RunOptions


def _stablehlo(conformance_dir: Path, options: RunOptions) -> list[Case]:
    from . import stablehlo

    cases = stablehlo.bundled_cases(conformance_dir / "stablehlo", options.reference)
    for root in options.stablehlo_dirs:
        cases += stablehlo.external_cases(Path(root))
    return cases


def _onnx_ops(conformance_dir: Path, options: RunOptions) -> list[Case]:
    from . import onnx_ops

    return onnx_ops.collect(options)


def _onnx_models(conformance_dir: Path, options: RunOptions) -> list[Case]:
    from . import onnx_models

    return onnx_models.collect(options)


def _jax(conformance_dir: Path, options: RunOptions) -> list[Case]:
    from . import jax

    return jax.collect(conformance_dir, options)


PROVIDERS: dict[str, Callable[[Path, RunOptions], list[Case]]] = {
    "stablehlo": _stablehlo,
    "onnx_ops": _onnx_ops,
    "onnx_models": _onnx_models,
    "jax": _jax,
}


def collect(suite: str, conformance_dir: Path, options: RunOptions) -> list[Case]:
    """The cases of suite: conformance_dir is the folder of the suites (bundled corpora)."""
    if suite not in PROVIDERS:
        raise KeyError(f"unknown suite {suite!r}; known: {', '.join(PROVIDERS)}")
    return PROVIDERS[suite](conformance_dir, options)
