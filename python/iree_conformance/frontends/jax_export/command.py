"""``iree-conformance export-jax DIR``: every JAX case as a self-checking StableHLO file.

The files are what the jax suite runs (the same text, from the same cache), so
``pytest conformance -m stablehlo --stablehlo-dir DIR`` on a machine without JAX gives
the same verdicts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from iree_conformance.common.errors import ConfigurationError, CorpusError
from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.common.store import ArtifactStore, default_store_dir
from iree_conformance.frontends.case_folder import ExportFailed, Listed
from iree_conformance.frontends.jax_export.folder import export_listed, list_tree, missing_reason

BUNDLED_PREFIX, USER_PREFIX = "jax/", "jax/ext/"


def export_to(
    out_dir: Path, sources: list[tuple[Path, str]], store: ArtifactStore
) -> tuple[list[Path], list[tuple[str, str]]]:
    """Writes each exported case of each (folder, id prefix) under out_dir; returns the
    files written and (case id, why) for each case that has no file."""
    missing = missing_reason()
    if missing:
        raise ConfigurationError(f"export-jax needs JAX: {missing}")
    written: list[Path] = []
    problems: list[tuple[str, str]] = []
    owners: dict[Path, str] = {}
    for root, prefix in sources:
        if not root.is_dir():
            raise CorpusError(f"{root}: not a directory of JAX case files")
        for record in list_tree(root, prefix, store):
            text = _text(record, store, problems)
            if text is None:
                continue
            path = out_dir / record.file
            if path in owners:
                raise ConfigurationError(
                    f"{record.case_id} and {owners[path]} would both be written to {path}: "
                    "export their folders to different places"
                )
            owners[path] = record.case_id
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, text)
            written.append(path)
    return written, problems


def _text(record: Listed, store: ArtifactStore, problems: list[tuple[str, str]]) -> str | None:
    if record.error or record.skip:
        problems.append((record.case_id, record.error or record.skip or ""))
        return None
    try:
        return export_listed(record, store)
    except ExportFailed as e:
        problems.append((record.case_id, f"error: {e}"))
        return None


def run(
    out_dir: Path, jax_dirs: list[Path], bundled: Path, store_dir: Path | None, no_cache: bool
) -> int:
    sources = [(d, USER_PREFIX) for d in jax_dirs] or [(bundled, BUNDLED_PREFIX)]
    store = ArtifactStore(None if no_cache else (store_dir or default_store_dir()))
    written, problems = export_to(out_dir, sources, store)
    for case_id, why in problems:
        print(f"{case_id}: {why}", file=sys.stderr)
    print(
        f"wrote {len(written)} self-checking StableHLO files to {out_dir}"
        + (f"; {len(problems)} cases not exported (above)" if problems else "")
        + f"; run them with: pytest conformance -m stablehlo --stablehlo-dir {out_dir}"
    )
    return 1 if problems else 0
