"""Run one conformance shard (or the whole profile) the way CI does, and exit with pytest's code.

Builds `python -m pytest conformance ...` from a profile in ci/profiles.toml plus the
options given here, runs it from the repository root and returns pytest's exit status,
with one exception: exit status 5 ("no tests collected") becomes 0 for a shard (a shard
of a small selection can be empty) or with --allow-empty; in that case a results JSON
with no outcomes is written so that merge_results.py still sees the run.

$CI_RUN_SHARD_ARGS adds pytest arguments after the profile's (shell-style quoting; later
options win), e.g. "--onnx-ops-sample 20": how devtools/act_local.py keeps a local run small.

--durations-file is passed on only when the file exists and holds at least one duration
(a first nightly has none; pytest then splits by count).

Timing confirm (the profile's timing_confirm, or --timing-confirm): after the run, whatever
its exit status, the cases of its results that have timing figures run once more (the
same targets, store and selection, --cases-file, --benchmark; nothing compiles again),
and each one's second timing is added to the results file as
metrics.benchmark.confirm_runs, so that a comparison has two runs on each side
(docs/ci-pull-requests.md). Its verdicts are not used; if it fails to start, crashes or
leaves no readable results, a warning says so and the results keep one timing run.

Examples:
  python -m ci run-shard --profile smoke --report-json results.json
  python -m ci run-shard --profile nightly --shard 2/4 --durations-file durations.json \\
      --corpus stablehlo=external/stablehlo --update-expectations --report-json r.json
  python -m ci run-shard --profile smoke --dry-run -- -k add      # print, run nothing
  python -m ci run-shard --profile nightly --describe             # corpora as step outputs

URLs come from the profile and can be overridden for a local run (act):
$IREE_CONFORMANCE_ZOO_MANIFEST and $IREE_CONFORMANCE_ZOO_MIRROR replace the profile's
zoo_manifest and zoo_mirror; --describe applies $IREE_CONFORMANCE_<CORPUS>_REPOSITORY,
_REF, _SUBDIR, _SERVER_URL and _DIR (a local copy: the workflow skips the checkout).
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
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ci import _timing_confirm
from ci._common import (
    REPO_ROOT,
    CIError,
    annotate_results,
    current_arch,
    current_os,
    load_json,
    load_results,
    load_toml,
    normalize_os,
    notice,
    set_outputs,
)
from iree_conformance.common.errors import ConformanceError

PROFILES_FILE = Path(__file__).resolve().parent / "profiles.toml"
# Profile settings that are URLs, and the environment variables that override them (a
# local run under act points them at loopback servers or local copies).
URL_SETTINGS = {
    "zoo_manifest": ("--zoo-manifest", "IREE_CONFORMANCE_ZOO_MANIFEST"),
    "zoo_mirror": ("--zoo-mirror", "IREE_CONFORMANCE_ZOO_MIRROR"),
}
CORPUS_FIELDS = ("repository", "ref", "subdir", "server_url", "dir")
NO_TESTS_COLLECTED = 5
UPDATE_MODES = ("base", "overlay")
# pytest's exit statuses after which a confirm run's results are read: all passed, or some
# case failed (its verdicts are not used); anything else is a crash or a usage error.
CONFIRM_RAN = (0, 1)
# Options the confirm run does not repeat from the shard's arguments: it runs the timed
# cases of the shard, not a shard of them, and writes no report, durations or manifest
# of its own (True: the option takes a value; None: an optional one, --update-expectations).
NOT_REPEATED: dict[str, bool | None] = {
    "--shard": True,
    "--durations-file": True,
    "--report-json": True,
    "--record-durations": True,
    "--junitxml": True,
    "--junit-xml": True,
    "--update-expectations": None,
}


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


def url_settings(profile: dict[str, Any], env: dict[str, str]) -> list[str]:
    """pytest options of the profile's URL settings, each overridden by its variable."""
    args: list[str] = []
    for setting, (option, variable) in URL_SETTINGS.items():
        value = env.get(variable) or profile.get(setting)
        if value:
            args += [option, str(value)]
    return args


