"""Put the MSVC x64 build environment into $GITHUB_ENV (Windows runners).

IREE's setup.py configures CMake with Ninja, which needs cl.exe, INCLUDE, LIB and
friends in the environment; cibuildwheel builds Windows wheels on the host and passes
the environment through. This runs vswhere to find Visual Studio, runs
`vcvarsall.bat x64` in cmd, and exports every variable that call added or changed.
Elsewhere it does nothing and says so.

--parse FILE reads the output of `set` from a file instead (for tests).

Example (on Windows):  python -m ci msvc-env --arch x64
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from ci._common import CIError, set_env

MARKER = "===IREE-CI-ENV==="


def parse_set_output(text: str) -> dict[str, str]:
    """`set` prints NAME=VALUE lines; keep the part after the marker line if present."""
    if MARKER in text:
        text = text.split(MARKER, 1)[1]
    env = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name and not name.startswith("="):  # cmd's hidden "=C:=C:\\" entries
            env[name] = value
    return env


def changed(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    # Windows variable names are case-insensitive.
    lower = {k.upper(): v for k, v in before.items()}
    return {k: v for k, v in after.items() if lower.get(k.upper()) != v}


def find_vcvarsall() -> Path:
    program_files = os.environ.get("ProgramFiles(x86)", r"C:\Program Files (x86)")
    vswhere = Path(program_files) / "Microsoft Visual Studio" / "Installer" / "vswhere.exe"
    if not vswhere.is_file():
        raise CIError(f"{vswhere}: not found (is Visual Studio installed?)")
    out = subprocess.run(
        [
            str(vswhere),
            "-latest",
            "-products",
            "*",
            "-requires",
            "Microsoft.VisualStudio.Component.VC.Tools.x86.x64",
            "-format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installs = json.loads(out or "[]")
    if not installs:
        raise CIError("vswhere found no Visual Studio with the C++ x64 tools")
    path = Path(installs[0]["installationPath"]) / "VC" / "Auxiliary" / "Build" / "vcvarsall.bat"
    if not path.is_file():
        raise CIError(f"{path}: not found")
    return path


def vcvars_environment(arch: str) -> dict[str, str]:
    bat = find_vcvarsall()
    script = f'"{bat}" {arch} >nul && echo {MARKER} && set'
    # A string, not a list: cmd's /s /c quoting must reach it verbatim.
    result = subprocess.run(f'cmd /d /s /c "{script}"', capture_output=True, text=True)
    if result.returncode:
        raise CIError(
            f"vcvarsall.bat {arch} failed: {result.stderr.strip() or result.stdout.strip()}"
        )
    return parse_set_output(result.stdout)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--arch", default="x64", help="vcvarsall architecture (default x64)")
    parser.add_argument(
        "--parse", metavar="FILE", help="read `set` output from FILE instead of running vcvarsall"
    )


def run(args: argparse.Namespace) -> int:
    if args.parse:
        after = parse_set_output(Path(args.parse).read_text(encoding="utf-8", errors="replace"))
    elif sys.platform != "win32":
        print("not Windows: nothing to do")
        return 0
    else:
        after = vcvars_environment(args.arch)
    values = changed(dict(os.environ), after)
    set_env(values)
    for name in sorted(values):
        print(f"{name}={values[name][:120]}")
    return 0
