"""Array operations that lower to StableHLO's less common ops: scatter, sort, top_k, conv."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from iree_conformance.frontends.jax_export import case

rng = np.random.default_rng(2)


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@case(normal(6, 3), np.array([0, 2, 2, 5], np.int32), normal(4, 3))
def scatter_add(x, idx, updates):
    """x.at[idx].add(updates), with a repeated index (updates accumulate)."""
    return x.at[idx].add(updates)


@case(normal(8), np.array([1, 1, 7], np.int32))
def scatter_set_max(x, idx):
    """x.at[idx].set(...) and x.at[idx].max(...)."""
    return x.at[idx].set(-1.0), x.at[idx].max(jnp.array([0.5, 2.0, 3.0]))


@case(normal(5, 6), normal(2, 3), np.int32(3), np.int32(1))
def dynamic_update_slice(x, update, row, col):
    """lax.dynamic_update_slice at runtime offsets, and dynamic_slice back."""
    y = lax.dynamic_update_slice(x, update, (row, col))
    return y, lax.dynamic_slice(y, (row - 1, col), (3, 3))


@case(normal(4, 7))
def sort(x):
    """jnp.sort along both axes."""
    return jnp.sort(x, axis=-1), jnp.sort(x, axis=0)


@case(normal(3, 9))
def argsort(x):
    """jnp.argsort (a stable sort with an iota operand)."""
    return jnp.argsort(x, axis=-1)


@case(normal(3, 10))
def top_k(x):
    """lax.top_k: values and indices of the 4 largest per row."""
    return lax.top_k(x, 4)


@case(normal(4, 5))
def cumsum(x):
    """jnp.cumsum and jnp.cumprod (reduce_window or associative scans)."""
    return jnp.cumsum(x, axis=1), jnp.cumprod(x * 0.5 + 1.0, axis=0)


@case(normal(2, 3, 4), normal(2, 4, 5), normal(5))
def einsum(a, b, v):
    """jnp.einsum: a batched matmul and a contraction with a vector."""
    return jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("bij,bjk,k->bi", a, b, v)


@case(normal(1, 5, 5, 3), normal(3, 3, 3, 4))
def conv_transpose(x, kernel):
    """lax.conv_transpose with stride 2 and SAME padding (NHWC, HWIO)."""
    return lax.conv_transpose(x, kernel, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


@case(normal(1, 6, 6, 2), normal(3, 3, 2, 4))
def conv_dilated_grouped(x, kernel):
    """lax.conv_general_dilated with rhs dilation 2 and VALID padding."""
    return lax.conv_general_dilated(
        x, kernel, (1, 1), "VALID", rhs_dilation=(2, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


@case(normal(10, 4), np.array([[3, 1], [0, 9]], np.int32))
def take_gather(table, idx):
    """jnp.take of rows and jnp.take_along_axis (gathers)."""
    return table[idx], jnp.take_along_axis(table, jnp.argmax(table, axis=0, keepdims=True), 0)


@case(normal(2, 8, 8, 3))
def reduce_window(x):
    """Max and average pooling with lax.reduce_window."""
    maxed = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    summed = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return maxed, summed / 4


@case(normal(4, 6))
def softmax_logsumexp(x):
    """jax.nn.softmax and jax.scipy.special.logsumexp."""
    return jax.nn.softmax(x, axis=-1), jax.scipy.special.logsumexp(x, axis=0)


@case(normal(3, 4), normal(3, 4))
def where_clip_compare(a, b):
    """Comparisons, select and clip: boolean results checked exactly."""
    return jnp.where(a > b, a, b), jnp.clip(a, -0.5, 0.5), a >= b, jnp.isfinite(a / b)
