from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cache_tools import planner as P
from cache_tools.config import load_config
from cache_tools.entries import parse_entries
from cache_tools.planner import Budget, Planner
from tests.support.ct_fake_github import FakeGitHub, entry
from tests.support.ct_scenario import GIB, MIB, NOW, scenario

REPO = "octo/repo"
MAIN = "refs/heads/main"
NOW_DT = datetime(2025, 3, 10, 12, tzinfo=timezone.utc)
LLVM_KEY = "llvm-mlir-v1-Linux-X64-c0123456789abcdef-f" + "c" * 64


def make(
    config_file: Path,
    cls: str,
    entries: list[dict],
    ref: str = MAIN,
    limit: int = 10 * GIB,
    **kw: object,
) -> Planner:
    config = load_config(str(config_file))
    parsed = parse_entries(entries)
    usage = sum(e.size_in_bytes for e in parsed)
    return Planner(
        config,
        config.get_class(cls),
        parsed,
        Budget(limit, usage, "api"),
        ref,
        "main",
        NOW_DT,
        **kw,  # type: ignore[arg-type]
    )


def test_fits_counts_what_the_save_replaces(config_file: Path) -> None:
    # Prune policy on: a newer snapshot of entry 2's key replaces it (prune deletes it);
    # entry 1 is a protected default-branch entry of another key, which prune keeps.
    new_key = scenario()[1]["key"] + "-h" + "d" * 16
    p = make(config_file, "llvm-mlir", scenario(), prune_superseded=True)
    d = p.decide(new_key, 2 * GIB)
    assert (d.save, d.reason) == (True, P.FITS)
    assert {e.id for e in d.replaces} == {2} and {e.id for e in d.superseded_kept} == {1}
    usage = sum(e["size_in_bytes"] for e in scenario())
    assert d.budget == 10 * GIB - usage + 3 * GIB


def test_superseded_entries_are_credited_only_when_prune_deletes_them(config_file: Path) -> None:
    # Issue #12.6: with the prune policy off (a dry run), nothing superseded is deleted,
    # so nothing is credited: the same save no longer fits the class's share.
    new_key = scenario()[1]["key"] + "-h" + "d" * 16
    d = make(config_file, "llvm-mlir", scenario()).decide(new_key, 2 * GIB)
    assert (d.save, d.reason) == (False, P.OVER_CLASS_SHARE)
    assert d.replaces == [] and {e.id for e in d.superseded_kept} == {1, 2}
    assert "CACHE_PRUNE_POLICY" in d.message
    usage = sum(e["size_in_bytes"] for e in scenario())
    assert d.budget == 10 * GIB - usage
    # Unprotected class, policy on: its superseded entries are credited.
    pip = make(
        config_file, "pip-wheels", scenario(), ref="refs/pull/13/merge", prune_superseded=True
    )
    d2 = pip.decide("pip-wheels-v1-Linux-X64-f4444-h" + "e" * 16, 50 * MIB)
    assert {e.id for e in d2.replaces} == {5, 6}


def test_matrix_jobs_share_the_free_space(config_file: Path) -> None:
    # Issue #12.3: N jobs planning against the same usage snapshot each get 1/N of the
    # free space and of the class's headroom, so together they stay within the budget.
    llvm = [entry(1, LLVM_KEY, MAIN, 8 * GIB, "2025-03-01T00:00:00Z")]
    size = 700 * MIB
    alone = make(config_file, "iree-artifacts", llvm).decide(
        "iree-artifacts-v1-Linux-X64-f01", size
    )
    assert (alone.save, alone.reason) == (True, P.FITS)  # 2 GiB free: fits, for each job alone
    # Four such jobs at once would store 2.7 GiB in 2 GiB and make GitHub evict the
    # llvm-mlir entry; with a quota each job sees 512 MiB and refuses.
    decisions = [
        make(config_file, "iree-artifacts", llvm, jobs=4).decide(
            f"iree-artifacts-v1-Linux-X64-c{i:02x}-f01", size
        )
        for i in range(4)
    ]
    assert all(d.budget == 512 * MIB for d in decisions)
    assert all(d.reason == P.WOULD_EVICT_HIGHER for d in decisions)
    small = [
        make(config_file, "iree-artifacts", llvm, jobs=4).decide(
            f"iree-artifacts-v1-Linux-X64-c{i:02x}-f02", 500 * MIB
        )
        for i in range(4)
    ]
    assert all(d.reason == P.FITS for d in small)
    assert sum(d.size for d in small) <= 2 * GIB  # together within the free space
    # The class's headroom is shared too: 3 GiB cap / 4 jobs.
    zoo = [entry(1, "zoo-models-v1-Linux-X64-s000-f00aa", MAIN, GIB, "2025-03-09T00:00:00Z")]
    big = make(config_file, "iree-artifacts", zoo, jobs=4).decide(
        "iree-artifacts-v1-Linux-X64-f03", GIB
    )
    assert big.reason == P.OVER_CLASS_SHARE and "4 jobs save at once" in big.message


