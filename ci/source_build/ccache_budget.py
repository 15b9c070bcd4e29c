"""Derive ccache's max_size from the cache budget of the llvm-mlir class.

The ccache folder is saved whole as one GitHub Actions cache entry per OS/arch. Its
files are already zstd-compressed by ccache, so the entry is about as large as the
folder. To keep the class inside its share of the repository's cache limit:

  budget   = max_share of the class in cache_tools.toml x the limit
             (settings.fallback_limit, 10 GiB by default), or --budget
  max_size = budget / entries x (1 - headroom), floored to whole MB, at least min_size

ccache evicts its oldest objects when a build pushes it past max_size, so a saved entry
never outgrows its slot and the next run still finds the newest objects.

Defaults come from the [ccache] table of ci/source_build/pins.toml.

Examples:
  python -m ci ccache-budget --config cache_tools.toml
  python -m ci ccache-budget --budget 6GiB --entries 3
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from ci._common import CIError, format_size, parse_size, set_outputs
from ci.source_build.pins import PINS_FILE, load_pins, load_toml

DEFAULT_LIMIT = 10 * 2**30


@dataclass(frozen=True)
class Budget:
    budget_bytes: int
    source: str
    entries: int
    headroom: float
    min_bytes: int

    @property
    def max_bytes(self) -> int:
        per_entry = self.budget_bytes / self.entries * (1.0 - self.headroom)
        return int(per_entry // 10**6) * 10**6

    @property
    def ccache_max_size(self) -> str:
        """ccache's syntax: decimal megabytes with an M suffix (understood by ccache 3 and 4)."""
        return f"{self.max_bytes // 10**6}M"


def budget_from_config(path: Path, cache_class: str) -> tuple[int, str] | None:
    """max_share x fallback_limit of the class in cache_tools.toml, or None if not given."""
    if not path.is_file():
        return None
    data = load_toml(path)
    cls = data.get("classes", {}).get(cache_class)
    if not isinstance(cls, dict) or "max_share" not in cls:
        return None
    share = float(cls["max_share"])
    if not 0 < share <= 1:
        raise CIError(f"{path}: classes.{cache_class}.max_share must be in (0, 1]")
    limit = parse_size(data.get("settings", {}).get("fallback_limit", DEFAULT_LIMIT))
    return int(limit * share), f"{path.name}: {share:g} x {format_size(limit)}"


def compute(
    budget: str | None = None,
    config: Path | None = None,
    entries: int | None = None,
    headroom: float | None = None,
    min_size: str | None = None,
    pins_file: Path = PINS_FILE,
) -> Budget:
    table = load_pins(pins_file).get("ccache", {})
    entries = int(entries if entries is not None else table.get("entries", 3))
    headroom = float(headroom if headroom is not None else table.get("headroom", 0.1))
    min_bytes = parse_size(min_size if min_size is not None else table.get("min_size", "500MB"))
    if entries < 1:
        raise CIError("entries must be at least 1")
    if not 0 <= headroom < 1:
        raise CIError("headroom must be in [0, 1)")
    if budget is not None:
        result = Budget(parse_size(budget), "--budget", entries, headroom, min_bytes)
    else:
        from_config = (
            budget_from_config(config, table.get("cache_class", "llvm-mlir")) if config else None
        )
        if from_config:
            result = Budget(from_config[0], from_config[1], entries, headroom, min_bytes)
        elif "budget" in table:
            result = Budget(
                parse_size(table["budget"]),
                f"{pins_file.name} [ccache] budget",
                entries,
                headroom,
                min_bytes,
            )
        else:
            raise CIError(
                "no budget: pass --budget or --config, or set [ccache] budget in pins.toml"
            )
    if result.max_bytes < min_bytes:
        raise CIError(
            f"a {format_size(result.budget_bytes)} budget over {entries} entries leaves "
            f"{format_size(result.max_bytes)} per ccache, under the {format_size(min_bytes)} minimum"
        )
    return result


def add_budget_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("ccache budget (defaults: [ccache] in pins.toml)")
    g.add_argument("--budget", help="bytes for all ccache entries together, e.g. 3.5GiB")
    g.add_argument(
        "--config", default="cache_tools.toml", help="take the budget from this cache_tools.toml"
    )
    g.add_argument(
        "--entries", type=int, help="ccache entries sharing the budget (one per OS/arch)"
    )
    g.add_argument("--headroom", type=float, help="share kept free for overhead, e.g. 0.1")
    g.add_argument("--min-size", help="smallest useful max_size, e.g. 500MB")


def budget_from_args(args: argparse.Namespace) -> Budget:
    return compute(
        args.budget,
        Path(args.config) if args.config else None,
        args.entries,
        args.headroom,
        args.min_size,
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_budget_args(parser)


def run(args: argparse.Namespace) -> int:
    b = budget_from_args(args)
    set_outputs({"max-size": b.ccache_max_size, "max-bytes": b.max_bytes})
    print(
        f"budget {format_size(b.budget_bytes)} ({b.source}) / {b.entries} entries x {1 - b.headroom:.2f}"
        f" -> CCACHE_MAXSIZE={b.ccache_max_size} ({format_size(b.max_bytes)})"
    )
    return 0
