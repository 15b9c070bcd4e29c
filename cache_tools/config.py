"""Load and validate ``cache_tools.toml``: settings and cache classes."""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # the backport, a dependency of cache-tools on Python 3.10 only
    import tomli as tomllib

from .errors import ConfigError
from .forecast import ForecastInputs
from .units import GIB, parse_size
from .user_dirs import expand_user_dirs

SAVE_ON_CHOICES = ("default-branch", "pull-request", "branch", "tag")
DEFAULT_LIMIT = 10 * GIB
DEFAULT_RETENTION_DAYS = 7


@dataclass(frozen=True)
class Settings:
    schema_version: int = 1
    default_branch: str = "main"
    fallback_limit_bytes: int = DEFAULT_LIMIT
    retention_days: int = DEFAULT_RETENTION_DAYS
    near_expiry_days: float = 1.0
    large_entry_share: float = 0.25
    thrash_per_day: int = 5
    unknown_priority: int = 0


@dataclass(frozen=True)
class ShardSettings:
    max_shard_bytes: int = 2 * GIB
    max_shards: int = 32
    values: tuple[tuple[str, float], ...] = ()  # (member glob, value), first match wins
    stage_dir: str = ""  # where a workflow stages shard i as {stage_dir}/s{i:03d}

    def value_of(self, member: str) -> float:
        """Configured value of a member (by its base name); 1.0 if unlisted."""
        base = member.rstrip("/").rsplit("/", 1)[-1]
        for pattern, value in self.values:
            if fnmatch.fnmatchcase(base, pattern):
                return value
        return 1.0


@dataclass(frozen=True)
class CacheClass:
    name: str
    priority: int
    paths: tuple[str, ...]
    heavy: bool = False
    save_on: tuple[str, ...] = ("default-branch",)
    max_share: float = 1.0
    protected: bool = False
    shards: ShardSettings | None = None
    # True: the key's config hash names a variant that lives beside the others (pip per
    # Python version), so it is part of the lineage; False: a newer config supersedes.
    config_hash_is_variant: bool = False
    # Measured inputs of the size forecast ([classes.NAME.forecast], cache_tools/forecast.py).
    forecast: ForecastInputs | None = None
    # A remote store for the class (ccache remote_storage), URL without credentials.
    remote_storage: str = ""


def config_variant_classes(classes: Mapping[str, CacheClass] | Iterable[str]) -> frozenset[str]:
    """Names of the classes whose config hash is part of the key lineage.

    Plain class names (no configuration) have none.
    """
    if not isinstance(classes, Mapping):
        return frozenset()
    return frozenset(
        name
        for name, cls in classes.items()
        if isinstance(cls, CacheClass) and cls.config_hash_is_variant
    )


@dataclass(frozen=True)
class Config:
    settings: Settings = field(default_factory=Settings)
    classes: dict[str, CacheClass] = field(default_factory=dict)
    source: str = "<defaults>"

    def get_class(self, name: str) -> CacheClass:
        try:
            return self.classes[name]
        except KeyError:
            known = ", ".join(sorted(self.classes)) or "none"
            raise ConfigError(
                f"class {name!r} is not defined in {self.source} (defined: {known}); "
                f"add a [classes.{name}] table or fix the name"
            ) from None

    @property
    def variant_classes(self) -> frozenset[str]:
        """Classes whose config hash is part of the lineage (``config_hash_is_variant``)."""
        return config_variant_classes(self.classes)

    def priority_of(self, name: str | None) -> int:
        if name is not None and name in self.classes:
            return self.classes[name].priority
        return self.settings.unknown_priority


