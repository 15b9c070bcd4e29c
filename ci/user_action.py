"""The logic of this repository's GitHub Action (action.yml) for other repositories' models.

Subcommands, in the order the action runs them:

  install  A virtual environment of its own (--venv) with this project installed from the
           action's checkout (--action-path) and the IREE release asked for
           (--iree-version: empty or `latest` for the newest on PyPI, X.Y.Z for that one);
           step outputs python (the venv's interpreter) and iree-version. Nothing goes to
           $GITHUB_ENV or $GITHUB_PATH: the user's later steps see no change.
  check    The user's inputs, before anything runs: the case folders exist inside the
           workspace and hold cases, every target is known, every manifest of the
           expectations folder parses (file:line), the version list is well formed.
           With --early (before the install, standard library only) all but the
           manifests and the version list's command, so most bad input fails in seconds.
  run      pytest on the user's folders only (ci/action_select.py), with the user's
           manifests; then the annotations on the user's files, the step summary, the
           HTML report, and the outputs results, html, pass, fail, xfail, flaky, skip.
           Exits with pytest's status (1: an unexpected result).

Each bad input is one line, `error: <what>: <why and what to do>`, with the exit status
of the project's table (iree_conformance.common.errors): 2 bad arguments or
configuration (unknown target or IREE version), 3 a malformed manifest, 4 a case folder
missing or empty, 8 anything else the user can fix.

A list of IREE versions (`3.12.0 3.13.0`) is the version comparison of `iree-conformance
versions`; `run` hands it over when that command exists and says so when it does not,
and takes the newest version's results as the run's (versions_command, newest_results).

The action runs each of its Python modules as `python -I action_run.py MODULE`, never as
`python -m MODULE` from the user's checkout, where the checkout's own `ci/` or
`cache_tools.py` would win (own_module, issue 47); it needs Python 3.11 or newer.

Examples (what the action runs, shown as from this checkout):
  python -m ci user-action install --venv "$RUNNER_TEMP/venv" --action-path . --iree-version 3.13.0
  python -m ci user-action check --onnx-dir models --targets llvm-cpu --expectations-dir expectations
  python -m ci user-action run --onnx-dir models --targets llvm-cpu --expectations-dir expectations \\
      --results "$RUNNER_TEMP/results.json" --html "$RUNNER_TEMP/report.html"
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from ci._common import CIError, notice, set_outputs
from iree_conformance.common.errors import ConfigurationError, CorpusError, ManifestError

ACTION_PATH = Path(__file__).resolve().parent.parent
PYTHON_ENV = "IREE_CONFORMANCE_ACTION_PYTHON"
# The oldest Python the action runs on: 3.11's PYTHONSAFEPATH keeps the user's checkout
# (the working directory) off the path of every process the action starts (issue 47).
ACTION_MIN_PYTHON = (3, 11)
OS_NAMES = ("linux", "macos", "windows")
# What each folder input holds, its suite (pytest marker) and how a case file looks.
FOLDERS = {
    "onnx-dir": ("onnx_dir", "*.onnx", "ONNX models (.onnx)"),
    "stablehlo-dir": ("stablehlo", "*.mlir", "StableHLO programs (.mlir)"),
    "jax-dir": ("jax", "*.py", "JAX case files (.py)"),
    "torch-dir": ("torch", "*.py", "torch case files (.py)"),
}
# With torch-dir, torch's CPU build goes in before the torch extra: PyPI's default Linux
# torch is a CUDA build of several GB (docs/torch.md).
TORCH_REQUIREMENT = "torch==2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
_VERSION = re.compile(r"^\d+(\.\d+){0,3}([a-z]+\d*)?(\.dev\d+|\.post\d+)?$")
_FILE_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<rest>.*)$", re.S)
# pip's and uv's words for a version PyPI does not have.
_NO_SUCH_VERSION = re.compile(
    r"(No matching distribution found for|Could not find a version that satisfies the "
    r"requirement|there is no version of) (?P<req>iree-base-(compiler|runtime)==[^\s,;]+)"
)


# -- inputs -------------------------------------------------------------------------------


def workspace() -> Path:
    return Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd()).resolve()


def split_list(value: str) -> list[str]:
    """An input that may hold several items: one per line, or separated by spaces or commas."""
    return [item for item in re.split(r"[\s,]+", value or "") if item]


def iree_versions(value: str) -> list[str]:
    """[] for the newest release, else the versions asked for (each checked for its form)."""
    items = split_list(value)
    if items in ([], ["latest"]):
        return []
    for item in items:
        if not _VERSION.match(item):
            raise ConfigurationError(
                f"iree-version {item!r}: not a version; give an IREE release such as 3.13.0 "
                "(https://pypi.org/project/iree-base-compiler/#history), several separated by "
                "spaces, or leave it empty for the newest"
            )
    return items


def folder_in_workspace(name: str, value: str, root: Path) -> Path:
    """The input's folder, resolved inside the workspace (never outside it)."""
    path = (root / value).resolve()
    if not path.is_relative_to(root):
        raise ConfigurationError(
            f"{name} {value!r}: outside the repository's checkout ({root}); give a path inside it"
        )
    return path


