"""torch's kind of case folder (``case_folder``): a case's export is an ``Exported``
(``artifact``: the MLIR, the inputs and torch eager's outputs) or, for one that cannot be
exported, the failure's JSON (``{"stage", "error"[, "core_mlir"]}``); beside it, only for a
case whose iree-turbine preparation fails to compile, the program under torch's core
decompositions (``CORE_KIND``)."""

from __future__ import annotations

import json
from pathlib import Path

from iree_conformance.common.store import ArtifactStore
from iree_conformance.frontends import case_folder
from iree_conformance.frontends.case_folder import ExportFailed, Listed
from iree_conformance.frontends.torch_export.artifact import Exported
from iree_conformance.frontends.torch_export.spec import TorchCase

CORE_KIND = "torch-core-export"  # the program under torch's core decompositions
INSTALL_HINT = (
    "pip install torch==2.13.0 iree-turbine (or the extra: pip install 'iree-conformance[torch]'; "
    "GitHub runners: --index-url https://download.pytorch.org/whl/cpu for torch's CPU build)"
)


def _versions() -> dict[str, str | None]:
    from iree_conformance.frontends.torch_export.export import versions

    return versions()


def failure_payload(stage: str, message: str, core_mlir: str | None = None) -> bytes:
    failure = {"stage": stage, "error": message}
    if core_mlir is not None:
        failure["core_mlir"] = core_mlir
    return json.dumps(failure).encode()


def _export(path: Path, case: TorchCase, listed: Listed) -> bytes:
    from iree_conformance.frontends.torch_export.export import ExportError, export_case

    try:
        return export_case(case).to_bytes()
    except ExportError as e:
        message = f"{case.path or path}:{case.line}: case {listed.name}: {e}"
        return failure_payload(e.stage, message, e.core_mlir)


KIND = case_folder.FolderKind(
    name="torch",
    package=Path(__file__).parent,
    case_type=TorchCase,
    versions=_versions,
    required=("torch", "iree.turbine"),
    optional=("torch", "iree.turbine", "transformers"),
    install_hint=INSTALL_HINT,
    no_case_hint=(
        "decorate a function with @case(...), call module_case(...) at module level, or "
        "list TorchCase values in CASES"
    ),
    export=_export,
    failure=failure_payload,
    install_names=(("iree.turbine", "iree-turbine"),),
    in_child=True,
)
EXPORT_KIND = KIND.export_kind


def missing_reason() -> str | None:
    """Why torch cases cannot be exported here, or None when torch and iree-turbine are."""
    return case_folder.missing_reason(KIND)


def list_tree(root: Path, id_prefix: str, store: ArtifactStore) -> list[Listed]:
    return case_folder.list_tree(KIND, root, id_prefix, store)


def export_listed(case: Listed, store: ArtifactStore) -> Exported:
    """The case's export: from the store, else exported and stored. ExportFailed says
    why there is none (a failure is stored too: it is as deterministic as a success)."""
    return decode(case_folder.export_listed(KIND, case, store))


def decode(payload: bytes) -> Exported:
    if payload.startswith(b"{"):
        failure = json.loads(payload)
        raise ExportFailed(failure["stage"], failure["error"], failure.get("core_mlir"))
    return Exported.from_bytes(payload)


def core_export_listed(case: Listed, store: ArtifactStore) -> str:
    """The case's program prepared with torch's core decompositions (only asked for a case
    whose iree-turbine preparation fails to compile), from the store, else made and
    stored. ExportFailed says why there is none."""
    return core_text(case_folder.stored(KIND, case, store, CORE_KIND, _export_core, CORE_KIND))


def core_text(payload: bytes) -> str:
    if payload.startswith(b"{"):
        failure = json.loads(payload)
        raise ExportFailed(failure["stage"], failure["error"])
    return payload.decode("utf-8")


def _export_core(path: Path, listed: Listed) -> bytes:
    from iree_conformance.frontends.torch_export.export import ExportError, export_core

    try:
        found = find_case(path, listed.name)
    except Exception as e:  # noqa: BLE001 - it exported before: a file that changed since
        return failure_payload("prepare", f"{path}: {e}")
    try:
        return export_core(found).encode("utf-8")
    except ExportError as e:
        return failure_payload(e.stage, str(e))


def find_case(path: Path, name: str) -> TorchCase:
    found: TorchCase = case_folder.find_case(KIND, path, name)
    return found


def source_digest() -> str:
    return case_folder.source_digest(KIND)
