"""Names for the host: the OS names used by targets, overlays and reports."""

from __future__ import annotations

import functools
import hashlib
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


# CPU features that decide which instructions LLVM may emit for this host; listed in the
# results JSON so a host-dependent verdict can be traced to the machine that gave it.
_NOTABLE_FEATURES = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "f16c", "fma", "sve", "bf16", "i8mm", "asimddp")


def _cpuinfo() -> tuple[str, list[str]]:
    """(model name, feature flags) from /proc/cpuinfo on Linux; empty elsewhere."""
    try:
        text = open("/proc/cpuinfo", encoding="utf-8", errors="replace").read()  # noqa: SIM115
    except OSError:
        return "", []
    model, flags = "", []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "cpu model") and not model:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = value.split()
    return model, flags


@functools.lru_cache(maxsize=1)
def host_cpu() -> dict[str, object]:
    """The host CPU: model name and the notable features IREE's LLVM backend may use."""
    model, flags = _cpuinfo()
    if not model:
        model = platform.processor() or platform.machine()
    present = set(flags)
    return {
        "model": model,
        "features": [f for f in _NOTABLE_FEATURES if f in present],
        "feature_digest": hashlib.sha256(" ".join(sorted(present)).encode()).hexdigest()[:16] if present else "",
    }


def cpu_fingerprint() -> str:
    """Names this host's CPU for host-specific compile keys (llvm-cpu-host modules)."""
    cpu = host_cpu()
    return f"{host_arch()}:{cpu['model']}:{cpu['feature_digest']}"
