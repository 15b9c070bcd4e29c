"""The version fields of IREE's bug template: the wheels' versions and revisions, the OS,
the CPU and Python."""

from __future__ import annotations

import copy
import functools
import importlib.metadata
import platform
import sys
from typing import Any

from iree_conformance.common.platform_info import host_cpu, host_os


def _package(name: str, module: str) -> dict[str, Any]:
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return {"version": None}
    found: dict[str, Any] = {"version": version}
    try:
        mod = __import__(module, fromlist=["VERSION"])
        found["build"] = getattr(mod, "VERSION", None)
        found["revisions"] = dict(getattr(mod, "REVISIONS", {}) or {})
    except Exception:  # noqa: BLE001 - a version file that will not load: the version alone
        pass
    return found


def version_info() -> dict[str, Any]:
    """The fields, read once per process (a run with many reds asks for each)."""
    return copy.deepcopy(_version_info())


@functools.lru_cache(maxsize=1)
def _version_info() -> dict[str, Any]:
    cpu = host_cpu()
    return {
        "iree-base-compiler": _package("iree-base-compiler", "iree.compiler.version"),
        "iree-base-runtime": _package("iree-base-runtime", "iree.runtime.version"),
        "os": f"{host_os()} ({platform.platform()})",
        "cpu": f"{platform.machine()} {cpu.get('model', '')}".strip(),
        "cpu_features": [str(f) for f in (cpu.get("features") or ())],  # type: ignore[attr-defined]
        "python": sys.version.split()[0],
    }


def version_lines(info: dict[str, Any]) -> list[str]:
    lines = []
    for name in ("iree-base-compiler", "iree-base-runtime"):
        pkg = info.get(name) or {}
        revisions = ", ".join(f"{k} {v}" for k, v in (pkg.get("revisions") or {}).items())
        build = (
            f" (build {pkg['build']})"
            if pkg.get("build") and pkg.get("build") != pkg.get("version")
            else ""
        )
        lines.append(
            f"{name} {pkg.get('version') or 'not installed'}{build}"
            + (f", revision {revisions}" if revisions else "")
        )
    lines.append(f"OS: {info.get('os')}")
    features = ", ".join(info.get("cpu_features") or [])
    lines.append(f"CPU: {info.get('cpu')}" + (f" (features: {features})" if features else ""))
    lines.append(f"Python: {info.get('python')}")
    return lines
