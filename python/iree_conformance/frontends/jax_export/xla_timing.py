"""XLA through ``jax.jit``, as the reference a timing runs beside IREE (cli/bench.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


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
