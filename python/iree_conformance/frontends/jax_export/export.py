"""Exports one JaxCase: its StableHLO, XLA's outputs on the CPU, and the self-checking text.

The only module of the package that imports JAX, and only when called.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iree_conformance.common.dist_versions import dist_versions
from iree_conformance.frontends.jax_export.mlir_text import (
    CheckTolerance,
    check_function,
    self_checking_module,
)
from iree_conformance.frontends.jax_export.spec import JaxCase


class ExportError(Exception):
    """The case could not be exported or run by XLA; the message says why."""


def versions() -> dict[str, str | None]:
    """The versions an export depends on (None: not installed)."""
    return dist_versions(("jax", "jaxlib", "flax", "numpy", "ml_dtypes"))


def export_case(case: JaxCase, case_id: str) -> str:
    """The self-checking StableHLO text of the case: JAX's ``@main`` plus ``@check_xla``,
    which calls it on the case's inputs and checks XLA's outputs."""
    import jax

    cpu = jax.devices("cpu")[0]
    try:
        with jax.default_device(cpu):
            # Uncommitted arrays (not device_put): committed ones would bring Shardy
            # sharding annotations (sdy.mesh), which IREE does not know.
            args = jax.tree_util.tree_map(lambda x: jax.numpy.asarray(np.asarray(x)), case.args)
            lowered = jax.jit(case.function(), keep_unused=True).lower(*args)
            exported = lowered.as_text()
            outputs = jax.tree_util.tree_leaves(lowered.compile()(*args))
    except Exception as e:  # noqa: BLE001 - any failure of the user's function is the case's
        raise ExportError(f"{type(e).__name__}: {_first_lines(str(e))}") from None
    inputs = [_array(x) for x in jax.tree_util.tree_leaves(args)]
    expected = [_array(x) for x in outputs]
    try:
        check = check_function(inputs, expected, CheckTolerance(case.rtol, case.atol))
    except ValueError as e:
        raise ExportError(str(e)) from None
    v = versions()
    header = [
        f"{case_id}: exported by iree-conformance export-jax with jax {v['jax']}, jaxlib {v['jaxlib']}.",
        f"@{'check_xla'} calls @main on the case's inputs and checks XLA's outputs (CPU).",
    ]
    if case.description:
        header.insert(1, case.description)
    return self_checking_module(exported, check, header)


def _array(value: Any) -> np.ndarray:
    return np.asarray(value)


def _first_lines(text: str, count: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[:count])
