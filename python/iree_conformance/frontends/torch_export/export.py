"""Exports one torch program the way IREE's own tooling does, and runs torch eager on it.

``torch.export.export`` (torch's default, non-strict tracing; strict, TorchDynamo's, when
that fails: ``export_program``), then the preparation
iree-turbine's ``aot.export`` gives an ``nn.Module``: ``run_decompositions`` with
iree-turbine's AOT decomposition table (functionalized: in-place ops and ``detach_``
become their pure forms), then iree-turbine's FX importer (``aot.export`` of the
prepared ExportedProgram) into torch-dialect MLIR. A loaded ``.pt2`` gets the same
preparation (``aot.export`` of an ExportedProgram alone would skip the decompositions).
When iree-turbine's preparation fails, torch's core ATen decompositions
(``run_decompositions()``) are tried on the same program, and the failure says whether
they pass.

The reference is torch eager on the CPU, on copies of the same inputs and of the module
(so an in-place op or a buffer mutation sees what the export saw); Python scalars the
module returns are 0-d tensors in both, and a constant reference is judged with a note
(``info["reference"]``).

The only modules of the package that import torch, and only when called, are this one
and ``timing``.
"""

from __future__ import annotations

import contextlib
import copy
import re
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from iree_conformance.common.dist_versions import dist_versions
from iree_conformance.frontends.torch_export.artifact import Exported
from iree_conformance.frontends.torch_export.random_ops import random_reason
from iree_conformance.frontends.torch_export.spec import TorchCase

TURBINE, CORE = "iree-turbine", "torch-core"
NON_STRICT, STRICT = "non-strict", "strict"
_DYNAMIC = re.compile(r"func\.func @main\([^\n]*vtensor<\[[^\]]*\?")  # a dynamic input dim


class ExportError(Exception):
    """The program could not be exported, prepared or run by torch. ``stage``: "prepare"
    (torch.export or the example inputs: torch's or the case's, no verdict on IREE),
    "import" (iree-turbine's preparation or FX importer: IREE's tooling)."""

    def __init__(self, stage: str, message: str, core_mlir: str | None = None):
        super().__init__(message)
        self.stage = stage
        self.core_mlir = core_mlir  # torch's core decompositions' import, when it passed


def versions() -> dict[str, str | None]:
    """The versions an export depends on (None: not installed)."""
    return dist_versions(("torch", "iree-turbine", "iree-base-compiler", "numpy", "transformers"))


def flatten(value: Any) -> list[Any]:
    """The leaves of a pytree of tensors as torch.export orders them: tuples and lists
    by position, dicts (and transformers' ModelOutput) by insertion, None dropped."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in flatten(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in flatten(v)]
    return [value]


def to_numpy(tensor: Any) -> np.ndarray:
    import torch

    t = tensor.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def _clone(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return type(value)((k, _clone(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_clone(v) for v in value)
    return copy.deepcopy(value)


def _as_module(fn: Any) -> Any:
    import torch

    if isinstance(fn, torch.nn.Module):
        return fn

    class Function(torch.nn.Module):
        wraps_function = True  # no module of the user's: eval() changes nothing

        def forward(self, *args: Any) -> Any:
            return fn(*args)

    return Function()


def _first_lines(text: str, count: int = 8) -> str:
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return "\n".join(lines[:count]) or "(no message)"


def _reason(e: BaseException) -> str:
    return f"{type(e).__name__}: {_first_lines(str(e))}"


def build(case: TorchCase) -> tuple[Any, tuple[Any, ...], Any]:
    """(the module, its example inputs, its dynamic_shapes), made after the case's seed."""
    import torch

    torch.manual_seed(case.seed)
    try:
        module = case.module() if case.builds else case.module
        args = case.args() if callable(case.args) else case.args
        dynamic = case.dynamic_shapes() if callable(case.dynamic_shapes) else case.dynamic_shapes
    except Exception as e:  # noqa: BLE001 - the case's own code failed
        raise ExportError(
            "prepare", f"building the module or its inputs failed: {_reason(e)}"
        ) from None
    if not isinstance(args, tuple):
        args = (args,) if isinstance(args, torch.Tensor) else tuple(args)
    wrapped = _as_module(module)
    if wrapped is not module and isinstance(dynamic, (tuple, list)):
        dynamic = (tuple(dynamic),)  # the wrapper's one parameter: *args
    if case.eval_mode:
        wrapped.eval()  # dropout off, batch norm on its running statistics
    return wrapped, args, dynamic