def case_folders(inputs: dict[str, list[str]], root: Path) -> dict[str, list[Path]]:
    """Every folder input, checked: it exists inside the workspace and holds cases."""
    found: dict[str, list[Path]] = {}
    for name, values in inputs.items():
        _, pattern, what = FOLDERS[name]
        for value in values:
            path = folder_in_workspace(name, value, root)
            if not path.is_dir():
                raise CorpusError(
                    f"{name} {value!r}: no such folder in the repository; set {name} to the "
                    f"folder holding your {what}"
                )
            files = [
                p
                for p in path.rglob(pattern)
                if not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)
            ]
            if not files:
                raise CorpusError(
                    f"{name} {value!r}: holds no {what}; point {name} at the folder of your cases"
                )
            found.setdefault(name, []).append(path)
    if not found:
        raise ConfigurationError(
            "nothing to run: set at least one of onnx-dir, stablehlo-dir, jax-dir, torch-dir"
        )
    return found


def known_targets(names: list[str]) -> list[str]:
    try:
        from iree_conformance.model.targets import load_targets

        table = load_targets(ACTION_PATH / "conformance" / "targets.toml")
    except ModuleNotFoundError:  # Python 3.10 before the install: no tomli yet
        return names or ["llvm-cpu"]  # checked again after the install
    if not names:
        return ["llvm-cpu"]
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ConfigurationError(
            f"targets: unknown target {', '.join(map(repr, unknown))}; known: {', '.join(sorted(table))}"
        )
    return names


def check_manifests(directory: Path | None, targets: list[str]) -> None:
    """Parses every manifest of the expectations folder the run could read (file:line)."""
    if directory is None:
        return
    from iree_conformance.expectations.lookup import load_expectations

    root = workspace()
    for target in targets:
        for os_name in OS_NAMES:
            try:
                load_expectations(directory, target, os_name)
            except ManifestError as exc:
                # The file:line relative to the workspace, and an annotation there.
                text = str(exc)
                where = _FILE_LINE.match(text)
                if where and Path(where["file"]).resolve().is_relative_to(root):
                    rel = Path(where["file"]).resolve().relative_to(root).as_posix()
                    text = f"{rel}:{where['line']}: {where['rest']}"
                    if os.environ.get("GITHUB_ACTIONS") == "true":
                        notice(where["rest"], "error", file=rel, line=int(where["line"]))
                raise ManifestError(text) from None


def expectations_folder(value: str, root: Path) -> Path | None:
    if not value:
        return None
    path = folder_in_workspace("expectations-dir", value, root)
    if not path.is_dir():
        raise ConfigurationError(
            f"expectations-dir {value!r}: no such folder in the repository; create it with a "
            "<target>.toml manifest, or leave the input empty"
        )
    return path


class Inputs:
    """The action's inputs, checked."""

    def __init__(self, args: argparse.Namespace, early: bool = False) -> None:
        check_python()
        self.root = workspace()
        self.versions = iree_versions(args.iree_version)
        self.folders = case_folders(
            {
                name: split_list(getattr(args, name.replace("-", "_")))
                for name in FOLDERS
                if getattr(args, name.replace("-", "_"))
            },
            self.root,
        )
        self.targets = known_targets(split_list(args.targets))
        self.expectations = expectations_folder(args.expectations_dir, self.root)
        if not early:  # the manifest reader needs the installed project (numpy)
            check_manifests(self.expectations, self.targets)
            if "torch-dir" in self.folders:
                check_torch()
        self.pytest_args = shlex.split(args.pytest_args or "")


