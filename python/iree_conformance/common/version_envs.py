"""One Python environment per IREE version, made once and reused.

Each environment holds the pinned IREE wheels, this project (``--no-deps``, editable from
the checkout) and the project's other dependencies pinned to the versions of the running
environment, so that two versions' environments differ in IREE alone. uv makes it where
present (seconds, from uv's cache), else ``venv`` plus pip.

Made under a lock, in place, and checked before each use. One run at a time makes or
checks an environment (``.<name>.lock`` beside it, an OS file lock that dies with its
holder): a second run waits, then reuses what the first made. The environment is built at
its final path (a venv's scripts name their folder in their shebangs, so it is never
renamed) and ``ready.json`` is written last; a folder without a whole ``ready.json`` is a
build that did not finish and is made again. Before reuse, common/env_check.py checks
that the environment still holds what ``ready.json`` recorded (every distribution's
RECORD and its files' sizes) and that its Python imports IREE with the recorded version;
a damaged, half-made or foreign environment is removed and made again, and one that
cannot be removed is refused (exit 10, with its path). A build that fails or is stopped
(SIGINT, SIGTERM) stops its installer and removes what it made; one killed outright
leaves a folder that the next run removes. Environments live under
``$IREE_CONFORMANCE_ENVS`` or the user cache dir's ``envs`` folder, one per (version,
find-links and the sha256 of a wheels folder's IREE wheels, Python, dependency pins,
checkout) key. An environment for a selection with torch cases also gets the running
environment's torch, iree-turbine and transformers (common/torch_envs.py: hard links, no
download), their versions and RECORDs in its key; one for a selection without them does not.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.common import env_check, torch_envs
from iree_conformance.common.errors import EnvironmentBuildError
from iree_conformance.common.file_digest import file_digest
from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.common.iree_index import IREE_PACKAGES, VersionSpec
from iree_conformance.common.process_group import kill_group, launched
from iree_conformance.common.userdirs import resolve_dir

ENVS_ENV = "IREE_CONFORMANCE_ENVS"
READY = "ready.json"
PROJECT = "iree-conformance"
# The extras whose installed packages each environment gets too (the jax suite, the
# StableHLO reference interpreter).
EXTRAS = ("jax", "stablehlo-ref")
# How long a build waits for another run's lock before it says it is waiting.
LOCK_NOTICE_S = 0.5


@dataclasses.dataclass(frozen=True)
class VersionEnv:
    """A ready environment: its Python and what ready.json recorded."""

    spec: VersionSpec
    python: Path
    info: dict[str, Any]
    created: bool  # made by this call (False: reused)
    seconds: float  # how long making (or finding and checking) it took
    path: Path | None = None  # the environment's folder (installed: sys.prefix)
    remade: str | None = None  # why a cached environment was made again, if it was

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


def wheel_digests(spec: VersionSpec) -> dict[str, str]:
    """The sha256 of each IREE wheel of spec's version in its local find-links folders: a
    folder rebuilt with the same version is another environment."""
    found = {}
    for link in spec.find_links:
        folder = Path(link)
        if not folder.is_dir() or not spec.version:
            continue
        for wheel in sorted(folder.glob("iree_base_*.whl")):
            if f"-{spec.version}-" in wheel.name:
                found[str(wheel.resolve())] = file_digest(wheel)
    return found


def key_data(
    spec: VersionSpec,
    pins: list[str],
    root: Path | None,
    torch: torch_envs.TorchSet | None = None,
) -> dict[str, Any]:
    """What an environment is made for; ready.json records it, its hash names the folder."""
    data: dict[str, Any] = {
        "version": spec.version,
        "kind": spec.kind,
        "find_links": list(spec.find_links),
        "pre": spec.pre,
        "python": sys.version,
        "base": os.path.realpath(sys.base_prefix),
        "pins": pins,
        "root": str(root),
    }
    digests = wheel_digests(spec)
    if digests:  # only for a wheels folder: the other keys stay as they were
        data["wheels"] = digests
    if torch is not None:  # only for torch cases: the other keys stay as they were
        data["torch"] = torch.key()
    return data


def env_key(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


def _bin(env: Path) -> Path:
    return (
        env
        / ("Scripts" if os.name == "nt" else "bin")
        / ("python.exe" if os.name == "nt" else "python")
    )


# -- one run at a time per environment ------------------------------------------------


class _Lock:
    """An exclusive OS lock on a file beside the environment; the OS drops it when its
    holder dies, however it dies."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)

    def acquire(self, blocking: bool) -> bool:
        if sys.platform == "win32":  # pragma: no cover - Windows
            import msvcrt

            while True:
                try:
                    msvcrt.locking(self.fd, msvcrt.LK_NBLCK, 1)
                    return True
                except OSError:
                    if not blocking:
                        return False
                    time.sleep(0.5)
        import fcntl

        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        os.close(self.fd)  # releases the lock


