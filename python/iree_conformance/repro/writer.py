"""Writes a reproducer folder (``ReproSpec``), verifies it and records what it holds.

The folder is built under a temporary name beside its place, verified from a scratch
copy (``verify.py``), and renamed into place once complete: a folder that exists is
whole. An existing folder is refused unless ``force`` (then it is replaced).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.fsutil import (
    link_or_copy,
    make_temp_dir,
    rename_dir,
)
from iree_conformance.common.store import ArtifactStore
from iree_conformance.frontends.onnx.download import file_digest
from iree_conformance.repro import issue_text, verify, verify_cache
from iree_conformance.repro.spec import (
    INPUT_MLIR,
    MODEL_ONNX,
    PARAMS_FILE,
    ReproSpec,
    compile_flags_text,
    repro_cmd,
    repro_sh,
    run_flags_text,
)

RECORD_FILE = "repro.json"
SCHEMA = "iree-conformance-repro/1"


class FolderExists(ConfigurationError):
    """The output folder exists and --force was not given."""


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def _write_files(spec: ReproSpec, folder: Path) -> None:
    """Plain writes: ``folder`` is the temporary one, renamed into place once complete, so
    a file of it needs no atomic write of its own (which costs a run with many reds)."""
    if spec.mlir is not None:
        (folder / INPUT_MLIR).write_bytes(spec.mlir)
    if spec.onnx is not None:
        (folder / MODEL_ONNX).write_bytes(spec.onnx)
    if spec.parameters_file is not None:  # the folder names only its own files
        link_or_copy(spec.parameters_file, folder / PARAMS_FILE)
    texts = {
        "compile.flags": compile_flags_text(spec),
        "run.flags": run_flags_text(spec),
        "repro.sh": repro_sh(spec),
    }
    for name, text in texts.items():
        (folder / name).write_bytes(text.encode("utf-8"))
    for i, array in enumerate(spec.inputs):
        (folder / f"input_{i}.npy").write_bytes(_npy(array))
    if spec.compares and spec.expected is not None:
        for i, array in enumerate(spec.expected):
            (folder / f"expected_{i}.npy").write_bytes(_npy(array))
    (folder / "repro.sh").chmod(0o755)
    (folder / "repro.cmd").write_bytes(repro_cmd(spec).encode("utf-8"))


def _file_list(folder: Path) -> list[dict[str, Any]]:
    return [
        {
            "name": p.relative_to(folder).as_posix(),
            "size": p.stat().st_size,
            "sha256": file_digest(p)[0],  # by chunks: params.irpa can be many GiB
        }
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != RECORD_FILE
    ]


def check_destination(out: Path, force: bool) -> None:
    """Refuses, before any work, a place the reproducer cannot go: a folder that exists
    (``force``: unless it is one a reproducer wrote, or empty), the working folder, a
    folder above it, the home folder or a root (never replaced), a link, or a place that
    cannot be written."""
    _refuse_protected(out)
    if out.is_symlink():
        raise ConfigurationError(f"{out} is a link; pass -o a folder path")
    if out.exists() and not out.is_dir():
        raise ConfigurationError(f"{out} exists and is not a folder; pass -o a folder path")
    if out.exists() and not force:
        raise FolderExists(f"{out} exists; pass --force to replace it, or -o another folder")
    if out.exists() and not (out / RECORD_FILE).is_file() and any(out.iterdir()):
        raise ConfigurationError(
            f"{out} is not a reproducer folder (it holds no {RECORD_FILE}); --force replaces "
            "only a folder repro wrote: pass -o another folder"
        )
    _check_writable(out)


def _refuse_protected(out: Path) -> None:
    """The working folder, a folder above it, the home folder and a root are never a
    reproducer's place: replacing one would delete the user's files."""
    where = out.resolve()
    cwd = Path.cwd().resolve()
    what = None
    if where.parent == where:
        what = "a root folder"
    elif where == cwd or where in cwd.parents:
        what = "the working folder" if where == cwd else "a folder above the working folder"
    elif where == _home():
        what = "the home folder"
    if what:
        raise ConfigurationError(
            f"-o {out} is {what}; a reproducer needs a folder of its own: pass -o a new folder"
        )


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError):  # no HOME and no user entry
        return None


def _check_writable(out: Path) -> None:
    """A temporary folder made and removed where the reproducer's will be made (the
    nearest folder of ``out`` that exists), so a read-only place is said before the case
    runs."""
    parent = out.absolute().parent
    while not parent.exists() and parent.parent != parent:
        parent = parent.parent
    try:
        make_temp_dir(".repro-check.", parent).rmdir()
    except OSError as e:
        raise ConfigurationError(
            f"cannot write the reproducer under {parent} ({e.strerror or e}); "
            "pass -o a folder you can write"
        ) from None


def write(
    spec: ReproSpec,
    out: Path,
    versions: dict[str, Any],
    *,
    force: bool = False,
    verify_it: bool = True,
    tools_path: str | None = None,
    timeout_s: float = 600.0,
    store: ArtifactStore | None = None,
) -> dict[str, Any]:
    """Writes, verifies and records the folder; returns its repro.json record. With a
    ``store``, a verification run of the same files and tools made before is read from
    it (``verify_cache``) instead of compiling again."""
    out = Path(out)
    check_destination(out, force)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = make_temp_dir(f".{out.name[:40]}.", out.parent)
    except OSError as e:
        raise ConfigurationError(
            f"cannot write the reproducer under {out.parent} ({e.strerror or e}); "
            "pass -o a folder you can write"
        ) from None
    try:
        _write_files(spec, tmp)
        verified: dict[str, Any] = {"reproduced": None, "why": "not verified (--no-verify)"}
        if spec.kind == "pass":
            verified = {"reproduced": None, "why": "the case passes: nothing to reproduce"}
        tools: Path | None = None
        if verify_it or spec.sources_dir:
            try:
                tools = verify.tools_dir(spec, tools_path)
            except verify.ToolsMissing as e:
                verified = {"reproduced": None, "why": str(e), "tools_missing": True}
        if tools is not None and verify_it:
            ran = verify_cache.run_reproducer(tmp, tools, timeout_s, store)
            verified = verify.judge(spec, ran)
            # which tools, never where: the folder holds no path of this machine
            verified["tools"] = "--tools" if tools_path else "PATH"
            verified["from_store"] = bool(ran.get("from_store"))
        dumped = None
        if tools is not None and spec.sources_dir and spec.mlir is not None:
            dumped = verify.dump_sources(tmp, tools, timeout_s)
        if spec.kind != "pass":
            (tmp / "ISSUE.md").write_bytes(
                issue_text.render(spec, versions, verified).encode("utf-8")
            )
        record = {
            "schema": SCHEMA,
            "case_id": spec.case_id,
            "target": spec.target,
            "kind": spec.kind,
            "stage": spec.stage,
            "first_line": spec.first_line,
            "diagnostics": spec.diagnostics,
            "function": spec.function,
            "device": spec.device,
            "notes": spec.notes,
            "context": spec.context,
            "versions": versions,
            "reproduced": verified.get("reproduced"),
            "verification": verified,
            "sources": dumped,
            "files": _file_list(tmp),
        }
        text = json.dumps(record, indent=1, default=str) + "\n"
        (tmp / RECORD_FILE).write_bytes(text.encode("utf-8"))
        if out.exists():
            shutil.rmtree(out)
        if not rename_dir(tmp, out):
            raise ConfigurationError(
                f"{out} appeared while the reproducer was written; pass --force or -o another folder"
            )
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return record