def corpus_spec(name: str, spec: dict[str, Any], env: dict[str, str]) -> dict[str, str]:
    """A corpus's settings with $IREE_CONFORMANCE_<NAME>_<FIELD> overrides applied."""
    out = {}
    for field in CORPUS_FIELDS:
        variable = f"IREE_CONFORMANCE_{name.upper()}_{field.upper()}"
        out[field] = env.get(variable) or str(spec.get(field, ""))
    return out


def usable_durations(path: Path | None) -> bool:
    if path is None or not path.is_file():
        return False
    data = load_json(path)
    return isinstance(data, dict) and len(data) > 0


EXTRA_ARGS_ENV = "CI_RUN_SHARD_ARGS"


def extra_args(env: Mapping[str, str], announce: bool = True) -> list[str]:
    """$CI_RUN_SHARD_ARGS split as a shell would: pytest arguments after the profile's."""
    extra = env.get(EXTRA_ARGS_ENV, "")
    if not extra.strip():
        return []
    try:
        words = shlex.split(extra)
    except ValueError as exc:
        raise CIError(f"{EXTRA_ARGS_ENV}={extra!r}: {exc}") from None
    if announce:
        notice(f"{EXTRA_ARGS_ENV}: {' '.join(words)}")
    return words


def without_outputs(words: list[str]) -> list[str]:
    """pytest arguments minus the NOT_REPEATED options (as --opt VALUE or --opt=VALUE)."""
    out: list[str] = []
    skip_next = False
    for i, word in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        name, sep, _ = word.partition("=")
        if name not in NOT_REPEATED:
            out.append(word)
        elif not sep:
            takes = NOT_REPEATED[name]
            following = words[i + 1] if i + 1 < len(words) else None
            skip_next = following is not None and (
                takes is True or (takes is None and following in UPDATE_MODES)
            )
    return out


def build_command(
    args: argparse.Namespace,
    profile: dict[str, Any],
    corpora: dict[str, Any],
    os_name: str,
    confirm: bool = False,
) -> list[str]:
    """The shard's pytest command; with confirm, the selection without what makes it a
    shard and without its outputs (shard, durations, report, expectations), for
    confirm_command to complete."""
    cmd = [sys.executable, "-m", "pytest", args.tests]
    if profile.get("markers"):
        cmd += ["-m", profile["markers"]]
    for target in args.target or profile.get("targets", []):
        cmd += ["--target", target]
    cmd += [str(a) for a in profile.get("args", [])]
    cmd += url_settings(profile, dict(os.environ))
    extra = extra_args(os.environ, announce=not confirm)
    cmd += without_outputs(extra) if confirm else extra
    given = parse_corpora(args.corpus)
    unknown = sorted(set(given) - set(corpora))
    if unknown:
        raise CIError(
            f"--corpus {', '.join(unknown)}: not a corpus of this profile ({', '.join(corpora) or 'none'})"
        )
    for name, spec in corpora.items():
        if name not in given:
            if args.skip_missing_corpora:
                notice(f"corpus {name} not given; running without it")
                continue
            raise CIError(
                f"profile needs --corpus {name}=DIR (a checkout of {spec['repository']} at {spec['ref']})"
            )
        folder = (given[name] / spec.get("subdir", "")).resolve()
        if not args.dry_run and not folder.is_dir():
            raise CIError(f"corpus {name}: {folder} is not a folder")
        cmd += [spec.get("option", "--stablehlo-dir"), str(folder)]
    if confirm:
        return cmd + without_outputs(args.pytest_args)
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
            raise CIError(
                f"update_expectations mode {mode!r}: expected one of {', '.join(UPDATE_MODES)}"
            )
        cmd += [f"--update-expectations={mode}"]
    cmd += args.pytest_args
    return cmd


