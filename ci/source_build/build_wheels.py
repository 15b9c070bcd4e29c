"""Build the IREE compiler and runtime wheels from an IREE checkout with cibuildwheel.

For each package folder (compiler/, runtime/) of --iree-dir this runs, from inside the
checkout (cibuildwheel copies the working directory into its Linux container):

  cibuildwheel --config-file ci/cibuildwheel.toml --output-dir OUT [--platform P] PACKAGE

Before building it writes PACKAGE/version_local.json with the version from pins.toml
("3.13.0+src.<commit>"), which IREE's setup.py prefers over its version.json. The
ccache settings come from the environment that cibw_env.py exported.

--print-build-identifiers only lists what would be built (no compiler needed), which is
how tests check the configuration against an IREE-shaped folder.

Examples:
  python -m ci build-wheels --iree-dir iree-src --output-dir wheelhouse
  python -m ci build-wheels --iree-dir iree-src --print-build-identifiers --platform windows
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ci._common import CIError
from ci.source_build.pins import PINS_FILE, git, load_pins, package_version

CIBW_CONFIG = Path(__file__).resolve().parents[1] / "cibuildwheel.toml"
PACKAGES = ("compiler", "runtime")


def cibuildwheel_exe() -> list[str]:
    exe = shutil.which("cibuildwheel")
    if exe:
        return [exe]
    return [sys.executable, "-m", "cibuildwheel"]


def command(
    package: str, config: Path, output_dir: Path | None, platform: str | None, print_ids: bool
) -> list[str]:
    cmd = [*cibuildwheel_exe(), "--config-file", str(config.resolve())]
    if platform:
        cmd += ["--platform", platform]
    if print_ids:
        cmd.append("--print-build-identifiers")
    elif output_dir is not None:
        cmd += ["--output-dir", str(output_dir.resolve())]
    return [*cmd, package]


def write_version(package_dir: Path, version: str) -> Path:
    path = package_dir / "version_local.json"
    path.write_text(
        json.dumps({"package-version": version, "package-suffix": ""}, indent=2) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--iree-dir", required=True, help="IREE checkout holding compiler/ and runtime/"
    )
    parser.add_argument(
        "--output-dir", default="wheelhouse", help="where the wheels go (default wheelhouse)"
    )
    parser.add_argument(
        "--packages", default=",".join(PACKAGES), help="comma-separated: compiler,runtime"
    )
    parser.add_argument("--platform", help="cibuildwheel --platform (default: this runner)")
    parser.add_argument("--config-file", default=str(CIBW_CONFIG), help="cibuildwheel config")
    parser.add_argument(
        "--version", help="wheel version (default: from pins.toml and the checkout's HEAD)"
    )
    parser.add_argument("--pins", default=str(PINS_FILE), help="pins file")
    parser.add_argument(
        "--print-build-identifiers", action="store_true", help="list the builds, build nothing"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")


def run(args: argparse.Namespace) -> int:
    iree = Path(args.iree_dir).resolve()
    packages = [p.strip() for p in args.packages.split(",") if p.strip()]
    for package in packages:
        if package not in PACKAGES:
            raise CIError(f"unknown package {package!r}; expected {', '.join(PACKAGES)}")
        if (
            not (iree / package / "setup.py").is_file()
            and not (iree / package / "pyproject.toml").is_file()
        ):
            raise CIError(f"{iree / package}: not a Python package folder")
    building = not (args.print_build_identifiers or args.dry_run)
    if building:
        version = args.version or package_version(
            load_pins(Path(args.pins)), git(iree, "rev-parse", "HEAD")
        )
        for package in packages:
            print(f"{write_version(iree / package, version)}: {version}")
    for package in packages:
        cmd = command(
            package,
            Path(args.config_file),
            Path(args.output_dir),
            args.platform,
            args.print_build_identifiers,
        )
        print("+ (cd " + str(iree) + ") " + subprocess.list2cmdline(cmd), flush=True)
        if args.dry_run:
            continue
        rc = subprocess.run(cmd, cwd=iree).returncode
        if rc:
            return rc
    return 0