def export_case(case: TorchCase) -> Exported:
    """The case exported, prepared and imported, with torch eager's outputs."""
    module, args, dynamic = build(case)
    evaluated = case.eval_mode and not getattr(module, "wraps_function", False)
    _check_inputs(args)
    outputs = _call(module, args)
    scalars = [i for i, leaf in enumerate(flatten(outputs)) if _is_scalar(leaf)]
    if scalars:
        module, dynamic = _scalars_as_tensors(module), _positional(module, dynamic)
        outputs = _call(module, args)
    expected = _expected(outputs)
    program, mode = export_program(module, args, dynamic)
    exported = exported_program(program, args, expected)
    exported.info["export"] = mode
    if evaluated:
        exported.info["eval"] = True  # the user's nn.Module, in eval mode
    if scalars:
        exported.info["scalars"] = scalars
    return exported


def export_program(module: Any, args: tuple[Any, ...], dynamic: Any) -> tuple[Any, str]:
    """(the ExportedProgram, how it was exported): torch.export's default non-strict
    tracing (what ``torch.export.export`` gives a user, and what traces transformers'
    models), else strict (TorchDynamo: it exports some Python non-strict refuses, such as
    ``float(tensor)``). ExportError("prepare") when neither can."""
    import torch

    try:
        with _quiet():
            return torch.export.export(module, args, dynamic_shapes=dynamic), NON_STRICT
    except Exception as e:  # noqa: BLE001 - any failure of torch.export is torch's
        first = _reason(e)
    try:
        with _quiet():
            program = torch.export.export(module, args, dynamic_shapes=dynamic, strict=True)
    except Exception as e:  # noqa: BLE001
        raise ExportError(
            "prepare",
            f"torch.export cannot export it: {first}\n"
            f"strict mode (TorchDynamo) cannot either: {_reason(e)}",
        ) from None
    return program, f"{STRICT} (non-strict failed: {first.splitlines()[0]})"


def _positional(module: Any, dynamic: Any) -> Any:
    """The module's dynamic_shapes for a wrapper whose one parameter is ``*args``."""
    if isinstance(dynamic, dict):
        import inspect

        names = list(inspect.signature(module.forward).parameters)
        dynamic = [dynamic.get(name) for name in names]
    return (tuple(dynamic),) if isinstance(dynamic, (tuple, list)) else dynamic


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float))


def _scalars_as_tensors(module: Any) -> Any:
    """The module with each Python scalar it returns (an int, bool or float) as a 0-d
    tensor (int64, bool, torch's default float dtype): IREE's function returns tensors."""
    import torch

    def tensor(value: Any) -> Any:
        for types, dtype in (
            ((bool, torch.SymBool), torch.bool),
            ((int, torch.SymInt), torch.int64),
            ((float, torch.SymFloat), torch.get_default_dtype()),
        ):
            if isinstance(value, types):
                number: Any = value  # a SymInt, SymBool or SymFloat while exported
                return torch.scalar_tensor(number, dtype=dtype)
        if isinstance(value, dict):
            return type(value)((k, tensor(v)) for k, v in value.items())
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(tensor(v) for v in value)
        return value

    class ScalarsAsTensors(torch.nn.Module):
        def __init__(self, inner: Any):
            super().__init__()
            self.inner = inner

        def forward(self, *args: Any) -> Any:
            return tensor(self.inner(*args))

    return ScalarsAsTensors(module).train(module.training)


def _call(module: Any, args: tuple[Any, ...]) -> Any:
    """The module's outputs in torch eager, on copies of the module and inputs."""
    import torch

    try:
        with _quiet():
            reference = copy.deepcopy(module)
        with torch.no_grad():
            return reference(*_clone(args))
    except Exception as e:  # noqa: BLE001 - the module does not run on its example inputs
        raise ExportError(
            "prepare", f"the module does not run on its example inputs in torch eager: {_reason(e)}"
        ) from None


def eager(module: Any, args: tuple[Any, ...]) -> list[np.ndarray]:
    """torch eager's outputs, flattened, on copies of the module and inputs."""
    _check_inputs(args)
    return _expected(_call(module, args))


def _check_inputs(args: tuple[Any, ...]) -> None:
    import torch

    for i, leaf in enumerate(flatten(args)):
        if not isinstance(leaf, torch.Tensor):
            raise ExportError(
                "prepare",
                f"example input {i} is a {type(leaf).__name__}, not a tensor: pass tensors "
                "(torch.export bakes other values into the program)",
            )


def _expected(outputs: Any) -> list[np.ndarray]:
    import torch

    leaves = _output_leaves(outputs)  # None kept: it is no tensor either
    if not leaves:
        raise ExportError("prepare", "the module returns no tensor: return one or more tensors")
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, torch.Tensor):
            raise ExportError(
                "prepare",
                f"output {i} is {'None' if leaf is None else 'a ' + type(leaf).__name__}, "
                "not a tensor: return tensors (or tuples, lists and dicts of them, or Python "
                "int, bool and float)",
            )
    return [to_numpy(t) for t in leaves]


