"""MLIR threading in the suite's workers: the environment that gives only the worker
processes IREE's global command-line flags, and what the threads phase found."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

# Marks the worker processes of the MLIR-threading phase (see threads_env).
WORKER_LOG_PREFIX = "iree-conformance-worker-"
_SITECUSTOMIZE = '''"""suite_speed.py's threads phase: IREE's global command line in the suite's workers."""
import os
import sys

_flags = os.environ.get("SUITE_SPEED_IREE_GLOBAL_FLAGS", "").split()
# A worker is `python -m iree_conformance.engine.worker.main LOG STORE`, LOG from tempfile.
if _flags and len(sys.argv) > 1 and sys.argv[0] == "-m" and os.path.basename(sys.argv[1]).startswith("@PREFIX@"):
    from iree.compiler.api import ctypes_dl

    ctypes_dl._init_dylib()
    ctypes_dl._initializeGlobalCL("iree-conformance-worker", *_flags)
    _marks = os.environ.get("SUITE_SPEED_IREE_GLOBAL_MARKS")
    if _marks:  # one file per worker that took the flags
        open(os.path.join(_marks, str(os.getpid())), "w").close()
'''.replace("@PREFIX@", WORKER_LOG_PREFIX)


def threads_env(work_dir: Path, flags: list[str]) -> dict[str, str]:
    """The environment that gives the suite's worker processes (only them) IREE's global
    command-line flags: `--mlir-disable-threading` is a global MLIR option, which
    ``Session.set_flags`` rejects ("option not found"), so a per-target compile flag
    cannot carry it."""
    site = work_dir / "threads-site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8", newline="\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(site) + os.pathsep + env.get("PYTHONPATH", "")
    env["SUITE_SPEED_IREE_GLOBAL_FLAGS"] = " ".join(flags)
    marks = work_dir / "threads-marks"
    shutil.rmtree(marks, ignore_errors=True)
    marks.mkdir()
    env["SUITE_SPEED_IREE_GLOBAL_MARKS"] = str(marks)
    return env


def session_flag_accepted(flag: str) -> bool | str:
    """Whether ``iree.compiler.api.Session.set_flags`` takes `flag`; the error otherwise."""
    from iree.compiler.api import Session

    try:
        Session().set_flags(flag)
        return True
    except ValueError as e:
        return str(e).strip().splitlines()[-1].strip()


def threads_figures(work_dir: Path, flags: list[str]) -> dict[str, Any]:
    """After the threads phase: the flags given, whether a Session takes the flag, and
    how many worker processes took the flags (the marks the sitecustomize left)."""
    marks = work_dir / "threads-marks"
    return {
        "global_flags": flags,
        "session_flags": {f: session_flag_accepted(f) for f in ("--mlir-disable-threading",)},
        "workers_with_flags": len(list(marks.iterdir())) if marks.is_dir() else 0,
    }
