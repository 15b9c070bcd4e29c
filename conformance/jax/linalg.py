"""Linear algebra: on the CPU, JAX lowers these to LAPACK custom calls
(stablehlo.custom_call @lapack_*_ffi), which IREE does not compile: expected failures,
recorded with that reason in every CPU target's manifest."""

import jax.numpy as jnp
import numpy as np

from iree_conformance.frontends.jax_export import case

rng = np.random.default_rng(5)
A = rng.standard_normal((4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)


@case(SPD, rng.standard_normal((4, 2)).astype(np.float32))
def solve(a, b):
    """jnp.linalg.solve (LU factorization: @lapack_sgetrf_ffi)."""
    return jnp.linalg.solve(a, b)


@case(SPD)
def cholesky(a):
    """jnp.linalg.cholesky (@lapack_spotrf_ffi)."""
    return jnp.linalg.cholesky(a)


@case(SPD, rng.standard_normal((4, 3)).astype(np.float32))
def triangular_solve(a, b):
    """jax.scipy.linalg.solve_triangular (@lapack_strsm_ffi)."""
    from jax.scipy.linalg import solve_triangular

    return solve_triangular(jnp.tril(a), b, lower=True)
