"""The prepare and import stages inside a worker: a program's source to MLIR."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.engine.worker.errors import StageError
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
) -> tuple[bytes, dict[str, Any]]:
    """(MLIR, import metadata): ONNX is checked, upgraded and imported in process; a
    self-checking StableHLO program gets its check ops rewritten into calls."""
    kind = program.kind
    meta: dict[str, Any] = {}
    if kind == "onnx":
        from iree_conformance.frontends.onnx import prepare
        from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION, fix_input_shapes

        stage("prepare")
        # External data files are named relative to the model's folder.
        base = Path(program.source_path).parent if program.source_path else None
        try:
            prepared = prepare.prepare_model(source, base_dir=base)
            static = program.import_options.get(STATIC_OPTION)
            if static:  # the program at the case's chosen shapes (onnx.static_shapes)
                prepared.model = fix_input_shapes(prepared.model, static)
        except Exception as e:  # noqa: BLE001 - every prepare failure is reported
            raise StageError("prepare", f"{type(e).__name__}: {e}") from None
        meta["opset_from"], meta["opset_to"] = prepared.original_opset, prepared.opset
        stage("import")
        try:
            text = prepare.import_to_mlir(prepared.model)
        except Exception as e:  # noqa: BLE001
            raise StageError("import", f"{e}\n{read_diagnostics()}") from None
        return text.encode(), meta
    if kind == "mlir":
        stage("prepare")
        stage("import")
        if program.import_options.get("rewrite_checks"):
            from iree_conformance.frontends.stablehlo.checks import (
                CheckRewriteError,
                instrument_checks,
            )

            try:
                name = Path(program.source_path).name if program.source_path else "-"
                text, checks = instrument_checks(
                    source.decode("utf-8", errors="replace"), mlir_context(), name
                )
            except CheckRewriteError as e:
                raise StageError("import", str(e)) from None
            meta["checks"] = checks
            return text.encode(), meta
        return source, meta
    raise StageError("prepare", f"unknown source kind {kind!r}")