def confirm_command(
    args: argparse.Namespace,
    profile: dict[str, Any],
    corpora: dict[str, Any],
    os_name: str,
    targets: list[str],
    cases_file: Path | str,
    report: Path | str,
) -> list[str]:
    """The confirm run of the timed cases in cases_file on targets: the shard's selection
    and store, every case timed (--benchmark), no retry (its verdicts are not used), its
    results to report. Its options come last, so that they win."""
    cmd = build_command(
        argparse.Namespace(**{**vars(args), "target": targets}),
        profile,
        corpora,
        os_name,
        confirm=True,
    )
    return cmd + [
        "--cases-file",
        str(cases_file),
        "--report-json",
        str(report),
        "--benchmark",
        "--retries",
        "0",
    ]


def timing_confirm_wanted(args: argparse.Namespace, profile: dict[str, Any]) -> bool:
    """--timing-confirm / --no-timing-confirm, else the profile's timing_confirm (off)."""
    if args.timing_confirm is not None:
        return bool(args.timing_confirm)
    return profile.get("timing_confirm", False) is True


def time_again(
    args: argparse.Namespace,
    profile: dict[str, Any],
    corpora: dict[str, Any],
    os_name: str,
    results_path: Path,
    env: Mapping[str, str],
) -> int:
    """Runs the timed cases of results_path once more and folds their second timing into
    it (confirm_runs); returns how many cases got one. Never raises for the run's
    sake: what goes wrong is a warning, and the results file is then left as it was."""
    try:
        data = load_results(results_path)
    except ConformanceError as exc:  # a results file that is not one (CIError too)
        notice(f"timing confirm skipped: {exc}", "warning")
        return 0
    timed = _timing_confirm.timed_cases(data["outcomes"])
    count = sum(len(cases) for cases in timed.values())
    print(f"timing again: {count} timed case(s)", flush=True)
    if not count:
        return 0
    confirm_outcomes: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="timing-confirm-") as tmp:
        for i, (targets, cases) in enumerate(_timing_confirm.target_groups(timed)):
            cases_file = Path(tmp) / f"cases-{i}.txt"
            cases_file.write_text("\n".join(cases) + "\n", encoding="utf-8", newline="\n")
            report = Path(tmp) / f"confirm-{i}.json"
            cmd = confirm_command(args, profile, corpora, os_name, targets, cases_file, report)
            print("+ " + subprocess.list2cmdline(cmd), flush=True)
            try:
                rc = subprocess.run(cmd, cwd=REPO_ROOT, env=dict(env)).returncode
            except OSError as exc:
                notice(f"timing confirm did not start ({exc}); one timing run kept", "warning")
                return 0
            if rc not in CONFIRM_RAN:
                notice(f"timing confirm: pytest exited {rc}; one timing run kept", "warning")
                return 0
            try:
                confirm_outcomes += load_results(report)["outcomes"]
            except ConformanceError as exc:  # a results file that is not one (CIError too)
                notice(f"timing confirm: {exc}; one timing run kept", "warning")
                return 0
    added = _timing_confirm.fold(data, confirm_outcomes)
    if added:
        try:
            _timing_confirm.write_results(results_path, data)
        except OSError as exc:
            notice(f"timing confirm: cannot write {results_path}: {exc}", "warning")
            return 0
    print(f"timing again: {added} of {count} case(s) timed twice", flush=True)
    return added


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
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8", newline="\n")


