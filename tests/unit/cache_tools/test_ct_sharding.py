from __future__ import annotations

from datetime import datetime, timedelta, timezone

from cache_tools.cache_shards import ShardMember, split_into_shards
from cache_tools.entries import CacheEntry, ref_kind
from cache_tools.eviction import eviction_order, simulate_save
from cache_tools.output import table

MB = 1_000_000


def m(name: str, size: int, value: float = 1.0, content: str = "h") -> ShardMember:
    return ShardMember(name, size, size, content, value)


def test_highest_value_first_and_capacity_respected() -> None:
    members = [
        m("a", 40 * MB),
        m("b", 40 * MB, 5),
        m("c", 30 * MB),
        m("d", 90 * MB, 9),
        m("e", 150 * MB),
    ]
    plan = split_into_shards(members, 100 * MB, 10)
    assert [[x.name for x in s.members] for s in plan.shards] == [["d"], ["b", "a"], ["c"], ["e"]]
    assert plan.shards[3].raw_bytes > 100 * MB  # an oversized member gets its own shard
    assert [s.index for s in plan.shards] == [0, 1, 2, 3]


def test_members_beyond_max_shards_are_left_out() -> None:
    members = [m(f"x{i}", 60 * MB, value=10 - i) for i in range(5)]
    plan = split_into_shards(members, 100 * MB, 2)
    assert [s.members[0].name for s in plan.shards] == ["x0", "x1"]
    assert [x.name for x in plan.left_out] == ["x2", "x3", "x4"]


def test_content_change_changes_only_that_shard_hash() -> None:
    members = [m(f"model{i}", 30 * MB, content=f"c{i}") for i in range(9)]
    before = split_into_shards(members, 100 * MB, 10)
    members[4] = m(
        "model4", 30 * MB + 123, content="new"
    )  # retrained: new weights, about the same size
    after = split_into_shards(members, 100 * MB, 10)
    assert [[x.name for x in s.members] for s in before.shards] == [
        [x.name for x in s.members] for s in after.shards
    ]
    changed = [
        a.index
        for a, b in zip(before.shards, after.shards, strict=True)
        if a.content_hash != b.content_hash
    ]
    assert changed == [1]


def _entry(i: int, size: int, accessed_days_ago: float) -> CacheEntry:
    now = datetime(2025, 3, 10, tzinfo=timezone.utc)
    t = now - timedelta(days=accessed_days_ago)
    return CacheEntry(i, "refs/heads/main", f"k{i}", "", size, t - timedelta(days=1), t)


def test_lru_simulation_evicts_oldest_until_under_limit() -> None:
    entries = [_entry(1, 4, 1), _entry(2, 3, 5), _entry(3, 2, 3)]
    assert [e.id for e in eviction_order(entries)] == [2, 3, 1]
    sim = simulate_save(entries, new_bytes=3, limit=10)
    assert sim.fits and [e.id for e in sim.evicted] == [2] and sim.total_after == 9
    sim = simulate_save(entries, new_bytes=3, limit=10, removed_ids={1})
    assert sim.evicted == [] and sim.total_after == 8
    assert not simulate_save(entries, new_bytes=11, limit=10).fits


def test_ref_kinds() -> None:
    assert ref_kind("refs/heads/main", "main") == "default-branch"
    assert ref_kind("refs/pull/4/merge", "main") == "pull-request"
    assert ref_kind("refs/tags/v1", "main") == "tag"
    assert ref_kind("refs/heads/feature", "main") == "branch"


def test_table_aligns_numbers_right() -> None:
    text = table(["name", "size"], [["a", "1.00 GiB"], ["bbb", "10 B"]])
    lines = text.splitlines()
    assert lines[2].endswith("1.00 GiB") and lines[3].endswith("    10 B")


def test_github_timestamps_parse_with_any_fraction() -> None:
    from cache_tools.entries import parse_time

    assert parse_time("2024-02-12T19:30:02.306666700Z", "t").microsecond == 306666
    assert parse_time("2019-01-24T22:45:36.000Z", "t") == datetime(
        2019, 1, 24, 22, 45, 36, tzinfo=timezone.utc
    )
    assert parse_time("2019-01-24T22:45:36.5+02:00", "t").hour == 20