class _Table:
    """Typed access to one TOML table, reporting errors with their location."""

    def __init__(self, data: dict[str, Any], where: str, allowed: set[str]) -> None:
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ConfigError(
                f"{where}: unknown setting(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
            )
        self.data, self.where = data, where

    def get(self, name: str, kind: type | tuple[type, ...], default: Any) -> Any:
        if name not in self.data:
            return default
        value = self.data[name]
        if (
            isinstance(value, bool)
            and kind is not bool
            and not (isinstance(kind, tuple) and bool in kind)
        ):
            raise ConfigError(f"{self.where}.{name}: expected {_kind_name(kind)}, got {value!r}")
        if not isinstance(value, kind):
            raise ConfigError(f"{self.where}.{name}: expected {_kind_name(kind)}, got {value!r}")
        return value

    def share(self, name: str, default: float) -> float:
        value = float(self.get(name, (int, float), default))
        if not 0 < value <= 1:
            raise ConfigError(f"{self.where}.{name}: must be a share in (0, 1], got {value}")
        return value

    def size(self, name: str, default: int) -> int:
        value = self.get(name, (int, float, str), None)
        return default if value is None else parse_size(value, f"{self.where}.{name}")


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {
        int: "an integer",
        float: "a number",
        str: "a string",
        bool: "true/false",
        list: "a list",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _settings(data: dict[str, Any]) -> Settings:
    t = _Table(
        data,
        "[settings]",
        set(Settings.__dataclass_fields__) - {"fallback_limit_bytes"} | {"fallback_limit"},
    )
    return Settings(
        schema_version=t.get("schema_version", int, 1),
        default_branch=t.get("default_branch", str, "main"),
        fallback_limit_bytes=t.size("fallback_limit", DEFAULT_LIMIT),
        retention_days=t.get("retention_days", int, DEFAULT_RETENTION_DAYS),
        near_expiry_days=float(t.get("near_expiry_days", (int, float), 1.0)),
        large_entry_share=t.share("large_entry_share", 0.25),
        thrash_per_day=t.get("thrash_per_day", int, 5),
        unknown_priority=t.get("unknown_priority", int, 0),
    )


def _shards(data: dict[str, Any], where: str) -> ShardSettings:
    t = _Table(data, where, {"max_shard_size", "max_shards", "values", "stage_dir"})
    values = t.get("values", dict, {})
    pairs = []
    for pattern, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(
                f"{where}.values.{pattern}: expected a non-negative number, got {value!r}"
            )
        pairs.append((pattern, float(value)))
    max_shards = t.get("max_shards", int, 32)
    if not 1 <= max_shards <= 200:
        raise ConfigError(
            f"{where}.max_shards: must be 1..200 (GitHub takes 200 new entries a minute), got {max_shards}"
        )
    size = t.size("max_shard_size", 2 * GIB)
    if size <= 0:
        raise ConfigError(f"{where}.max_shard_size: must be positive")
    stage_dir = t.get("stage_dir", str, "").strip().rstrip("/")
    if "," in stage_dir or "\n" in stage_dir:
        raise ConfigError(f"{where}.stage_dir: must be a single path without commas")
    return ShardSettings(
        max_shard_bytes=size, max_shards=max_shards, values=tuple(pairs), stage_dir=stage_dir
    )


def _class(name: str, data: Any) -> CacheClass:
    where = f"[classes.{name}]"
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table, got {data!r}")
    allowed = {
        "priority",
        "paths",
        "heavy",
        "save_on",
        "max_share",
        "protected",
        "shards",
        "config_hash_is_variant",
        "forecast",
        "remote_storage",
    }
    t = _Table(data, where, allowed)
    if "priority" not in data:
        raise ConfigError(
            f"{where}: 'priority' is required (an integer, higher survives eviction longer)"
        )
    paths = t.get("paths", list, [])
    if not paths or not all(isinstance(p, str) and p.strip() for p in paths):
        raise ConfigError(
            f"{where}.paths: give a non-empty list of path strings (the cache step's path: lines)"
        )
    paths = [expand_user_dirs(p, f"{where}.paths") for p in paths]
    heavy = t.get("heavy", bool, False)
    default_save_on = ["default-branch"] if heavy else ["default-branch", "pull-request", "branch"]
    save_on = t.get("save_on", list, default_save_on)
    bad = [s for s in save_on if s not in SAVE_ON_CHOICES]
    if bad:
        raise ConfigError(
            f"{where}.save_on: unknown ref kind(s) {bad}; use {', '.join(SAVE_ON_CHOICES)}"
        )
    shards = None
    if "shards" in data:
        shards = _shards(t.get("shards", dict, {}), f"[classes.{name}.shards]")
    return CacheClass(
        name=name,
        priority=t.get("priority", int, 0),
        paths=tuple(paths),
        heavy=heavy,
        save_on=tuple(save_on),
        max_share=t.share("max_share", 1.0),
        protected=t.get("protected", bool, False),
        shards=shards,
        config_hash_is_variant=t.get("config_hash_is_variant", bool, False),
        forecast=_forecast(t.get("forecast", dict, {}), f"[classes.{name}.forecast]")
        if "forecast" in data
        else None,
        remote_storage=_remote(t.get("remote_storage", str, ""), f"{where}.remote_storage"),
    )


def _forecast(data: dict[str, Any], where: str) -> ForecastInputs:
    t = _Table(data, where, {"bytes_per_object", "objects", "measured"})
    per_object = float(t.get("bytes_per_object", (int, float), 0))
    if per_object <= 0:
        raise ConfigError(f"{where}.bytes_per_object: give the measured bytes per object (> 0)")
    objects = t.get("objects", dict, {})
    if not objects or not all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in objects.values()
    ):
        raise ConfigError(f"{where}.objects: give {{os = objects per full build}}, each > 0")
    return ForecastInputs(
        per_object, {str(k): int(v) for k, v in objects.items()}, t.get("measured", str, "")
    )


def _remote(url: str, where: str) -> str:
    if not url:
        return ""
    if not url.startswith(("redis://", "http://")):
        raise ConfigError(
            f"{where}: use redis://HOST[:PORT] or http://HOST[:PORT]/PATH (ccache's remote "
            f"storage schemes), got {url!r}"
        )
    if "@" in url.split("://", 1)[1].split("/", 1)[0]:
        raise ConfigError(f"{where}: no credentials in the URL; they come from a secret")
    return url


def parse_config(data: dict[str, Any], source: str = "<memory>") -> Config:
    """Build a Config from already-parsed TOML data."""
    unknown = sorted(set(data) - {"settings", "classes"})
    if unknown:
        raise ConfigError(
            f"{source}: unknown top-level table(s) {', '.join(unknown)}; expected [settings] and [classes.NAME]"
        )
    try:
        settings = _settings(data.get("settings", {}))
        classes_data = data.get("classes", {})
        if not isinstance(classes_data, dict):
            raise ConfigError("[classes]: expected tables like [classes.llvm-mlir]")
        classes = {name: _class(name, body) for name, body in classes_data.items()}
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return Config(settings=settings, classes=classes, source=source)


def load_config(path: str) -> Config:
    """Read and validate a TOML config file."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(
            f"config file {path!r} not found; pass --config with the path to cache_tools.toml"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path!r} is not valid TOML: {exc}") from None
    return parse_config(data, path)