def check_torch() -> None:
    """torch-dir's cases need torch and iree-turbine in the action's environment."""
    from iree_conformance.frontends.torch_export.folder import missing_reason

    missing = missing_reason()
    if missing:
        raise ConfigurationError(
            f"torch-dir: {missing} (the action's environment, {sys.prefix}: its install step "
            f"puts in {TORCH_REQUIREMENT} from {TORCH_CPU_INDEX} and the torch extra when "
            "torch-dir is set; see that step's log)"
        )


# -- install ------------------------------------------------------------------------------


def own_module(python: str | Path, module: str) -> list[str]:
    """`python -m MODULE` from the action's own folder and installed packages only, never
    from the working directory, which is the user's checkout (action_run.py)."""
    return [str(python), "-I", str(ACTION_PATH / "action_run.py"), module]


def check_python(version: tuple[int, ...] | None = None) -> None:
    """The interpreter running the action's code is new enough (ACTION_MIN_PYTHON)."""
    version = version or (sys.version_info.major, sys.version_info.minor)
    if version[:2] < ACTION_MIN_PYTHON:
        have = ".".join(map(str, version[:2]))
        need = ".".join(map(str, ACTION_MIN_PYTHON))
        raise ConfigurationError(
            f"python-version {have}: the action needs Python {need} or newer for its own "
            f"environment (PYTHONSAFEPATH keeps your checkout's modules out of its processes); "
            f"set python-version to {need} or newer, or leave it at its default"
        )


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def cmd_install(args: argparse.Namespace) -> int:
    versions = iree_versions(args.iree_version)
    venv = Path(args.venv).resolve()
    action = Path(args.action_path).resolve()
    subprocess.run([sys.executable, "-I", "-m", "venv", "--clear", str(venv)], check=True)
    python = venv_python(venv)
    extras = ",".join(e for e in split_list(args.extras) if e)
    requirement = f"{action}[{extras}]" if extras else str(action)
    pins = (
        [f"iree-base-compiler=={versions[0]}", f"iree-base-runtime=={versions[0]}"]
        if len(versions) == 1
        else []
    )
    # The action's own steps run cache_tools (the store's cache key and save plan): it is
    # its own distribution beside the suite, installed from the action's checkout.
    requirements = [requirement, str(action / "cache_tools")]
    # uv when the runner has it (parallel downloads, its cache linked, not copied), else pip.
    uv = shutil.which("uv")
    installer = (
        [uv, "pip", "install", "--python", str(python)]
        if uv
        else [str(python), "-I", "-m", "pip", "install", "--disable-pip-version-check"]
    )
    if "torch" in split_list(args.extras):
        install_torch(installer)
    command = [*installer, *requirements]
    print(
        f"installing with {'uv' if uv else 'pip'}: {' '.join(requirements)} {' '.join(pins)}",
        flush=True,
    )
    result = subprocess.run(
        command + pins, capture_output=True, text=True, encoding="utf-8", errors="replace"
    )
    sys.stdout.write(result.stdout)
    sys.stdout.write(result.stderr)
    if result.returncode != 0:
        missing = _NO_SUCH_VERSION.search(result.stdout + result.stderr)
        if missing:
            raise ConfigurationError(
                f"iree-version {versions[0]}: no such IREE release on PyPI ({missing['req']}); "
                "see https://pypi.org/project/iree-base-compiler/#history or leave it empty"
            )
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise CIError(f"installing {requirement} failed (exit {result.returncode}): {last[0]}")
    version = subprocess.run(
        [
            str(python),
            "-I",
            "-c",
            "from importlib.metadata import version as v; print(v('iree-base-compiler'))",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    set_outputs({"python": str(python), "iree-version": version})
    print(f"installed iree-conformance with iree-base-compiler {version} into {venv}")
    return 0


def torch_command(installer: list[str]) -> list[str]:
    """torch's CPU build alone, from PyTorch's CPU index (the torch extra then finds it)."""
    return [*installer, "--index-url", TORCH_CPU_INDEX, TORCH_REQUIREMENT]


def install_torch(installer: list[str]) -> None:
    print(f"installing torch's CPU build: {TORCH_REQUIREMENT} from {TORCH_CPU_INDEX}", flush=True)
    result = subprocess.run(
        torch_command(installer), capture_output=True, text=True, encoding="utf-8", errors="replace"
    )
    sys.stdout.write(result.stdout + result.stderr)
    if result.returncode != 0:
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise CIError(
            f"torch-dir: installing torch's CPU build failed (exit {result.returncode}): "
            f"{last[0]}; the torch cases need `pip install {TORCH_REQUIREMENT} --index-url "
            f"{TORCH_CPU_INDEX}` to succeed on this runner (docs/torch.md)"
        )


# -- check and run ------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    inputs = Inputs(args, early=args.early)
    if args.early:
        print(f"inputs ok so far (folders, targets {', '.join(inputs.targets)}, version form)")
        return 0
    if len(inputs.versions) > 1:
        require_versions_command(inputs.versions)
    folders = ", ".join(f"{n} {p}" for n, paths in inputs.folders.items() for p in paths)
    print(f"inputs ok: {folders}; targets {', '.join(inputs.targets)}")
    return 0


def selection_arguments(inputs: Inputs, expectations: Path) -> list[str]:
    """The user's selection: the action's plugin, the suites, folders, targets, manifests
    and pytest-args; neither the conformance folder nor a results file (`versions` gives
    each version its own)."""
    markers = " or ".join(FOLDERS[name][0] for name in inputs.folders)
    argv = ["-p", "ci.action_select", "-m", markers, "--offline"]
    for name, paths in inputs.folders.items():
        for path in paths:
            argv += [f"--{name}", str(path)]
    for target in inputs.targets:
        argv += ["--target", target]
    return argv + ["--expectations-dir", str(expectations), *inputs.pytest_args]


def pytest_arguments(inputs: Inputs, results: Path, expectations: Path) -> list[str]:
    argv = [str(ACTION_PATH / "conformance"), "-p", "no:cacheprovider"]
    argv += ["--report-json", str(results)]
    return argv + selection_arguments(inputs, expectations)


def pytest_command(inputs: Inputs, results: Path, expectations: Path) -> list[str]:
    python = os.environ.get(PYTHON_ENV) or sys.executable
    return own_module(python, "pytest") + pytest_arguments(inputs, results, expectations)


def counts(outcomes: list[dict[str, Any]]) -> dict[str, int]:
    """pass, fail (red: unexpected failures and strict XPASSes), xfail, flaky, skip."""
    seen = Counter(str(o.get("verdict", "")) for o in outcomes)
    return {
        "pass": seen["pass"],
        "fail": seen["fail"] + seen["xpass"],
        "xfail": seen["xfail"],
        "flaky": seen["flaky"],
        "skip": seen["skip"],
    }


def require_versions_command(versions: list[str]) -> str:
    """The interpreter whose `iree-conformance versions` compares IREE releases (issue 31);
    a one-line error when this release of the project does not have the command."""
    python = os.environ.get(PYTHON_ENV) or sys.executable
    probe = subprocess.run(
        [*own_module(python, "iree_conformance.cli.main"), "versions", "--help"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise ConfigurationError(
            f"iree-version lists {len(versions)} versions ({' '.join(versions)}): comparing "
            "versions needs `iree-conformance versions`, which this release of the action "
            "does not have; give one version, or pin a newer release of the action"
        )
    return python


def versions_out(results: Path) -> Path:
    """Where `versions` writes each version's results and log, beside the results file."""
    return results.parent / "versions"


def versions_command(inputs: Inputs, results: Path, expectations: Path) -> list[str]:
    """The version comparison: the versions, the action's conformance folder (the run's
    working directory is the user's checkout), each version's results under
    versions_out, the comparison beside the results; the selection after `--`."""
    python = require_versions_command(inputs.versions)
    return [
        *own_module(python, "iree_conformance.cli.main"),
        "versions",
        *inputs.versions,
        "--conformance-dir",
        str(ACTION_PATH / "conformance"),
        "--out",
        str(versions_out(results)),
        "--json",
        str(results.with_name("versions.json")),
        "--",
        *selection_arguments(inputs, expectations),
    ]


def newest_results(out: Path, results: Path) -> None:
    """Copies the newest version's results (the order of the comparison) to results: the
    counts, annotations and report of a version comparison are the newest version's."""
    from iree_conformance.report import version_compare
    from iree_conformance.report.markdown import load_results

    found = [
        (version_compare.column_of_results(load_results(path), path.stem), path)
        for path in sorted(out.glob("*.json"))
    ]
    if found:
        newest = max(found, key=lambda pair: version_compare.version_order(pair[0]))[1]
        shutil.copyfile(newest, results)
        print(f"results of the newest version: {newest} (every version's: {out})")


def cmd_run(args: argparse.Namespace) -> int:
    inputs = Inputs(args)
    results = Path(args.results).resolve()
    results.parent.mkdir(parents=True, exist_ok=True)
    results.unlink(missing_ok=True)
    shutil.rmtree(versions_out(results), ignore_errors=True)  # no earlier run's versions
    with tempfile.TemporaryDirectory() as empty:
        # No expectations folder: an empty one, never this project's own manifests.
        expectations = inputs.expectations or Path(empty)
        command = (
            versions_command(inputs, results, expectations)
            if len(inputs.versions) > 1
            else pytest_command(inputs, results, expectations)
        )
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ACTION_PATH)] + [p for p in [env.get("PYTHONPATH", "")] if p]
        )
        env["PYTHONSAFEPATH"] = "1"  # pytest's workers and IREE's: not the checkout's modules
        env["IREE_CONFORMANCE_ACTION_DIRS"] = os.pathsep.join(
            str(p) for paths in inputs.folders.values() for p in paths
        )
        print("+ " + shlex.join(command), flush=True)
        code = subprocess.run(command, cwd=inputs.root, env=env).returncode
    if len(inputs.versions) > 1 and code in (0, 1):  # else a version did not run: no
        newest_results(versions_out(results), results)  # older version's stands in for it
    if not results.is_file():
        raise CIError(f"the run wrote no results ({results}); pytest exited {code}, see above")
    data = json.loads(results.read_text(encoding="utf-8"))
    outcomes = [o for o in data.get("outcomes") or [] if isinstance(o, dict)]
    totals = counts(outcomes)
    from iree_conformance.report.annotations import annotate_results

    manifests = (
        inputs.expectations.relative_to(inputs.root).as_posix()
        if inputs.expectations
        else "expectations"
    )
    annotate_results(data, workspace=inputs.root, expectations_dir=manifests)
    html = Path(args.html).resolve() if args.html else None
    report = own_module(os.environ.get(PYTHON_ENV) or sys.executable, "iree_conformance.cli.main")
    report += ["report", str(results)] + (["--html", str(html)] if html else [])
    if subprocess.run(report, cwd=inputs.root, stdout=subprocess.DEVNULL).returncode != 0:
        print("warning: the report could not be rendered; the results file is intact")
    set_outputs({"results": str(results), "html": str(html or ""), **totals})
    print("counts: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    if code not in (0, 1):
        raise CIError(f"pytest exited {code}: the run did not complete; see the log above")
    return 1 if totals["fail"] or code == 1 else 0


# -- command line ------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("install", help="a venv with this project and the IREE release")
    p.add_argument("--venv", required=True)
    p.add_argument("--action-path", default=str(ACTION_PATH))
    p.add_argument("--iree-version", default="")
    p.add_argument(
        "--extras",
        default="",
        help="extras of this project, e.g. jax (torch: torch's CPU build first)",
    )
    p.set_defaults(func=cmd_install)
    for name, func, text in (
        ("check", cmd_check, "check the inputs"),
        ("run", cmd_run, "run, annotate, report"),
    ):
        p = sub.add_parser(name, help=text)
        for folder in FOLDERS:
            p.add_argument(f"--{folder}", default="", help="folder(s), one per line or space")
        p.add_argument("--targets", default="", help="targets (default llvm-cpu)")
        p.add_argument("--expectations-dir", default="")
        p.add_argument("--iree-version", default="")
        p.add_argument("--pytest-args", default="")
        if name == "check":
            p.add_argument(
                "--early",
                action="store_true",
                help="before the install, with the standard library only: everything but the "
                "manifests and the version list's command",
            )
        if name == "run":
            p.add_argument("--results", required=True)
            p.add_argument("--html", default="")
        p.set_defaults(func=func)


def run(args: argparse.Namespace) -> int:
    return int(args.func(args))
