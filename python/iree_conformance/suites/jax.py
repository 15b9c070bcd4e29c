"""The ``jax`` suite: JAX programs compiled and run by IREE, checked against XLA.

Cases are Python (``jax_export.spec``): the bundled ones in ``conformance/jax/``, a user's
in each ``--jax-dir``. Each case, when it runs, is exported once (cached in the artifact
store, keyed by the JAX version and the case file's source) as the self-checking
StableHLO text that ``iree-conformance export-jax`` writes, and runs as a
``--stablehlo-dir`` file does (``CheckCase``): one mechanism for both, so the files give
the same verdicts.

Without JAX the suite is one skip case that says so and how to install it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from iree_conformance.common import errors
from iree_conformance.common.store import ArtifactStore, default_store_dir
from iree_conformance.frontends.jax_export.tree import (
    ExportFailed,
    Listed,
    export_listed,
    list_tree,
    missing_reason,
)
from iree_conformance.frontends.jax_export.xla_timing import SEPARATOR
from iree_conformance.model.cases import Case, CaseInvalid, Check
from iree_conformance.model.jobs import CaseResult, Program
from iree_conformance.suites.base import SuiteContext, SuiteOption
from iree_conformance.suites.check_pairs import checks_from_records
from iree_conformance.suites.stablehlo_files import _CHECK_OPTIONS, CheckCase, InvalidCase

if TYPE_CHECKING:
    from iree_conformance.suites.run_options import RunOptions

SUITE = "jax"
CASE_PREFIX = "jax/"
USER_PREFIX = "jax/ext/"
BUNDLED_FLOOR = 30  # a broken conformance/jax must not look green
ENTRY_FUNCTION = "check_xla"


class CorpusError(errors.CorpusError):
    pass


@dataclasses.dataclass
class JaxCase(CheckCase):
    """A JAX case, exported when it first runs: its checks compare IREE with XLA."""

    # XLA runs the whole jitted function; jax hands back its outputs, no intermediate.
    expected_from: ClassVar[str] = "XLA's outputs of the whole jitted function"

    listed: Listed | None = None
    store_root: Path | None = None
    _failure: str | None = dataclasses.field(default=None, repr=False)

    def _text(self) -> bytes | None:
        if self.source_bytes is None and self._failure is None:
            assert self.listed is not None
            try:
                text = export_listed(self.listed, ArtifactStore(self.store_root))
                self.source_bytes = text.encode("utf-8")
            except ExportFailed as e:
                self._failure = str(e)
        return self.source_bytes

    def input_sets(self) -> list[list[np.ndarray]]:
        if self._text() is None:
            raise CaseInvalid(self._failure or "no export")
        return [[]]

    def program(self) -> Program:
        self._text()  # a failed export: empty source, so a batch leaves this case out
        return dataclasses.replace(
            super().program(), source_bytes=self.source_bytes or b"", frontend="jax_export"
        )

    def timed_reference(self) -> str | None:
        """XLA on the case's own function (frontends/jax_export/xla_timing.case_reference)."""
        if self.listed is None or not self.listed.name:
            return None
        return f"{self.listed.source}{SEPARATOR}{self.listed.name}"

    def checks(self, input_sets, output_sets, worker_result: CaseResult) -> list[Check]:
        sites, records = worker_result.check_sites, worker_result.check_records
        if sites is None or not records:
            raise ValueError(f"the module reported no checks for function {ENTRY_FUNCTION!r}")
        label = Path(self.listed.file).name if self.listed else ""
        return checks_from_records(sites, records[0], label)


class JaxSuite:
    """JAX programs exported to StableHLO, compiled and run by IREE, checked against XLA."""

    name = SUITE
    description = (
        "JAX programs compiled by IREE and checked against XLA (bundled conformance/jax, --jax-dir)"
    )
    case_prefix = CASE_PREFIX
    floor = BUNDLED_FLOOR
    options = (
        SuiteOption(
            "--jax-dir",
            "also run the JAX cases of every .py file under DIR (functions with example inputs, or flax modules; see docs/your-own-model.md) against XLA (repeatable)",
            {"action": "append", "default": [], "metavar": "DIR", "type": Path},
        ),
    )

    def collect(self, context: SuiteContext) -> list[Case]:
        jax_dirs = [Path(d) for d in context.values["jax_dir"] or ()]
        return collect(context.conformance_dir, context.options, jax_dirs)


def collect(
    conformance_dir: Path, options: RunOptions, jax_dirs: Sequence[Path] = ()
) -> list[Case]:
    """The bundled cases (at least BUNDLED_FLOOR of them) and those of every --jax-dir."""
    missing = missing_reason()
    if missing:
        return [
            Case(
                case_id=f"{CASE_PREFIX}jax-not-installed",
                suite=SUITE,
                kind="mlir",
                skip_reason=f"the jax suite needs JAX: {missing}",
            )
        ]
    store_root = None if options.no_cache else Path(options.store_dir or default_store_dir())
    store = ArtifactStore(store_root)
    bundled_dir = conformance_dir / "jax"
    if not bundled_dir.is_dir():
        raise CorpusError(
            f"{bundled_dir}: no such folder: restore conformance/jax from git (the bundled JAX cases)"
        )
    bundled = list_tree(bundled_dir, CASE_PREFIX, store)
    if not any(r.skip for r in bundled) and len(bundled) < BUNDLED_FLOOR:
        raise CorpusError(
            f"{bundled_dir}: {len(bundled)} bundled JAX cases, fewer than the floor of "
            f"{BUNDLED_FLOOR}; restore conformance/jax from git"
        )
    listed = list(bundled)
    for root in jax_dirs:
        listed += user_listed(Path(root), store)
    return [to_case(r, store_root) for r in listed]


def user_listed(root: Path, store: ArtifactStore) -> list[Listed]:
    if not root.is_dir():
        raise CorpusError(f"--jax-dir {root}: not a directory")
    listed = list_tree(root, USER_PREFIX, store)
    if not listed:
        problem = (
            f"--jax-dir {root} holds no case file (*.py, not _*.py): add one that defines "
            "cases with iree_conformance.frontends.jax_export.case, or point --jax-dir elsewhere"
        )
        listed = [
            Listed(f"{USER_PREFIX}{root.name}:folder", "", str(root), str(root), "", error=problem)
        ]
    return listed


def to_case(listed: Listed, store_root: Path | None) -> Case:
    if listed.skip:
        return Case(listed.case_id, SUITE, "mlir", skip_reason=listed.skip)
    if listed.error:
        # its file: the action keeps a user's broken file's error (ci/action_select.py)
        source = Path(listed.source) if listed.source else None
        return InvalidCase(listed.case_id, SUITE, "mlir", source_path=source, problem=listed.error)
    return JaxCase(
        case_id=listed.case_id,
        suite=SUITE,
        kind="mlir",
        entry_function=ENTRY_FUNCTION,
        input_type="stablehlo",
        import_options=dict(_CHECK_OPTIONS),
        reference_name="xla",
        listed=listed,
        store_root=store_root,
    )
