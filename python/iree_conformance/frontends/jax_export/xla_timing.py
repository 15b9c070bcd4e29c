"""XLA through ``jax.jit``, as the reference a timing runs beside IREE: the seed's softmax
(cli/bench.py) and a JAX case's own function (``--benchmark`` on the jax suite)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.frontends.base import TimingReference

#: Separates the case file from the case's name in a job's ``timed_reference``.
SEPARATOR = "::"


def case_reference(reference: str) -> TimingReference:
    """XLA's call of the JAX case ``FILE::NAME``, jitted, compiled and warm, on its
    arguments already on the CPU device (as the export ran it), and IREE's ``main`` on
    the same arguments. Raises ValueError for a reference that names no case."""
    import jax

    from iree_conformance.frontends.jax_export.tree import load_cases

    path, sep, name = reference.rpartition(SEPARATOR)
    if not sep or not path or not name:
        raise ValueError(f"not a JAX case reference (FILE{SEPARATOR}NAME): {reference!r}")
    cases = {c.name: c for c in load_cases(Path(path))}
    if name not in cases:
        raise ValueError(f"{path}: no case named {name!r}")
    case = cases[name]
    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        # As the export made them (export.export_case): the exported main's parameters
        # are these arrays' leaves, with JAX's dtypes (a Python float is f32 there).
        args = jax.tree_util.tree_map(lambda x: jax.numpy.asarray(np.asarray(x)), case.args)
        leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(args)]
        compiled = jax.jit(case.function(), keep_unused=True).lower(*args).compile()
    call = lambda: jax.block_until_ready(compiled(*args))  # noqa: E731
    info = {
        "version": jax.__version__,
        "settings": {"device": str(cpu), "jit": "jax.jit(keep_unused=True), compiled ahead"},
    }
    return TimingReference("xla", info, call, entry="main", inputs=leaves)


def xla_softmax() -> tuple[Callable[[Any], Any], Callable[[np.ndarray], Any]] | None:
    """(the seed's softmax jitted, blocking until its result is ready; put-on-device), or
    None without jax."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    fn = jax.jit(lambda x: jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True))
    return (lambda x: fn(x).block_until_ready()), jax.device_put