def _locked(path: Path, say: Callable[[str], None], what: str) -> _Lock:
    lock = _Lock(path)
    if not lock.acquire(blocking=False):
        say(f"{what}: another run is making or checking this environment; waiting for it")
        lock.acquire(blocking=True)
    return lock


# -- leftovers -------------------------------------------------------------------------

_LEFTOVER = re.compile(r"^\.(?:trash-)?(?P<name>.+-[0-9a-f]{12})-[^/]+$")


def sweep(base: Path, holding: str | None = None) -> list[Path]:
    """Removes what killed builds left: hidden temporary environments (``.<name>-*``, from
    harnesses that built beside the final folder) and discarded ones (``.trash-<name>-*``),
    each when no live run holds its environment's lock. Returns what it removed."""
    removed = []
    for path in sorted(base.iterdir()) if base.is_dir() else []:
        match = _LEFTOVER.match(path.name)
        if not match or not path.is_dir() or path.is_symlink():
            continue
        name = match.group("name")
        if name != holding:
            lock = _Lock(base / f".{name}.lock")
            try:
                if not lock.acquire(blocking=False):
                    continue  # a live run is building it
                shutil.rmtree(path, ignore_errors=True)
            finally:
                lock.close()
        else:
            shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _discard(env: Path) -> None:
    """Removes env: renamed aside first (one step), so that what is left if this is killed
    is a leftover the next sweep removes, never a half-removed environment."""
    trash = env.with_name(f".trash-{env.name}-{os.getpid()}")
    try:
        if trash.exists():
            shutil.rmtree(trash)
        env.rename(trash)
        shutil.rmtree(trash)
    except OSError as e:
        raise EnvironmentBuildError(
            f"the damaged environment {env} cannot be removed ({type(e).__name__}: {e}); "
            f"delete {env} and run again"
        ) from None


# -- building ---------------------------------------------------------------------------


class _Stopped(BaseException):
    """SIGTERM during a build: unwinds it (its installer stopped, its folder removed)."""


def _cause(text: str) -> str:
    """pip's or uv's own reason: its error lines and why it discarded a wheel (pip says that
    on stdout: a wheel whose name and metadata disagree), else the output's tail."""
    lines = [x.rstrip() for x in text.strip().splitlines() if x.strip()]
    marked = [
        x
        for x in lines
        if re.match(r"\s*(ERROR|error|(WARNING: )?Discarding|Because|╰─▶|×|hint)", x)
        or "inconsistent" in x
        or "does not match" in x
    ]
    picked = marked[:6] if marked else lines[-4:]
    return " | ".join(x.strip() for x in picked)[:1500]


