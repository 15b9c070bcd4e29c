"""ci/cache_shards.py: the save and restore path of a sharded cache class (the zoo).

The script is run as the composite actions run it, against the real `cache-tools`: the
keys it hands to the restore slots, the shards it stages for the save slots, and the
round trip stage -> (actions/cache) -> unstage.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from ci import check_workflows as cw
from tests.support.ci_helpers import REPO, run_ci

MAIN = "refs/heads/main"
CONFIG = """\
[classes.zoo-models]
priority = 50
paths = ["zoo"]
heavy = true
max_share = 0.5

[classes.zoo-models.shards]
max_shard_size = "64KiB"
max_shards = 3
stage_dir = ".cache-shards/zoo-models"
values = { "*resnet*" = 10 }

[classes.pip]
priority = 40
paths = ["wheels"]
save_on = ["default-branch", "pull-request"]
"""


def tool_env(gh, **extra: str) -> dict[str, str]:
    """gh's files plus the venv's console scripts (cache-tools) on PATH."""
    env = gh.env(**extra)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a config and a zoo store shaped like the suite's (onnx-zoo/...)."""
    ws = tmp_path / "work space"
    ws.mkdir()
    (ws / "cache_tools.toml").write_text(CONFIG, encoding="utf-8")
    store = ws / "zoo root" / "onnx-zoo"
    models = {
        "unpacked/0123456789abcdef-resnet50": 40_000,
        "unpacked/1111111111111111-alpha": 40_000,
        "unpacked/2222222222222222-beta": 40_000,
    }
    for name, size in models.items():
        (store / name / "test_data_set_0").mkdir(parents=True)
        (store / name / "model.onnx").write_bytes(os.urandom(size))
        (store / name / "test_data_set_0" / "input_0.pb").write_bytes(b"\x01" * 100)
    (store / "files").mkdir()
    (store / "files" / "3333333333333333-gamma.onnx").write_bytes(os.urandom(20_000))
    return ws


