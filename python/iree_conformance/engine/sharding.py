"""Splits the selected cases into N shards of near-equal recorded duration."""

from __future__ import annotations

import heapq
import json
from pathlib import Path

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.fsutil import atomic_write_text

DEFAULT_SECONDS = 1.0


class ShardError(ConfigurationError):
    pass


def parse_shard(text: str) -> tuple[int, int]:
    """'I/N' with 1 <= I <= N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ShardError(f"--shard {text!r}: expected I/N, e.g. 2/4") from None
    if not 1 <= index <= count:
        raise ShardError(f"--shard {text!r}: I must be between 1 and N")
    return index, count


def load_durations(path: Path | None) -> dict[str, float]:
    if path is None or not Path(path).exists():
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ShardError(f"{path}: durations file is not valid JSON ({e})") from None
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) for v in data.values()):
        raise ShardError(f"{path}: durations file must map test keys to seconds")
    return {str(k): float(v) for k, v in data.items()}


def assign(keys: list[str], durations: dict[str, float], count: int) -> list[int]:
    """Greedy longest-first assignment; unknown keys weigh the median known duration."""
    known = sorted(durations[k] for k in keys if k in durations)
    fallback = known[len(known) // 2] if known else DEFAULT_SECONDS
    weights = [durations.get(k, fallback) for k in keys]
    order = sorted(range(len(keys)), key=lambda i: (-weights[i], keys[i]))
    heap = [(0.0, shard) for shard in range(count)]
    result = [0] * len(keys)
    for i in order:
        load, shard = heapq.heappop(heap)
        result[i] = shard
        heapq.heappush(heap, (load + weights[i], shard))
    return result


def record_durations(path: Path, measured: dict[str, float]) -> None:
    """Merges this run's durations into path (atomic replace)."""
    path = Path(path)
    merged = load_durations(path) if path.exists() else {}
    merged.update({k: round(v, 4) for k, v in measured.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(dict(sorted(merged.items())), indent=0))
