"""What a per-version environment must hold, and the check that it still holds it.

``ready.json``, written last when an environment is made (common/version_envs.py), records
beside IREE's version and revision the key the environment was made for and, for every
distribution installed in it, the sha256 of its ``RECORD``. Before the environment is used,
``damage`` reads each recorded ``RECORD`` again (its digest must match: a distribution
replaced or removed is seen) and checks that every file it lists with a size is there with
that size (a deleted ``libIREECompiler.so``, a truncated wheel unpack). Then ``probe`` imports
``iree.compiler`` (creating a compiler session, which loads ``libIREECompiler``) and
``iree.runtime`` in the environment's Python, and reads their versions and revision.

Measured on a real IREE 3.12.0 environment (jax, onnx, onnxruntime, numpy: 56
distributions, 17,791 files): the file check takes 0.25 to 0.5 s, the import probe 0.7 to
1.3 s (docs/versions.md). The same checks guard the ``installed`` version: the
running environment's IREE distributions (their files, through ``importlib.metadata``) and
the probe. An environment made for torch cases is probed with torch too (``TORCH_PROBE``).

A problem with the running harness's own environment (the IREE it imports is damaged) is
told apart in a worker by ``is_iree_import_failure``: such a stage failure is the
harness's error, never IREE's verdict.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import io
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

__all__ = [
    "FORMAT",
    "HARNESS_ENVIRONMENT",
    "PROBE_SCRIPT",
    "TORCH_KEYS",
    "TORCH_PROBE",
    "contents",
    "damage",
    "installed_damage",
    "is_harness_environment_error",
    "is_iree_import_failure",
    "probe",
    "read_ready",
]

# The ready.json layout this module writes and checks; another (an older harness's, or
# none) is a foreign environment, made again.
FORMAT = 2
# Outcome.info["harness_error"] of a stage that failed because IREE cannot be imported.
HARNESS_ENVIRONMENT = "environment"

# Run in the environment's Python: loads the compiler's native library (a session) and the
# runtime's, then prints what ready.json records of IREE.
PROBE_SCRIPT = """
import importlib.metadata as m, json, runpy
d = m.distribution("iree-base-compiler")
ns = runpy.run_path(str(d.locate_file("iree/compiler/version.py")))
import iree.compiler.api, iree.runtime
iree.compiler.api.Session()
out = {"iree_compiler": d.version, "iree_runtime": m.version("iree-base-runtime"),
       "revision": ns.get("REVISIONS", {}).get("IREE"), "build": ns.get("VERSION")}
"""
# With torch (an environment that runs torch cases, common/torch_envs.py): torch (which
# loads libtorch) and iree-turbine import, and their versions are recorded and checked.
# Not iree.turbine.aot: it imports torch's compiler stack, 2.6 times the time (20 s
# against 7.8 s on the loaded machine); the file check has seen its files.
TORCH_PROBE = """
import torch, iree.turbine
out.update(torch=m.version("torch"), iree_turbine=m.version("iree-turbine"))
"""
# The recorded keys a torch probe adds.
TORCH_KEYS = ("torch", "iree_turbine")
_PRINT = "print(json.dumps(out))\n"


def site_packages(env: Path) -> list[Path]:
    """The environment's site-packages folders (lib and lib64 may be one folder)."""
    found = list(env.glob("lib/python*/site-packages")) + list(
        env.glob("lib64/python*/site-packages")
    )
    found += [env / "Lib" / "site-packages"] if (env / "Lib" / "site-packages").is_dir() else []
    unique: dict[str, Path] = {}
    for path in found:
        unique.setdefault(os.path.realpath(path), path)
    return sorted(unique.values())


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def contents(env: Path) -> dict[str, str]:
    """Every installed distribution's RECORD, by its path in env, with its sha256."""
    found = {}
    for folder in site_packages(env):
        for record in sorted(folder.glob("*.dist-info/RECORD")):
            found[record.relative_to(env).as_posix()] = _digest(record.read_bytes())
    return found


def _rows(text: str) -> list[tuple[str, int | None]]:
    rows = []
    for row in csv.reader(io.StringIO(text)):
        if not row or not row[0]:
            continue
        size = row[2].strip() if len(row) > 2 else ""
        rows.append((row[0], int(size) if size.isdigit() else None))
    return rows


