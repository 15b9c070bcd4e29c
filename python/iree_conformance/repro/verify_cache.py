"""A reproducer's verification run, kept in the artifact store.

The same files run by the same IREE tools on the same CPU show the same thing, so the
run (``verify.run_reproducer``: an ``iree-compile`` and an ``iree-run-module``) is stored
under a key made of every file of the folder, the tools (path, size, modification time)
and the CPU, and a later reproducer of the same failure reads it instead of compiling
again: a warm ``pytest --repro-dir`` run compiles nothing (issue 42). A run past its time
limit is not kept (it says more about the machine's load than about IREE).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from iree_conformance.common.platform_info import cpu_fingerprint
from iree_conformance.common.store import ArtifactStore, make_key
from iree_conformance.repro import verify

#: The store's kind for verification runs (store_events names it).
KIND = "repro-run"
#: Bump when run_reproducer changes what it records.
VERSION = "1"


def tools_identity(tools: Path) -> str:
    """The IREE tools of ``tools`` (one folder, or several joined by os.pathsep) as a
    string that changes when any of them is replaced."""
    parts = []
    for name in (*verify.TOOLS, verify.IMPORT_TOOL):
        for folder in str(tools).split(os.pathsep):
            found = shutil.which(name, path=folder)  # iree-compile.exe on Windows
            if found is None:
                continue
            try:
                real = Path(found).resolve()
                stat = real.stat()
            except OSError:
                continue
            parts.append(f"{name}={real}:{stat.st_size}:{stat.st_mtime_ns}")
            break
    return ";".join(parts)


def run_key(folder: Path, tools: Path) -> str:
    """The key of one verification run: every file of the folder, the tools, the CPU."""
    files = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        files.append(f"{path.relative_to(folder).as_posix()}={digest}")
    return make_key(KIND, VERSION, cpu_fingerprint(), tools_identity(tools), *files)


def run_reproducer(
    folder: Path, tools: Path, timeout_s: float, store: ArtifactStore | None
) -> dict[str, Any]:
    """``verify.run_reproducer``'s record, from the store when this run was made before
    (then ``from_store`` is true), else run now and kept."""
    if store is None or not store.enabled:
        return verify.run_reproducer(folder, tools, timeout_s)
    key = run_key(folder, tools)
    hit = store.get(KIND, key)
    if hit is not None:
        try:
            ran = json.loads(hit[1].decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            ran = None
        if isinstance(ran, dict) and "stage" in ran:
            return {**ran, "from_store": True}
    ran = verify.run_reproducer(folder, tools, timeout_s)
    if not ran.get("timed_out"):
        try:
            store.put(KIND, key, json.dumps(ran).encode("utf-8"), {"tools": str(tools)})
        except OSError:  # the store is a cache: not kept costs a compile next time
            pass
    return ran
