"""What a local run takes from this host: its Python (setup-python's tool cache), a
clean environment for act, and a small StableHLO corpus for the nightly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HOST_ENV_DROP_PREFIXES = ("GITHUB_", "ACTIONS_", "RUNNER_", "IREE_CONFORMANCE_", "CIBW_")
HOST_ENV_DROP = ("GH_TOKEN", "VIRTUAL_ENV", "CI_UNIT_TESTS", "CI_RUN_SHARD_ARGS", "CI_CACHE_BASE")


class HostError(Exception):
    """Something this host lacks for the run."""


def host_python() -> tuple[str, Path]:
    version = ".".join(map(str, sys.version_info[:3]))
    base = getattr(sys, "_base_executable", None) or sys.executable
    return version, Path(base)


def tool_cache_version(requested: str, host: str) -> str:
    """The tool-cache folder name that makes setup-python's `requested` resolve."""
    parts = requested.split(".")
    if requested.split(".")[:2] == host.split(".")[:2]:
        return host
    return ".".join((parts + ["0", "0"])[:3])


def prepare_tool_cache(tool_cache: Path, versions: list[str], fresh: bool) -> list[str]:
    """A venv of the host interpreter per requested version (plus the `.complete` marker)."""
    host, interpreter = host_python()
    made = []
    for requested in versions:
        folder = tool_cache / "Python" / tool_cache_version(requested, host)
        target = folder / "x64"
        if fresh and target.exists():
            shutil.rmtree(target)
        if not (target / "bin" / "python").exists():
            folder.mkdir(parents=True, exist_ok=True)
            subprocess.run([str(interpreter), "-m", "venv", str(target)], check=True)
        (folder / "x64.complete").touch()
        made.append(f"{requested} -> {folder.name} (host {host}, {interpreter})")
    return made


def act_environment(venv_bin: Path, token: str) -> dict[str, str]:
    """The host environment minus Actions variables, real tokens and this venv."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(HOST_ENV_DROP_PREFIXES) and k not in HOST_ENV_DROP
    }
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != venv_bin]
    env["PATH"] = os.pathsep.join(path)
    env["GITHUB_TOKEN"] = token  # act reads the secret's value from here (-s GITHUB_TOKEN)
    return env


def stablehlo_sample(source: Path, dest: Path, count: int) -> Path:
    """`count` float32 programs of a StableHLO testdata folder, laid out as a checkout
    (`dest/stablehlo/testdata/`, the corpus' subdir in ci/profiles.toml); returns dest."""
    files = sorted(p for p in source.glob("*_float32_*.mlir"))[:count]
    if len(files) < count:
        raise HostError(f"{source}: fewer than {count} *_float32_*.mlir programs")
    folder = dest / "stablehlo" / "testdata"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for f in files:
        shutil.copy2(f, folder / f.name)
    return dest
