"""A software Vulkan device (Mesa's lavapipe) on a runner without a GPU.

  python -m ci software-vulkan            # install what this OS needs, when missing
  python -m ci software-vulkan --dry-run  # print the plan, change nothing

Linux: Debian/Ubuntu's ``mesa-vulkan-drivers`` and ``libvulkan1`` (apt-get, only when the
lavapipe ICD is missing), as .ci/run installs zstd. Windows: the Vulkan loader comes with
the runner's graphics stack, and lavapipe from a pinned release of pal1000/mesa-dist-win
(Mesa built with MSVC; the way wgpu's and others' CI get a software Vulkan on Windows):
its ``x64/vulkan_lvp.dll`` and ``x64/lvp_icd.x86_64.json`` are extracted with the runner's
7-Zip and ``VK_DRIVER_FILES`` names the ICD for the later steps. macOS: nothing; the metal
target stays compile-only (no GPU runner). docs/targets-and-bundles.md says what a
lavapipe verdict proves.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ci._common import CIError, current_os, set_env

# Debian/Ubuntu: where mesa-vulkan-drivers puts lavapipe's ICD file.
LINUX_ICD = Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
LINUX_PACKAGES = ("mesa-vulkan-drivers", "libvulkan1")

# pal1000/mesa-dist-win: Mesa release builds for Windows (MSVC), lavapipe included.
MESA_WIN_VERSION = "24.2.7"
MESA_WIN_URL = (
    "https://github.com/pal1000/mesa-dist-win/releases/download/"
    f"{MESA_WIN_VERSION}/mesa3d-{MESA_WIN_VERSION}-release-msvc.7z"
)
MESA_WIN_FILES = ("x64/vulkan_lvp.dll", "x64/lvp_icd.x86_64.json")


@dataclass
class Plan:
    """What a runner of one OS needs: commands, a download, variables for later steps."""

    os: str
    commands: list[list[str]] = field(default_factory=list)
    download: tuple[str, Path] | None = None  # (url, file)
    env: dict[str, str] = field(default_factory=dict)
    note: str = ""


def plan(os_name: str, dest: Path, *, have_icd: Callable[[], bool] = LINUX_ICD.exists) -> Plan:
    """The steps for ``os_name`` (linux, windows, macos); ``dest`` holds Windows' files."""
    if os_name == "linux":
        if have_icd():
            return Plan("linux", note=f"lavapipe is installed ({LINUX_ICD})")
        sudo = [] if _is_root() else ["sudo"]
        return Plan(
            "linux",
            commands=[
                [*sudo, "apt-get", "update", "-qq"],
                [*sudo, "apt-get", "install", "-y", "-qq", *LINUX_PACKAGES],
            ],
        )
    if os_name == "windows":
        archive = dest / Path(MESA_WIN_URL).name
        icd = dest / "x64" / "lvp_icd.x86_64.json"
        return Plan(
            "windows",
            commands=[["7z", "x", "-y", f"-o{dest}", str(archive), *MESA_WIN_FILES]],
            download=(MESA_WIN_URL, archive),
            env={"VK_DRIVER_FILES": str(icd)},
        )
    if os_name == "macos":
        return Plan("macos", note="no software Vulkan: the metal target is compile-only here")
    raise CIError(f"software-vulkan: unknown OS {os_name!r} (linux, windows or macos)")


def _is_root() -> bool:
    geteuid = getattr(os, "geteuid", None)
    return geteuid is not None and geteuid() == 0


def describe(p: Plan) -> str:
    lines = [f"software Vulkan on {p.os}:"]
    if p.note:
        lines.append(f"  {p.note}")
    if p.download:
        lines.append(f"  download {p.download[0]} -> {p.download[1]}")
    lines += [f"  run {' '.join(c)}" for c in p.commands]
    lines += [f"  set {k}={v}" for k, v in p.env.items()]
    return "\n".join(lines)


def _fetch(url: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=300) as response, open(path, "wb") as out:  # noqa: S310 - a pinned https URL
        shutil.copyfileobj(response, out)


def execute(p: Plan) -> None:
    if p.download:
        _fetch(*p.download)
    for command in p.commands:
        result = subprocess.run(command, check=False)
        if result.returncode != 0:
            raise CIError(
                f"software-vulkan: `{' '.join(command)}` exited {result.returncode}; "
                "install Mesa's lavapipe by hand (docs/targets-and-bundles.md)"
            )
    if p.env:
        set_env(p.env)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--os", help="linux, windows or macos (default: this runner's)")
    parser.add_argument(
        "--dest",
        type=Path,
        default=Path(tempfile.gettempdir()) / "mesa-lavapipe",
        help="where Windows' lavapipe files go",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")


def run(args: argparse.Namespace) -> int:
    p = plan(args.os or current_os(), args.dest)
    print(describe(p))
    if not args.dry_run:
        execute(p)
    return 0