def _run(command: list[str], what: str, log: Callable[[str], None]) -> None:
    log("$ " + " ".join(command))
    proc = subprocess.Popen(
        launched(command),  # dies with this process (Linux), without a preexec_fn
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,  # its own group: stopped as a whole
    )
    try:
        out, err = proc.communicate()
    except BaseException:
        kill_group(proc)
        raise
    if proc.returncode != 0:
        if "No module named pip" in out + err:  # not the network: this Python has no pip
            raise EnvironmentBuildError(
                f"{what} failed: {command[0]} has no pip (an environment made by `uv venv`?); "
                "put uv on PATH (it is used when found) or install pip, and run again"
            )
        raise EnvironmentBuildError(
            f"{what} failed (exit {proc.returncode}): {_cause(out + chr(10) + err)}; nothing was "
            "kept, "
            "check the network or the version and run again"
        )


def _install_commands(
    spec: VersionSpec, python: Path, pins: list[str], root: Path
) -> list[list[str]]:
    uv = shutil.which("uv")
    pip = (
        # copies, not uv's hard links into its cache: a file damaged in the environment
        # must not damage the cache the environment is made again from
        [uv, "pip", "install", "--link-mode", "copy", "--python", str(python)]
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


def _venv_command(target: Path) -> tuple[list[str], str]:
    uv = shutil.which("uv")
    if uv:
        return [
            uv, "venv", "-q", "--allow-existing", "--relocatable", "--python", sys.executable,
            str(target),
        ], "uv venv"  # fmt: skip
    return [sys.executable, "-m", "venv", str(target)], "python -m venv"


def _make(
    spec: VersionSpec,
    target: Path,
    pins: list[str],
    root: Path,
    log: Callable[[str], None],
    torch: torch_envs.TorchSet | None = None,
) -> dict[str, Any]:
    """Builds the environment at target (its final folder: never renamed); IREE's info."""
    command, what = _venv_command(target)
    _run(command, what, log)
    python = _bin(target)
    for command in _install_commands(spec, python, pins, root):
        _run(command, f"installing IREE {spec.label}", log)
    if torch is not None:
        try:
            torch_envs.link_into(target, torch, log)
        except OSError as e:
            raise EnvironmentBuildError(
                f"the environment of IREE {spec.label}: the running environment's torch "
                f"could not be linked into it ({type(e).__name__}: {e}); nothing was kept"
            ) from None
    info, why = env_check.probe(python, torch=True) if torch else env_check.probe(python)
    if info is None:
        what = "IREE, torch or iree-turbine" if torch else "IREE"
        raise EnvironmentBuildError(
            f"the environment of IREE {spec.label} cannot import {what}: {why}; nothing was kept"
        )
    if spec.version and info.get("iree_compiler") != spec.version:
        raise EnvironmentBuildError(
            f"the environment of IREE {spec.label} imports iree-base-compiler "
            f"{info.get('iree_compiler')}, not {spec.version} (an install replaced the pin); "
            "nothing was kept"
        )
    return info


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Stopped


def _build(
    spec: VersionSpec,
    final: Path,
    key: dict[str, Any],
    pins: list[str],
    root: Path,
    log: Callable[[str], None],
    started: float,
    torch: torch_envs.TorchSet | None = None,
) -> dict[str, Any]:
    """Makes final in place, ready.json last; on any failure or stop, nothing is kept."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main else None
    try:
        info = _make(spec, final, pins, root, log, torch)
        info.update(
            format=env_check.FORMAT,
            key=key,
            label=spec.label,
            seconds=round(time.monotonic() - started, 1),
            contents=env_check.contents(final),
        )
        atomic_write_text(final / READY, json.dumps(info, indent=1) + "\n")
    except BaseException as e:
        shutil.rmtree(final, ignore_errors=True)
        if isinstance(e, _Stopped):
            raise SystemExit(128 + signal.SIGTERM) from None
        raise
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
    return info


# -- checking ---------------------------------------------------------------------------


def problem_of(env: Path, key: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(ready.json's info, "") when env is whole and made for key, else (None, what is wrong)."""
    info, why = env_check.read_ready(env / READY)
    if info is None:
        return None, why
    if info.get("key") != key:
        return None, "its ready.json was made for another version, Python or checkout"
    if not _bin(env).exists():
        return None, f"{_bin(env).relative_to(env)} is missing"
    damaged = env_check.damage(env, info)
    if damaged:
        return None, damaged
    torch = "torch" in key
    found, why = env_check.probe(_bin(env), torch=True) if torch else env_check.probe(_bin(env))
    if found is None:
        return None, f"its Python cannot import {'IREE or torch' if torch else 'IREE'}: {why}"
    recorded = {k: info.get(k) for k in ("iree_compiler", "iree_runtime", "revision")}
    if {k: found.get(k) for k in recorded} != recorded:
        return (
            None,
            f"it imports IREE {found.get('iree_compiler')}, not the {info.get('iree_compiler')} it was made with",
        )
    for name in env_check.TORCH_KEYS if torch else ():
        if found.get(name) != info.get(name):
            return (
                None,
                f"it imports {name} {found.get(name)}, not the {info.get(name)} it was made with",
            )
    return info, ""


def check_installed(spec: VersionSpec) -> VersionEnv:
    """The running environment as a version: refused (exit 10) when its IREE is damaged."""
    started = time.monotonic()
    problem = env_check.installed_damage(IREE_PACKAGES)
    info: dict[str, Any] | None = None
    if problem is None:
        info, why = env_check.probe(Path(sys.executable))
        problem = None if info is not None else f"it cannot import IREE: {why}"
    if problem is not None or info is None:
        raise EnvironmentBuildError(
            f"the installed IREE (the environment {sys.prefix}) is damaged: {problem}; "
            "reinstall it (pip install --force-reinstall iree-base-compiler iree-base-runtime) "
            "and run again"
        )
    return VersionEnv(
        spec, Path(sys.executable), info, False, time.monotonic() - started, Path(sys.prefix)
    )


def ensure(
    spec: VersionSpec,
    root_dir: Path | None = None,
    log: Callable[[str], None] = lambda line: None,
    say: Callable[[str], None] = lambda line: None,
    torch: torch_envs.TorchSet | None = None,
) -> VersionEnv:
    """The environment of spec: checked and reused when whole, else made (again) in place
    under its lock. log gets the install commands, say what a user should read. With
    torch (torch_envs.running()), the environment also holds the running one's torch."""
    started = time.monotonic()
    if spec.kind == "installed":
        return check_installed(spec)
    root = project_root()
    if root is None:
        raise EnvironmentBuildError(
            "per-version environments install this project editable from its checkout; run "
            "iree-conformance from a checkout (pip install -e .)"
        )
    pins = dependency_pins()
    base = root_dir or envs_dir()
    key = key_data(spec, pins, root, torch)
    final = base / f"{spec.slug}-{env_key(key)}"
    try:
        base.mkdir(parents=True, exist_ok=True)
        lock = _locked(base / f".{final.name}.lock", say, f"IREE {spec.label}")
    except OSError as e:
        raise EnvironmentBuildError(
            f"the environments folder {base} cannot be written ({type(e).__name__}: {e}); "
            f"pass --envs-dir or set ${ENVS_ENV}"
        ) from None
    try:
        for left in sweep(base, holding=final.name):
            say(f"removed {left}, left by a build that was killed")
        remade = None
        if final.exists() or final.is_symlink():
            info, why = problem_of(final, key)
            if info is not None:
                return VersionEnv(spec, _bin(final), info, False, time.monotonic() - started, final)
            remade = why
            say(f"IREE {spec.label}: the environment {final} is unusable ({why}); making it again")
            if final.is_symlink() or not final.is_dir():
                raise EnvironmentBuildError(
                    f"{final} is not an environment folder; delete {final} and run again"
                )
            _discard(final)
        info = _build(spec, final, key, pins, root, log, started, torch)
        return VersionEnv(spec, _bin(final), info, True, time.monotonic() - started, final, remade)
    finally:
        lock.close()
