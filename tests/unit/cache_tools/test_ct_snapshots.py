"""Keys that end in a hash of the saved content (issue #12.1), restore keys that stay
within a variant (#12.4), and pruning of a protected class's older snapshots."""

from __future__ import annotations

import json
from pathlib import Path

from cache_tools.config import load_config
from cache_tools.entries import parse_entries
from cache_tools.keys import KeyParts, build_key, lineage, parse_key, snapshot_base
from cache_tools.prune import plan_prune
from tests.support.ct_fake_github import FakeGitHub, entry

MAIN = "refs/heads/main"
VARIANT_CONFIG = """
[classes.store]
priority = 70
paths = ["store"]
save_on = ["default-branch"]
max_share = 0.5
config_hash_is_variant = true

[classes.ccache]
priority = 90
paths = ["ccache"]
save_on = ["default-branch"]
max_share = 0.5
protected = true
"""


def plan(run_cli, config: Path, folder: Path, *extra: str) -> dict:
    res = run_cli(
        "plan",
        "--config",
        str(config),
        "--class",
        "store",
        "--path",
        str(folder),
        "--ref",
        MAIN,
        "--offline",
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--config-hash",
        "iree-3.13.0",
        "--json",
        *extra,
    )
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_snapshot_part_parses_and_is_not_part_of_the_lineage() -> None:
    parts = KeyParts("store", "Linux", "X64", 1, "ab", "cd", snapshot_hash="ef01")
    key = build_key(parts).key
    assert key == "store-v1-Linux-X64-cab-fcd-hef01"
    assert parse_key(key, "store") == parts
    assert snapshot_base(key, "store") == "store-v1-Linux-X64-cab-fcd"
    other = build_key(KeyParts("store", "Linux", "X64", 1, "ab", "cd", snapshot_hash="ef02")).key
    assert lineage(key, ["store"]) == lineage(other, ["store"])


def test_restore_keys_stop_at_the_config_of_a_variant_class() -> None:
    # Issue #12.4: the last restore key used to be store-v1-Linux-X64-, which restores
    # another configuration's entry (another IREE version, another nightly shard).
    parts = KeyParts("store", "Linux", "X64", 1, "ab", "cd")
    assert build_key(parts, variant=True).restore_keys == ("store-v1-Linux-X64-cab-",)
    assert build_key(parts).restore_keys == ("store-v1-Linux-X64-cab-", "store-v1-Linux-X64-")
    # a variant class without a config hash has nothing to stop at
    assert build_key(KeyParts("store", "Linux", "X64"), variant=True).restore_keys == ()


def test_key_cli_restores_by_prefix_within_the_variant(tmp_path: Path, run_cli) -> None:
    config = tmp_path / "c.toml"
    config.write_text(VARIANT_CONFIG)
    res = run_cli(
        "key",
        "--config",
        str(config),
        "--class",
        "store",
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--config-hash",
        "abcdef0123456789",
        "--json",
    )
    data = json.loads(res.out)
    assert data["key"] == "store-v1-Linux-X64-cabcdef0123456789"
    # KEY itself is never saved (plan adds -h...): KEY- first, and never below the config.
    assert data["restore_keys"] == ["store-v1-Linux-X64-cabcdef0123456789-"]


