"""Run one conformance shard (or the whole profile) the way CI does, and exit with pytest's code.

Builds `python -m pytest conformance ...` from a profile in ci/profiles.toml plus the
options given here, runs it from the repository root and returns pytest's exit status,
with one exception: exit status 5 ("no tests collected") becomes 0 for a shard (a shard
of a small selection can be empty) or with --allow-empty; in that case a results JSON
with no outcomes is written so that merge_results.py still sees the run.

Environment overrides (how ci/act_local.py points a run at loopback servers and keeps it
small; each one used is printed):
  CI_ZOO_MANIFEST     replaces the profile's --zoo-manifest (a path or URL)
  CI_ZOO_MODELS       replaces the profile's --zoo-models (or adds it)
  CI_RUN_SHARD_ARGS   further pytest arguments, appended (shell-style quoting), e.g.
                      "--onnx-ops-sample 20"; later options win over the profile's

--durations-file is passed on only when the file exists and holds at least one duration
(a first nightly has none; pytest then splits by count).

Examples:
  python ci/run_shard.py --profile smoke --report-json results.json
  python ci/run_shard.py --profile nightly --shard 2/4 --durations-file durations.json \\
      --corpus stablehlo=external/stablehlo --update-expectations --report-json r.json
  python ci/run_shard.py --profile smoke --dry-run -- -k add      # print, run nothing
  python ci/run_shard.py --profile nightly --describe             # corpora as step outputs
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    REPO_ROOT,
    CIError,
    current_arch,
    current_os,
    load_json,
    normalize_os,
    notice,
    run_main,
    set_outputs,
)

PROFILES_FILE = Path(__file__).resolve().parent / "profiles.toml"
NO_TESTS_COLLECTED = 5
UPDATE_MODES = ("base", "overlay")


def load_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10: tomli is a project dependency there
        import tomli as tomllib  # type: ignore[no-redef]
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def load_profile(name: str, path: Path = PROFILES_FILE) -> tuple[dict[str, Any], dict[str, Any]]:
    data = load_toml(path)
    profiles = data.get("profiles", {})
    if name not in profiles:
        raise CIError(f"no profile {name!r} in {path} (have: {', '.join(sorted(profiles))})")
    profile = profiles[name]
    corpora = {}
    for corpus in profile.get("corpora", []):
        if corpus not in data.get("corpora", {}):
            raise CIError(f"profile {name!r} names corpus {corpus!r}, which {path} does not define")
        corpora[corpus] = data["corpora"][corpus]
    return profile, corpora


def parse_shard(text: str) -> tuple[int, int]:
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise CIError(f"--shard {text!r}: expected I/N, e.g. 2/4") from None
    if not 1 <= index <= count:
        raise CIError(f"--shard {text!r}: I must be between 1 and N")
    return index, count


def parse_corpora(values: list[str]) -> dict[str, Path]:
    result = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise CIError(f"--corpus {value!r}: expected NAME=DIR")
        result[name] = Path(path)
    return result


def usable_durations(path: Path | None) -> bool:
    if path is None or not path.is_file():
        return False
    data = load_json(path)
    return isinstance(data, dict) and len(data) > 0


ENV_OPTIONS = (("--zoo-manifest", "CI_ZOO_MANIFEST"), ("--zoo-models", "CI_ZOO_MODELS"))
EXTRA_ARGS_ENV = "CI_RUN_SHARD_ARGS"


def profile_args(profile: dict[str, Any], env: Mapping[str, str]) -> list[str]:
    """The profile's pytest arguments with the environment's overrides applied."""
    args = [str(a) for a in profile.get("args", [])]
    for option, variable in ENV_OPTIONS:
        value = env.get(variable, "")
        if not value:
            continue
        notice(f"{variable}: {option} {value}")
        if option in args:
            i = args.index(option)
            if i + 1 >= len(args):
                raise CIError(f"profile option {option} has no value")
            args[i + 1] = value
        else:
            args += [option, value]
    extra = env.get(EXTRA_ARGS_ENV, "")
    if extra.strip():
        try:
            words = shlex.split(extra)
        except ValueError as exc:
            raise CIError(f"{EXTRA_ARGS_ENV}={extra!r}: {exc}") from None
        notice(f"{EXTRA_ARGS_ENV}: {' '.join(words)}")
        args += words
    return args


def build_command(args: argparse.Namespace, profile: dict[str, Any], corpora: dict[str, Any],
                  os_name: str) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", args.tests]
    if profile.get("markers"):
        cmd += ["-m", profile["markers"]]
    for target in args.target or profile.get("targets", []):
        cmd += ["--target", target]
    cmd += profile_args(profile, os.environ)
    given = parse_corpora(args.corpus)
    unknown = sorted(set(given) - set(corpora))
    if unknown:
        raise CIError(f"--corpus {', '.join(unknown)}: not a corpus of this profile ({', '.join(corpora) or 'none'})")
    for name, spec in corpora.items():
        if name not in given:
            if args.skip_missing_corpora:
                notice(f"corpus {name} not given; running without it")
                continue
            raise CIError(f"profile needs --corpus {name}=DIR (a checkout of {spec['repository']} at {spec['ref']})")
        folder = (given[name] / spec.get("subdir", "")).resolve()
        if not args.dry_run and not folder.is_dir():
            raise CIError(f"corpus {name}: {folder} is not a folder")
        cmd += [spec.get("option", "--stablehlo-dir"), str(folder)]
    if args.shard:
        parse_shard(args.shard)
        cmd += ["--shard", args.shard]
        durations = Path(args.durations_file).resolve() if args.durations_file else None
        if usable_durations(durations):
            cmd += ["--durations-file", str(durations)]
        elif durations is not None:
            notice(f"{durations}: no recorded durations; shards are split without them")
    if args.report_json:
        cmd += ["--report-json", str(Path(args.report_json).resolve())]
    if args.update_expectations:
        mode = args.update_expectations
        if mode == "auto":
            modes = profile.get("update_expectations", {})
            mode = modes.get(os_name, "overlay") if isinstance(modes, dict) else str(modes)
        if mode not in UPDATE_MODES:
            raise CIError(f"update_expectations mode {mode!r}: expected one of {', '.join(UPDATE_MODES)}")
        cmd += [f"--update-expectations={mode}"]
    cmd += args.pytest_args
    return cmd


def write_empty_results(path: Path, targets: list[str], argv: list[str], reason: str) -> None:
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    data = {
        "schema": 1,
        "metadata": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "os": current_os(),
            "arch": current_arch(),
            "targets": targets,
            "started": now,
            "finished": now,
            "argv": argv,
            "note": reason,
        },
        "outcomes": [],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def describe(profile: dict[str, Any], corpora: dict[str, Any]) -> int:
    outputs: dict[str, Any] = {"corpora": " ".join(corpora)}
    for name, spec in corpora.items():
        for field in ("repository", "ref", "subdir"):
            outputs[f"{name}-{field}"] = spec.get(field, "")
    set_outputs(outputs)
    print(profile.get("description", ""))
    for name, value in outputs.items():
        print(f"{name}: {value}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="run_shard.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", default="smoke", help="profile in ci/profiles.toml (default: smoke)")
    parser.add_argument("--profiles", default=str(PROFILES_FILE), help="profiles file (default ci/profiles.toml)")
    parser.add_argument("--tests", default="conformance", help="what pytest collects (default: conformance)")
    parser.add_argument("--shard", metavar="I/N", help="run the I-th of N shards")
    parser.add_argument("--durations-file", metavar="PATH", help="recorded durations balancing --shard")
    parser.add_argument("--report-json", metavar="PATH", help="results JSON to write")
    parser.add_argument("--target", action="append", help="override the profile's targets (repeatable)")
    parser.add_argument("--corpus", action="append", default=[], metavar="NAME=DIR",
                        help="checkout of an external corpus the profile names (repeatable)")
    parser.add_argument("--skip-missing-corpora", action="store_true",
                        help="run without corpora that were not given (default: error)")
    parser.add_argument("--update-expectations", nargs="?", const="auto", choices=["auto", *UPDATE_MODES],
                        help="rewrite expectation manifests from this run (auto: the profile's mode for this OS)")
    parser.add_argument("--os", help="OS whose update mode applies (default: this one)")
    parser.add_argument("--allow-empty", action="store_true", help="exit 0 when no test was collected")
    parser.add_argument("--describe", action="store_true", help="print the profile and its corpora as step outputs")
    parser.add_argument("--dry-run", action="store_true", help="print the pytest command, run nothing")
    parser.add_argument("pytest_args", nargs="*", help="further pytest arguments (after --)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    profile, corpora = load_profile(args.profile, Path(args.profiles))
    if args.describe:
        return describe(profile, corpora)
    os_name = normalize_os(args.os) if args.os else current_os()
    cmd = build_command(args, profile, corpora, os_name)
    print("+ " + subprocess.list2cmdline(cmd), flush=True)
    if args.dry_run:
        return 0
    if args.report_json:
        Path(args.report_json).resolve().parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUTF8="1")  # Windows consoles: no UnicodeEncodeError in output
    rc = subprocess.run(cmd, cwd=REPO_ROOT, env=env).returncode
    return finish(rc, args, profile, cmd)


def finish(rc: int, args: argparse.Namespace, profile: dict[str, Any], cmd: list[str]) -> int:
    """pytest's exit status, except that 'no tests collected' is fine for a shard."""
    if rc == NO_TESTS_COLLECTED and (args.shard or args.allow_empty):
        notice("no tests collected" + (f" in shard {args.shard}" if args.shard else "") + "; treating as success")
        if args.report_json and not Path(args.report_json).exists():
            targets = args.target or profile.get("targets", [])
            write_empty_results(Path(args.report_json), targets, cmd, "no tests collected")
        return 0
    if rc == NO_TESTS_COLLECTED:
        notice("pytest collected no tests: check the profile's selection", "error")
    return rc


if __name__ == "__main__":
    sys.exit(run_main(main))
