"""How a JAX case is written: a function with example inputs, or a flax module.

A case file is a Python file that defines cases at module level::

    import jax.numpy as jnp
    import numpy as np
    from iree_conformance.frontends.jax_export import case

    @case(np.ones((2, 3), np.float32), rtol=1e-5)
    def double(x):
        return 2 * x

Every module-level ``JaxCase`` (and every one in a module-level list named ``CASES``) is
collected. The inputs are concrete values (numpy or JAX arrays, or pytrees of them); the
function is exported with ``jax.jit(fn).lower(*inputs)`` and run by XLA on the CPU for the
expected outputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from iree_conformance.frontends.case_folder import check_case, described

# float32 results: IREE and XLA approximate transcendental functions differently.
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


@dataclasses.dataclass(frozen=True)
class JaxCase:
    """One JAX program: ``fn(*args)``, checked with the tolerance on floating-point results."""

    name: str
    fn: Callable[..., Any] | None
    args: tuple[Any, ...]
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    description: str = ""
    # Builds fn when the case is exported (flax_case: initializes the parameters).
    make_fn: Callable[[], Callable[..., Any]] | None = None

    def function(self) -> Callable[..., Any]:
        if self.fn is not None:
            return self.fn
        assert self.make_fn is not None, f"case {self.name} has neither fn nor make_fn"
        return self.make_fn()

    def __post_init__(self) -> None:
        check_case(self.name, self.rtol, self.atol)


def case(
    *args: Any,
    name: str | None = None,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    description: str | None = None,
) -> Callable[[Callable[..., Any]], JaxCase]:
    """Decorator: the function becomes a case run on ``args`` (its first docstring line is
    the description unless one is given)."""

    def make(fn: Callable[..., Any]) -> JaxCase:
        return JaxCase(
            name=name or fn.__name__,
            fn=fn,
            args=tuple(args),
            rtol=rtol,
            atol=atol,
            description=described(fn, description),
        )

    return make


def flax_case(
    name: str,
    module: Any,
    *args: Any,
    seed: int = 0,
    mutable: Sequence[str] = (),
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    description: str = "",
    **apply_kwargs: Any,
) -> JaxCase:
    """A flax (linen) module with parameters initialized from ``seed``, applied to ``args``.

    The parameters are closed over, so the export holds them as constants, as a deployed
    model does. With ``mutable`` (e.g. ``["batch_stats"]``) the results include the
    updated collections. The parameters are made when the case is exported, not when its
    file is imported: collecting cases never compiles an initialization.
    """

    def make_fn() -> Callable[..., Any]:
        import jax

        # Jitted: op-by-op initialization compiles one XLA kernel per op.
        init = jax.jit(lambda key, *a: module.init(key, *a, **apply_kwargs))
        variables = init(jax.random.PRNGKey(seed), *args)

        def apply(*inputs: Any) -> Any:
            if mutable:
                return module.apply(variables, *inputs, mutable=list(mutable), **apply_kwargs)
            return module.apply(variables, *inputs, **apply_kwargs)

        return apply

    return JaxCase(
        name=name,
        fn=None,
        args=tuple(args),
        rtol=rtol,
        atol=atol,
        description=description or f"flax {type(module).__name__}",
        make_fn=make_fn,
    )
