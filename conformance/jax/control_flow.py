"""lax control flow: loops and branches become stablehlo.while, case and if."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from iree_conformance.frontends.jax_export import case

rng = np.random.default_rng(1)


@case(rng.standard_normal((4, 4)).astype(np.float32))
def fori_loop(x):
    """lax.fori_loop: ten steps of x <- tanh(x @ x^T / 4 + i)."""
    return lax.fori_loop(0, 10, lambda i, v: jnp.tanh(v @ v.T / 4 + i), x)


@case(np.int32(2), rng.standard_normal(5).astype(np.float32))
def switch(index, x):
    """lax.switch over three branches, chosen by a runtime index."""
    branches = [lambda v: v + 1, lambda v: jnp.sin(v), lambda v: v * v - 2]
    return lax.switch(index, branches, x)


@case(np.float32(-0.5), rng.standard_normal(5).astype(np.float32))
def cond(pred_value, x):
    """lax.cond on a runtime predicate."""
    return lax.cond(pred_value > 0, lambda v: jnp.exp(v), lambda v: -v, x)


@case(np.float32(1.0))
def while_loop(x):
    """lax.while_loop with a data-dependent trip count (doubling until past 1000)."""
    return lax.while_loop(lambda c: c[0] < 1000.0, lambda c: (c[0] * 2.0, c[1] + 1), (x, 0))


@case(rng.standard_normal((6, 3)).astype(np.float32))
def scan_cumulative(xs):
    """lax.scan carrying a running sum and emitting a running maximum."""

    def step(carry, x):
        total, best = carry
        total = total + x
        best = jnp.maximum(best, total)
        return (total, best), best

    return lax.scan(step, (jnp.zeros(3), jnp.full(3, -jnp.inf)), xs)


@case(rng.standard_normal((3, 5)).astype(np.float32))
def map_rows(x):
    """lax.map of a per-row softmax."""
    return lax.map(jax.nn.softmax, x)