def files_under(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_keys_for_each_restore_slot_of_the_repository_config(gh):
    run_ci(
        "cache-shards",
        "keys",
        "--class",
        "zoo-models",
        "--count",
        "6",
        "--slots",
        "6",
        "--os",
        "Linux",
        "--arch",
        "X64",
        env=tool_env(gh),
    )
    out = gh.outputs()
    assert out["count"] == "6" and out["stage-dir"] == ".cache-shards/zoo-models"
    for i in range(6):
        assert out[f"s{i}-key"] == f"zoo-models-v1-Linux-X64-s{i:03d}"
        assert out[f"s{i}-restore-keys"].splitlines() == [f"zoo-models-v1-Linux-X64-s{i:03d}-"]
        assert out[f"s{i}-path"] == f".cache-shards/zoo-models/s{i:03d}"


def test_keys_beyond_the_slots_are_left_out_with_a_warning(gh, workspace):
    result = run_ci(
        "cache-shards",
        "keys",
        "--class",
        "zoo-models",
        "--count",
        "3",
        "--slots",
        "2",
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--config-hash",
        "smoke",
        env=tool_env(gh),
        cwd=workspace,
    )
    out = gh.outputs()
    assert out["count"] == "2" and "s2-key" not in out
    assert out["s1-key"].startswith("zoo-models-v1-Linux-X64-s001-c")
    assert out["s1-restore-keys"].splitlines()[-1] == "zoo-models-v1-Linux-X64-s001-"
    assert "shards 2..2 are not restored" in result.stderr


def test_plan_stages_the_shards_and_unstage_puts_them_back(gh, workspace, tmp_path):
    zoo = workspace / "zoo root"
    before = files_under(zoo)
    env = tool_env(gh, RUNNER_OS="Linux", RUNNER_ARCH="X64")
    run_ci(
        "cache-shards",
        "plan",
        "--class",
        "zoo-models",
        "--path",
        zoo,
        "--key",
        "zoo-models-v1-Linux-X64",
        "--members",
        "onnx-zoo/*",
        "--ref",
        MAIN,
        "--offline",
        "--slots",
        "3",
        env=env,
        cwd=workspace,
    )
    out = gh.outputs()
    assert out["sharded"] == "true" and out["save"] == "true"
    assert out["reason"].startswith("save 3/3 shards")
    assert (
        "shards" not in out and "compressed-bytes" not in out
    )  # cache-tools' own outputs stay out
    staged = {}
    for i in range(3):
        assert out[f"s{i}-key"].startswith(f"zoo-models-v1-Linux-X64-s{i:03d}-f")
        assert out[f"s{i}-path"] == f".cache-shards/zoo-models/s{i:03d}"
        staged.update(files_under(workspace / out[f"s{i}-path"]))
    assert staged == before  # every member staged once, under its path relative to the zoo
    resnet = "onnx-zoo/unpacked/0123456789abcdef-resnet50/model.onnx"
    assert resnet in files_under(workspace / out["s0-path"])  # the most valuable model first
    # Staged by hard link, not by copy, on every OS (NTFS has hard links; samefile
    # compares the volume and file index there).
    assert os.path.samefile(workspace / out["s0-path"] / resnet, zoo / resnet)
    assert (zoo / resnet).stat().st_nlink >= 2
    assert "Cache plan: `zoo-models` will be saved" in gh.summary_text()

    # The restore slots look for exactly these entries: prefix of each key, same folder.
    gh.output.write_text("", encoding="utf-8")
    run_ci(
        "cache-shards",
        "keys",
        "--class",
        "zoo-models",
        "--count",
        "3",
        "--slots",
        "3",
        env=env,
        cwd=workspace,
    )
    keys = gh.outputs()
    for i in range(3):
        assert out[f"s{i}-key"].startswith(keys[f"s{i}-restore-keys"].splitlines()[0])
        assert keys[f"s{i}-path"] == out[f"s{i}-path"]

    # actions/cache brings the stage folders back on a fresh runner; unstage moves them in.
    fresh = tmp_path / "fresh zoo"
    gh.output.write_text("", encoding="utf-8")
    run_ci(
        "cache-shards",
        "unstage",
        "--stage-dir",
        keys["stage-dir"],
        "--into",
        fresh,
        env=env,
        cwd=workspace,
    )
    assert files_under(fresh) == before
    assert gh.outputs()["restored"] == "3"
    assert not (workspace / keys["stage-dir"]).exists()


def test_unstage_keeps_what_is_already_there(gh, tmp_path):
    stage = tmp_path / "stage"
    (stage / "s000" / "onnx-zoo" / "files").mkdir(parents=True)
    (stage / "s000" / "onnx-zoo" / "files" / "a.onnx").write_bytes(b"from the cache")
    (stage / "s000" / "onnx-zoo" / "files" / "b.onnx").write_bytes(b"new")
    (stage / "s001").mkdir()  # a slot that restored nothing
    into = tmp_path / "zoo"
    (into / "onnx-zoo" / "files").mkdir(parents=True)
    (into / "onnx-zoo" / "files" / "a.onnx").write_bytes(b"downloaded")
    run_ci("cache-shards", "unstage", "--stage-dir", stage, "--into", into, env=gh.env())
    assert files_under(into) == {
        "onnx-zoo/files/a.onnx": b"downloaded",
        "onnx-zoo/files/b.onnx": b"new",
    }
    assert gh.outputs()["restored"] == "1"


def test_plan_of_an_empty_zoo_saves_nothing(gh, workspace):
    empty = workspace / "empty zoo"
    empty.mkdir()
    run_ci(
        "cache-shards",
        "plan",
        "--class",
        "zoo-models",
        "--path",
        empty,
        "--key",
        "zoo-models-v1-Linux-X64",
        "--members",
        "onnx-zoo/*",
        "--ref",
        MAIN,
        "--offline",
        env=tool_env(gh),
        cwd=workspace,
    )
    assert gh.outputs() == {"sharded": "true", "save": "false", "reason": "nothing-to-save"}


def test_plan_of_a_pull_request_stages_nothing(gh, workspace):
    run_ci(
        "cache-shards",
        "plan",
        "--class",
        "zoo-models",
        "--path",
        workspace / "zoo root",
        "--key",
        "zoo-models-v1-Linux-X64",
        "--members",
        "onnx-zoo/*",
        "--ref",
        "refs/pull/7/merge",
        "--offline",
        env=tool_env(gh),
        cwd=workspace,
    )
    out = gh.outputs()
    assert out["save"] == "false" and out["reason"] == "ref-not-allowed"
    assert not any(name.endswith("-key") for name in out)
    assert not (workspace / ".cache-shards").exists()


def test_plan_of_a_class_without_shards_is_cache_tools_plan(gh, workspace):
    (workspace / "wheels").mkdir()
    (workspace / "wheels" / "x.whl").write_bytes(b"wheel " * 1000)
    run_ci(
        "cache-shards",
        "plan",
        "--class",
        "pip",
        "--path",
        "wheels",
        "--key",
        "pip-v1-Linux-X64-f00",
        "--ref",
        MAIN,
        "--offline",
        env=tool_env(gh),
        cwd=workspace,
    )
    out = gh.outputs()
    assert out["sharded"] == "false"
    # saved under the restore step's key plus the hash of the content (issue #12.1)
    assert out["save"] == "true" and out["reason"] == "fits"
    assert re.fullmatch(r"pip-v1-Linux-X64-f00-h[0-9a-f]{16}", out["key"])
    # the same content, restored under that key: nothing to save
    run_ci(
        "cache-shards",
        "plan",
        "--class",
        "pip",
        "--path",
        "wheels",
        "--key",
        "pip-v1-Linux-X64-f00",
        "--restored-key",
        out["key"],
        "--jobs",
        "4",
        "--ref",
        MAIN,
        "--offline",
        env=tool_env(gh),
        cwd=workspace,
    )
    again = gh.outputs()
    assert again["save"] == "false" and again["reason"] == "content-unchanged"


def test_the_actions_have_a_slot_per_shard_of_every_sharded_class():
    assert cw.check_shard_slots() == []
    assert cw.sharded_classes() == {"zoo-models": 6}


def test_slot_check_catches_too_few_slots(tmp_path, monkeypatch):
    config = tmp_path / "cache_tools.toml"
    config.write_text(
        textwrap.dedent("""\
        [classes.zoo-models]
        priority = 1
        paths = ["z"]
        [classes.zoo-models.shards]
        max_shards = 9
        """),
        encoding="utf-8",
    )
    monkeypatch.setattr(cw, "CACHE_CONFIG", config)
    problems = cw.check_shard_slots()
    assert any("class zoo-models has max_shards = 9" in p for p in problems)


def test_workflows_save_the_zoo_through_the_sharded_path():
    # ci.yml's smoke jobs use the small zoo-smoke class instead (issue #12.11)
    for name in ("nightly.yml",):
        wf = cw.load_yaml(REPO / ".github" / "workflows" / name)
        steps = [s for job in wf["jobs"].values() for s in job.get("steps") or []]
        zoo = [s for s in steps if (s.get("with") or {}).get("class") == "zoo-models"]
        assert [s["uses"] for s in zoo] == [
            "./.github/actions/cache-restore",
            "./.github/actions/cache-save",
        ]
        assert zoo[1]["with"]["shard-members"] == "onnx-zoo/*"
        assert "config-hash" not in zoo[0]["with"]  # one zoo per OS: see cache_tools.toml
