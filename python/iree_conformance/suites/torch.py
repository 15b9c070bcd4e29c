"""The ``torch`` suite: PyTorch programs compiled and run by IREE, checked against torch
eager on the CPU.

Cases are Python (``torch_export.spec``, listed and exported by ``case_folder``): the bundled ones in ``conformance/torch/``, a
user's in each ``--torch-dir``. Each case, when it first runs, is exported
(``torch_export.export``: torch.export, iree-turbine's preparation and FX importer, and
torch eager on the same inputs) and cached in the artifact store, keyed by the torch,
iree-turbine and compiler versions and the case file's source; the worker compiles the
torch-dialect MLIR and runs ``main`` on the inputs, compared with eager's outputs.

Without torch the suite is one skip case that says so and how to install it.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iree_conformance.common import errors
from iree_conformance.common.store import ArtifactStore
from iree_conformance.common.vocabulary import Stage
from iree_conformance.frontends.case_folder import ExportFailed, ExportTimedOut, Listed
from iree_conformance.frontends.torch_export.artifact import Exported
from iree_conformance.frontends.torch_export.folder import (
    KIND,
    core_export_listed,
    core_text,
    decode,
    export_listed,
)
from iree_conformance.frontends.torch_export.pt2 import cached_core_export, cached_export
from iree_conformance.frontends.torch_export.timing import SEPARATOR
from iree_conformance.model.cases import (
    ONNX_KEEP_F64,
    Case,
    CaseInvalid,
    CaseReferenceError,
    CaseTimedOut,
)
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.jobs import Program
from iree_conformance.model.preparation import OtherPreparation
from iree_conformance.suites import case_folder

if TYPE_CHECKING:
    pass

SUITE = "torch"
CASE_PREFIX = "torch/"
USER_PREFIX = "torch/ext/"
BUNDLED_FLOOR = 150  # a broken conformance/torch must not look green
ENTRY_FUNCTION = "main"
USED, OTHER = "iree-turbine's decompositions", "torch's core decompositions"


class CorpusError(errors.CorpusError):
    pass


@dataclasses.dataclass
class TorchCase(Case):
    """A torch case, exported when it first runs: IREE's outputs against torch eager's.
    A failed export is the harness's error at ``prepare`` (torch.export, the case's
    inputs), IREE's at ``import`` (iree-turbine's preparation), or the harness's at
    ``reference`` (eager's outputs say nothing)."""

    listed: Listed | None = None
    store_root: Path | None = None
    pt2: Path | None = None  # an ExportedProgram file (check-model FILE.pt2) instead
    exported: Exported | None = dataclasses.field(default=None, repr=False)
    _failure: ExportFailed | None = dataclasses.field(default=None, repr=False)

    def export(self) -> Exported | None:
        if self.exported is None and self._failure is None:
            store = ArtifactStore(self.store_root)
            try:
                if self.pt2 is not None:
                    self.exported = decode(cached_export(self.pt2, store))
                else:
                    assert self.listed is not None
                    self.exported = export_listed(self.listed, store)
            except ExportFailed as e:
                self._failure = e
        return self.exported

    def input_sets(self) -> list[list[np.ndarray]]:
        exported = self.export()
        if exported is None:
            failure = self._failure
            assert failure is not None
            if isinstance(failure, ExportTimedOut):
                raise CaseTimedOut(str(failure))
            if failure.stage == Stage.PREPARE:
                raise CaseInvalid(str(failure))
            if failure.stage == Stage.REFERENCE:
                raise CaseReferenceError(str(failure))
            return [[]]  # the worker fails the import stage with the message
        return [list(exported.inputs)]

    def expected_sets(self, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        exported = self.export()
        if exported is None:
            raise ValueError(str(self._failure))
        return [list(exported.expected)]

    def outcome_info(self) -> dict[str, Any]:
        exported = self.export()
        if exported is None:
            return {}
        torch = {
            "preparation": exported.info.get("preparation"),
            "versions": exported.info.get("versions"),
        }
        # the export mode, eval(), Python scalars returned as 0-d tensors, a constant
        # reference's note: each shown beside the verdict (model/preparation.py)
        for key in ("export", "eval", "scalars", "reference"):
            if exported.info.get(key):
                torch[key] = exported.info[key]
        info: dict[str, Any] = {"torch": torch, "inputs": exported.info.get("inputs", {})}
        if self._keeps_float64():  # ONNX_KEEP_F64, as for ONNX models
            info["f64_kept"] = True
        return info

    def users_program(self) -> bool:
        return self.pt2 is not None or self.case_id.startswith(USER_PREFIX)

    def compile_flags(self, target_flags: tuple[str, ...]) -> list[str]:
        """float64 kept where the program takes or returns it, as for ONNX models
        (suites/model_case.py): IREE's default demotes it to float32, which changes the
        module's signature, so its float64 buffers would be read as float32 (an error at
        run or wrong values: a harness artifact)."""
        flags = super().compile_flags(target_flags)
        if self._keeps_float64():
            flags.append(ONNX_KEEP_F64)
        return flags

    def _keeps_float64(self) -> bool:
        exported = self.export()
        arrays = [*exported.inputs, *exported.expected] if exported is not None else []
        return any(a.dtype in (np.float64, np.complex128) for a in arrays)

    def program(self) -> Program:
        exported = self.export()
        options = dict(self.import_options)
        if exported is None and self._failure is not None:
            options["failed"] = {"stage": self._failure.stage, "message": str(self._failure)}
        return dataclasses.replace(
            super().program(),
            source_bytes=exported.text.encode("utf-8") if exported else b"",
            import_options=options,
            frontend="torch_export",
        )

    def bisect(self, run_candidate) -> str:
        """The first FX node whose value diverges from torch eager (``--bisect-numerics``;
        frontends/torch_export/divergence.py)."""
        from iree_conformance.frontends.torch_export.divergence import bisect_torch, case_program

        exported = self.export()
        assert exported is not None
        report = bisect_torch(
            case_program(self.listed, self.pt2),
            exported.inputs,
            run_candidate,
            rtol=self.tolerance.rtol,  # None: the dtype's default, as compared
            atol=self.tolerance.atol,
        )
        return report.summary()

    def other_preparation(self, stage: str) -> OtherPreparation | None:
        """torch's core ATen decompositions of the same program, for a failure of
        iree-turbine's: at import, the core program the export made beside it; at
        compile, the case exported again that way (cached in the store)."""
        failure = self._failure
        if stage == Stage.IMPORT and failure is not None and failure.stage == Stage.IMPORT:
            if failure.core_mlir is None:
                return OtherPreparation(USED, OTHER, None, _core_failure(str(failure)))
            return OtherPreparation(USED, OTHER, self._other_program(failure.core_mlir))
        if stage != Stage.COMPILE or self.export() is None:
            return None
        store = ArtifactStore(self.store_root)
        try:
            if self.pt2 is not None:
                text = core_text(cached_core_export(self.pt2, store))
            else:
                assert self.listed is not None
                text = core_export_listed(self.listed, store)
        except ExportFailed as e:
            return OtherPreparation(USED, OTHER, None, str(e))
        return OtherPreparation(USED, OTHER, self._other_program(text))

    def _other_program(self, text: str) -> Program:
        options = {k: v for k, v in self.import_options.items() if k != "failed"}
        return dataclasses.replace(
            super().program(),
            source_bytes=text.encode("utf-8"),
            import_options=options,
            frontend="torch_export",
        )

    def timed_reference(self) -> str | None:
        """torch eager on the case's own module (frontends/torch_export/timing)."""
        if self.pt2 is not None:
            return str(self.pt2)
        if self.listed is None or not self.listed.name:
            return None
        return f"{self.listed.source}{SEPARATOR}{self.listed.name}"

    def source_location(self) -> dict[str, Any] | None:
        if self.pt2 is not None:
            return {"path": str(self.pt2), "line": 1}
        if self.listed is None:
            return None
        return {"path": self.listed.defined_in or self.listed.source, "line": self.listed.line}


def _core_failure(message: str) -> str:
    """The core decompositions' part of an import failure's message."""
    for line in message.splitlines():
        head, _, why = line.partition(" fail too: ")
        if head.startswith("torch's core ATen decompositions") and why:
            return why
    return message


def pt2_case(path: Path, store_root: Path | None) -> TorchCase:
    """The case of an ExportedProgram file (``iree-conformance check-model FILE.pt2``)."""
    return TorchCase(
        case_id=f"{CASE_PREFIX}pt2/{path.stem}",
        suite=SUITE,
        kind="mlir",
        entry_function=ENTRY_FUNCTION,
        input_type="torch",
        reference_name="torch",
        store_root=store_root,
        pt2=path,
    )


FOLDER = case_folder.FolderSuite(
    suite=SUITE,
    kind=KIND,
    case_prefix=CASE_PREFIX,
    user_prefix=USER_PREFIX,
    label="torch",
    option="--torch-dir",
    write_hint="iree_conformance.frontends.torch_export.case or module_case",
    corpus_error=CorpusError,
    floor=BUNDLED_FLOOR,
    description="PyTorch programs exported with torch.export and iree-turbine, compiled by IREE and "
    "checked against torch eager (bundled conformance/torch, --torch-dir)",
    option_help="run the torch cases of every .py file under DIR (modules or functions with example inputs; see docs/your-own-model.md) against torch eager, instead of the bundled ones (repeatable)",
    case_type=TorchCase,
    entry_function=ENTRY_FUNCTION,
    input_type="torch",
    reference_name="torch",
    case_fields=lambda listed: {"tolerance": Tolerance(listed.rtol, listed.atol)},
    user_dirs_alone=True,  # as -m onnx_dir: a user's own cases, not the bundled ones too
)

#: The cases of a user's folder, and a listed case's Case (a skip, an error or runnable).
user_listed = functools.partial(case_folder.user_listed, FOLDER)
to_case = functools.partial(case_folder.to_case, FOLDER)


class TorchSuite(case_folder.CaseFolderSuite):
    """torch programs exported by torch.export and iree-turbine, compiled and run by IREE,
    checked against torch eager."""

    folder = FOLDER
