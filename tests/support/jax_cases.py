"""A JAX case file for the timing tests: a Python float argument (f32 in JAX) and two
cases, so that a batch module prefixes their functions."""

CASES = '''
import numpy as np
from iree_conformance.frontends.jax_export import case


@case(np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8), 0.5)
def scaled_tanh(x, s):
    """A Python float argument: f32 in JAX, so IREE's main takes f32 too."""
    import jax.numpy as jnp

    return jnp.tanh(x) * s


@case(np.arange(16, dtype=np.float32))
def cumsum(x):
    import jax.numpy as jnp

    return jnp.cumsum(x)
'''
