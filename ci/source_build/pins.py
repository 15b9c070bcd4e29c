"""Read, check and bump the source-build pins (ci/source_build/pins.toml).

Subcommands:

  show     Print the pins and export them as step outputs: iree-repository,
           iree-commit, package-version, llvm-commit (may be empty: see pins.toml),
           llvm-repository (where the LLVM/MLIR-only build checks that commit out).
           --iree-commit overrides the pinned commit (workflow_dispatch input).
  verify   Check an IREE checkout: HEAD must be the pinned (or overriding) commit, and
           the LLVM submodule's gitlink must match llvm.commit when that is set.
           Outputs iree-commit, llvm-commit (the gitlink found) and package-version.
  update   Record a checkout's HEAD and LLVM gitlink in pins.toml (keeps comments).

Only git is needed; the submodule itself need not be checked out for verify/update.

Examples:
  python -m ci pins show
  python -m ci pins verify --iree-dir iree-src
  python -m ci pins update --iree-dir ~/src/iree
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path
from typing import Any

from ci._common import CIError, load_toml, notice, set_outputs

PINS_FILE = Path(__file__).resolve().parent / "pins.toml"
_SHA = re.compile(r"[0-9a-f]{40}")
_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")


def load_pins(path: Path = PINS_FILE) -> dict[str, Any]:
    pins = load_toml(path)
    for section, key in (
        ("iree", "repository"),
        ("iree", "commit"),
        ("iree", "version"),
        ("llvm", "submodule"),
    ):
        if not pins.get(section, {}).get(key):
            raise CIError(f"{path}: [{section}] {key} is required")
    if not _SHA.fullmatch(pins["iree"]["commit"]):
        raise CIError(f"{path}: iree.commit must be a full 40-hex commit")
    llvm = pins["llvm"].get("commit", "")
    if llvm and not _SHA.fullmatch(llvm):
        raise CIError(f"{path}: llvm.commit must be empty or a full 40-hex commit")
    return pins


def package_version(pins: dict[str, Any], commit: str) -> str:
    """PEP 440 version with a local label naming the commit: 3.13.0+src.89ece87b8985."""
    return f"{pins['iree']['version']}+src.{commit[:12]}"


def check_override(value: str | None) -> str | None:
    value = (value or "").strip()
    if not value:
        return None
    if not _REF.fullmatch(value) or ".." in value:
        raise CIError(f"--iree-commit {value!r}: expected a commit or ref name")
    return value


def git(repo: Path, *args: str) -> str:
    try:
        result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    except FileNotFoundError:
        raise CIError("git is not on PATH") from None
    if result.returncode:
        raise CIError(f"git {' '.join(args)} in {repo}: {result.stderr.strip()}")
    return result.stdout.strip()


def gitlink(repo: Path, submodule: str) -> str:
    """The commit a submodule is pinned to in HEAD (git ls-tree: '160000 commit SHA\\tpath')."""
    line = git(repo, "ls-tree", "HEAD", "--", submodule)
    parts = line.split()
    if len(parts) < 3 or parts[0] != "160000" or parts[1] != "commit":
        raise CIError(
            f"{repo}: {submodule} is not a submodule in HEAD (ls-tree: {line or 'nothing'})"
        )
    return parts[2]


def cmd_show(args: argparse.Namespace) -> int:
    pins = load_pins(Path(args.pins))
    override = check_override(args.iree_commit)
    commit = override or pins["iree"]["commit"]
    values = {
        "iree-repository": pins["iree"]["repository"],
        "iree-commit": commit,
        "package-version": package_version(pins, commit) if _SHA.fullmatch(commit) else "",
        "llvm-commit": "" if override else pins["llvm"].get("commit", ""),
        "llvm-repository": pins["llvm"].get("repository", ""),
    }
    set_outputs(values)
    for key, value in values.items():
        print(f"{key}: {value}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    pins = load_pins(Path(args.pins))
    repo = Path(args.iree_dir)
    override = check_override(args.iree_commit)
    head = git(repo, "rev-parse", "HEAD")
    if override is None and head != pins["iree"]["commit"]:
        raise CIError(f"{repo} is at {head}, pins.toml pins {pins['iree']['commit']}")
    llvm = gitlink(repo, pins["llvm"]["submodule"])
    pinned_llvm = pins["llvm"].get("commit", "")
    if pinned_llvm and llvm != pinned_llvm:
        if override is None:
            raise CIError(f"{pins['llvm']['submodule']} is at {llvm}, pins.toml pins {pinned_llvm}")
        notice(
            f"IREE override {override}: LLVM is at {llvm}, not the pinned {pinned_llvm}", "warning"
        )
    values = {
        "iree-commit": head,
        "llvm-commit": llvm,
        "package-version": package_version(pins, head),
    }
    set_outputs(values)
    for key, value in values.items():
        print(f"{key}: {value}")
    return 0


def replace_in_section(text: str, section: str, key: str, value: str) -> str:
    """Replaces the quoted value of `key = "..."` inside [section], keeping comments."""
    header = re.compile(r"^\s*\[([^\]]+)\]\s*(#.*)?$")
    assignment = re.compile(rf'^(\s*{re.escape(key)}\s*=\s*)"[^"]*"(.*)$')
    lines = text.splitlines(keepends=True)
    current = None
    for i, line in enumerate(lines):
        m = header.match(line.rstrip("\r\n"))
        if m:
            current = m.group(1).strip()
            continue
        if current == section:
            a = assignment.match(line.rstrip("\r\n"))
            if a:
                ending = line[len(line.rstrip("\r\n")) :]
                lines[i] = f'{a.group(1)}"{value}"{a.group(2)}{ending}'
                return "".join(lines)
    raise CIError(f'pins.toml: no {key} = "..." line in [{section}]')


def cmd_update(args: argparse.Namespace) -> int:
    path = Path(args.pins)
    pins = load_pins(path)
    repo = Path(args.iree_dir)
    head = git(repo, "rev-parse", "HEAD")
    llvm = gitlink(repo, pins["llvm"]["submodule"])
    text = path.read_text(encoding="utf-8")
    text = replace_in_section(text, "iree", "commit", head)
    text = replace_in_section(text, "llvm", "commit", llvm)
    if args.version:
        text = replace_in_section(text, "iree", "version", args.version)
    path.write_text(text, encoding="utf-8", newline="\n")
    load_pins(path)
    print(f"{path}: iree {head}, llvm {llvm}")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pins", default=str(PINS_FILE), help="pins file (default ci/source_build/pins.toml)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("show", help="print the pins as step outputs")
    s.add_argument("--iree-commit", help="override the IREE commit (empty: use the pin)")
    s.set_defaults(func=cmd_show)
    v = sub.add_parser("verify", help="check an IREE checkout against the pins")
    v.add_argument("--iree-dir", required=True, help="the IREE checkout")
    v.add_argument("--iree-commit", help="the override that was checked out, if any")
    v.set_defaults(func=cmd_verify)
    u = sub.add_parser("update", help="record a checkout's commits in pins.toml")
    u.add_argument("--iree-dir", required=True, help="the IREE checkout")
    u.add_argument("--version", help="also set iree.version (the release the commit belongs to)")
    u.set_defaults(func=cmd_update)


def run(args: argparse.Namespace) -> int:
    return args.func(args)