def test_content_unchanged_is_not_saved(config_file: Path) -> None:
    # Issue #12.1: keys end in a hash of the content; restoring and saving the same
    # content gives the same key, and the plan skips it (even where the key is not on
    # this ref, e.g. a pull request that restored main's entry).
    key = "pip-wheels-v1-Linux-X64-f01-h" + "a" * 16
    p = make(config_file, "pip-wheels", [], ref="refs/pull/5/merge")
    d = p.decide(key, MIB, unchanged_from=key)
    assert (d.save, d.reason) == (False, P.UNCHANGED)
    assert p.decide(key.replace("a" * 16, "b" * 16), MIB, unchanged_from=key).save


def test_pull_requests_only_restore_heavy_classes(config_file: Path) -> None:
    d = make(config_file, "llvm-mlir", [], ref="refs/pull/5/merge").decide(LLVM_KEY, 1)
    assert (d.save, d.reason) == (False, P.REF_NOT_ALLOWED)
    assert "pull-request" in d.message and "save_on" in d.message
    assert (
        make(config_file, "pip-wheels", [], ref="refs/pull/5/merge")
        .decide("pip-wheels-v1-L-X-f00", 1)
        .save
    )


def test_existing_key_is_not_saved_again(config_file: Path) -> None:
    existing = scenario()[1]["key"]
    d = make(config_file, "llvm-mlir", scenario()).decide(existing, GIB)
    assert (d.save, d.reason) == (False, P.KEY_EXISTS)


def test_larger_than_the_whole_limit(config_file: Path) -> None:
    d = make(config_file, "llvm-mlir", []).decide(LLVM_KEY, 11 * GIB)
    assert (d.save, d.reason) == (False, P.LARGER_THAN_LIMIT)


def test_class_share_cap(config_file: Path) -> None:
    d = make(config_file, "pip-wheels", scenario()).decide(
        "pip-wheels-v1-Linux-X64-f9999", int(1.9 * GIB)
    )
    assert (d.save, d.reason) == (False, P.OVER_CLASS_SHARE)
    assert "20%" in d.message


def test_refuses_to_evict_a_higher_priority_entry(config_file: Path) -> None:
    # 9 GiB used; the least recently used entry is a high-priority llvm-mlir build.
    entries = [
        entry(
            1,
            LLVM_KEY.replace("c" * 64, "d" * 64),
            "refs/heads/release",
            6 * GIB,
            "2025-03-01T00:00:00Z",
            "2025-03-02T00:00:00Z",
        ),
        entry(
            2, "iree-artifacts-v1-Linux-X64-f01", "refs/heads/b1", 3 * GIB, "2025-03-09T00:00:00Z"
        ),
    ]
    d = make(config_file, "zoo-models", entries).decide("zoo-models-v1-Linux-X64-f1234", 2 * GIB)
    assert (d.save, d.reason) == (False, P.WOULD_EVICT_HIGHER)
    assert [e.id for e in d.blocked_by] == [1]
    assert "priority 90" in d.message


