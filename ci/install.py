"""Install the project (or just what a CI step needs) into the running interpreter.

Modes:

  (default)     pip install -e ".[EXTRAS]" -e ./cache_tools  -- the suite, its console
                scripts and extras, and cache-tools (its own distribution).
  --bootstrap   pip install --no-deps -e . plus pip install -e ./cache_tools, whose few
                small pure-Python dependencies come with it (cache_tools/pyproject.toml),
                so that cache keys can be computed *before* the pip download cache is
                restored (the full install then hits that cache).
  --report      pip install --no-deps -e . plus -e ./cache_tools with its dependencies
                (requests: ci/fetch_baseline.py's REST client) and what `iree-conformance
                report --html` needs (Jinja2, onnx for the operator scoreboard,
                platformdirs), with the versions pyproject.toml gives them: the results
                jobs fetch the baseline and render the page without the IREE wheels.
  --dev-tools   only the requirements of the `dev` extra (ruff, actionlint, cibuildwheel,
                pyyaml), read from pyproject.toml: ruff and the workflow checks (the lint job installs the package too, for mypy).
  --wheels DIR  the default install, but with iree-base-compiler / iree-base-runtime taken
                from wheels in DIR (the source-build lane) instead of PyPI. The version is
                read from the wheel file names and pinned with ==, so pip cannot fall back
                to a PyPI release; the installed versions are checked afterwards.

With --locked (the pull-request workflows: ci.yml, pr-comment.yml), every mode but --wheels
installs from the hashed lock ci/lock/requirements.txt (ci/lock.py) instead of the newest
releases: `pip install --require-hashes -r SUBSET`, SUBSET being the lock's entries the mode's
requirements need (the lock's `# via` lines, followed), then the project and cache-tools
with `--no-deps --no-build-isolation` (setuptools and wheel come from the lock too). A
requirement missing from the lock is an error that says to run `python -m ci lock`.

Pure standard library and no shell: the same command works on Linux, macOS and Windows.
--dry-run prints the pip commands instead of running them.

Examples:
  python -m ci install --extras dev
  python -m ci install --extras dev,stablehlo-ref
  python -m ci install --extras dev --wheels wheelhouse
  python -m ci install --locked --extras dev,stablehlo-ref
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from ci import lock
from ci._common import REPO_ROOT, CIError, load_toml

# cache-tools, its own distribution in this repository (cache_tools/pyproject.toml).
CACHE_TOOLS = "./cache_tools"
# What `iree-conformance report --html` imports besides the standard library; the
# version specifiers come from pyproject.toml's dependencies.
REPORT_DISTRIBUTIONS = ("jinja2", "onnx", "platformdirs")
IREE_DISTRIBUTIONS = ("iree-base-compiler", "iree-base-runtime")

_WHEEL_RE = re.compile(
    r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>[^-]+)(?:-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$"
)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_versions(directory: Path) -> dict[str, str]:
    """{distribution: version} for the IREE wheels in directory (one version each)."""
    found: dict[str, set[str]] = {}
    for wheel in sorted(directory.rglob("*.whl")):
        m = _WHEEL_RE.match(wheel.name)
        if not m:
            continue
        name = canonical(m.group("name"))
        if name in IREE_DISTRIBUTIONS:
            found.setdefault(name, set()).add(m.group("version"))
    missing = [d for d in IREE_DISTRIBUTIONS if d not in found]
    if missing:
        raise CIError(f"{directory}: no wheel for {', '.join(missing)}")
    several = {d: sorted(v) for d, v in found.items() if len(v) > 1}
    if several:
        raise CIError(f"{directory}: more than one version per distribution: {several}")
    return {d: next(iter(v)) for d, v in found.items()}


def load_pyproject() -> dict:
    return load_toml(REPO_ROOT / "pyproject.toml")


def extras_spec(extras: str) -> str:
    names = [e.strip() for e in extras.split(",") if e.strip()]
    for name in names:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise CIError(f"bad extra name {name!r}")
    return f".[{','.join(names)}]" if names else "."


def extra_names(extras: str) -> list[str]:
    spec = extras_spec(extras)
    return spec[2:-1].split(",") if spec.startswith(".[") else []


def locked_requirements(args: argparse.Namespace) -> list[str]:
    """The names whose lock entries (and what they need) the mode installs."""
    project = load_pyproject()
    build = list(project.get("build-system", {}).get("requires", []))
    cache_tools = load_toml(REPO_ROOT / "cache_tools" / "pyproject.toml")["project"]
    ct_deps = list(cache_tools.get("dependencies", []))
    if args.bootstrap:
        wanted = build + ct_deps
    elif args.report:
        deps = {lock.requirement_name(d) for d in project["project"]["dependencies"]}
        wanted = build + ct_deps + [d for d in REPORT_DISTRIBUTIONS if canonical(d) in deps]
    elif args.dev_tools:
        wanted = list(project["project"]["optional-dependencies"]["dev"])
    else:
        unlocked = [e for e in extra_names(args.extras) if e not in lock.LOCK_EXTRAS]
        if unlocked:
            raise CIError(
                f"--locked: the extra {', '.join(unlocked)} is not in the lock (it has "
                f"{', '.join(lock.LOCK_EXTRAS)}): add it to LOCK_EXTRAS in ci/lock.py and run "
                "`python -m ci lock`"
            )
        optional = project["project"].get("optional-dependencies", {})
        wanted = build + list(project["project"]["dependencies"]) + ct_deps
        for extra in extra_names(args.extras):
            wanted += optional[extra]
    return sorted({lock.requirement_name(r) for r in wanted if not _below_floor(r)})


def _below_floor(requirement: str) -> bool:
    """A requirement only Pythons older than the lock's floor take (``tomli; python_version
    < '3.11'`` of cache-tools, which still runs on 3.10): the lock holds no entry for it."""
    m = re.search(r"python_version\s*<\s*['\"](\d+)\.(\d+)['\"]", requirement.partition(";")[2])
    if not m:
        return False
    major, minor = (int(x) for x in lock.python_floor().split(".")[:2])
    return (int(m.group(1)), int(m.group(2))) <= (major, minor)


def locked_subset(args: argparse.Namespace, lock_file: Path = lock.LOCK_TXT) -> list[lock.Entry]:
    if not lock_file.is_file():
        raise CIError(f"{lock_file}: no lock (python -m ci lock makes it)")
    entries = lock.parse_lock(lock_file.read_text(encoding="utf-8"), str(lock_file))
    return lock.closure(entries, locked_requirements(args))


def plan_locked(args: argparse.Namespace, subset: Path) -> list[list[str]]:
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    commands = [[*pip, "--require-hashes", "-r", str(subset)]]
    if args.dev_tools:
        return commands
    own = ["-e", ".", "-e", CACHE_TOOLS] if args.editable else [".", CACHE_TOOLS]
    commands.append([*pip, "--no-deps", "--no-build-isolation", *own])
    return commands


def plan_commands(args: argparse.Namespace, subset: Path | None = None) -> list[list[str]]:
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    commands: list[list[str]] = []
    if args.upgrade_pip:
        commands.append([sys.executable, "-m", "pip", "install", "--upgrade", "pip"])
    if getattr(args, "locked", False):
        if subset is None:
            raise CIError("--locked: no subset file given")
        return commands + plan_locked(args, subset)
    if args.bootstrap:
        commands.append([*pip, "--no-deps", "-e", "."])
        commands.append([*pip, "-e", CACHE_TOOLS])
        return commands
    if args.report:
        deps = {
            canonical(re.split(r"[<>=!~; \[]", d, maxsplit=1)[0]): d
            for d in load_pyproject()["project"]["dependencies"]
        }
        commands.append([*pip, "--no-deps", "-e", "."])
        commands.append([*pip, "-e", CACHE_TOOLS, *(deps[name] for name in REPORT_DISTRIBUTIONS)])
        return commands
    if args.dev_tools:
        dev = load_pyproject()["project"]["optional-dependencies"]["dev"]
        commands.append([*pip, *dev])
        return commands
    target = extras_spec(args.extras)
    install = (
        [*pip, "-e", target, "-e", CACHE_TOOLS] if args.editable else [*pip, target, CACHE_TOOLS]
    )
    if args.wheels:
        wheel_dir = Path(args.wheels).resolve()
        versions = wheel_versions(wheel_dir)
        install[len(pip) : len(pip)] = ["--find-links", str(wheel_dir)]
        install += [f"{dist}=={version}" for dist, version in sorted(versions.items())]
    commands.append(install)
    return commands


def check_versions(expected: dict[str, str]) -> None:
    code = (
        "import json, importlib.metadata as m;"
        f"print(json.dumps({{d: m.version(d) for d in {sorted(expected)!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    import json

    installed = json.loads(out)
    wrong = {d: (installed.get(d), v) for d, v in expected.items() if installed.get(d) != v}
    if wrong:
        raise CIError(f"installed versions differ from the wheels: {wrong} (installed, wanted)")
    print("installed from wheels: " + ", ".join(f"{d} {v}" for d, v in sorted(installed.items())))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--bootstrap", action="store_true", help="only what cache-tools needs (no heavy wheels)"
    )
    mode.add_argument(
        "--report", action="store_true", help="only what the HTML report needs (no IREE wheels)"
    )
    mode.add_argument("--dev-tools", action="store_true", help="only the dev extra's tools")
    parser.add_argument(
        "--extras", default="dev", help="comma-separated extras (default: dev; '' for none)"
    )
    parser.add_argument("--wheels", metavar="DIR", help="take the IREE packages from wheels in DIR")
    parser.add_argument(
        "--no-editable", dest="editable", action="store_false", help="install a copy, not -e"
    )
    parser.add_argument(
        "--locked",
        action="store_true",
        help="install from the hashed lock ci/lock/requirements.txt (pull-request workflows)",
    )
    parser.add_argument("--upgrade-pip", action="store_true", help="upgrade pip first")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")


def run(args: argparse.Namespace) -> int:
    if args.wheels and (args.bootstrap or args.dev_tools or args.report):
        raise CIError("--wheels goes with the full install only")
    if args.locked and args.wheels:
        raise CIError("--locked and --wheels: the wheels' IREE is not the lock's; use one")
    with tempfile.TemporaryDirectory(prefix="ci-install-") as tmp:
        subset = None
        if args.locked:
            entries = locked_subset(args)
            subset = Path(tmp) / "locked-subset.txt"
            subset.write_text(lock.subset_text(entries), encoding="utf-8", newline="\n")
            print(
                f"from the lock ({lock.LOCK_TXT.relative_to(REPO_ROOT).as_posix()}), "
                f"{len(entries)} entries: " + ", ".join(f"{e.name}=={e.version}" for e in entries),
                flush=True,
            )
        for command in plan_commands(args, subset):
            print("+ " + subprocess.list2cmdline(command), flush=True)
            if not args.dry_run:
                result = subprocess.run(command, cwd=REPO_ROOT)
                if result.returncode:
                    return result.returncode
    if args.wheels and not args.dry_run:
        check_versions(wheel_versions(Path(args.wheels)))
    return 0
