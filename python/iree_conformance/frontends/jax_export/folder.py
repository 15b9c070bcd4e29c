"""JAX's kind of case folder (``case_folder``): a case's export is its self-checking
StableHLO text (``export.export_case``), stored as ``{"text": ...}`` or, for a case that
cannot be exported, ``{"error": ...}``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from iree_conformance.common.store import ArtifactStore
from iree_conformance.frontends import case_folder
from iree_conformance.frontends.case_folder import ExportFailed, Listed
from iree_conformance.frontends.jax_export.spec import JaxCase

INSTALL_HINT = "python -m pip install 'iree-conformance[jax]' (in a checkout: -e '.[jax]')"


def _versions() -> dict[str, str | None]:
    from iree_conformance.frontends.jax_export.export import versions

    return versions()


def _failure(stage: str, message: str) -> bytes:
    return json.dumps({"error": message}).encode()


def _export(path: Path, case: JaxCase, listed: Listed) -> bytes:
    from iree_conformance.frontends.jax_export.export import ExportError, export_case

    try:
        return json.dumps({"text": export_case(case, listed.case_id)}).encode()
    except ExportError as e:
        return _failure("prepare", f"{path}: case {listed.name}: export failed: {e}")


def _valid(payload: bytes) -> bool:
    try:
        found = json.loads(payload)
    except ValueError:
        return False
    return isinstance(found, dict) and ("text" in found or "error" in found)


KIND = case_folder.FolderKind(
    name="jax",
    package=Path(__file__).parent,
    case_type=JaxCase,
    versions=_versions,
    required=("jax", "jaxlib"),
    optional=("jax", "jaxlib", "flax"),
    install_hint=INSTALL_HINT,
    no_case_hint="decorate a function with @case(...) or list JaxCase values in CASES",
    export=_export,
    failure=_failure,
    valid=_valid,
    key_extra=lambda: (os.environ.get("JAX_ENABLE_X64", ""),),
    mlir_file=True,
)


def missing_reason() -> str | None:
    """Why JAX cases cannot be exported here, or None when jax and jaxlib are installed."""
    return case_folder.missing_reason(KIND)


def list_tree(root: Path, id_prefix: str, store: ArtifactStore) -> list[Listed]:
    return case_folder.list_tree(KIND, root, id_prefix, store)


def export_listed(case: Listed, store: ArtifactStore) -> str:
    """The case's self-checking text: from the store, else exported and stored.
    ExportFailed says why there is none."""
    found: dict[str, Any] = json.loads(case_folder.export_listed(KIND, case, store))
    if "error" in found:
        raise ExportFailed("prepare", found["error"])
    return str(found["text"])


def load_cases(path: Path) -> list[JaxCase]:
    return case_folder.load_cases(KIND, path)
