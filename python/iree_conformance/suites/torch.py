"""The ``torch`` suite: PyTorch programs compiled and run by IREE, checked against torch
eager on the CPU.

Cases are Python (``torch_export.spec``): the bundled ones in ``conformance/torch/``, a
user's in each ``--torch-dir``. Each case, when it first runs, is exported
(``torch_export.export``: torch.export, iree-turbine's preparation and FX importer, and
torch eager on the same inputs) and cached in the artifact store, keyed by the torch,
iree-turbine and compiler versions and the case file's source; the worker compiles the
torch-dialect MLIR and runs ``main`` on the inputs, compared with eager's outputs.

Without torch the suite is one skip case that says so and how to install it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iree_conformance.common import errors
from iree_conformance.common.store import ArtifactStore, default_store_dir
from iree_conformance.common.vocabulary import Stage
from iree_conformance.frontends.torch_export.artifact import Exported
from iree_conformance.frontends.torch_export.pt2 import cached_core_export, cached_export
from iree_conformance.frontends.torch_export.timing import SEPARATOR
from iree_conformance.frontends.torch_export.tree import (
    ExportFailed,
    Listed,
    core_export_listed,
    core_text,
    decode,
    export_listed,
    list_tree,
    missing_reason,
)
from iree_conformance.model.cases import Case, CaseInvalid, CaseReferenceError
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.jobs import Program
from iree_conformance.model.preparation import OtherPreparation
from iree_conformance.suites.base import SuiteContext, SuiteOption
from iree_conformance.suites.stablehlo_files import InvalidCase

if TYPE_CHECKING:
    from iree_conformance.suites.run_options import RunOptions

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
        return {
            "torch": {
                "preparation": exported.info.get("preparation"),
                "versions": exported.info.get("versions"),
            },
            "inputs": exported.info.get("inputs", {}),
        }

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
        return {"path": self.listed.source, "line": self.listed.line}


class TorchSuite:
    """torch programs exported by torch.export and iree-turbine, compiled and run by IREE,
    checked against torch eager."""

    name = SUITE
    description = (
        "PyTorch programs exported with torch.export and iree-turbine, compiled by IREE and "
        "checked against torch eager (bundled conformance/torch, --torch-dir)"
    )
    case_prefix = CASE_PREFIX
    floor = BUNDLED_FLOOR
    options = (
        SuiteOption(
            "--torch-dir",
            "also run the torch cases of every .py file under DIR (modules or functions with example inputs; see docs/your-own-model.md) against torch eager (repeatable)",
            {"action": "append", "default": [], "metavar": "DIR", "type": Path},
        ),
    )

    def collect(self, context: SuiteContext) -> list[Case]:
        torch_dirs = [Path(d) for d in context.values["torch_dir"] or ()]
        return collect(context.conformance_dir, context.options, torch_dirs)


def collect(
    conformance_dir: Path, options: RunOptions, torch_dirs: Sequence[Path] = ()
) -> list[Case]:
    """The bundled cases (at least BUNDLED_FLOOR of them) and those of every --torch-dir."""
    missing = missing_reason()
    if missing:
        return [
            Case(
                case_id=f"{CASE_PREFIX}torch-not-installed",
                suite=SUITE,
                kind="mlir",
                skip_reason=f"the torch suite needs torch: {missing}",
            )
        ]
    store_root = None if options.no_cache else Path(options.store_dir or default_store_dir())
    store = ArtifactStore(store_root)
    bundled_dir = conformance_dir / "torch"
    if not bundled_dir.is_dir():
        raise CorpusError(
            f"{bundled_dir}: no such folder: restore conformance/torch from git (the bundled torch cases)"
        )
    bundled = list_tree(bundled_dir, CASE_PREFIX, store)
    if not any(r.skip for r in bundled) and len(bundled) < BUNDLED_FLOOR:
        raise CorpusError(
            f"{bundled_dir}: {len(bundled)} bundled torch cases, fewer than the floor of "
            f"{BUNDLED_FLOOR}; restore conformance/torch from git"
        )
    listed = list(bundled)
    for root in torch_dirs:
        listed += user_listed(Path(root), store)
    return [to_case(r, store_root) for r in listed]


def user_listed(root: Path, store: ArtifactStore) -> list[Listed]:
    if not root.is_dir():
        raise CorpusError(f"--torch-dir {root}: not a directory")
    listed = list_tree(root, USER_PREFIX, store)
    if not listed:
        problem = (
            f"--torch-dir {root} holds no case file (*.py, not _*.py): add one that defines "
            "cases with iree_conformance.frontends.torch_export.case or module_case, or point "
            "--torch-dir elsewhere"
        )
        listed = [
            Listed(f"{USER_PREFIX}{root.name}:folder", str(root), str(root), "", error=problem)
        ]
    return listed


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


def to_case(listed: Listed, store_root: Path | None) -> Case:
    if listed.skip:
        return Case(listed.case_id, SUITE, "mlir", skip_reason=listed.skip)
    if listed.error:
        # its file: the action keeps a user's broken file's error (ci/action_select.py)
        return InvalidCase(
            listed.case_id, SUITE, "mlir", source_path=Path(listed.source), problem=listed.error
        )
    return TorchCase(
        case_id=listed.case_id,
        suite=SUITE,
        kind="mlir",
        entry_function=ENTRY_FUNCTION,
        input_type="torch",
        tolerance=Tolerance(listed.rtol, listed.atol),
        reference_name="torch",
        listed=listed,
        store_root=store_root,
    )