def test_a_changed_folder_saves_under_a_new_key(tmp_path: Path, run_cli) -> None:
    # Issue #12.1: the first save used to be final (same key every run, never
    # overwritten). Now the key ends in the content's hash, taken when saving.
    config = tmp_path / "c.toml"
    config.write_text(VARIANT_CONFIG)
    folder = tmp_path / "store"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "m.vmfb").write_bytes(b"module one" * 100)
    first = plan(run_cli, config, folder)
    assert first["save"] and first["key"].startswith("store-v1-Linux-X64-c")
    assert parse_key(first["key"], "store").snapshot_hash
    assert first["restore_keys"][0] == snapshot_base(first["key"], "store") + "-"
    # the same content again (e.g. after a restore): same key, not saved again
    again = plan(run_cli, config, folder, "--restored-key", first["key"])
    assert again["key"] == first["key"]
    assert (again["save"], again["reason"]) == (False, "content-unchanged")
    # the store gained an entry: a new key, saved
    (folder / "b").mkdir()
    (folder / "b" / "m.vmfb").write_bytes(b"module two" * 100)
    grown = plan(run_cli, config, folder, "--restored-key", first["key"])
    assert grown["key"] != first["key"] and grown["save"] is True
    assert snapshot_base(grown["key"], "store") == snapshot_base(first["key"], "store")
    # times do not matter, only names and contents
    import os

    os.utime(folder / "a" / "m.vmfb", (1, 1))
    assert plan(run_cli, config, folder)["key"] == grown["key"]


def test_plan_key_option_gets_the_content_hash_appended(tmp_path: Path, run_cli) -> None:
    config = tmp_path / "c.toml"
    config.write_text(VARIANT_CONFIG)
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "x").write_text("x")
    base = "store-v1-Linux-X64-c0123456789abcdef"
    data = plan(run_cli, config, folder, "--key", base)
    assert data["key"].startswith(base + "-h") and data["restore_keys"][0] == base + "-"
    res = run_cli(
        "plan",
        "--config",
        str(config),
        "--class",
        "store",
        "--path",
        str(folder),
        "--ref",
        MAIN,
        "--offline",
        "--key",
        data["key"],
    )
    assert res.code == 2 and "already has a -h" in res.err


def test_prune_deletes_older_snapshots_of_a_protected_class(tmp_path: Path) -> None:
    config_path = tmp_path / "c.toml"
    config_path.write_text(VARIANT_CONFIG)
    config = load_config(str(config_path))
    base = "ccache-v1-Linux-X64-c0123456789abcdef-f" + "a" * 16
    other = "ccache-v1-Linux-X64-c0123456789abcdef-f" + "b" * 16
    entries = parse_entries(
        [
            entry(1, other + "-h" + "1" * 16, MAIN, 100, "2025-03-01T00:00:00Z"),  # other pins
            entry(2, base + "-h" + "2" * 16, MAIN, 100, "2025-03-02T00:00:00Z"),
            entry(3, base + "-h" + "3" * 16, MAIN, 100, "2025-03-03T00:00:00Z"),  # newest
        ]
    )
    plan_ = plan_prune(entries, config, lambda n: None)
    assert [i.entry.id for i in plan_.delete] == [2]  # an older snapshot of the newest key
    assert [i.entry.id for i in plan_.kept_protected] == [1]


def test_plan_cli_reads_the_prune_policy_and_jobs(
    fake_github: FakeGitHub, tmp_path: Path, run_cli
) -> None:
    config = tmp_path / "c.toml"
    config.write_text(VARIANT_CONFIG)
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "x").write_bytes(b"x" * 1000)
    fake_github.entries = [
        entry(1, "store-v1-Linux-X64-cabc-h01", MAIN, 1000, "2025-03-01T00:00:00Z")
    ]
    args = (
        "plan",
        "--config",
        str(config),
        "--class",
        "store",
        "--path",
        str(folder),
        "--ref",
        MAIN,
        "--repo",
        "octo/repo",
        "--api-url",
        fake_github.url,
        "--key",
        "store-v1-Linux-X64-cabc",
        "--json",
    )
    off = json.loads(run_cli(*args).out)
    assert off["decision"]["replaces"] == [] and len(off["decision"]["superseded_kept"]) == 1
    on = json.loads(run_cli(*args, env={"CACHE_PRUNE_POLICY": "on"}).out)
    assert [e["id"] for e in on["decision"]["replaces"]] == [1]
    four = json.loads(run_cli(*args, "--jobs", "4").out)
    assert four["decision"]["budget_bytes"] < off["decision"]["budget_bytes"] // 3
