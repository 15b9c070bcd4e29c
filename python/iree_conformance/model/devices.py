"""What this host can run: HAL drivers, their devices, and usable targets."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from iree_conformance.model.targets import (
    Target,
    available_drivers,
    driver_devices,
    unavailable_reason,
)


def nvidia_gpus() -> list[dict[str, str]]:
    """Name, compute capability and memory of NVIDIA GPUs, from nvidia-smi when present."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run(
            [exe, "--query-gpu=index,name,compute_cap,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    gpus = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 4:
            gpus.append(
                {
                    "index": parts[0],
                    "name": parts[1],
                    "compute_capability": parts[2],
                    "memory": parts[3],
                }
            )
    return gpus


def describe(targets: dict[str, Target]) -> dict[str, Any]:
    drivers = {}
    for name in available_drivers():
        devices = [dict(d) for d in driver_devices(name)]
        drivers[name] = {"devices": devices}
        if name == "cuda" and devices:
            drivers[name]["gpus"] = nvidia_gpus()
    usable = {t.name: (unavailable_reason(t) or "usable") for t in targets.values()}
    return {"drivers": drivers, "targets": usable}


def render(info: dict[str, Any]) -> str:
    lines = ["HAL drivers in this iree-base-runtime build:"]
    for name, d in info["drivers"].items():
        devices = d["devices"]
        lines.append(
            f"  {name}: {len(devices)} device(s)" if devices else f"  {name}: no device found"
        )
        for dev in devices:
            lines.append(
                f"    {name}://{dev.get('path') or dev.get('device_id')}  {dev.get('name', '')}"
            )
        for gpu in d.get("gpus", []):
            lines.append(
                f"    GPU {gpu['index']}: {gpu['name']}, compute capability {gpu['compute_capability']}, {gpu['memory']}"
            )
    lines.append("Targets (conformance/targets.toml):")
    for name, state in info["targets"].items():
        lines.append(f"  {name:<14} {state}")
    return "\n".join(lines)
