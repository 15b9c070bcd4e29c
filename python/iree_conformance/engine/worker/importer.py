"""The prepare and import stages inside a worker: a program's source to MLIR."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.engine.worker.errors import StageError
from iree_conformance.frontends.registry import FrontendError, ImportContext, frontend_for
from iree_conformance.model.jobs import Program


def read_source(program: Program, stage: Callable[[str], None]) -> bytes:
    """The program's bytes (its own, or its file's)."""
    if program.source_bytes is not None:
        return program.source_bytes
    try:
        return Path(program.source_path or "").read_bytes()
    except OSError as e:
        stage("prepare")
        raise StageError(
            "prepare", f"cannot read {program.source_path}: {e.strerror or e}"
        ) from None


def prepare_and_import(
    program: Program,
    source: bytes,
    stage: Callable[[str], None],
    mlir_context: Callable[[], Any],
    read_diagnostics: Callable[[], str],
    work_dir: Path | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """(MLIR, import metadata), from the program's frontend (frontends/registry.py): ONNX
    is checked, upgraded and imported in process; a self-checking StableHLO or JAX program
    gets its check ops rewritten into calls. ``work_dir``: where a large artifact (a
    parameter file) is written."""
    try:
        frontend = frontend_for(program)
        return frontend.prepare_and_import(
            program, source, ImportContext(stage, mlir_context, read_diagnostics, work_dir)
        )
    except FrontendError as e:
        raise StageError(e.stage, str(e)) from None