def test_fits_after_evicting_lower_priority(config_file: Path) -> None:
    entries = [
        entry(
            1, "pip-wheels-v1-Linux-X64-f01", "refs/pull/3/merge", 2 * GIB, "2025-03-01T00:00:00Z"
        ),
        entry(2, "zoo-models-v1-Linux-X64-s000-f01", MAIN, 3 * GIB, "2025-03-02T00:00:00Z"),
        entry(
            3, "llvm-mlir-v1-Linux-X64-f01", "refs/heads/release", 4 * GIB, "2025-03-09T00:00:00Z"
        ),
    ]
    d = make(config_file, "iree-artifacts", entries).decide(
        "iree-artifacts-v1-Linux-X64-f02", 2 * GIB
    )
    assert (d.save, d.reason) == (True, P.FITS_AFTER_EVICTION)
    assert [e.id for e in d.evicts] == [1]  # oldest access first, and enough


def test_accepted_saves_count_against_later_ones(config_file: Path) -> None:
    p = make(config_file, "iree-artifacts", [])
    assert p.decide("iree-artifacts-v1-Linux-X64-f01", int(2.5 * GIB)).save
    second = p.decide("iree-artifacts-v1-Linux-X64-s001-f02", int(1 * GIB))
    assert (second.save, second.reason) == (False, P.OVER_CLASS_SHARE)  # 3.5 GiB > 30% of 10 GiB


