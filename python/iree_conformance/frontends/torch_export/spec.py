"""How a torch case is written: a function with example inputs, or a module.

A case file is a Python file that defines cases at module level::

    import torch
    from iree_conformance.frontends.torch_export import case, module_case

    @case(torch.randn(2, 3), rtol=1e-5)
    def double(x):
        return 2 * x

    linear = module_case("linear", lambda: torch.nn.Linear(4, 2), torch.randn(3, 4))

Every module-level ``TorchCase`` (and every one in a module-level list named ``CASES``) is
collected. The inputs are tensors (or pytrees of them), or a function returning their
tuple (called when the case is exported, after ``torch.manual_seed(seed)``); a module is
an ``nn.Module`` or a function building one (called after the seed too, so its weights
are the same every run). ``dynamic_shapes`` is passed to ``torch.export.export`` as it is
(``torch.export.Dim``), or given as a function returning it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from iree_conformance.frontends.case_folder import check_case, described

# float32 results: IREE and torch's CPU kernels approximate transcendental functions and
# order reductions differently.
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


@dataclasses.dataclass(frozen=True)
class TorchCase:
    """One torch program: ``module(*args)``, exported with ``torch.export`` and checked
    against torch eager with the tolerance on floating-point results."""

    name: str
    module: Any  # an nn.Module, a function (wrapped in one), or a function building either
    args: Any  # a tuple of inputs, or a function returning it
    dynamic_shapes: Any = None
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    description: str = ""
    seed: int = 0
    builds: bool = False  # module is a function that builds the module (module_case)
    line: int = 1  # where the case is written: the decorated function, the module_case call
    path: str = ""  # the file of that line ("": the case file)
    eval_mode: bool = True  # module.eval() before export and eager (dropout off, ...)

    def __post_init__(self) -> None:
        check_case(self.name, self.rtol, self.atol)
        if not callable(self.module):
            raise ValueError(
                f"case {self.name}: the module must be an nn.Module or a function, "
                f"got {type(self.module).__name__}"
            )


def _caller() -> tuple[str, int]:
    """The file and line that called the caller (module_case's call, wherever it is: a
    case file, or a helper module that builds cases)."""
    import inspect

    frame = inspect.currentframe()
    try:
        for _ in range(2):
            frame = frame.f_back if frame is not None else None
        return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("", 1)
    finally:
        del frame


def case(
    *args: Any,
    name: str | None = None,
    dynamic_shapes: Any = None,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    description: str | None = None,
    seed: int = 0,
    eval_mode: bool = True,
) -> Callable[[Callable[..., Any]], TorchCase]:
    """Decorator: the function becomes a case run on ``args`` (its first docstring line is
    the description unless one is given)."""

    def make(fn: Callable[..., Any]) -> TorchCase:
        code = getattr(fn, "__code__", None)
        return TorchCase(
            name=name or fn.__name__,
            module=fn,
            args=tuple(args),
            dynamic_shapes=dynamic_shapes,
            rtol=rtol,
            atol=atol,
            description=described(fn, description),
            seed=seed,
            line=code.co_firstlineno if code is not None else 1,
            path=code.co_filename if code is not None else "",
            eval_mode=eval_mode,
        )

    return make


def module_case(
    name: str,
    module: Any,
    *args: Any,
    dynamic_shapes: Any = None,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    description: str = "",
    seed: int = 0,
    eval_mode: bool = True,
) -> TorchCase:
    """A module (an ``nn.Module``, or a class or function that builds one: called after
    ``torch.manual_seed(seed)`` when the case is exported) applied to ``args`` (tensors,
    or one function returning their tuple). ``eval_mode=False`` keeps the module in
    training mode (dropout, batch statistics) instead of calling ``module.eval()``."""
    import inspect

    path, line = _caller()
    builds = inspect.isclass(module) or inspect.isfunction(module)
    if len(args) == 1 and callable(args[0]) and not hasattr(args[0], "shape"):
        inputs: Any = args[0]
    else:
        inputs = tuple(args)
    return TorchCase(
        name=name,
        module=module,
        args=inputs,
        dynamic_shapes=dynamic_shapes,
        rtol=rtol,
        atol=atol,
        description=description or (name if builds else f"torch {type(module).__name__}"),
        seed=seed,
        builds=builds,
        line=line,
        path=path,
        eval_mode=eval_mode,
    )
