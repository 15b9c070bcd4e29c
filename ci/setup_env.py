"""Prepare a CI job's environment: platform names and the cache directories.

Subcommands:

  paths     Decide where each cache class lives on this runner, create the folders and
            export them: to $GITHUB_ENV (PIP_CACHE_DIR, IREE_CONFORMANCE_STORE,
            IREE_CONFORMANCE_DATA, IREE_CONFORMANCE_ZOO_CACHE, CI_OS, CI_ARCH,
            CI_RESULTS_DIR) and as step outputs (pip, store, onnx-data, zoo, results,
            os, arch) for the cache steps' `path:`.
  versions  After the install: export the versions that cache keys depend on as outputs
            (python, iree-compiler, iree-runtime, onnx, onnxruntime).

The folders live under $RUNNER_TEMP/iree-ci (outside the checkout, so `git status` stays
clean for the expectations patch) unless --base or $CI_CACHE_BASE says otherwise.
CI_CACHE_BASE is for devtools/act_local.py: act gives every job a new random RUNNER_TEMP, and
actions/cache's version hashes the absolute path, so a later run's restore would never
match an earlier run's save; on GitHub the runner's RUNNER_TEMP is always the same. Paths may contain spaces;
nothing here creates symlinks.

Examples (what CI would use, locally):
  python -m ci setup-env paths --base /tmp/ci
  python -m ci setup-env versions
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from ci._common import current_arch, current_os, set_env, set_outputs

# output name -> (environment variable read by the tools, folder name under the base)
CACHE_DIRS = {
    "pip": ("PIP_CACHE_DIR", "pip"),
    "store": ("IREE_CONFORMANCE_STORE", "iree-artifacts"),
    "onnx-data": ("IREE_CONFORMANCE_DATA", "onnx-data"),
    "zoo": ("IREE_CONFORMANCE_ZOO_CACHE", "zoo-models"),
}
VERSION_PACKAGES = {
    "iree-compiler": "iree-base-compiler",
    "iree-runtime": "iree-base-runtime",
    "onnx": "onnx",
    "onnxruntime": "onnxruntime",
}


def default_base(env: dict[str, str]) -> Path:
    if env.get("CI_CACHE_BASE"):
        return Path(env["CI_CACHE_BASE"])
    root = env.get("RUNNER_TEMP") or tempfile.gettempdir()
    return Path(root) / "iree-ci"


def compute_paths(base: Path, workspace: Path, env: dict[str, str]) -> dict[str, str]:
    values = {name: str(base / folder) for name, (_, folder) in CACHE_DIRS.items()}
    values["results"] = str(workspace / "ci-results")
    values["os"] = current_os(env)
    values["arch"] = current_arch(env)
    return values


def cmd_paths(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    base = Path(args.base).resolve() if args.base else default_base(env)
    workspace = Path(env.get("GITHUB_WORKSPACE") or Path.cwd())
    values = compute_paths(base, workspace, env)
    for name in (*CACHE_DIRS, "results"):
        Path(values[name]).mkdir(parents=True, exist_ok=True)
    exported = {var: values[name] for name, (var, _) in CACHE_DIRS.items()}
    exported.update(CI_OS=values["os"], CI_ARCH=values["arch"], CI_RESULTS_DIR=values["results"])
    set_env(exported)
    set_outputs(values)
    width = max(map(len, exported))
    for var, value in exported.items():
        print(f"{var:<{width}}  {value}")
    return 0


def installed_versions() -> dict[str, str]:
    values = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name, dist in VERSION_PACKAGES.items():
        try:
            values[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            values[name] = "none"
    return values


def cmd_versions(args: argparse.Namespace) -> int:
    values = installed_versions()
    set_outputs(values)
    for name, value in values.items():
        print(f"{name:<14} {value}")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("paths", help="create and export the cache folders and platform names")
    p.add_argument(
        "--base", help="folder holding the cache folders (default: $RUNNER_TEMP/iree-ci)"
    )
    p.set_defaults(func=cmd_paths)
    v = sub.add_parser("versions", help="export installed package versions used in cache keys")
    v.set_defaults(func=cmd_versions)


def run(args: argparse.Namespace) -> int:
    return args.func(args)
