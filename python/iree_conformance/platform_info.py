"""Names for the host: the OS names used by targets, overlays and reports."""

from __future__ import annotations

import platform
import sys


def host_os() -> str:
    """linux, macos or windows (other systems keep their sys.platform name)."""
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "macos"
    if sys.platform in ("win32", "cygwin"):
        return "windows"
    return sys.platform


def host_arch() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
