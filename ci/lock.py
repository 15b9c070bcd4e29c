"""The pull-request workflows' lock: ci/lock/requirements.in and requirements.txt.

``requirements.in`` is made from the declared requirements (pyproject.toml's
``[build-system] requires`` and ``dependencies``, the extras in ``LOCK_EXTRAS``, and
cache_tools/pyproject.toml's ``dependencies``), so it never says more or less than they
do. ``requirements.txt`` is ``uv pip compile`` of it, universal (one file for Linux,
macOS and Windows, every Python from requires-python's floor up, forks marked) and with
the sha256 hash of every file: what ``python -m ci install --locked`` installs with
``pip install --require-hashes``. The pair is the pip-compile layout Dependabot's ``pip``
ecosystem updates (.github/dependabot.yml): it re-runs the command recorded in the
file's header. docs/ci.md, "Which lane installs what, and why".

  python -m ci lock              # .in from pyproject, then uv keeps every pin it can
  python -m ci lock --upgrade    # today's newest releases everywhere
  python -m ci lock --upgrade-package tomlkit
  python -m ci lock --check      # no network: the .in and the header are current

Standard library only (the parser below is what ``install --locked`` uses before
anything is installed); ``uv`` (PyPI ``uv``) is needed only to compile.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ci._common import REPO_ROOT, CIError, load_toml
from iree_conformance.common.fsutil import atomic_write_text

LOCK_DIR = REPO_ROOT / "ci" / "lock"
LOCK_IN = LOCK_DIR / "requirements.in"
LOCK_TXT = LOCK_DIR / "requirements.txt"
# The extras the pull-request workflows install: ci.yml's lint job `dev,stablehlo-ref`,
# its test job `dev`; `jax` too, so that a run with the jax suite (.ci/run's main venv
# installs it) can come from the lock.
LOCK_EXTRAS = ("dev", "stablehlo-ref", "jax")
HEADER = (
    "# Made by `python -m ci lock` from pyproject.toml and cache_tools/pyproject.toml\n"
    "# ([build-system] requires, dependencies, the extras {extras}). Do not edit: change\n"
    '# pyproject.toml and run `python -m ci lock` (docs/ci.md, "Which lane installs what").\n'
)

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_ENTRY = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)\s*(?:;\s*(?P<marker>[^\\]+?))?\s*\\?$"
)
_HASH = re.compile(r"^\s+--hash=(?P<hash>sha256:[0-9a-f]{64})\s*\\?$")
_VIA_ONE = re.compile(r"^\s+# via (?P<who>\S.*)$")
_VIA_MORE = re.compile(r"^\s+#\s{3}(?P<who>\S.*)$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    m = _NAME.match(requirement)
    if not m:
        raise CIError(f"not a requirement: {requirement!r}")
    return canonical(m.group(1))


@dataclass
class Entry:
    """One pinned distribution of the lock (one fork of it, where a marker splits it)."""

    name: str
    version: str
    marker: str | None
    hashes: list[str] = field(default_factory=list)
    via: set[str] = field(default_factory=set)  # canonical names, "-r requirements.in" kept
    text: str = ""  # the lines of the entry up to its comments, as pip reads them


def parse_lock(text: str, where: str = "ci/lock/requirements.txt") -> list[Entry]:
    """The entries of a ``uv pip compile --generate-hashes`` output; any other line that is
    not a comment is refused, naming the file and line."""
    entries: list[Entry] = []
    current: Entry | None = None
    in_via = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        entry = _ENTRY.match(line)
        if entry:
            current = Entry(
                canonical(entry.group("name")),
                entry.group("version"),
                (entry.group("marker") or "").strip() or None,
                text=line,
            )
            entries.append(current)
            in_via = False
            continue
        hashed = _HASH.match(line)
        if hashed and current is not None and not in_via:
            current.hashes.append(hashed.group("hash"))
            current.text += "\n" + line
            continue
        via = _VIA_ONE.match(line)
        if via and current is not None:
            current.via.add(_via_name(via.group("who")))
            in_via = False
            continue
        if re.match(r"^\s+# via\s*$", line) and current is not None:
            in_via = True
            continue
        more = _VIA_MORE.match(line)
        if more and current is not None and in_via:
            current.via.add(_via_name(more.group("who")))
            continue
        if line.startswith("#"):
            continue
        raise CIError(f"{where}:{number}: not a line of a hashed lock: {line.strip()!r}")
    return entries


def _via_name(who: str) -> str:
    who = who.strip()
    return who if who.startswith("-r ") else canonical(who.split()[0])


def closure(entries: Iterable[Entry], names: Iterable[str]) -> list[Entry]:
    """The entries the named distributions need: the named ones and, again and again, every
    entry that one already taken names in its ``# via`` (universal resolution joins the
    forks, so this can take a little more than one platform needs, never less)."""
    entries = list(entries)
    wanted = {canonical(n) for n in names}
    present = {e.name for e in entries}
    missing = sorted(wanted - present)
    if missing:
        raise CIError(
            f"{_rel(LOCK_TXT)}: no entry for {', '.join(missing)}: the lock is behind "
            "pyproject.toml; run `python -m ci lock`"
        )
    changed = True
    while changed:
        changed = False
        for e in entries:
            if e.name not in wanted and e.via & wanted:
                wanted.add(e.name)
                changed = True
    return [e for e in entries if e.name in wanted]


def subset_text(entries: Iterable[Entry]) -> str:
    return "".join(e.text + "\n" for e in entries)


def _rel(path: Path) -> str:
    try:
        return path.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


# -- what is declared ----------------------------------------------------------------------


def declared(root: Path = REPO_ROOT, extras: Iterable[str] = LOCK_EXTRAS) -> dict[str, list[str]]:
    """{section: requirements} as the two pyproject files declare them, in their order."""
    project = load_toml(root / "pyproject.toml")
    cache_tools = load_toml(root / "cache_tools" / "pyproject.toml")
    optional = project["project"].get("optional-dependencies", {})
    sections = {
        "[build-system] requires": list(project.get("build-system", {}).get("requires", [])),
        "dependencies": list(project["project"].get("dependencies", [])),
    }
    for extra in extras:
        if extra not in optional:
            raise CIError(f"pyproject.toml: no extra {extra!r} (ci/lock.py LOCK_EXTRAS)")
        sections[f"extra {extra}"] = list(optional[extra])
    sections["cache_tools/pyproject.toml dependencies"] = list(
        cache_tools["project"].get("dependencies", [])
    )
    return sections


def python_floor(root: Path = REPO_ROOT) -> str:
    spec = load_toml(root / "pyproject.toml")["project"].get("requires-python", "")
    m = re.fullmatch(r"\s*>=\s*(\d+\.\d+)\s*", spec)
    if not m:
        raise CIError(f"pyproject.toml: requires-python {spec!r} is not '>=X.Y'")
    return m.group(1)


def render_in(root: Path = REPO_ROOT) -> str:
    """requirements.in: every declared requirement once, under the section it came from."""
    out = [HEADER.format(extras=", ".join(LOCK_EXTRAS))]
    seen: set[str] = set()
    for section, requirements in declared(root).items():
        lines = [r for r in requirements if " ".join(r.split()) not in seen]
        seen.update(" ".join(r.split()) for r in lines)
        if lines:
            out.append(f"# {section}\n" + "".join(" ".join(r.split()) + "\n" for r in lines))
    return "\n".join(out)


def uv_arguments(root: Path = REPO_ROOT) -> list[str]:
    """What follows `uv pip compile`, run in ci/lock (the header records it, and Dependabot
    re-runs it)."""
    return [
        "requirements.in",
        "--universal",
        "--generate-hashes",
        "--python-version",
        python_floor(root),
        "-o",
        "requirements.txt",
    ]


def recorded_command(text: str) -> str | None:
    lines = text.splitlines()
    if len(lines) >= 2 and lines[0].startswith("# This file was autogenerated by uv"):
        return lines[1].lstrip("#").strip()
    return None


def check(root: Path = REPO_ROOT) -> list[str]:
    """What is out of step, without the network: the .in against pyproject, the header."""
    problems = []
    lock_in, lock_txt = root / "ci/lock/requirements.in", root / "ci/lock/requirements.txt"
    if not lock_in.is_file() or lock_in.read_text(encoding="utf-8") != render_in(root):
        problems.append(f"{_rel(lock_in)} differs from pyproject.toml's requirements")
    if not lock_txt.is_file():
        problems.append(f"{_rel(lock_txt)} is missing")
        return problems
    text = lock_txt.read_text(encoding="utf-8")
    wanted = "uv pip compile " + " ".join(uv_arguments(root))
    if recorded_command(text) != wanted:
        problems.append(f"{_rel(lock_txt)}: its header does not record `{wanted}`")
    unhashed = [e.name for e in parse_lock(text) if not e.hashes]
    if unhashed:
        problems.append(f"{_rel(lock_txt)}: no hashes for {', '.join(unhashed)}")
    return problems


# -- the command -----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="only check (no network, no uv)")
    parser.add_argument("--upgrade", action="store_true", help="take the newest releases")
    parser.add_argument(
        "--upgrade-package", action="append", default=[], metavar="NAME", help="upgrade one"
    )
    parser.add_argument("--uv", default=None, help="the uv command (default: uv on PATH)")


def upgrade_arguments(args: argparse.Namespace) -> list[str]:
    extra = ["--upgrade"] if args.upgrade else []
    for name in args.upgrade_package:
        extra += ["--upgrade-package", name]
    return extra


def run(args: argparse.Namespace) -> int:
    if args.check:
        problems = check()
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        if problems:
            print("run `python -m ci lock` (docs/ci.md)", file=sys.stderr)
        return 1 if problems else 0
    uv = args.uv or shutil.which("uv")
    if not uv:
        raise CIError("uv is not installed: python -m pip install uv (then python -m ci lock)")
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    text = render_in()
    if not LOCK_IN.is_file() or LOCK_IN.read_text(encoding="utf-8") != text:
        atomic_write_text(LOCK_IN, text)
        print(f"wrote {_rel(LOCK_IN)}")
    command = [uv, "pip", "compile", *uv_arguments(), *upgrade_arguments(args)]
    print("+ " + subprocess.list2cmdline(command), flush=True)
    result = subprocess.run(command, cwd=LOCK_DIR, stdout=subprocess.DEVNULL)  # uv echoes the file
    if result.returncode:
        return result.returncode
    problems = check()
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0
