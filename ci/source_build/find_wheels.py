"""Find the wheels a source build produced and check that the expected ones are there.

Looks in --dir (recursively) for *.whl, parses each file name (PEP 427), and checks that
every --expect distribution has a wheel for --platform (by platform tag: manylinux /
musllinux / linux -> linux, macosx -> macos, win -> windows) and, with --version, of
that version. Prints a table and exports outputs `wheels` (one path per line) and
`count`. Exits 1 when an expected wheel is missing, so that an empty upload never
passes for a build.

Example:
  python -m ci find-wheels --dir wheelhouse \\
      --expect iree-base-compiler --expect iree-base-runtime --platform linux
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ci._common import CIError, current_os, normalize_os, set_outputs

_WHEEL = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-(?P<build>\d[^-]*))?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$"
)


@dataclass(frozen=True)
class Wheel:
    path: Path
    distribution: str
    version: str
    python_tag: str
    abi_tag: str
    platform_tag: str

    @property
    def os(self) -> str | None:
        tags = self.platform_tag.split(".")
        if all(t == "any" for t in tags):
            return "any"
        for tag in tags:
            if tag.startswith(("manylinux", "musllinux", "linux")):
                return "linux"
            if tag.startswith("macosx"):
                return "macos"
            if tag.startswith("win"):
                return "windows"
        return None


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_wheel(path: Path) -> Wheel | None:
    m = _WHEEL.match(path.name)
    if not m:
        return None
    return Wheel(
        path,
        canonical(m.group("name")),
        m.group("version"),
        m.group("py"),
        m.group("abi"),
        m.group("plat"),
    )


def find(directory: Path) -> list[Wheel]:
    if not directory.is_dir():
        raise CIError(f"{directory}: not a folder")
    return [w for w in (parse_wheel(p) for p in sorted(directory.rglob("*.whl"))) if w is not None]


def missing(
    wheels: list[Wheel], expect: list[str], platform: str | None, version: str | None
) -> list[str]:
    problems = []
    for dist in (canonical(e) for e in expect):
        matching = [w for w in wheels if w.distribution == dist]
        if platform:
            matching = [w for w in matching if w.os in (platform, "any")]
        if version:
            matching = [w for w in matching if w.version == version]
        if not matching:
            what = (
                dist + (f" {version}" if version else "") + (f" for {platform}" if platform else "")
            )
            problems.append(what)
    return problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir", default="wheelhouse", help="folder with the built wheels (default wheelhouse)"
    )
    parser.add_argument(
        "--expect",
        action="append",
        default=[],
        metavar="DIST",
        help="required distribution (repeatable)",
    )
    parser.add_argument("--platform", default="auto", help="linux | macos | windows | auto | any")
    parser.add_argument("--version", help="required version")


def run(args: argparse.Namespace) -> int:
    platform = (
        None
        if args.platform == "any"
        else (current_os() if args.platform == "auto" else normalize_os(args.platform))
    )
    wheels = find(Path(args.dir))
    for w in wheels:
        print(
            f"{w.distribution:<22} {w.version:<28} {w.python_tag}-{w.abi_tag}-{w.platform_tag}  ({w.os})"
        )
    set_outputs({"wheels": [str(w.path) for w in wheels], "count": len(wheels)})
    problems = missing(wheels, args.expect, platform, args.version)
    if problems:
        print("missing: " + "; ".join(problems), file=sys.stderr)
        return 1
    print(f"{len(wheels)} wheel(s) in {args.dir}")
    return 0
