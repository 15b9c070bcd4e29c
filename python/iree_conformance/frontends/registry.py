"""The frontends, behind one registry (as cibuildwheel's platforms are): each input format
is a ``Frontend`` that turns a program's source into MLIR for the compiler.

The worker looks a program's frontend up here (``frontend_for``) instead of branching on
its kind; the store keys an import by the frontend's ``importer_version``. A frontend
fails a stage with ``FrontendError`` (``base.py``, with the ``Frontend`` protocol) (the worker reports it as that stage's error).
Registered: ``onnx`` (ONNX models), ``stablehlo`` (StableHLO/MLIR text, self-checking or
not) ``jax_export`` (JAX programs, exported to self-checking StableHLO) and ``torch_export``
(torch programs, exported to torch-dialect MLIR by iree-turbine).
"""

from __future__ import annotations

from pathlib import Path

from iree_conformance.frontends.base import Frontend, FrontendError, ImportContext, TimingReference
from iree_conformance.frontends.jax_export.frontend import JaxExportFrontend
from iree_conformance.frontends.onnx.frontend import OnnxFrontend
from iree_conformance.frontends.stablehlo.frontend import StablehloFrontend
from iree_conformance.frontends.torch_export.frontend import TorchExportFrontend
from iree_conformance.model.jobs import Program

__all__ = [
    "FRONTENDS",
    "Frontend",
    "FrontendError",
    "ImportContext",
    "TimingReference",
    "frontend_for",
    "importer_version",
    "source_files",
    "timing_reference",
]


#: Every frontend, by name; the first of a kind is that kind's default.
FRONTENDS: dict[str, Frontend] = {
    f.name: f
    for f in (OnnxFrontend(), StablehloFrontend(), JaxExportFrontend(), TorchExportFrontend())
}


def frontend_for(program: Program) -> Frontend:
    """The program's frontend: the one it names, else the default of its kind."""
    if program.frontend is not None:
        found = FRONTENDS.get(program.frontend)
        if found is None or found.kind != program.kind:
            raise FrontendError(
                "prepare",
                f"unknown frontend {program.frontend!r} for a {program.kind} program; "
                f"registered: {', '.join(FRONTENDS)}",
            )
        return found
    for frontend in FRONTENDS.values():
        if frontend.kind == program.kind:
            return frontend
    kinds = sorted({f.kind for f in FRONTENDS.values()})
    raise FrontendError(
        "prepare", f"unknown source kind {program.kind!r}; the frontends read {', '.join(kinds)}"
    )


def importer_version(program: Program) -> str:
    """The program's frontend's ``importer_version`` ("" when it has none): part of the
    store's import key. A program of no known kind fails at import, not here."""
    try:
        return frontend_for(program).importer_version()
    except FrontendError:
        return ""


def source_files(program: Program, source: bytes) -> list[Path]:
    """Files beside the program's source that its import reads (an optional
    ``source_files`` of a frontend: ONNX's external data): the store's import key holds
    their bytes' digests. A program of no known kind has none."""
    try:
        found = getattr(frontend_for(program), "source_files", None)
    except FrontendError:
        return []
    return list(found(program, source)) if found is not None else []


def timing_modules(program: Program) -> tuple[str, ...]:
    """The modules the program's frontend imports to set up its timed reference (an
    optional ``timing_modules`` of a frontend): a worker pays their import once, so the
    worker times it apart from the set-up (docs/speed.md, "Cost")."""
    try:
        return tuple(getattr(frontend_for(program), "timing_modules", ()))
    except Exception:  # noqa: BLE001 - an unknown frontend: timing_reference says why
        return ()


def timing_reference(
    program: Program, reference: str | None, inputs: list
) -> tuple[TimingReference | None, str | None]:
    """(the reference the program's frontend times beside IREE, why there is none): a
    reference that cannot run costs the case only its reference figures."""
    if reference is None:
        return None, None
    try:
        frontend = frontend_for(program)
        found = frontend.timing_reference(reference, inputs)
    except Exception as e:  # noqa: BLE001 - any failure of the reference is said, not raised
        return None, f"the reference could not run: {type(e).__name__}: {e}"
    if found is None:
        return None, f"the {frontend.name} frontend times no reference"
    return found, None