def describe(profile: dict[str, Any], corpora: dict[str, Any]) -> int:
    env = dict(os.environ)
    outputs: dict[str, Any] = {"corpora": " ".join(corpora)}
    for name, spec in corpora.items():
        for field, value in corpus_spec(name, spec, env).items():
            outputs[f"{name}-{field.replace('_', '-')}"] = value
    set_outputs(outputs)
    print(profile.get("description", ""))
    for name, value in outputs.items():
        print(f"{name}: {value}")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile", default="smoke", help="profile in ci/profiles.toml (default: smoke)"
    )
    parser.add_argument(
        "--profiles", default=str(PROFILES_FILE), help="profiles file (default ci/profiles.toml)"
    )
    parser.add_argument(
        "--tests", default="conformance", help="what pytest collects (default: conformance)"
    )
    parser.add_argument("--shard", metavar="I/N", help="run the I-th of N shards")
    parser.add_argument(
        "--durations-file", metavar="PATH", help="recorded durations balancing --shard"
    )
    parser.add_argument("--report-json", metavar="PATH", help="results JSON to write")
    parser.add_argument(
        "--target", action="append", help="override the profile's targets (repeatable)"
    )
    parser.add_argument(
        "--corpus",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="checkout of an external corpus the profile names (repeatable)",
    )
    parser.add_argument(
        "--skip-missing-corpora",
        action="store_true",
        help="run without corpora that were not given (default: error)",
    )
    parser.add_argument(
        "--update-expectations",
        nargs="?",
        const="auto",
        choices=["auto", *UPDATE_MODES],
        help="rewrite expectation manifests from this run (auto: the profile's mode for this OS)",
    )
    parser.add_argument("--os", help="OS whose update mode applies (default: this one)")
    parser.add_argument(
        "--allow-empty", action="store_true", help="exit 0 when no test was collected"
    )
    parser.add_argument(
        "--timing-confirm",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="after the run, time its timed cases again into the results' confirm_runs "
        "(default: the profile's timing_confirm)",
    )
    parser.add_argument(
        "--describe", action="store_true", help="print the profile and its corpora as step outputs"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the pytest command, run nothing"
    )
    parser.add_argument("pytest_args", nargs="*", help="further pytest arguments (after --)")


def run(args: argparse.Namespace) -> int:
    profile, corpora = load_profile(args.profile, Path(args.profiles))
    if args.describe:
        return describe(profile, corpora)
    os_name = normalize_os(args.os) if args.os else current_os()
    cmd = build_command(args, profile, corpora, os_name)
    print("+ " + subprocess.list2cmdline(cmd), flush=True)
    confirming = timing_confirm_wanted(args, profile)
    if confirming and not args.report_json:
        notice("timing confirm needs --report-json (it adds to the results file); skipped")
        confirming = False
    if args.dry_run:
        if confirming:
            later = confirm_command(
                args,
                profile,
                corpora,
                os_name,
                args.target or profile.get("targets", []),
                "TIMED_CASES.txt",
                "CONFIRM.json",
            )
            print("then, for the timed cases of the results: " + subprocess.list2cmdline(later))
        return 0
    if args.report_json:
        Path(args.report_json).resolve().parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUTF8="1")  # Windows consoles: no UnicodeEncodeError in output
    rc = subprocess.run(cmd, cwd=REPO_ROOT, env=env).returncode
    results = Path(args.report_json).resolve() if args.report_json else None
    if results is not None and results.is_file():
        annotate(results)
        if confirming:
            time_again(args, profile, corpora, os_name, results, env)
    return finish(rc, args, profile, cmd)


def annotate(results: Path) -> None:
    """Every unexpected result of the run as an annotation at its file and line."""
    try:
        data = load_results(results)
    except CIError as exc:
        notice(f"no annotations: {exc}", "warning")
        return
    annotate_results(data)


def finish(rc: int, args: argparse.Namespace, profile: dict[str, Any], cmd: list[str]) -> int:
    """pytest's exit status, except that 'no tests collected' is fine for a shard."""
    if rc == NO_TESTS_COLLECTED and (args.shard or args.allow_empty):
        notice(
            "no tests collected"
            + (f" in shard {args.shard}" if args.shard else "")
            + "; treating as success"
        )
        if args.report_json and not Path(args.report_json).exists():
            targets = args.target or profile.get("targets", [])
            write_empty_results(Path(args.report_json), targets, cmd, "no tests collected")
        return 0
    if rc == NO_TESTS_COLLECTED:
        notice("pytest collected no tests: check the profile's selection", "error")
    return rc
