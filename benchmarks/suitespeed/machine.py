"""The machine and its processes as the OS reports them: a description, the load, the
CPU seconds of children and of one process, and a process's RSS."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any


def machine_description() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    versions = {}
    for dist in (
        "iree-base-compiler",
        "iree-base-runtime",
        "onnx",
        "numpy",
        "pytest",
        "pytest-xdist",
    ):
        try:
            from importlib.metadata import version

            versions[dist] = version(dist)
        except Exception:  # noqa: BLE001 - informational only
            versions[dist] = "?"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gib": ram_gib,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": versions,
        "loadavg_start": loadavg(),
        "children_cpu": counts_children_cpu(),
    }


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def children_cpu() -> float:
    """User+system CPU seconds of all waited-for descendants so far; 0.0 where the OS
    does not count them (Windows has no ``resource`` module): CPU ratios are then left
    out and the report says so."""
    try:
        import resource
    except ImportError:
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def counts_children_cpu() -> bool:
    try:
        import resource  # noqa: F401
    except ImportError:
        return False
    return True


def read_proc_status(pid: int) -> dict[str, int]:
    """VmRSS / VmHWM (bytes) of a process from /proc; {} when unavailable."""
    result = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                result[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return result


def parse_proc_stat_cpu(text: str, ticks_per_s: float) -> float:
    """User+system CPU seconds of a process from the text of /proc/<pid>/stat (fields
    14 and 15, counted after the parenthesised command name, which may hold spaces)."""
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / ticks_per_s


def process_cpu(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        return parse_proc_stat_cpu(Path(f"/proc/{pid}/stat").read_text(), os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def worker_pid(client: Any) -> int | None:
    """The pid of a WorkerClient's worker process while it runs; None otherwise."""
    proc = getattr(client, "_proc", None)
    return proc.pid if proc is not None and proc.poll() is None else None
