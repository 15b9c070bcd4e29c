"""The ``jax`` suite: JAX programs compiled and run by IREE, checked against XLA.

Cases are Python (``jax_export.spec``): the bundled ones in ``conformance/jax/``, a user's
in each ``--jax-dir``. Each case is exported once (cached in the artifact store, keyed by
the JAX version and the case file's source) as the self-checking StableHLO text that
``iree-conformance export-jax`` writes, and runs as a ``--stablehlo-dir`` file does
(``CheckCase``): one mechanism for both, so the files give the same verdicts.

Without JAX the suite is one skip case that says so and how to install it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from .. import errors
from ..cases import Case, Check
from ..jax_export.tree import Exported, export_tree, missing_reason
from ..jobs import CaseResult
from ..store import ArtifactStore, default_store_dir
from .check_pairs import checks_from_records
from .stablehlo_files import _CHECK_OPTIONS, CheckCase, InvalidCase

if TYPE_CHECKING:
    from ..run_options import RunOptions

SUITE = "jax"
CASE_PREFIX = "jax/"
USER_PREFIX = "jax/ext/"
BUNDLED_FLOOR = 30  # a broken conformance/jax must not look green
ENTRY_FUNCTION = "check_xla"


class CorpusError(errors.CorpusError):
    pass


@dataclasses.dataclass
class JaxCase(CheckCase):
    """An exported JAX case: its checks compare IREE's results with XLA's."""

    file: str = ""  # the file export-jax writes it to, for the checks' labels

    def checks(self, input_sets, output_sets, worker_result: CaseResult) -> list[Check]:
        sites, records = worker_result.check_sites, worker_result.check_records
        if sites is None or not records:
            raise ValueError(f"the module reported no checks for function {ENTRY_FUNCTION!r}")
        return checks_from_records(sites, records[0], Path(self.file).name)


def collect(conformance_dir: Path, options: RunOptions) -> list[Case]:
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
    store = ArtifactStore(
        None if options.no_cache else Path(options.store_dir or default_store_dir())
    )
    bundled_dir = conformance_dir / "jax"
    if not bundled_dir.is_dir():
        raise CorpusError(
            f"{bundled_dir}: no such folder: restore conformance/jax from git (the bundled JAX cases)"
        )
    bundled = export_tree(bundled_dir, CASE_PREFIX, store)
    if not any(r.skip for r in bundled) and len(bundled) < BUNDLED_FLOOR:
        raise CorpusError(
            f"{bundled_dir}: {len(bundled)} bundled JAX cases, fewer than the floor of "
            f"{BUNDLED_FLOOR}; restore conformance/jax from git"
        )
    records = list(bundled)
    for root in options.jax_dirs:
        records += user_records(Path(root), store)
    return [to_case(r) for r in records]


def user_records(root: Path, store: ArtifactStore) -> list[Exported]:
    if not root.is_dir():
        raise CorpusError(f"--jax-dir {root}: not a directory")
    records = export_tree(root, USER_PREFIX, store)
    if not records:
        problem = (
            f"--jax-dir {root} holds no case file (*.py, not _*.py): add one that defines "
            "cases with iree_conformance.jax_export.case, or point --jax-dir elsewhere"
        )
        records = [Exported(f"{USER_PREFIX}{root.name}:folder", "", error=problem)]
    return records


def to_case(record: Exported) -> Case:
    if record.skip:
        return Case(record.case_id, SUITE, "mlir", skip_reason=record.skip)
    if record.error or record.text is None:
        return InvalidCase(record.case_id, SUITE, "mlir", problem=record.error or "no export")
    return JaxCase(
        case_id=record.case_id,
        suite=SUITE,
        kind="mlir",
        source_bytes=record.text.encode("utf-8"),
        entry_function=ENTRY_FUNCTION,
        input_type="stablehlo",
        import_options=dict(_CHECK_OPTIONS),
        reference_name="xla",
        file=record.file,
    )
