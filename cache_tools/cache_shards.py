"""Split an artifact set that is larger than its budget into shards.

Members (the top-level folders of the class's paths, e.g. one folder per zoo
model) are ordered by configured value, highest first, and packed in that
order into shards of at most ``max_shard_bytes``. Shard 0 thus
holds the most valuable models, and when the budget only allows some shards,
the ones saved are the ones worth most.

Each shard key carries its index and a hash of its members' names and
contents, so updating one model changes one shard's key and only that shard is
saved again. For that, membership must not move when a model's content
changes, so packing uses raw (uncompressed) sizes, which depend on a model's
structure rather than on how well its weights compress, rounded up to a
quantum (1/32 of a shard) so a model whose size changes a little stays put.
Compressed sizes (what the cache charges) are reported per shard and used
for the budget decisions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .hashing import digest_of

QUANTUM_DIVISOR = 32


@dataclass(frozen=True)
class ShardMember:
    name: str  # archive path, e.g. "models/zoo/resnet50"
    compressed_bytes: int
    raw_bytes: int
    content_hash: str
    value: float = 1.0


@dataclass
class Shard:
    index: int
    members: list[ShardMember] = field(default_factory=list)

    @property
    def compressed_bytes(self) -> int:
        return sum(m.compressed_bytes for m in self.members)

    @property
    def raw_bytes(self) -> int:
        return sum(m.raw_bytes for m in self.members)

    @property
    def value(self) -> float:
        return sum(m.value for m in self.members)

    @property
    def content_hash(self) -> str:
        return digest_of(
            f"{m.name}:{m.content_hash}" for m in sorted(self.members, key=lambda m: m.name)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "members": [m.name for m in self.members],
            "compressed_bytes": self.compressed_bytes,
            "raw_bytes": self.raw_bytes,
            "value": self.value,
            "content_hash": self.content_hash,
        }


@dataclass
class ShardPlan:
    shards: list[Shard]
    left_out: list[ShardMember]  # did not fit in max_shards


def _quantized(size: int, quantum: int) -> int:
    return max(1, -(-size // quantum)) * quantum


def split_into_shards(
    members: Iterable[ShardMember], max_shard_bytes: int, max_shards: int
) -> ShardPlan:
    """Pack members, highest value first, into at most ``max_shards`` shards."""
    if max_shard_bytes <= 0 or max_shards <= 0:
        raise ValueError("max_shard_bytes and max_shards must be positive")
    quantum = max(1, max_shard_bytes // QUANTUM_DIVISOR)
    ordered = sorted(members, key=lambda m: (-m.value, m.name))
    shards: list[Shard] = []
    left_out: list[ShardMember] = []
    fill = 0
    for member in ordered:
        size = _quantized(member.raw_bytes, quantum)
        if shards and fill + size <= max_shard_bytes:
            shards[-1].members.append(member)
            fill += size
            continue
        if len(shards) >= max_shards:
            left_out.append(member)
            continue
        shards.append(Shard(len(shards), [member]))  # an oversized member gets a shard of its own
        fill = size
    return ShardPlan(shards, left_out)