def _output_leaves(value: Any) -> list[Any]:
    """The leaves of a module's outputs, None among them (``flatten`` drops it)."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _output_leaves(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _output_leaves(v)]
    return [value]


def says_nothing(expected: list[np.ndarray]) -> bool:
    """Every output zero, or every output constant with more than one value in all."""
    arrays = [np.asarray(a, dtype=np.float64) if a.dtype.kind != "b" else a for a in expected]
    if all(a.size == 0 or not np.any(a) for a in arrays):
        return True
    constant = all(a.size == 0 or np.all(a == a.reshape(-1)[0]) for a in arrays)
    return constant and sum(a.size for a in arrays) > 1


def exported_program(program: Any, args: tuple[Any, ...], expected: list[np.ndarray]) -> Exported:
    """An ExportedProgram prepared and imported; inputs and eager outputs as given."""
    import torch

    inputs = [t for t in flatten(args) if isinstance(t, torch.Tensor)]
    user_inputs = list(program.graph_signature.user_inputs)
    if len(user_inputs) != len(inputs):
        raise ExportError(
            "prepare",
            f"the exported program takes {len(user_inputs)} inputs, the example inputs hold "
            f"{len(inputs)} tensors",
        )
    text, info = prepare(program)
    info["versions"] = versions()
    info["inputs"] = {
        "compiled": "dynamic" if _DYNAMIC.search(text) else "static",
        "shapes": {f"arg{i}": list(t.shape) for i, t in enumerate(inputs)},
        "dtypes": {f"arg{i}": str(t.dtype).removeprefix("torch.") for i, t in enumerate(inputs)},
    }
    random = random_reason(program)
    if random:
        info["random"] = random
    if says_nothing(expected):
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in expected)
        info["reference"] = (
            f"weak: torch eager's outputs ({shapes}) are all zero or constant, so a pass "
            "says only that IREE gives the same constant; inputs that make them vary check more"
        )
    return Exported(text, [to_numpy(t) for t in inputs], expected, info)


def _turbine(program: Any) -> str:
    from iree.turbine import aot
    from iree.turbine.aot.decompositions import current_aot_decompositions

    with _quiet():
        prepared = program.run_decompositions(current_aot_decompositions())
    return str(aot.export(prepared).mlir_module)


def prepare(program: Any) -> tuple[str, dict[str, Any]]:
    """(torch-dialect MLIR, what was done): iree-turbine's preparation, and torch's core
    decompositions beside it only when that fails (their MLIR rides on the error, for the
    engine to compile: ``core_mlir``)."""
    try:
        return _turbine(program), {"preparation": TURBINE}
    except Exception as e:  # noqa: BLE001 - said with the other preparation's result
        turbine = _reason(e)
    try:
        core = core_prepared(program)
    except ExportError as e:
        raise ExportError(
            "import",
            f"iree-turbine's preparation (its AOT decompositions, then its FX importer) "
            f"failed: {turbine}\ntorch's core ATen decompositions (run_decompositions()) "
            f"fail too: {e}",
        ) from None
    raise ExportError(
        "import",
        f"iree-turbine's preparation (its AOT decompositions, then its FX importer) failed: "
        f"{turbine}\ntorch's core ATen decompositions (run_decompositions()) then the FX "
        "importer pass: the failure is iree-turbine's decomposition table",
        core_mlir=core,
    )


def core_prepared(program: Any) -> str:
    """The program prepared with torch's core ATen decompositions and imported (the
    comparison for a program whose iree-turbine preparation fails to compile).
    ExportError("import") says why it cannot be."""
    from iree.turbine import aot

    try:
        with _quiet():
            decomposed = program.run_decompositions()
    except Exception as e:  # noqa: BLE001 - the comparison's own failure is its result
        raise ExportError("import", f"run_decompositions() fails: {_reason(e)}") from None
    try:
        return str(aot.export(decomposed).mlir_module)
    except Exception as e:  # noqa: BLE001
        raise ExportError(
            "import", f"iree-turbine's FX importer fails on its program: {_reason(e)}"
        ) from None


def export_core(case: TorchCase) -> str:
    """The case exported again and prepared with torch's core decompositions instead."""
    module, args, dynamic = build(case)
    if any(_is_scalar(leaf) for leaf in flatten(_call(module, args))):
        module, dynamic = _scalars_as_tensors(module), _positional(module, dynamic)
    program, _ = export_program(module, args, dynamic)
    return core_prepared(program)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """torch's own deprecation when it copies a pytree spec (``run_decompositions``, a
    module's deepcopy: a deprecated ``LeafSpec`` check): one FutureWarning per case,
    nothing the user can act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=r".*isinstance\(treespec, LeafSpec\)", category=FutureWarning
        )
        yield
