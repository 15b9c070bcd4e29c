"""``iree-conformance versions``: one selection under several IREE versions, compared.

Each version runs in its own cached environment (common/version_envs.py) with its own
artifact store; the comparison (report/version_compare.py) goes to stdout (Markdown, and the
step summary in a workflow), ``--json`` and ``--html``. Exit status: 0 no newer version is
worse on any case, 1 one is (a gate), 2 bad arguments, an unknown or too old version, or a
selection that matches nothing, 10 an environment could not be made or cannot load IREE
(docs/versions.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.common import env_check, iree_index, torch_envs, version_envs
from iree_conformance.common.errors import (
    EXIT_CONFIGURATION,
    EXIT_ENVIRONMENT,
    ConfigurationError,
    EnvironmentBuildError,
    exit_help,
)
from iree_conformance.common.userdirs import (
    RUNS_FOLDER,
    STORE_ENV,
    VERSION_STORES_ENV,
    resolve_dir,
    version_stores_dir,
)
from iree_conformance.report import version_compare

STORES_ENV = VERSION_STORES_ENV


class SelectionError(ConfigurationError):
    """The selection ran no case under a version (nothing matched, or everything skipped)."""


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def add_index_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--find-links",
        action="append",
        default=[],
        metavar="URL_OR_DIR",
        help="also take IREE wheels from this folder or page (nightlies), as pip's --find-links (repeatable)",
    )
    p.add_argument("--pre", action="store_true", help="admit pre-releases (nightlies)")
    p.add_argument(
        "--envs-dir",
        help="environments folder (default: $IREE_CONFORMANCE_ENVS, else <user cache>/envs)",
    )
    p.add_argument(
        "--stores-dir",
        help="root of the per-version artifact stores (default: $IREE_CONFORMANCE_VERSION_STORES, else <user cache>/version-stores)",
    )
    p.add_argument("--conformance-dir", help="the conformance folder (default ./conformance)")
    p.add_argument(
        "--selection",
        default="",
        help="the pytest selection as one string (a workflow input), split as a shell would; "
        "joined before the arguments after --",
    )
    p.add_argument(
        "--out",
        help="folder for each version's results and logs (default: a new folder under the "
        "stores' root, <stores-dir>/_runs/<command>-<time>; said on stderr)",
    )


def conformance_dir(value: str | None) -> Path:
    folder = Path(value) if value else Path.cwd() / "conformance"
    if not (folder / "targets.toml").exists():
        raise ConfigurationError(
            f"{folder} holds no targets.toml; pass --conformance-dir (the folder `pytest conformance` runs)"
        )
    return folder


def resolve_all(
    texts: list[str], find_links: tuple[str, ...], pre: bool
) -> list[iree_index.VersionSpec]:
    """Each argument's spec; the index is read once, and only for index versions."""
    for text in texts:  # bad syntax is exit 2 before any network
        iree_index.check_syntax(text)
    needs_index = [t for t in texts if t != iree_index.INSTALLED and not Path(t).is_dir()]
    offered = iree_index.available(find_links, pre) if needs_index else None
    specs = [iree_index.resolve(t, find_links, pre, offered) for t in texts]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ConfigurationError(f"a version is named twice: {' '.join(labels)}")
    return specs


def out_dir(args: argparse.Namespace, command: str) -> Path:
    """--out, else a new folder under the per-version stores' root (never the current
    folder: a checkout gets nothing it did not ask for); said on stderr."""
    if args.out:
        return Path(args.out)
    root = version_stores_dir(args.stores_dir)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = root / RUNS_FOLDER / f"{command}-{stamp}-{os.getpid()}"
    log(f"results and logs: {out} (--out names another folder)")
    return out


def store_for(spec: iree_index.VersionSpec, stores_dir: str | None) -> Path:
    """The version's artifact store; a wheels folder's is named by its wheels' digests too,
    so a folder rebuilt with the same version gets a store of its own."""
    if spec.kind == "installed":
        return resolve_dir(None, STORE_ENV, "store")
    digests = version_envs.wheel_digests(spec)
    if digests:
        return version_stores_dir(stores_dir) / f"{spec.slug}-{version_envs.env_key(digests)}"
    return version_stores_dir(stores_dir) / spec.slug


