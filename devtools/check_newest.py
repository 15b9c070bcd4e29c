"""Checks that an environment holds today's newest releases of the project's direct
dependencies: the ones a new user gets from the README's commands.

For every requirement that pyproject.toml declares (the dependencies and the extras
named), the installed version is compared with the newest release on the index that the
requirement admits (``pip list --outdated``: the newest release, pre-releases left out);
when that newest release is admitted and not installed, the lane is not testing what a new
user gets, and the check fails, naming each. A newest release that the requirement does
not admit (a deliberate cap such as ml_dtypes<0.7) is listed as such and does not fail.

    python -m devtools.check_newest --python .ci-venv/bin/python --extras dev,stablehlo-ref,jax

Exit 0: newest everywhere; 1: an older release was installed; 2: the check could not run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from ci._common import load_toml

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Finding:
    name: str
    installed: str
    newest: str
    admitted: bool  # the requirement admits the newest release


def declared(pyproject: dict, extras: list[str]) -> dict[str, Requirement]:
    """{canonical name: requirement} for the dependencies and the named extras that
    apply on this interpreter (environment markers evaluated)."""
    found: dict[str, Requirement] = {}
    lists = [pyproject["project"]["dependencies"]]
    optional = pyproject["project"].get("optional-dependencies", {})
    for extra in extras:
        if extra not in optional:
            raise ValueError(f"pyproject.toml has no extra {extra!r}")
        lists.append(optional[extra])
    for requirements in lists:
        for text in requirements:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate():
                continue
            found[canonicalize_name(requirement.name)] = requirement
    return found


def findings(requirements: dict[str, Requirement], outdated: list[dict]) -> list[Finding]:
    """The declared requirements that ``pip list --outdated`` lists as older than the index."""
    result = []
    for row in outdated:
        name = canonicalize_name(row["name"])
        if name not in requirements:
            continue
        newest = row["latest_version"]
        admitted = requirements[name].specifier.contains(Version(newest), prereleases=False)
        result.append(Finding(name, row["version"], newest, admitted))
    return sorted(result, key=lambda f: f.name)


def pip_outdated(python: str) -> list[dict]:
    proc = subprocess.run(
        [python, "-m", "pip", "list", "--outdated", "--format=json", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode:
        raise RuntimeError(f"pip list --outdated failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout or "[]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the environment's interpreter")
    parser.add_argument("--extras", default="", help="comma-separated extras that were installed")
    args = parser.parse_args(argv)
    pyproject = load_toml(ROOT / "pyproject.toml")
    extras = [e for e in args.extras.split(",") if e]
    try:
        requirements = declared(pyproject, extras)
    except ValueError as e:
        print(f"check_newest: {e}", file=sys.stderr)
        return 2
    try:
        rows = pip_outdated(args.python)
    except (OSError, RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        print(f"check_newest: could not ask pip: {e}", file=sys.stderr)
        return 2
    found = findings(requirements, rows)
    stale = [f for f in found if f.admitted]
    for f in found:
        how = "OLDER than the newest admitted release" if f.admitted else "capped by pyproject.toml"
        print(f"{f.name}: installed {f.installed}, newest {f.newest} ({how})")
    if stale:
        print(
            f"check_newest: {len(stale)} direct dependenc{'y' if len(stale) == 1 else 'ies'} "
            "older than what a new user gets today: "
            + ", ".join(f"{f.name} {f.installed} < {f.newest}" for f in stale),
            file=sys.stderr,
        )
        return 1
    print("check_newest: every declared dependency is at today's newest admitted release")
    return 0


if __name__ == "__main__":
    sys.exit(main())
