"""JAX programs as self-checking StableHLO, checked against XLA.

``spec`` (how cases are written) and ``mlir_text`` need no JAX; ``export`` imports it when
called, so the rest of iree-conformance never needs JAX installed.
"""

from iree_conformance.frontends.jax_export.spec import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    JaxCase,
    case,
    flax_case,
)

__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "JaxCase", "case", "flax_case"]
