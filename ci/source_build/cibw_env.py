"""Prepare ccache for a cibuildwheel build and export the variables the workflow needs.

cibuildwheel reads CIBW_ENVIRONMENT_<PLATFORM> *instead of* the `environment` of its
config file, so this script renders the config's table plus the per-runner ccache
settings into one string:

  CCACHE_DIR      where objects go. Linux builds run in a container that sees the host's
                  / under /host and only /output is copied back, so the container gets
                  /host/<host folder>; macOS and Windows build on the host directly.
  CCACHE_BASEDIR  the IREE checkout as the build sees it (/project in the container), so
                  absolute paths under it hash the same from run to run.
  CCACHE_MAXSIZE  from the cache budget (ccache_budget.py).

It also computes the cache key's configuration (LLVM commit, compiler, build type and,
on Linux, the manylinux image) for `cache-tools key --config-hash`.

Exports to $GITHUB_ENV: CIBW_ENVIRONMENT_<PLATFORM>, CCACHE_DIR (host folder, for
`ccache --show-stats` and the cache step), CCACHE_MAXSIZE. Outputs: ccache-dir,
ccache-dir-build, max-size, config-hash, platform.

Example:
  python -m ci cibw-env --ccache-dir "$RUNNER_TEMP/ccache" \\
      --source-dir iree-src --llvm-commit 0123...cdef
"""

from __future__ import annotations

import argparse
from pathlib import Path, PurePosixPath
from typing import Any

from ci._common import CIError, current_os, normalize_os, set_env, set_outputs
from ci.source_build.ccache_budget import add_budget_args, budget_from_args
from ci.source_build.pins import PINS_FILE, load_pins, load_toml

CIBW_CONFIG = Path(__file__).resolve().parents[1] / "cibuildwheel.toml"
HOST_MOUNT = "/host"
CONTAINER_PROJECT = "/project"


def container_path(host_path: Path) -> str:
    """The path a manylinux container sees for a host path (the host's / is /host)."""
    posix = PurePosixPath(host_path.resolve().as_posix())
    if not posix.is_absolute():
        raise CIError(f"{host_path}: needs an absolute path")
    return f"{HOST_MOUNT}{posix}"


def build_view(path: Path) -> str:
    """Forward slashes everywhere: ccache, CMake and cibuildwheel's parser all accept them."""
    return path.resolve().as_posix()


def quote(value: str) -> str:
    """A literal value for cibuildwheel's bash-like environment syntax."""
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`")
    )
    return f'"{escaped}"'


def config_environment(config: Path, platform: str) -> dict[str, str]:
    """The environment cibuildwheel would use from the config file alone."""
    tool = load_toml(config).get("tool", {}).get("cibuildwheel", {})
    env = tool.get(platform, {}).get("environment", tool.get("environment", {}))
    if isinstance(env, str):
        raise CIError(f"{config}: keep `environment` a table so that it can be merged")
    return {str(k): str(v) for k, v in env.items()}


def render(base: dict[str, str], extra: dict[str, str]) -> str:
    # Config values go verbatim into double quotes, as cibuildwheel does for a table
    # (so $VAR still expands); our own values are quoted as literals.
    parts = [f'{k}="{v}"' for k, v in base.items() if k not in extra]
    parts += [f"{k}={quote(v)}" for k, v in extra.items()]
    return " ".join(parts)


def manylinux_image(config: Path) -> str:
    linux = load_toml(config).get("tool", {}).get("cibuildwheel", {}).get("linux", {})
    return str(linux.get("manylinux-x86_64-image", "default"))


def config_hash_text(pins: dict[str, Any], platform: str, llvm_commit: str, config: Path) -> str:
    table = pins.get("ccache", {})
    compiler = table.get("compiler", {}).get(platform, platform)
    parts = [
        f"llvm={llvm_commit}",
        f"compiler={compiler}",
        f"config={table.get('build_type', 'Release')}",
    ]
    if platform == "linux":
        parts.append(f"image={manylinux_image(config)}")
    return ";".join(parts)


def prepare(
    platform: str, ccache_dir: Path, source_dir: Path, max_size: str, config: Path
) -> dict[str, str]:
    """{name: value} of everything exported, CIBW_ENVIRONMENT_<PLATFORM> included."""
    if platform == "linux":
        extra = {"CCACHE_DIR": container_path(ccache_dir), "CCACHE_BASEDIR": CONTAINER_PROJECT}
    else:
        extra = {"CCACHE_DIR": build_view(ccache_dir), "CCACHE_BASEDIR": build_view(source_dir)}
    extra["CCACHE_MAXSIZE"] = max_size
    return {
        f"CIBW_ENVIRONMENT_{platform.upper()}": render(config_environment(config, platform), extra),
        "CCACHE_DIR": str(ccache_dir.resolve()),
        "CCACHE_MAXSIZE": max_size,
        "_ccache_dir_build": extra["CCACHE_DIR"],
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--platform", default="auto", help="linux | macos | windows | auto (this runner)"
    )
    parser.add_argument("--ccache-dir", required=True, help="host folder for ccache (created)")
    parser.add_argument("--source-dir", required=True, help="the IREE checkout")
    parser.add_argument(
        "--llvm-commit", required=True, help="LLVM gitlink of the checkout (pins.py verify)"
    )
    parser.add_argument("--cibw-config", default=str(CIBW_CONFIG), help="cibuildwheel config file")
    parser.add_argument("--pins", default=str(PINS_FILE), help="pins file")
    add_budget_args(parser)


def run(args: argparse.Namespace) -> int:
    platform = current_os() if args.platform == "auto" else normalize_os(args.platform)
    pins = load_pins(Path(args.pins))
    budget = budget_from_args(args)
    ccache_dir = Path(args.ccache_dir)
    ccache_dir.mkdir(parents=True, exist_ok=True)
    config = Path(args.cibw_config)
    values = prepare(platform, ccache_dir, Path(args.source_dir), budget.ccache_max_size, config)
    build_dir = values.pop("_ccache_dir_build")
    set_env(values)
    outputs = {
        "platform": platform,
        "ccache-dir": values["CCACHE_DIR"],
        "ccache-dir-build": build_dir,
        "max-size": budget.ccache_max_size,
        "config-hash": config_hash_text(pins, platform, args.llvm_commit, config),
    }
    set_outputs(outputs)
    for name, value in {**values, **outputs}.items():
        print(f"{name}: {value}")
    return 0
