"""Classes whose config hash names side-by-side variants (``config_hash_is_variant``).

The pip class keys one download cache per Python version (the config hash): on the
default branch, the py3.10 and py3.12 caches of one OS live side by side, so neither
supersedes nor replaces the other. Without the setting a newer config supersedes.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cache_tools.audit import superseded
from cache_tools.config import load_config
from cache_tools.entries import parse_entries
from cache_tools.planner import Budget, Planner
from cache_tools.prune import plan_prune
from tests.support.ct_fake_github import FakeGitHub, entry
from tests.support.ct_scenario import MIB, NOW

REPO = "octo/repo"
MAIN = "refs/heads/main"
NOW_DT = datetime(2025, 3, 10, 12, tzinfo=timezone.utc)
REPO_CONFIG = Path(__file__).resolve().parents[3] / "cache_tools.toml"

PY310, PY312 = "a310", "a312"  # config hashes (in CI: a digest of "python-3.x-dev")
FILES = "f" + "1" * 16


def pip_key(config_hash: str, files: str = FILES) -> str:
    return f"pip-v1-Linux-X64-c{config_hash}-{files}"


def siblings() -> list[dict]:
    """Two pip entries on main, same OS and files hash, Python 3.10 (older) and 3.12."""
    return [
        entry(1, pip_key(PY310), MAIN, 150 * MIB, "2025-03-05T00:00:00Z", "2025-03-10T00:00:00Z"),
        entry(2, pip_key(PY312), MAIN, 170 * MIB, "2025-03-06T00:00:00Z", "2025-03-10T01:00:00Z"),
    ]


def write_config(tmp_path: Path, variant: bool | None) -> Path:
    setting = "" if variant is None else f"config_hash_is_variant = {str(variant).lower()}\n"
    path = tmp_path / "variants.toml"
    path.write_text(
        '[settings]\ndefault_branch = "main"\n\n'
        '[classes.pip]\npriority = 40\npaths = ["pip"]\n'
        'save_on = ["default-branch", "pull-request"]\nmax_share = 0.2\n' + setting
    )
    return path


@pytest.fixture(params=["repository", "explicit"])
def variant_config(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The repository's cache_tools.toml, and a minimal config that sets it."""
    if request.param == "repository":
        return REPO_CONFIG
    return write_config(tmp_path, True)


@pytest.fixture(params=[False, None], ids=["false", "default"])
def lineage_config(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The setting off, explicitly or by default: a newer config supersedes."""
    return write_config(tmp_path, request.param)


def planner(config_path: Path, entries: list[dict]) -> Planner:
    config = load_config(str(config_path))
    parsed = parse_entries(entries)
    usage = sum(e.size_in_bytes for e in parsed)
    return Planner(
        config,
        config.get_class("pip"),
        parsed,
        Budget(10 * 1024 * MIB, usage, "api"),
        MAIN,
        "main",
        NOW_DT,
        prune_superseded=True,  # the prune policy is on: superseded entries are deleted
    )


def run_audit(run_cli, server: FakeGitHub, *config: str) -> dict:
    res = run_cli("audit", "--repo", REPO, "--api-url", server.url, *config, "--now", NOW, "--json")
    assert res.code == 0, res.err
    return json.loads(res.out)


def run_prune(run_cli, server: FakeGitHub, config: Path, *extra: str) -> dict:
    res = run_cli(
        "prune",
        "--repo",
        REPO,
        "--api-url",
        server.url,
        "--config",
        str(config),
        "--json",
        *extra,
    )
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_repository_config_marks_the_variant_classes() -> None:
    config = load_config(str(REPO_CONFIG))
    assert config.variant_classes == {"pip", "iree-artifacts"}
    assert not config.get_class("llvm-mlir").config_hash_is_variant


# --- the setting on: siblings live side by side ------------------------------------------


def test_siblings_are_not_superseded(variant_config: Path) -> None:
    config = load_config(str(variant_config))
    assert superseded(parse_entries(siblings()), config.classes) == []


def test_audit_reports_no_sibling_as_superseded(
    fake_github: FakeGitHub, variant_config: Path, run_cli
) -> None:
    fake_github.entries = siblings()
    report = run_audit(run_cli, fake_github, "--config", str(variant_config))
    assert report["superseded"] == [] and report["superseded_bytes"] == 0


def test_audit_without_a_config_keeps_siblings(
    fake_github: FakeGitHub, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./cache_tools.toml: every key is foreign
    fake_github.entries = siblings()
    report = run_audit(run_cli, fake_github)
    assert report["superseded"] == [] and report["listed_entries"] == 2


def test_prune_deletes_no_sibling(fake_github: FakeGitHub, variant_config: Path, run_cli) -> None:
    fake_github.entries = siblings()
    assert run_prune(run_cli, fake_github, variant_config)["planned_ids"] == []
    data = run_prune(run_cli, fake_github, variant_config, "--yes")
    assert data["deleted"] == [] and fake_github.deleted_ids == []
    assert [e["id"] for e in fake_github.entries] == [1, 2]


def test_plan_does_not_count_a_sibling_as_replaced(variant_config: Path) -> None:
    entries = siblings()
    usage = sum(e["size_in_bytes"] for e in entries)
    # a new py3.12 cache (changed files) replaces the old py3.12 one, not py3.10's
    d = planner(variant_config, entries).decide(pip_key(PY312, "f" + "2" * 16), 180 * MIB)
    assert d.save and [e.id for e in d.replaces] == [2]
    assert d.budget == 10 * 1024 * MIB - usage + 170 * MIB
    # a first py3.11 cache replaces nothing
    d = planner(variant_config, entries).decide(pip_key("a311"), 160 * MIB)
    assert d.save and d.replaces == [] and d.budget == 10 * 1024 * MIB - usage


def test_same_config_still_supersedes(variant_config: Path) -> None:
    entries = [
        *siblings(),
        entry(3, pip_key(PY310, "f" + "0" * 16), MAIN, 140 * MIB, "2025-03-01T00:00:00Z"),
    ]
    config = load_config(str(variant_config))
    assert [e.id for e in superseded(parse_entries(entries), config.classes)] == [3]
    plan = plan_prune(parse_entries(entries), config, lambda n: None)
    assert plan.ids == [3]


def test_iree_artifacts_nightly_shards_live_side_by_side() -> None:
    config = load_config(str(REPO_CONFIG))
    entries = parse_entries(
        [
            entry(
                i,
                f"iree-artifacts-v1-Linux-X64-c{i:04x}-f{'a' * 16}",
                MAIN,
                MIB,
                f"2025-03-0{i}T00:00:00Z",
            )
            for i in range(1, 5)
        ]
    )
    assert superseded(entries, config.classes) == []


# --- the setting off (today's behaviour): a newer config supersedes ----------------------


def test_without_the_setting_the_older_config_is_superseded(
    fake_github: FakeGitHub, lineage_config: Path, run_cli
) -> None:
    config = load_config(str(lineage_config))
    assert config.variant_classes == frozenset()
    assert [e.id for e in superseded(parse_entries(siblings()), config.classes)] == [1]
    fake_github.entries = siblings()
    report = run_audit(run_cli, fake_github, "--config", str(lineage_config))
    assert [e["id"] for e in report["superseded"]] == [1]
    assert run_prune(run_cli, fake_github, lineage_config)["planned_ids"] == [1]


def test_without_the_setting_plan_counts_every_config_as_replaced(lineage_config: Path) -> None:
    d = planner(lineage_config, siblings()).decide(pip_key(PY312, "f" + "2" * 16), 180 * MIB)
    assert d.save and [e.id for e in d.replaces] == [1, 2]
