"""The torch frontend in the worker: a torch case's program is the torch-dialect MLIR that
iree-turbine's FX importer wrote when the case was exported (``export``, run in the
pytest process when the case first runs, and cached), so the worker passes it to the
compiler as it is. An export whose preparation or import failed arrives as its message
(``import_options["failed"]``) and fails the stage it names."""

from __future__ import annotations

from typing import Any

from iree_conformance.frontends.base import FrontendError, ImportContext, TimingReference
from iree_conformance.model.jobs import Program


class TorchExportFrontend:
    name = "torch_export"
    timing_modules = ("torch",)  # imported by timing_reference (registry.timing_modules)
    kind = "mlir"

    def importer_version(self) -> str:
        return ""  # torch's, iree-turbine's and the compiler's versions key the export

    def prepare_and_import(
        self, program: Program, source: bytes, context: ImportContext
    ) -> tuple[bytes, dict[str, Any]]:
        context.stage("prepare")
        context.stage("import")
        failed = program.import_options.get("failed")
        if failed:
            raise FrontendError(str(failed.get("stage", "import")), str(failed.get("message")))
        return source, {}

    def timing_reference(self, reference: str, inputs: list[Any]) -> TimingReference:
        """torch eager on the case's module and inputs (``FILE::NAME``, or a ``.pt2``)."""
        from iree_conformance.frontends.torch_export.timing import case_reference

        return case_reference(reference, inputs)
