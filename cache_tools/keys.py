"""Cache keys: our grammar, GitHub's rules, and restore-key fallbacks.

Layout (optional parts in brackets, each tagged by a letter so keys parse back)::

    {class}-v{schema}-{os}-{arch}[-s{shard:03d}][-c{config}][-f{content}][-h{snapshot}]

Parts go from least to most volatile, so every restore key is a prefix ending
at a part boundary and restore-keys run from most to least specific. A
restore never crosses class, schema, OS, arch or shard index, nor, for a class
whose config hash names a variant (``config_hash_is_variant``), the config hash.
The ``-h`` part is the hash of the saved content, taken at save time (``plan``):
a key that does not change from run to run would freeze the first save forever,
since GitHub never overwrites a key.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from .errors import KeyRuleError

# actions/toolkit packages/cache/src/cache.ts: checkKey() and the keys.length check.
MAX_KEY_LENGTH = 512
MAX_KEYS = 10

_CLASS_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PART_RE = re.compile(r"^[A-Za-z0-9_.]+$")
_HEX_RE = re.compile(r"^[0-9a-f]+$")
_TAIL_RE = re.compile(
    r"^v(?P<schema>\d+)-(?P<os>[A-Za-z0-9_.]+)-(?P<arch>[A-Za-z0-9_.]+)"
    r"(?:-s(?P<shard>\d+))?(?:-c(?P<config>[0-9a-f]+))?(?:-f(?P<content>[0-9a-f]+))?"
    r"(?:-h(?P<snapshot>[0-9a-f]+))?$"
)


@dataclass(frozen=True)
class KeyParts:
    """The named inputs a key is built from."""

    cache_class: str
    os: str
    arch: str
    schema: int = 1
    config_hash: str = ""
    content_hash: str = ""  # hashFiles() of inputs, or a shard's member hash
    shard: int | None = None
    snapshot_hash: str = ""  # hash of the saved content, taken at save time

    def validate(self) -> None:
        if not _CLASS_RE.match(self.cache_class):
            raise KeyRuleError(
                f"class {self.cache_class!r} is not a valid key part: use letters, digits, "
                "'-', '_' and '.', starting with a letter or digit"
            )
        for label, value in (("os", self.os), ("arch", self.arch)):
            if not _PART_RE.match(value):
                raise KeyRuleError(
                    f"--{label} {value!r} is not a valid key part: use letters, digits, '_' and '.' "
                    "only (no '-', it separates key parts; e.g. runner.os 'Linux', runner.arch 'X64')"
                )
        if self.schema < 0:
            raise KeyRuleError(f"schema version must be >= 0, got {self.schema}")
        for label, value in (
            ("config hash", self.config_hash),
            ("content hash", self.content_hash),
            ("snapshot hash", self.snapshot_hash),
        ):
            if value and not _HEX_RE.match(value):
                raise KeyRuleError(f"{label} {value!r} must be lowercase hex")
        if self.shard is not None and not 0 <= self.shard <= 999:
            raise KeyRuleError(f"shard index {self.shard} must be between 0 and 999")


@dataclass(frozen=True)
class CacheKey:
    key: str
    restore_keys: tuple[str, ...]


def check_key(key: str, what: str = "key") -> None:
    """Raise if ``key`` breaks GitHub's rules (length, commas, emptiness)."""
    if not key:
        raise KeyRuleError(f"{what} is empty")
    if len(key) > MAX_KEY_LENGTH:
        raise KeyRuleError(
            f"{what} is {len(key)} characters; GitHub allows at most {MAX_KEY_LENGTH}: {key[:60]}..."
        )
    if "," in key:
        raise KeyRuleError(f"{what} contains a comma, which GitHub does not allow: {key!r}")


def check_keys(key: str, restore_keys: Sequence[str]) -> None:
    """Check the key, each restore key, and the total count (key + restore keys)."""
    check_key(key)
    for i, rk in enumerate(restore_keys):
        check_key(rk, f"restore key #{i + 1}")
    total = 1 + len(restore_keys)
    if total > MAX_KEYS:
        raise KeyRuleError(
            f"{total} keys given (key + {len(restore_keys)} restore keys); GitHub allows at most "
            f"{MAX_KEYS}: drop the least specific restore keys"
        )


def build_key(parts: KeyParts, variant: bool = False) -> CacheKey:
    """Build the key and its restore keys (most specific first).

    ``variant``: the class's config hash names a variant (``config_hash_is_variant``),
    so the restore keys stop at the config part: a job never restores another
    configuration's entry (e.g. another IREE version's artifact store).
    """
    parts.validate()
    base = f"{parts.cache_class}-v{parts.schema}-{parts.os}-{parts.arch}"
    if parts.shard is not None:
        base += f"-s{parts.shard:03d}"
    segments = [base]
    if parts.config_hash:
        segments.append(f"c{parts.config_hash}")
    if parts.content_hash:
        segments.append(f"f{parts.content_hash}")
    if parts.snapshot_hash:
        segments.append(f"h{parts.snapshot_hash}")
    key = "-".join(segments)
    shortest = 2 if variant and parts.config_hash else 1
    restore = tuple(
        "-".join(segments[:n]) + "-" for n in range(len(segments) - 1, shortest - 1, -1)
    )
    check_keys(key, restore)
    return CacheKey(key, restore)


def snapshot_base(key: str, cache_class: str) -> str:
    """The key without its ``-h{snapshot}`` part (the restore step's key)."""
    parts = parse_key(key, cache_class)
    if parts is None or not parts.snapshot_hash:
        return key
    return key[: -len(parts.snapshot_hash) - 2]


def class_of(key: str, classes: Iterable[str]) -> str | None:
    """The configured class a key belongs to (longest ``{class}-v`` prefix)."""
    best: str | None = None
    for name in classes:
        if key.startswith(name + "-v") and (best is None or len(name) > len(best)):
            best = name
    return best


def parse_key(key: str, cache_class: str) -> KeyParts | None:
    """Parse a key of ``cache_class`` back into parts; None if it is not ours."""
    if not key.startswith(cache_class + "-"):
        return None
    m = _TAIL_RE.match(key[len(cache_class) + 1 :])
    if not m:
        return None
    return KeyParts(
        cache_class=cache_class,
        os=m["os"],
        arch=m["arch"],
        schema=int(m["schema"]),
        config_hash=m["config"] or "",
        content_hash=m["content"] or "",
        shard=int(m["shard"]) if m["shard"] is not None else None,
        snapshot_hash=m["snapshot"] or "",
    )


def lineage(key: str, classes: Iterable[str], variant_classes: Collection[str] = ()) -> str:
    """What a key is "a version of": same lineage + same ref means it supersedes.

    For our keys: class, OS, arch and shard index (schema, config and content
    hashes are what change between versions), plus the config hash for the
    classes in ``variant_classes``, whose config hash names a variant that lives
    beside the others (``config_hash_is_variant``); never the snapshot hash, so a
    newer snapshot supersedes the older ones. For foreign keys: the key minus
    its last '-' part, the usual ``prefix-<hash>`` convention.
    """
    cls = class_of(key, classes)
    parts = parse_key(key, cls) if cls else None
    if parts is not None:
        shard = f"-s{parts.shard:03d}" if parts.shard is not None else ""
        config = f"-c{parts.config_hash}" if parts.cache_class in variant_classes else ""
        return f"{parts.cache_class}-*-{parts.os}-{parts.arch}{shard}{config}"
    head, sep, _ = key.rpartition("-")
    return head if sep else key
