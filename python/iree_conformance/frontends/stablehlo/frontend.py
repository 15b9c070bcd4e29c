"""The StableHLO frontend: MLIR text goes to the compiler as it is; a self-checking
program (``import_options["rewrite_checks"]``) gets its check ops rewritten into calls
that the runtime records (``checks.instrument_checks``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iree_conformance.frontends.base import FrontendError, ImportContext, TimingReference
from iree_conformance.model.jobs import Program


def import_mlir(
    program: Program, source: bytes, context: ImportContext
) -> tuple[bytes, dict[str, Any]]:
    """MLIR text as the compiler reads it, its check ops rewritten when asked."""
    context.stage("prepare")
    context.stage("import")
    if not program.import_options.get("rewrite_checks"):
        return source, {}
    from iree_conformance.frontends.stablehlo.checks import CheckRewriteError, instrument_checks

    try:
        name = Path(program.source_path).name if program.source_path else "-"
        text, checks = instrument_checks(
            source.decode("utf-8", errors="replace"), context.mlir_context(), name
        )
    except CheckRewriteError as e:
        raise FrontendError("import", str(e)) from None
    return text.encode(), {"checks": checks}


class StablehloFrontend:
    name = "stablehlo"
    timing_modules = ("jax",)  # imported by timing_reference (registry.timing_modules)
    kind = "mlir"

    def importer_version(self) -> str:
        return ""

    def prepare_and_import(
        self, program: Program, source: bytes, context: ImportContext
    ) -> tuple[bytes, dict[str, Any]]:
        return import_mlir(program, source, context)

    def timing_reference(self, reference: str, inputs: list[Any]) -> TimingReference:
        """XLA on the same StableHLO file (``reference``: its path) and inputs; a
        self-checking file names none (its references are its own check ops)."""
        from iree_conformance.frontends.jax_export.xla_timing import stablehlo_reference

        return stablehlo_reference(reference, inputs)
