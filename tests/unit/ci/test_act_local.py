"""devtools/act_local.py's logic without act: matrix rows, event payloads, act's command line
(loopback only), act's JSON log, the warm-run check and run_shard.py's overrides. Its runs
(a dry run, act on a tiny workflow) are in tests/e2e/ci/test_act_local_runs.py."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
import yaml

from devtools.actlocal.command import ActRun, NotLoopback, local_actions, require_local_url
from devtools.actlocal.event import event_payload, first_cron, triggers
from devtools.actlocal.logs import LogParser
from devtools.actlocal.servers import MANIFEST_NAME, StaticServer, make_tiny_zoo
from devtools.actlocal.warm import count_stages
from devtools.actlocal.workflow import expand_matrix, plan_workflow
from devtools.fake_github_api import FakeGitHub
from tests.support.ci_helpers import REPO

WORKFLOWS = REPO / ".github" / "workflows"


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


# -- matrix rows ----------------------------------------------------------------------


def test_include_only_matrix_expands_to_its_rows():
    rows = expand_matrix({"matrix": {"include": [{"os": "a", "py": "1"}, {"os": "b", "py": "2"}]}})
    assert rows == [{"os": "a", "py": "1"}, {"os": "b", "py": "2"}]


def test_include_extends_matching_rows_and_exclude_removes():
    rows = expand_matrix(
        {
            "matrix": {
                "os": ["u", "w"],
                "shard": [1, 2],
                "exclude": [{"os": "w", "shard": 2}],
                "include": [{"os": "u", "extra": "x"}, {"os": "m", "shard": 1}],
            }
        }
    )
    assert {"os": "u", "shard": 1, "extra": "x"} in rows and {
        "os": "u",
        "shard": 2,
        "extra": "x",
    } in rows
    assert {"os": "w", "shard": 1} in rows and {"os": "w", "shard": 2} not in rows
    assert {"os": "m", "shard": 1} in rows and len(rows) == 4


def test_ci_test_matrix_keeps_one_ubuntu_row_and_maps_its_python():
    plan = plan_workflow(load("ci.yml"), "3.11.7")
    test_rows = {(r.matrix["os"], r.matrix["python"]): r for r in plan.rows if r.job == "test"}
    kept = test_rows[("ubuntu-latest", "3.12")]
    assert kept.runs and kept.mapped_to == "3.11.7" and "mapped" in kept.reason
    assert "macos" in test_rows[("macos-latest", "3.12")].reason
    assert "windows" in test_rows[("windows-latest", "3.11")].reason
    assert plan.matrix_filters() == {"os": ["ubuntu-latest"], "python": ["3.12"]}
    assert plan.unfilterable() == []
    assert plan.python_versions() == ["3.12"]
    assert {r.job for r in plan.running()} == {"lint", "test", "results"}


def test_host_python_row_is_preferred_and_not_mapped():
    wf = {
        "jobs": {
            "t": {
                "runs-on": "ubuntu-latest",
                "strategy": {"matrix": {"python": ["3.10", "3.11", "3.12"]}},
                "steps": [
                    {
                        "uses": "actions/setup-python@" + "a" * 40,
                        "with": {"python-version": "${{ matrix.python }}"},
                    }
                ],
            }
        }
    }
    plan = plan_workflow(wf, "3.11.7")
    (kept,) = plan.running()
    assert kept.matrix == {"python": "3.11"} and kept.mapped_to is None and kept.reason == ""


def test_matrix_selection_and_unknown_job():
    plan = plan_workflow(load("nightly.yml"), "3.11.7", select={"shard": "1"})
    running = [r.matrix for r in plan.running() if r.job == "shard"]
    assert running == [
        {"os": "ubuntu-latest", "profile": p, "shard": 1, "shards": 4}
        for p in ("nightly", "nightly-targets", "nightly-vulkan")
    ]
    assert plan.matrix_filters()["shard"] == ["1"]
    plan = plan_workflow(load("nightly.yml"), "3.11.7", select={"shard": "1", "profile": "nightly"})
    assert [r.matrix for r in plan.running() if r.job == "shard"] == [
        {"os": "ubuntu-latest", "profile": "nightly", "shard": 1, "shards": 4}
    ]
    with pytest.raises(ValueError, match="no job nope"):
        plan_workflow(load("ci.yml"), "3.11.7", jobs=["nope"])


def test_unfilterable_rows_are_reported():
    # Two jobs whose kept rows' values cover a row that was left out: act cannot filter it.
    wf = {
        "jobs": {
            "a": {
                "runs-on": "ubuntu-latest",
                "strategy": {"matrix": {"k": ["1", "2"]}},
                "steps": [],
            },
            "b": {"runs-on": "ubuntu-latest", "strategy": {"matrix": {"k": ["2"]}}, "steps": []},
        }
    }
    plan = plan_workflow(wf, "3.11.7", select={"k": "1"})
    assert [r.matrix for r in plan.running()] == [{"k": "1"}]
    assert plan.unfilterable() == []


# -- event payloads ---------------------------------------------------------------------


def test_event_payloads():
    push = event_payload("push", repo="o/r", sha="a" * 40)
    assert push["ref"] == "refs/heads/main" and push["repository"]["default_branch"] == "main"
    pr = event_payload("pull_request", repo="o/r", sha="b" * 40, branch="feat", pr_action="closed")
    assert pr["number"] == 1 and pr["pull_request"]["head"]["repo"]["full_name"] == "o/r"
    assert pr["pull_request"]["state"] == "closed"
    wd = event_payload("workflow_dispatch", repo="o/r", sha="c" * 40, inputs={"x": "1"})
    assert wd["inputs"] == {"x": "1"} and wd["ref"] == "refs/heads/main"
    sched = event_payload(
        "schedule", repo="o/r", sha="d" * 40, cron=first_cron(load("nightly.yml"))
    )
    assert sched["schedule"] == "23 2 * * *"
    with pytest.raises(ValueError, match="--input is for workflow_dispatch"):
        event_payload("push", repo="o/r", sha="e" * 40, inputs={"x": "1"})
    with pytest.raises(ValueError, match="expected one of"):
        event_payload("release", repo="o/r", sha="f" * 40)
    assert triggers(load("cache-audit.yml")) == ["schedule", "workflow_dispatch", "pull_request"]


# -- act's command line -------------------------------------------------------------------


def make_run(tmp_path: Path, **kw) -> ActRun:
    base = dict(
        act="act",
        workflow=tmp_path / "w.yml",
        event="push",
        event_path=tmp_path / "e.json",
        action_cache=tmp_path / "a",
        cache_dir=tmp_path / "c",
        cache_port=1234,
        artifact_dir=tmp_path / "art",
        artifact_port=2345,
        actions=[("actions/cache@" + "0" * 40, tmp_path / "cache")],
        matrix={"os": ["ubuntu-latest"]},
        env={"GITHUB_API_URL": "http://127.0.0.1:9"},
        inputs={"k": "v"},
        secrets=("GITHUB_TOKEN",),
    )
    base.update(kw)
    return ActRun(**base)


def test_act_command_binds_servers_to_loopback_and_keeps_secrets_out(tmp_path):
    argv = make_run(tmp_path).argv()
    joined = " ".join(argv)
    assert argv[argv.index("--cache-server-addr") + 1] == "127.0.0.1"
    assert argv[argv.index("--artifact-server-addr") + 1] == "127.0.0.1"
    assert "--action-offline-mode" in argv and "-P" in argv and "ubuntu-latest=-self-hosted" in argv
    assert f"actions/cache@{'0' * 40}={tmp_path / 'cache'}" in argv
    assert "--matrix os:ubuntu-latest" in joined and "--input k=v" in joined
    assert argv[argv.index("-s") + 1] == "GITHUB_TOKEN"  # the name only, never a value


@pytest.mark.parametrize(
    "kw",
    [
        {"server_host": "0.0.0.0"},
        {"server_host": "192.0.2.2"},
        {"env": {"GITHUB_API_URL": "https://api.github.com"}},
        {"env": {"GITHUB_SERVER_URL": "http://10.1.2.3:80"}},
    ],
)
def test_act_command_refuses_non_loopback(tmp_path, kw):
    with pytest.raises(NotLoopback, match="loopback"):
        make_run(tmp_path, **kw).argv()


def test_local_urls():
    assert require_local_url("http://127.0.0.1:8/x", "u") and require_local_url(
        "http://[::1]:8/", "u"
    )
    assert require_local_url("http://localhost/x", "u") and require_local_url(
        "/srv/zoo/m.json", "u"
    )
    for url in (
        "https://raw.githubusercontent.com/x",
        "ftp://127.0.0.1/x",
        "http://127.0.0.1.example.com/",
    ):
        with pytest.raises(NotLoopback):
            require_local_url(url, "u")


def test_local_actions_lists_pinned_folders(tmp_path):
    (tmp_path / "actions" / ("cache@" + "a" * 40)).mkdir(parents=True)
    (tmp_path / "actions" / "not-an-action").mkdir()
    assert local_actions(tmp_path) == [
        ("actions/cache@" + "a" * 40, tmp_path / "actions" / ("cache@" + "a" * 40))
    ]


# -- act's JSON log -------------------------------------------------------------------------


def line(job: str, step: str | None = None, msg: str = "", **extra) -> str:
    rec = {
        "jobID": job,
        "job": f"CI/{job}",
        "matrix": {"os": "ubuntu-latest"} if job == "test" else {},
        "msg": msg,
        "level": "info",
    }
    if step:
        rec.update(step=step, stage=extra.pop("stage", "Main"))
    rec.update(extra)
    return json.dumps(rec)


LOG = [
    "time=... level=warning msg=not json",
    line("lint", "Ruff", "ok", raw_output=True),
    line("lint", "Ruff", "  ✅  Success - Main Ruff", stepResult="success"),
    line("lint", msg="🏁  Job succeeded", jobResult="success"),
    line(
        "test",
        "Cache key (iree-artifacts)",
        "key:          iree-artifacts-v1-Linux-X64-cA-fB\n",
        raw_output=True,
    ),
    line(
        "test",
        "Restore (iree-artifacts)",
        "Cache restored from key: iree-artifacts-v1-linux-x64-ca-fb\n",
        raw_output=True,
    ),  # act lowercases
    line("test", "Cache key (pip)", "key:          pip-v1-Linux-X64-cP-fQ\n", raw_output=True),
    line(
        "test",
        "Restore (pip)",
        "Cache restored from key: pip-v1-Linux-X64-cP-fOLD\n",
        raw_output=True,
    ),
    line(
        "test",
        "Cache key (onnx-data)",
        "key:          onnx-data-v1-Linux-X64-cO\n",
        raw_output=True,
    ),
    line(
        "test",
        "Restore (onnx-data)",
        "Cache not found for input keys: onnx-data-v1-Linux-X64-cO, onnx-data-v1-\n",
        raw_output=True,
    ),
    line("test", "Plan the save (onnx-data)", "save:    true\n", raw_output=True),
    line("test", "Plan the save (onnx-data)", "reason:  fits\n", raw_output=True),
    line("test", "Save (onnx-data)", "Cache Size: ~9 MB (9437184 B)\n", raw_output=True),
    line(
        "test",
        "Save (onnx-data)",
        "Cache saved with key: onnx-data-v1-Linux-X64-cO\n",
        raw_output=True,
    ),
    line("test", "Plan the save (pip)", "save:    false\n", raw_output=True),
    line("test", "Plan the save (pip)", "reason:  key-exists\n", raw_output=True),
    line(
        "test", "Plan the save (pip)", "why:     an entry with this key exists\n", raw_output=True
    ),
    line(
        "test",
        "Save zoo models",
        "+ cache-tools plan --config c.toml --class zoo-models --json\n",
        raw_output=True,
        stepID=["18", "plan"],
    ),
    line(
        "test",
        "Save zoo models",
        "shard 0: 1 member(s), 226 B staged in s000 -> zoo-models-v1-L-X-s000-fA\n",
        raw_output=True,
        stepID=["18", "plan"],
    ),
    line(
        "test",
        "Save zoo models",
        "zoo-models: save 1/1 shards\n",
        raw_output=True,
        stepID=["18", "plan"],
    ),
    line(
        "test",
        "Save zoo",
        "+ cache-tools key --config c.toml --class zoo-models --json\n",
        raw_output=True,
        stepID=["19", "plan"],
    ),
    line(
        "test",
        "Save zoo",
        "zoo-models: nothing under /x matches ['onnx-zoo/*']; nothing to save\n",
        raw_output=True,
        stepID=["19", "plan"],
    ),
    line(
        "test",
        "Upload results",
        "Artifact results-ubuntu-latest-py3.12 has been successfully uploaded! Final size is 2048 bytes. "
        "Artifact ID is 1\n",
        raw_output=True,
    ),
    line("test", "Unit tests", "  ❌  Failure - Main Unit tests", stepResult="failure"),
    line(
        "test",
        "Upload results",
        "  ✅  Success - Post Upload results",
        stage="Post",
        stepResult="success",
    ),
    line("test", msg="🏁  Job failed", jobResult="failure"),
]


def test_log_parser_jobs_steps_caches_and_artifacts():
    parser = LogParser("ci.yml")
    saved = []
    for text in LOG:
        saved += parser.feed(text)
    jobs = {j.job: j.to_json() for j in parser.job_records()}
    assert jobs["lint"]["result"] == "success" and jobs["lint"]["steps"] == [
        {"name": "Ruff", "result": "success"}
    ]
    assert jobs["test"]["result"] == "failure" and jobs["test"]["matrix"] == {"os": "ubuntu-latest"}
    steps = {s["name"]: s["result"] for s in jobs["test"]["steps"]}
    assert steps["Unit tests"] == "failure" and steps["Post Upload results"] == "success"
    caches = [(c.action, c.cls, c.result, c.reason) for c in parser.caches if c.action != "key"]
    assert caches == [
        ("restore", "iree-artifacts", "exact", ""),
        ("restore", "pip", "prefix", ""),
        ("restore", "onnx-data", "miss", ""),
        ("plan", "onnx-data", "save", "fits"),
        ("save", "onnx-data", "saved", ""),
        ("plan", "pip", "skip", "key-exists (an entry with this key exists)"),
        ("plan", "zoo-models", "save", "save 1/1 shards"),
        ("plan", "zoo-models", "skip", "nothing under /x matches ['onnx-zoo/*']; nothing to save"),
    ]
    assert [(s.key, s.size) for s in saved] == [("onnx-data-v1-Linux-X64-cO", 9437184)]
    assert [a.to_json() for a in parser.artifacts] == [
        {"job": "test", "action": "upload", "name": "results-ubuntu-latest-py3.12", "size": 2048}
    ]
    assert parser.other == ["time=... level=warning msg=not json"]


# -- the warm-run check -------------------------------------------------------------------


def test_warm_check_counts_compiles_imports_and_store_hits():
    results = {
        "outcomes": [
            {"case_id": "a", "status": "pass", "stage_times": {"store": 0.01, "run": 0.1}},
            {"case_id": "b", "status": "skip", "stage_times": {}},
            {"case_id": "c", "status": "error", "stage_times": {"store": 0.01}},
        ]
    }
    counts = count_stages(results)
    assert counts.warm and counts.store == 2 and counts.no_compile_stage == 1
    results["outcomes"].append(
        {"case_id": "d", "status": "pass", "stage_times": {"import": 1, "compile": 2}}
    )
    counts = count_stages(results)
    assert not counts.warm and counts.compiled == 1 and counts.compiled_cases == ["d"]
    assert "1 compiled" in counts.describe()
    assert not count_stages({"outcomes": []}).warm  # nothing from the store proves nothing


# -- run_shard.py's environment overrides -------------------------------------------------


def test_run_shard_extra_args_come_after_the_profile_and_its_url_settings(monkeypatch):
    from ci import run_shard
    from ci.cli import command_parser

    assert run_shard.extra_args({"CI_RUN_SHARD_ARGS": "--onnx-ops-sample 20 -k 'not slow'"}) == [
        "--onnx-ops-sample",
        "20",
        "-k",
        "not slow",
    ]
    assert run_shard.extra_args({}) == []
    with pytest.raises(run_shard.CIError, match="CI_RUN_SHARD_ARGS"):
        run_shard.extra_args({"CI_RUN_SHARD_ARGS": "-k 'unclosed"})
    monkeypatch.setenv("CI_RUN_SHARD_ARGS", "--onnx-ops-sample 7")
    monkeypatch.setenv("IREE_CONFORMANCE_ZOO_MANIFEST", "http://127.0.0.1:1/m.json")
    args = command_parser("run-shard", run_shard).parse_args(["--profile", "smoke", "--dry-run"])
    profile, corpora = run_shard.load_profile("smoke")
    cmd = run_shard.build_command(args, profile, corpora, "linux")
    assert cmd.index("--onnx-ops-sample", cmd.index("100")) > cmd.index("--zoo-manifest")
    assert cmd[cmd.index("--zoo-manifest") + 1] == "http://127.0.0.1:1/m.json"
    assert cmd[-2:] == ["--onnx-ops-sample", "7"]


# -- loopback servers -------------------------------------------------------------------------


def test_tiny_zoo_stands_in_for_the_smoke_models_with_matching_sha(tmp_path):
    import hashlib

    from iree_conformance.frontends.onnx.zoo_manifest import parse_manifest

    manifest = make_tiny_zoo(tmp_path)
    server = StaticServer(tmp_path).start()
    try:
        assert server.url.startswith("http://127.0.0.1:")
        raw = urllib.request.urlopen(f"{server.url}/{MANIFEST_NAME}", timeout=10).read()
        assert json.loads(raw) == manifest
        entries = parse_manifest(raw, "tiny")
        assert sorted(e.name for e in entries) == [
            "mnist-12",
            "squeezenet1.1-7",
        ]  # the smoke profile's
        for e in entries:
            data = urllib.request.urlopen(f"{server.url}/{e.model_path}", timeout=10).read()
            assert hashlib.sha256(data).hexdigest() == e.model_sha and len(data) == e.model_bytes
        assert len({e.model_sha for e in entries}) == 2
    finally:
        server.stop()


def test_fake_api_lists_workflow_runs_and_learns_entries():
    api = FakeGitHub(
        owner_repo="o/r", token="t", workflow_runs={"ci.yml": [{"id": 3, "event": "push"}]}
    ).start()
    try:

        def get(path: str) -> dict:
            req = urllib.request.Request(api.url + path, headers={"Authorization": "Bearer t"})
            return json.loads(urllib.request.urlopen(req, timeout=10).read())

        assert get("/repos/o/r/actions/workflows/ci.yml/runs?event=push")["total_count"] == 1
        assert get("/repos/o/r/actions/workflows/nightly.yml/runs")["workflow_runs"] == []
        assert get("/repos/o/r/actions/runs/3/artifacts?name=x")["artifacts"] == []
        api.add_entry(
            {
                "id": api.next_id(),
                "key": "k",
                "ref": "refs/heads/main",
                "size_in_bytes": 1,
                "version": "v",
                "created_at": "2025-01-01T00:00:00Z",
                "last_accessed_at": "2025-01-01T00:00:00Z",
            }
        )
        assert [e["key"] for e in get("/repos/o/r/actions/caches")["actions_caches"]] == ["k"]
    finally:
        api.stop()


# -- act itself, on a tiny workflow -------------------------------------------------------------


def test_tool_cache_versions_and_act_environment(monkeypatch, tmp_path):
    from devtools.actlocal.host import act_environment, stablehlo_sample, tool_cache_version

    assert tool_cache_version("3.12", "3.11.7") == "3.12.0"
    assert tool_cache_version("3.11", "3.11.7") == "3.11.7"
    assert tool_cache_version("3.10.4", "3.11.7") == "3.10.4"
    venv_bin = tmp_path / "venv" / "bin"
    monkeypatch.setenv("PATH", f"{venv_bin}:/usr/bin")
    for name in (
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_OUTPUT",
        "IREE_CONFORMANCE_STORE",
        "CI_RUN_SHARD_ARGS",
        "VIRTUAL_ENV",
    ):
        monkeypatch.setenv(name, "host value")
    env = act_environment(venv_bin, "fake")
    assert env["GITHUB_TOKEN"] == "fake" and env["PATH"] == "/usr/bin"
    assert not {
        "GH_TOKEN",
        "GITHUB_OUTPUT",
        "IREE_CONFORMANCE_STORE",
        "CI_RUN_SHARD_ARGS",
        "VIRTUAL_ENV",
    } & set(env)
    src = tmp_path / "testdata"
    src.mkdir()
    for name in ("b_float32_1.mlir", "a_float32_2.mlir", "c_int8_1.mlir"):
        (src / name).write_text("module {}")
    dest = stablehlo_sample(src, tmp_path / "out", 2)
    assert sorted(p.name for p in (dest / "stablehlo" / "testdata").iterdir()) == [
        "a_float32_2.mlir",
        "b_float32_1.mlir",
    ]


def test_substituted_actions_point_at_their_stand_in(tmp_path):
    from devtools.actlocal.command import with_substitutes

    v7, v4 = (
        ("actions/upload-artifact@" + "b" * 40, tmp_path / "v7"),
        ("actions/upload-artifact@" + "e" * 40, tmp_path / "v4"),
    )
    out, notes = with_substitutes([v7, v4], {v7[0]: (v4[0], "v7 breaks under act")})
    assert out == [(v7[0], v4[1]), v4] and notes == [f"{v7[0]}: v7 breaks under act"]
    # no stand-in folder here: the action keeps its own
    assert with_substitutes([v7], {v7[0]: (v4[0], "why")}) == ([v7], [])


def test_upstream_agreement_reads_local_fixtures_never_github(tmp_path):
    from devtools import act_local

    variables = act_local.upstream_fixtures(tmp_path)
    assert set(variables) == {"IREE_CI_ONNX_CONFIG", "IREE_CI_ONNX_TESTS"}
    for value in variables.values():
        assert Path(value).is_file() and "://" not in value
    from iree_conformance.expectations.upstream import load_config, load_test_list, upstream_view

    assert (
        upstream_view(load_config(variables["IREE_CI_ONNX_CONFIG"])).kind(
            "onnx-ops/test_attention_3d"
        )
        == "fail-compile"
    )
    assert "onnx-ops/test_abs" in load_test_list(variables["IREE_CI_ONNX_TESTS"])


def test_workflow_run_payload_names_the_run_it_follows():
    run = {"id": 7, "event": "pull_request", "html_url": "https://github.com/o/r/actions/runs/7"}
    same = event_payload("workflow_run", repo="o/r", sha="a" * 40, source_run=run)
    assert same["workflow_run"]["id"] == 7 and same["workflow_run"]["head_sha"] == "a" * 40
    assert same["workflow_run"]["pull_requests"] == [{"number": 1, "head": {"sha": "a" * 40}}]
    fork = event_payload("workflow_run", repo="o/r", sha="a" * 40, source_run=run, fork=True)
    assert fork["workflow_run"]["pull_requests"] == []  # as GitHub: a fork's PR is not named
    assert fork["workflow_run"]["head_repository"]["full_name"] == "fork/r"
    with pytest.raises(ValueError, match="run ci.yml first"):
        event_payload("workflow_run", repo="o/r", sha="a" * 40)


def test_log_parser_keeps_the_annotations_act_decoded():
    parser = LogParser("ci.yml")
    record = {
        "jobID": "test",
        "matrix": {},
        "stage": "Main",
        "step": "Conformance smoke run",
        "command": "error",
        "kvPairs": {
            "file": "conformance/expectations/llvm-cpu.toml",
            "line": "6",
            "title": "XPASS",
        },
        "arg": "delete this line",
    }
    parser.feed(json.dumps(record))
    assert parser.annotations == [
        {
            "job": "test",
            "step": "Conformance smoke run",
            "level": "error",
            "file": "conformance/expectations/llvm-cpu.toml",
            "line": 6,
            "title": "XPASS",
            "message": "delete this line",
        }
    ]