def _read_outputs(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delim = line.split("<<", 1)
            body = []
            i += 1
            while lines[i] != delim:
                body.append(lines[i])
                i += 1
            out[name] = "\n".join(body)
        else:
            name, _, value = line.partition("=")
            out[name] = value
        i += 1
    return out


def test_plan_cli_offline_writes_outputs_and_summary(
    config_file: Path, run_cli, tmp_path: Path
) -> None:
    outputs, summary = tmp_path / "out", tmp_path / "summary.md"
    env = {"GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)}
    res = run_cli(
        "plan",
        "--config",
        str(config_file),
        "--class",
        "llvm-mlir",
        "--ref",
        MAIN,
        "--offline",
        "--compressed-bytes",
        str(3 * GIB),
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--config-hash",
        "Release",
        "--compression",
        "zstd-without-long",
        env=env,
    )
    assert res.code == 0, res.err
    got = _read_outputs(outputs)
    assert got["save"] == "true" and got["reason"] == "fits"
    assert got["key"].startswith("llvm-mlir-v1-Linux-X64-c")
    assert got["restore-keys"].splitlines()[-1] == "llvm-mlir-v1-Linux-X64-"
    assert len(got["version"]) == 64 and got["compressed-bytes"] == str(3 * GIB)
    assert "`llvm-mlir` will be saved" in summary.read_text()


def test_plan_cli_pr_refusal_needs_no_api_and_no_measuring(
    config_file: Path, run_cli, tmp_path: Path
) -> None:
    outputs, summary = tmp_path / "out", tmp_path / "summary.md"
    env = {"GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)}
    res = run_cli(
        "plan",
        "--config",
        str(config_file),
        "--class",
        "llvm-mlir",
        "--ref",
        "refs/pull/9/merge",
        "--repo",
        REPO,
        "--api-url",
        "http://127.0.0.1:9",
        "--path",
        "does/not/exist",
        env=env,
    )
    assert res.code == 0, res.err
    got = _read_outputs(outputs)
    assert (got["save"], got["reason"]) == ("false", "ref-not-allowed")
    assert "will NOT be saved" in summary.read_text() and "save_on" in summary.read_text()


def test_plan_cli_online_refusal_explains_in_summary(
    fake_github: FakeGitHub, config_file: Path, run_cli, tmp_path: Path
) -> None:
    fake_github.entries = [
        entry(
            1, "llvm-mlir-v1-Linux-X64-f0a", "refs/heads/release", 6 * GIB, "2025-03-01T00:00:00Z"
        ),
        entry(2, "pip-wheels-v1-Linux-X64-f0b", MAIN, 3 * GIB, "2025-03-09T00:00:00Z"),
    ]
    summary = tmp_path / "summary.md"
    res = run_cli(
        "plan",
        "--config",
        str(config_file),
        "--class",
        "zoo-models",
        "--ref",
        MAIN,
        "--repo",
        REPO,
        "--api-url",
        fake_github.url,
        "--key",
        "zoo-models-v1-Linux-X64-f77",
        "--compressed-bytes",
        str(2 * GIB),
        "--now",
        NOW,
        "--json",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    # zoo-models is sharded, so --compressed-bytes is refused with a clear error
    assert res.code == 2 and "sharded class" in res.err
    res = run_cli(
        "plan",
        "--config",
        str(config_file),
        "--class",
        "iree-artifacts",
        "--ref",
        MAIN,
        "--repo",
        REPO,
        "--api-url",
        fake_github.url,
        "--compressed-bytes",
        str(2 * GIB),
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--now",
        NOW,
        "--json",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert (data["save"], data["reason"]) == (False, "would-evict-higher-priority")
    text = summary.read_text()
    assert "higher priority" in text and "llvm-mlir-v1-Linux-X64-f0a" in text


def test_plan_uses_the_repository_storage_limit(
    fake_github: FakeGitHub, config_file: Path, run_cli
) -> None:
    fake_github.entries = [
        entry(1, "pip-wheels-v1-Linux-X64-f0b", MAIN, 8 * GIB, "2025-03-09T00:00:00Z")
    ]
    args = [
        "plan",
        "--config",
        str(config_file),
        "--class",
        "llvm-mlir",
        "--ref",
        MAIN,
        "--repo",
        REPO,
        "--api-url",
        fake_github.url,
        "--compressed-bytes",
        str(5 * GIB),
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--json",
    ]
    fake_github.storage_limit_gb = 20
    assert json.loads(run_cli(*args).out)["reason"] == "fits"
    fake_github.storage_limit_gb = (
        None  # falls back to 10 GiB: must evict the pip entry (lower priority)
    )
    data = json.loads(run_cli(*args).out)
    assert data["reason"] == "fits-after-eviction" and data["budget"]["limit_source"] == "default"


def _zoo(root: Path, sizes: dict[str, int]) -> None:
    import random

    for name, size in sizes.items():
        d = root / "zoo" / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "model.onnx").write_bytes(random.Random(name).randbytes(size))


def test_sharded_plan_rewrites_one_shard_per_updated_model(
    config_file: Path, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    sizes = {
        "vip-resnet": 30_000,
        "alpha": 20_000,
        "beta": 25_000,
        "gamma": 40_000,
        "delta": 10_000,
        "epsilon": 35_000,
    }
    _zoo(tmp_path, sizes)
    args = [
        "plan",
        "--config",
        str(config_file),
        "--class",
        "zoo-models",
        "--ref",
        MAIN,
        "--offline",
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--compression",
        "zstd-without-long",
        "--json",
    ]
    first = json.loads(run_cli(*args).out)
    shards = first["shards"]
    assert len(shards) >= 3 and first["save"] is True
    assert shards[0]["members"][0] == "zoo/vip-resnet"  # highest value first
    assert sorted(m for s in shards for m in s["members"]) == sorted(f"zoo/{n}" for n in sizes)
    for s in shards:
        assert s["key"].startswith(f"zoo-models-v1-Linux-X64-s{s['index']:03d}-f")
        assert s["restore_keys"] == [f"zoo-models-v1-Linux-X64-s{s['index']:03d}-"]
        assert s["raw_bytes"] <= 64 * 1024 or len(s["members"]) == 1

    # Update one model's content (same size): exactly one shard key changes.
    (tmp_path / "zoo" / "beta" / "model.onnx").write_bytes(b"\x01" * 25_000)
    second = json.loads(run_cli(*args).out)["shards"]
    changed = [a["index"] for a, b in zip(shards, second, strict=True) if a["key"] != b["key"]]
    owner = next(s["index"] for s in shards if "zoo/beta" in s["members"])
    assert changed == [owner]
    assert [s["members"] for s in shards] == [s["members"] for s in second]


def test_sharded_plan_skips_unchanged_shards(
    config_file: Path,
    run_cli,
    tmp_path: Path,
    fake_github: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    _zoo(tmp_path, {"a": 40_000, "b": 40_000, "c": 40_000})
    base = [
        "plan",
        "--config",
        str(config_file),
        "--class",
        "zoo-models",
        "--ref",
        MAIN,
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--json",
    ]
    offline = json.loads(run_cli(*base, "--offline").out)["shards"]
    fake_github.entries = [
        entry(10 + s["index"], s["key"], MAIN, s["compressed_bytes"], "2025-03-09T00:00:00Z")
        for s in offline[:2]
    ]
    outputs = tmp_path / "o"
    res = run_cli(
        *base, "--repo", REPO, "--api-url", fake_github.url, env={"GITHUB_OUTPUT": str(outputs)}
    )
    data = json.loads(res.out)
    reasons = [s["decision"]["reason"] for s in data["shards"]]
    assert reasons == ["key-exists", "key-exists", "fits"]
    assert data["reason"] == "save 1/3 shards (2 key-exists)"
    shards_out = json.loads(_read_outputs(outputs)["shards"])
    assert [s["save"] for s in shards_out] == [False, False, True]


def test_sharded_plan_builds_shard_keys_from_the_base_key(
    config_file: Path, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CI path: cache-restore's key (from `key`) is cache-save's --key; the shard keys
    plan builds from it are the ones `key --shard N --content-hash H` builds, and each
    starts with the restore prefix of `key --shard N` (what cache-restore restores)."""
    monkeypatch.chdir(tmp_path)
    _zoo(tmp_path, {"vip-a": 40_000, "b": 40_000, "c": 40_000})
    common = [
        "--config",
        str(config_file),
        "--class",
        "zoo-models",
        "--os",
        "Linux",
        "--arch",
        "X64",
    ]
    flags = [*common, "--config-hash", "smoke", "--compression", "gzip", "--json"]
    base = json.loads(run_cli("key", *flags).out)["key"]
    plan = run_cli(
        "plan",
        *common,
        "--ref",
        MAIN,
        "--offline",
        "--key",
        base,
        "--compression",
        "gzip",
        "--json",
        "--os",
        "Windows",  # ignored: the parts come from --key
    )
    assert plan.code == 0, plan.err
    shards = json.loads(plan.out)["shards"]
    assert len(shards) == 3 and shards[0]["members"] == ["zoo/vip-a"]
    for s in shards:
        i = str(s["index"])
        full = json.loads(
            run_cli("key", *flags, "--shard", i, "--content-hash", s["content_hash"]).out
        )
        assert full["key"] == s["key"] and full["stage_path"] == s["stage_path"]
        assert full["version"] == s["version"]
        prefix = json.loads(run_cli("key", *flags, "--shard", i).out)
        assert s["key"].startswith(prefix["restore_keys"][0])
        assert s["key"].startswith(f"zoo-models-v1-Linux-X64-s{s['index']:03d}-c")


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("llvm-mlir-v1-Linux-X64", "is not a key of class 'zoo-models'"),
        ("zoo-models-v1-Linux-X64-s001", "without -s or -f parts"),
        ("zoo-models-v1-Linux-X64-fabc", "without -s or -f parts"),
    ],
)
def test_sharded_plan_rejects_a_key_that_is_not_a_base_key(
    config_file: Path, run_cli, key: str, message: str
) -> None:
    res = run_cli(
        "plan",
        "--config",
        str(config_file),
        "--class",
        "zoo-models",
        "--ref",
        MAIN,
        "--offline",
        "--key",
        key,
        "--path",
        "does-not-exist",
    )
    assert res.code == 2 and message in res.err, res.err  # before measuring the missing path


def test_plan_requires_known_class(config_file: Path, run_cli) -> None:
    res = run_cli(
        "plan", "--config", str(config_file), "--class", "nope", "--ref", MAIN, "--offline"
    )
    assert res.code == 2 and "class 'nope' is not defined" in res.err


def test_plan_measures_paths(
    config_file: Path, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "x.whl").write_bytes(b"wheel " * 10_000)
    res = run_cli(
        "plan",
        "--config",
        str(config_file),
        "--class",
        "pip-wheels",
        "--ref",
        MAIN,
        "--offline",
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--json",
    )
    data = json.loads(res.out)
    assert data["save"] is True and 0 < data["compressed_bytes"] < 60_000
    missing = run_cli(
        "plan",
        "--config",
        str(config_file),
        "--class",
        "iree-artifacts",
        "--ref",
        MAIN,
        "--offline",
        "--os",
        "Linux",
        "--arch",
        "X64",
    )
    assert missing.code == 2 and "build/iree' does not exist" in missing.err
    assert MIB  # keep the shared constant import honest