def _file_problem(path: Path, size: int | None, shown: str) -> str | None:
    try:
        found = path.stat().st_size
    except OSError:
        return f"{shown} is missing"
    if size is not None and found != size:
        return f"{shown} has {found} bytes, its RECORD says {size}"
    return None


def damage(env: Path, ready: dict[str, Any]) -> str | None:
    """What is wrong with env against what its ready.json recorded; None when whole."""
    recorded = ready.get("contents")
    if not isinstance(recorded, dict) or not recorded:
        return "its ready.json lists no installed distributions (made by another harness)"
    for rel, digest in sorted(recorded.items()):
        record = env / rel
        try:
            data = record.read_bytes()
        except OSError:
            return f"{rel} is missing (a distribution was removed)"
        if _digest(data) != digest:
            return f"{rel} changed since the environment was made (a distribution was replaced)"
        base = record.parent.parent
        for name, size in _rows(data.decode("utf-8", errors="replace")):
            if size is None:
                continue  # RECORD itself, and files written after the install (.pyc)
            problem = _file_problem(base / name, size, os.path.normpath(f"{rel}/../../{name}"))
            if problem:
                return problem
    return None


def installed_damage(names: tuple[str, ...]) -> str | None:
    """The same check for the running environment's distributions names (its IREE)."""
    for name in names:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            return f"{name} is not installed"
        for file in dist.files or []:
            if file.size is None:
                continue
            problem = _file_problem(Path(str(dist.locate_file(file))), file.size, str(file))
            if problem:
                return f"{name}: {problem}"
    return None


def probe(python: Path, torch: bool = False) -> tuple[dict[str, Any] | None, str]:
    """(IREE's version and revision as the environment's Python imports it, "") or
    (None, why it could not); with torch, torch's and iree-turbine's too."""
    script = PROBE_SCRIPT + (TORCH_PROBE if torch else "") + _PRINT
    try:
        proc = subprocess.run(
            [str(python), "-c", script],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{type(e).__name__}: {e}"
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
        return None, (lines[-1] if lines else f"exit {proc.returncode}")[-300:]
    try:
        info = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"its IREE probe printed no version: {proc.stdout[-200:]!r}"
    return (info, "") if isinstance(info, dict) else (None, "its IREE probe printed no version")


def read_ready(path: Path) -> tuple[dict[str, Any] | None, str]:
    """ready.json's content, or (None, what is wrong with it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, "it has no ready.json (its build did not finish)"
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return None, f"its ready.json cannot be read ({type(e).__name__}: {e})"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None, "its ready.json is of another layout (made by another harness)"
    return data, ""


def is_iree_import_failure(error: BaseException) -> bool:
    """Whether error is IREE's package or native library failing to load: the
    environment's fault, not a verdict on the case."""
    text = str(error)
    if "IREECompiler" in text or "libIREE" in text:
        return isinstance(error, (ImportError, OSError, RuntimeError, ValueError))
    if isinstance(error, ImportError):
        name = error.name or ""
        return name == "iree" or (name.startswith("iree.") and not name.startswith("iree_"))
    return False


# The first diagnostic line of a stage that failed loading IREE, as a worker of an older
# harness reported it (before info["harness_error"]): results files already made.
_IREE_LOAD_FAILURE = re.compile(
    r"^(?:ImportError|ModuleNotFoundError|OSError|RuntimeError|ValueError):.*"
    r"(?:libIREE|IREECompiler|No module named '?iree(?:[.'\s]|$))"
)


def is_harness_environment_error(outcome: dict[str, Any]) -> bool:
    """Whether an outcome (a results file's) failed because its environment could not load
    IREE: the harness's error, never a verdict."""
    info = outcome.get("info")
    if isinstance(info, dict) and info.get("harness_error") == HARNESS_ENVIRONMENT:
        return True
    if outcome.get("status") != "error":
        return False
    diagnostics = outcome.get("diagnostics")
    first = diagnostics[0] if isinstance(diagnostics, list) and diagnostics else ""
    return isinstance(first, str) and bool(_IREE_LOAD_FAILURE.match(first))
