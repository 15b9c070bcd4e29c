"""The ``jax`` suite: JAX programs compiled and run by IREE, checked against XLA.

Cases are Python (``jax_export.spec``, listed and exported by ``case_folder``): the bundled ones in ``conformance/jax/``, a user's
in each ``--jax-dir``. Each case, when it runs, is exported once (cached in the artifact
store, keyed by the JAX version and the case file's source) as the self-checking
StableHLO text that ``iree-conformance export-jax`` writes, and runs as a
``--stablehlo-dir`` file does (``CheckCase``): one mechanism for both, so the files give
the same verdicts.

Without JAX the suite is one skip case that says so and how to install it.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from iree_conformance.common import errors
from iree_conformance.common.store import ArtifactStore
from iree_conformance.frontends.case_folder import ExportFailed, Listed
from iree_conformance.frontends.jax_export.folder import KIND, export_listed
from iree_conformance.frontends.jax_export.xla_timing import SEPARATOR
from iree_conformance.model.cases import CaseInvalid, Check
from iree_conformance.model.jobs import CaseResult, Program
from iree_conformance.suites import case_folder
from iree_conformance.suites.check_pairs import checks_from_records
from iree_conformance.suites.stablehlo_files import _CHECK_OPTIONS, CheckCase

if TYPE_CHECKING:
    pass

SUITE = "jax"
CASE_PREFIX = "jax/"
USER_PREFIX = "jax/ext/"
BUNDLED_FLOOR = 30  # a broken conformance/jax must not look green
ENTRY_FUNCTION = "check_xla"
LOWERING = (
    "lowered by jax.jit(function, keep_unused=True).lower(*inputs) on the CPU (every input "
    "kept); @check_xla calls it on the inputs and checks XLA's outputs"
)


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

    def outcome_info(self) -> dict[str, Any]:
        """The harness's steps beyond the function as given (model/preparation.py)."""
        return {"jax": {"lowering": LOWERING}}

    def users_program(self) -> bool:
        return self.case_id.startswith(USER_PREFIX)

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


FOLDER = case_folder.FolderSuite(
    suite=SUITE,
    kind=KIND,
    case_prefix=CASE_PREFIX,
    user_prefix=USER_PREFIX,
    label="JAX",
    option="--jax-dir",
    write_hint="iree_conformance.frontends.jax_export.case",
    corpus_error=CorpusError,
    floor=BUNDLED_FLOOR,
    description="JAX programs compiled by IREE and checked against XLA (bundled conformance/jax, --jax-dir)",
    option_help="also run the JAX cases of every .py file under DIR (functions with example inputs, or flax modules; see docs/your-own-model.md) against XLA (repeatable)",
    case_type=JaxCase,
    entry_function=ENTRY_FUNCTION,
    input_type="stablehlo",
    reference_name="xla",
    case_fields=lambda listed: {"import_options": dict(_CHECK_OPTIONS)},
)

#: The cases of a user's folder, and a listed case's Case (a skip, an error or runnable).
user_listed = functools.partial(case_folder.user_listed, FOLDER)
to_case = functools.partial(case_folder.to_case, FOLDER)


class JaxSuite(case_folder.CaseFolderSuite):
    """JAX programs exported to StableHLO, compiled and run by IREE, checked against XLA."""

    folder = FOLDER
