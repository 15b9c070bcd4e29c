"""TOML reading with errors that name the file and line, and TOML writing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class TomlError(ValueError):
    pass


def load_toml(path: Path) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TomlError(f"{path}: file not found") from None
    except OSError as e:
        raise TomlError(f"{path}: cannot read: {e}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TomlError(f"{path}: malformed TOML: {e}") from None


def line_of(path: Path, needle: str) -> int | None:
    """1-based line of the first line containing needle, for error messages."""
    try:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if needle in line:
                return number
    except OSError:
        return None
    return None
