"""Byte-size parsing and human formatting (binary units, as GitHub's limit is).

``parse_size`` is the project's one size parser: cache_tools.toml, the ci/ scripts
(``ci/_common.parse_size``, pins.toml's ccache budget) and every command-line size go
through it. Decimal units K/KB, M/MB, G/GB, T/TB; binary Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB;
case-insensitive; a bare number is bytes.
"""

from __future__ import annotations

import re

from .errors import ConfigError

GIB = 1024**3
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "ki": 1024,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mi": 1024**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gi": 1024**3,
    "gib": 1024**3,
    "t": 1000**4,
    "tb": 1000**4,
    "ti": 1024**4,
    "tib": 1024**4,
}
_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(value: str | int | float, what: str = "size") -> int:
    """Parse ``"1.5GiB"``, ``"300MB"`` or a plain byte count into bytes."""
    if isinstance(value, bool):
        raise ConfigError(f"{what}: expected a size such as '1.5GiB', got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ConfigError(f"{what}: size must not be negative, got {value!r}")
        return int(value)
    match = _SIZE_RE.match(str(value))
    if not match or match.group(2).lower() not in _UNITS:
        raise ConfigError(
            f"{what}: cannot read size {value!r}; write a number with an optional unit "
            "(B, K/KB, Ki/KiB, M/MB, Mi/MiB, G/GB, Gi/GiB, T/TB, Ti/TiB), e.g. '1.5GiB'"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def human_bytes(n: int | float) -> str:
    """Format bytes with binary units: ``1536 -> '1.5 KiB'``."""
    n = float(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{sign}{n:.0f} {unit}" if unit == "B" else f"{sign}{n:.2f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def percent(part: float, whole: float) -> float:
    """Share in percent, 0 when the whole is 0."""
    return 0.0 if whole <= 0 else 100.0 * part / whole