def run_selection(
    env: version_envs.VersionEnv,
    folder: Path,
    pytest_args: list[str],
    report: Path,
    store: Path,
    extra: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Runs pytest on the selection in env's Python; its outcomes (the log beside report)."""
    report.parent.mkdir(parents=True, exist_ok=True)
    report.unlink(missing_ok=True)
    command = [
        str(env.python), "-m", "pytest", str(folder), "-p", "no:cacheprovider", "-q",
        "--report-json", str(report), "--store-dir", str(store), *(extra or []), *pytest_args,
    ]  # fmt: skip
    log_path = report.with_suffix(".log")
    with open(log_path, "w", encoding="utf-8", newline="\n") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
    lines = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    tail = [x for x in lines if "error" in x.lower()][-1:] or lines[-1:]
    if proc.returncode == 5:
        raise SelectionError(
            f"the selection matches nothing under IREE {env.spec.label} ({' '.join(pytest_args) or 'no arguments'}); "
            f"check -k/-m (see {log_path})"
        )
    if proc.returncode not in (0, 1) or not report.exists():
        raise ConfigurationError(
            f"pytest under IREE {env.spec.label} exited {proc.returncode} without results: "
            f"{' '.join(tail)} (the whole log: {log_path})"
        )
    outcomes: list[dict[str, Any]] = json.loads(report.read_text(encoding="utf-8"))["outcomes"]
    refuse_harness_errors(env, outcomes, log_path)
    if not any(o.get("status") != "skip" for o in outcomes):
        raise SelectionError(
            f"the selection ran no case under IREE {env.spec.label}: all {len(outcomes)} skipped "
            f"(see {log_path})"
        )
    return outcomes


def refuse_harness_errors(
    env: version_envs.VersionEnv, outcomes: list[dict[str, Any]], log_path: Path
) -> None:
    """A case that failed because the environment could not load IREE is no verdict: the
    run is refused (exit 10) with the environment to delete, never compared."""
    broken = [o for o in outcomes if env_check.is_harness_environment_error(o)]
    if not broken:
        return
    first = (broken[0].get("diagnostics") or ["?"])[0]
    if env.spec.kind == "installed":
        fix = "reinstall IREE (pip install --force-reinstall iree-base-compiler iree-base-runtime)"
    else:
        fix = f"delete {env.path} (the next run makes it again)"
    raise EnvironmentBuildError(
        f"IREE {env.spec.label}: {len(broken)} of {len(outcomes)} case(s) could not load IREE "
        f"in the environment {env.path} ({first}); that is the harness's environment, not "
        f"IREE's verdict, so nothing is compared: {fix} and run again (see {log_path})"
    )


def manifest_note(env: version_envs.VersionEnv) -> str | None:
    version = env.info.get("iree_compiler")
    if version and version != iree_index.MANIFESTS_RECORDED_FOR:
        return (
            f"IREE {env.spec.label}: the expectations manifests were recorded for IREE "
            f"{iree_index.MANIFESTS_RECORDED_FOR}; their verdicts here are informative, the "
            "comparison is between the versions"
        )
    return None


version_order = version_compare.version_order


def selects_torch(pytest_args: list[str]) -> bool:
    """Whether the selection's -m expression can select torch cases (no -m: every suite);
    only then do the environments get torch (docs/versions.md)."""
    from iree_conformance.plugin.pytest_plugin import suites_selected_by
    from iree_conformance.suites.registry import builtin_suites

    expression = ""
    for n, arg in enumerate(pytest_args):
        if arg == "-m" and n + 1 < len(pytest_args):
            expression = pytest_args[n + 1]  # the last -m wins, as in pytest
        elif arg.startswith("-m") and len(arg) > 2 and not arg.startswith("--"):
            expression = arg[2:]
    names = [suite.name for suite in builtin_suites()]
    return "torch" in suites_selected_by(expression, names)


def torch_for(wanted: bool, say: Callable[[str], None] = log) -> torch_envs.TorchSet | None:
    """The running environment's torch for the environments, when the selection has torch
    cases; said when it has them but this environment lacks torch or iree-turbine."""
    if not wanted:
        return None
    found = torch_envs.running()
    if found is None:
        say(
            "the selection includes the torch suite, but this environment has no torch or "
            "iree-turbine, which the versions' environments take from it: their torch cases "
            "skip (install them here to run them: docs/torch.md)"
        )
    return found


def prepare_envs(
    specs: list[iree_index.VersionSpec],
    envs_dir: str | None,
    say: Callable[[str], None] = log,
    torch: bool = False,
) -> list[version_envs.VersionEnv]:
    envs = []
    torch_set = torch_for(torch, say)
    for spec in specs:
        env = version_envs.ensure(
            spec, version_envs.envs_dir(envs_dir), lambda line: None, say, torch_set
        )
        state = "made" if env.created else "cached and checked"
        if env.remade:
            state = "made again"
        with_torch = f", torch {env.info['torch']}" if env.info.get("torch") else ""
        say(
            f"IREE {spec.label}: environment {state} in {env.seconds:.1f} s "
            f"(compiler {env.info.get('iree_compiler')}, revision {env.revision}{with_torch})"
        )
        envs.append(env)
    return envs


def selection_of(args: argparse.Namespace) -> list[str]:
    """--selection (split as a shell would) and the arguments after --."""
    try:
        words = shlex.split(args.selection or "")
    except ValueError as e:
        raise ConfigurationError(f"--selection {args.selection!r}: {e}") from None
    return words + [a for a in args.pytest_args if a != "--"]


def cmd_versions(args: argparse.Namespace) -> int:
    pytest_args = selection_of(args)
    if len(args.versions) < 2:
        raise ConfigurationError(
            "versions needs two or more versions to compare, e.g. 3.12.0 3.13.0"
        )
    folder = conformance_dir(args.conformance_dir)
    specs = resolve_all(args.versions, tuple(args.find_links), args.pre)
    envs = prepare_envs(specs, args.envs_dir, torch=selects_torch(pytest_args))
    out = out_dir(args, "versions")
    columns = []
    for env in envs:
        note = manifest_note(env)
        if note:
            log(note)
        log(f"IREE {env.spec.label}: running the selection")
        report = out / f"{env.spec.slug}.json"
        outcomes = run_selection(
            env, folder, pytest_args, report, store_for(env.spec, args.stores_dir)
        )
        metadata = json.loads(report.read_text(encoding="utf-8")).get("metadata", {})
        columns.append(version_compare.Column(env.spec.label, env.info, outcomes, metadata))
    columns.sort(key=version_order)
    return write_comparison(args, columns)


def write_comparison(args: argparse.Namespace, columns: list[version_compare.Column]) -> int:
    from iree_conformance.report import markdown as report_markdown

    rows = version_compare.compare(columns)
    text = version_compare.markdown(columns, rows)
    sys.stdout.write(text)
    if not args.no_step_summary:
        report_markdown.append_step_summary(text)
    if args.json:
        data = version_compare.to_json(columns, rows)
        Path(args.json).write_text(
            json.dumps(data, indent=1) + "\n", encoding="utf-8", newline="\n"
        )
    if args.html:
        from iree_conformance.report.html.render import render_versions

        Path(args.html).write_text(render_versions(columns, rows), encoding="utf-8", newline="\n")
    return 1 if any(r.worse for r in rows) else 0


def cmd_compare_results(args: argparse.Namespace) -> int:
    """The comparison of results files already made (``versions --results``)."""
    from iree_conformance.report.markdown import load_results

    columns = [
        version_compare.column_of_results(load_results(Path(path)), path) for path in args.results
    ]
    columns.sort(key=version_order)
    return write_comparison(args, columns)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "versions",
        help="run one selection under several IREE versions (releases, nightlies, wheel folders, installed) and list every changed verdict",
        description=exit_help(
            {0: "no newer version is worse than an older one on any case", 1: "one is"},
            EXIT_CONFIGURATION,
            EXIT_ENVIRONMENT,
        )
        + " docs/versions.md. The pytest selection follows --, e.g. -- -m stablehlo -n 2.",
    )
    p.add_argument(
        "versions",
        nargs="*",
        help="IREE versions: 3.12.0, 3.13.0rc20261016 (with --pre), a folder of wheels, installed, or previous (the newest on the index older than the installed one)",
    )
    add_index_arguments(p)
    p.add_argument("--json", help="also write the comparison as JSON here")
    p.add_argument(
        "--html", help="also write the comparison as an HTML page here (a column per version)"
    )
    p.add_argument(
        "--no-step-summary", action="store_true", help="do not append to $GITHUB_STEP_SUMMARY"
    )
    p.add_argument(
        "--results",
        nargs="+",
        help="compare these results files (one per version, from --report-json) instead of running",
    )
    p.set_defaults(func=_dispatch, pytest_args=[])


def _dispatch(args: argparse.Namespace) -> int:
    if args.results:
        if args.versions:
            raise ConfigurationError(
                "give versions to run, or --results files to compare, not both"
            )
        return cmd_compare_results(args)
    return cmd_versions(args)
