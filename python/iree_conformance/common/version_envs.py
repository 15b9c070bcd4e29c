"""One Python environment per IREE version, made once and reused.

Each environment holds the pinned IREE wheels, this project (``--no-deps``, editable from
the checkout) and the project's other dependencies pinned to the versions of the running
environment, so that two versions' environments differ in IREE alone. uv makes it where
present (seconds, from uv's cache), else ``venv`` plus pip.

Made atomically: the environment is built in a temporary folder beside its final one and
renamed there once every install succeeded and ``ready.json`` is written; a failure (a
network error, a missing wheel) removes the temporary folder, so nothing half-made is ever
reused. Environments live under ``$IREE_CONFORMANCE_ENVS`` or the user cache dir's
``envs`` folder, one per (version, find-links, Python, dependency pins) key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import EnvironmentBuildError
from iree_conformance.common.iree_index import IREE_PACKAGES, VersionSpec
from iree_conformance.common.userdirs import resolve_dir

ENVS_ENV = "IREE_CONFORMANCE_ENVS"
READY = "ready.json"
PROJECT = "iree-conformance"
# The extras whose installed packages each environment gets too (the jax suite, the
# StableHLO reference interpreter).
EXTRAS = ("jax", "stablehlo-ref")
_REVISION_SCRIPT = """
import importlib.metadata as m, json, runpy
d = m.distribution("iree-base-compiler")
ns = runpy.run_path(str(d.locate_file("iree/compiler/version.py")))
print(json.dumps({"iree_compiler": d.version, "iree_runtime": m.version("iree-base-runtime"),
                  "revision": ns.get("REVISIONS", {}).get("IREE"), "build": ns.get("VERSION")}))
"""


@dataclasses.dataclass(frozen=True)
class VersionEnv:
    """A ready environment: its Python and what ready.json recorded."""

    spec: VersionSpec
    python: Path
    info: dict[str, Any]
    created: bool  # made by this call (False: reused)
    seconds: float  # how long making (or finding) it took

    @property
    def revision(self) -> str | None:
        return self.info.get("revision")


def project_root() -> Path | None:
    """The checkout this package runs from (editable install), or None."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "pyproject.toml").exists() and (root / "conformance").is_dir() else None


def dependency_pins() -> list[str]:
    """The project's other requirements, pinned to what the running environment has."""
    from packaging.requirements import Requirement

    pins: set[str] = set()
    for text in importlib.metadata.requires(PROJECT) or []:
        req = Requirement(text)
        if req.name in IREE_PACKAGES:
            continue
        environments = [{"extra": ""}] + [{"extra": e} for e in EXTRAS]
        if req.marker and not any(req.marker.evaluate(env) for env in environments):
            continue
        try:
            pins.add(f"{req.name}=={importlib.metadata.version(req.name)}")
        except importlib.metadata.PackageNotFoundError:
            if not (req.marker and "extra" in str(req.marker)):
                pins.add(str(req).split(";")[0])
    return sorted(pins)


def envs_dir(option: str | os.PathLike[str] | None = None) -> Path:
    return resolve_dir(option, ENVS_ENV, "envs")


def env_key(spec: VersionSpec, pins: list[str], root: Path | None) -> str:
    data = {
        "version": spec.version,
        "kind": spec.kind,
        "find_links": list(spec.find_links),
        "pre": spec.pre,
        "python": sys.version,
        "base": os.path.realpath(sys.base_prefix),
        "pins": pins,
        "root": str(root),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


def _bin(env: Path) -> Path:
    return (
        env
        / ("Scripts" if os.name == "nt" else "bin")
        / ("python.exe" if os.name == "nt" else "python")
    )


def _run(command: list[str], what: str, log: Callable[[str], None]) -> None:
    log("$ " + " ".join(command))
    proc = subprocess.run(
        command, capture_output=True, text=True, encoding="utf-8", errors="replace"
    )
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-4:])
        raise EnvironmentBuildError(
            f"{what} failed (exit {proc.returncode}): {tail}; nothing was kept, check the "
            "network or the version and run again"
        )


def _install_commands(
    spec: VersionSpec, python: Path, pins: list[str], root: Path
) -> list[list[str]]:
    uv = shutil.which("uv")
    pip = (
        [uv, "pip", "install", "--python", str(python)]
        if uv
        else [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    )
    links = [a for link in spec.find_links for a in ("--find-links", link)]
    pre = (["--prerelease", "allow"] if uv else ["--pre"]) if spec.pre else []
    iree = [f"{name}=={spec.version}" for name in IREE_PACKAGES]
    return [
        [*pip, *links, *pre, *iree, *pins],
        [*pip, "--no-deps", "-e", str(root)],
    ]


def _make(
    spec: VersionSpec, target: Path, pins: list[str], root: Path, log: Callable[[str], None]
) -> dict[str, Any]:
    uv = shutil.which("uv")
    if uv:
        _run(
            [
                uv,
                "venv",
                "-q",
                "--allow-existing",
                "--relocatable",
                "--python",
                sys.executable,
                str(target),
            ],
            "uv venv",
            log,
        )
    else:
        _run([sys.executable, "-m", "venv", str(target)], "python -m venv", log)
    python = _bin(target)
    for command in _install_commands(spec, python, pins, root):
        _run(command, f"installing IREE {spec.label}", log)
    proc = subprocess.run([str(python), "-c", _REVISION_SCRIPT], capture_output=True, text=True)
    if proc.returncode != 0:
        raise EnvironmentBuildError(
            f"the environment of IREE {spec.label} cannot read its IREE version: {proc.stderr.strip()[-300:]}"
        )
    return json.loads(proc.stdout)


def installed_info() -> dict[str, Any]:
    """What ready.json would say of the running environment."""
    proc = subprocess.run([sys.executable, "-c", _REVISION_SCRIPT], capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def ensure(
    spec: VersionSpec,
    root_dir: Path | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> VersionEnv:
    """The environment of spec: reused when ready, else made atomically."""
    started = time.monotonic()
    if spec.kind == "installed":
        return VersionEnv(spec, Path(sys.executable), installed_info(), False, 0.0)
    root = project_root()
    if root is None:
        raise EnvironmentBuildError(
            "per-version environments install this project editable from its checkout; run "
            "iree-conformance from a checkout (pip install -e .)"
        )
    pins = dependency_pins()
    base = root_dir or envs_dir()
    final = base / f"{spec.slug}-{env_key(spec, pins, root)}"
    if (final / READY).exists():
        info = json.loads((final / READY).read_text(encoding="utf-8"))
        return VersionEnv(spec, _bin(final), info, False, time.monotonic() - started)
    base.mkdir(parents=True, exist_ok=True)
    if final.exists():  # made by a run that died before ready.json: never reused
        shutil.rmtree(final, ignore_errors=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=base))
    try:
        info = _make(spec, temp, pins, root, log)
        info["seconds"] = round(time.monotonic() - started, 1)
        info["label"] = spec.label
        (temp / READY).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8", newline="\n")
        try:
            temp.rename(final)
        except OSError:
            if not (final / READY).exists():
                raise
            shutil.rmtree(temp, ignore_errors=True)  # another run made it first
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    info = json.loads((final / READY).read_text(encoding="utf-8"))
    return VersionEnv(spec, _bin(final), info, True, time.monotonic() - started)
