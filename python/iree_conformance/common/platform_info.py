"""Names for the host: the OS names used by targets, overlays and reports.

The architecture names match ``ci/_common.py``'s (``x86_64``, ``arm64``), so results from
an Apple silicon Mac and from a Linux arm64 machine land in one merged-results row name.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import signal
import sys

_ARCH = {
    "amd64": "x86_64",
    "x64": "x86_64",
    "x86_64": "x86_64",
    "arm64": "arm64",
    "aarch64": "arm64",
}


def host_os(platform_name: str | None = None) -> str:
    """linux, macos or windows (other systems keep their sys.platform name)."""
    name = sys.platform if platform_name is None else platform_name
    if name.startswith("linux"):
        return "linux"
    if name == "darwin":
        return "macos"
    if name in ("win32", "cygwin"):
        return "windows"
    return name


def host_arch(machine: str | None = None) -> str:
    """x86_64, arm64, or platform.machine() lower-cased for anything else."""
    machine = (platform.machine() if machine is None else machine).lower()
    return _ARCH.get(machine, machine)


def unsupported_host_reason(
    platform_name: str | None = None, machine: str | None = None
) -> str | None:
    """Why the IREE wheels cannot run in this Python, or None when they can.

    The macOS wheels are tagged universal2 but hold arm64 binaries only, so an x86_64
    Python (an Intel Mac, or Rosetta on Apple silicon) fails to load them with a bare
    "incompatible architecture" from dlopen.
    """
    if host_os(platform_name) == "macos" and host_arch(machine) == "x86_64":
        return (
            "this Python runs as x86_64 on macOS (an Intel Mac, or Rosetta on Apple silicon), "
            "but the macOS iree-base-compiler/iree-base-runtime wheels hold arm64 binaries only "
            "(although tagged universal2); use an arm64 Python on an Apple silicon Mac, or "
            "Linux or Windows, or build IREE from source (.github/workflows/build-from-source.yml)"
        )
    return None


# Windows reports a crash as an NTSTATUS exit code (never a negative one); a few by name.
_NTSTATUS = {
    0xC0000005: "access violation",
    0xC000001D: "illegal instruction",
    0xC0000094: "integer divide by zero",
    0xC00000FD: "stack overflow",
    0xC0000409: "stack buffer overrun / fast fail",
}


def describe_exit(returncode: int, platform_name: str | None = None) -> str:
    """A child process's exit status in the words of its OS (``platform_name``: a
    sys.platform value, default this one)."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    if (sys.platform if platform_name is None else platform_name) == "win32":
        code = returncode & 0xFFFFFFFF
        if code >= 0xC0000000:
            name = _NTSTATUS.get(code)
            return f"exception 0x{code:08X}" + (f" ({name})" if name else "")
        if code == 3:
            return "exit status 3 (abort())"
    return f"exit status {returncode}"


# Exit statuses of a program that faulted by itself: an abort (LLVM's fatal errors and
# assertions), a bad memory access, an illegal instruction, a division by zero. A kill
# from outside (SIGKILL: the OOM killer or a user, SIGTERM, SIGINT) is not among them.
_FAULT_SIGNALS = {"SIGABRT", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"}
_FAULT_NTSTATUS = {0xC0000005, 0xC000001D, 0xC0000094, 0xC00000FD, 0xC0000409}


def is_program_fault(returncode: int, platform_name: str | None = None) -> bool:
    """Whether a child's exit status says it faulted by itself (a compiler crash that the
    same input repeats), not that something outside stopped it."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name in _FAULT_SIGNALS
        except ValueError:
            return False
    if (sys.platform if platform_name is None else platform_name) == "win32":
        return returncode == 3 or (returncode & 0xFFFFFFFF) in _FAULT_NTSTATUS
    return False


# CPU features that decide which instructions LLVM may emit for this host; listed in the
# results JSON so a host-dependent verdict can be traced to the machine that gave it.
_NOTABLE_FEATURES = (
    "avx2",
    "avx512f",
    "avx512_bf16",
    "avx512_fp16",
    "amx_bf16",
    "f16c",
    "fma",
    "sve",
    "bf16",
    "i8mm",
    "asimddp",
)


def _cpuinfo() -> tuple[str, list[str]]:
    """(model name, feature flags) from /proc/cpuinfo on Linux; empty elsewhere."""
    try:
        text = open("/proc/cpuinfo", encoding="utf-8", errors="replace").read()  # noqa: SIM115
    except OSError:
        return "", []
    model = ""
    flags: list[str] = []
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
        "feature_digest": hashlib.sha256(" ".join(sorted(present)).encode()).hexdigest()[:16]
        if present
        else "",
    }


def cpu_fingerprint() -> str:
    """Names this host's CPU for host-specific compile keys (llvm-cpu-host modules)."""
    cpu = host_cpu()
    return f"{host_arch()}:{cpu['model']}:{cpu['feature_digest']}"
