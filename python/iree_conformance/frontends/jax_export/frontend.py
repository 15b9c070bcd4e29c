"""The JAX frontend in the worker: a JAX case's program is the self-checking StableHLO its
export wrote (``export``, run when the suite collects, not here), so the worker imports it
as StableHLO, check ops rewritten (``stablehlo.frontend``)."""

from __future__ import annotations

from typing import Any

from iree_conformance.frontends.base import ImportContext, TimingReference
from iree_conformance.frontends.stablehlo.frontend import import_mlir
from iree_conformance.model.jobs import Program


class JaxExportFrontend:
    name = "jax_export"
    timing_modules = ("jax",)  # imported by timing_reference (registry.timing_modules)
    kind = "mlir"

    def importer_version(self) -> str:
        return ""  # the export's JAX version is part of the exported text's store key

    def prepare_and_import(
        self, program: Program, source: bytes, context: ImportContext
    ) -> tuple[bytes, dict[str, Any]]:
        return import_mlir(program, source, context)

    def timing_reference(self, reference: str, inputs: list[Any]) -> TimingReference:
        """XLA through ``jax.jit`` on the case's function and arguments (``FILE::NAME``),
        against IREE's ``main`` on the same arguments."""
        from iree_conformance.frontends.jax_export.xla_timing import case_reference

        return case_reference(reference)
