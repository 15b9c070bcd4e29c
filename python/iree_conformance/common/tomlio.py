"""The project's one ``tomllib`` import, and TOML reading with errors that name the file
and line.

Python 3.11+ has ``tomllib``; 3.10 has the ``tomli`` backport (a dependency there).
Everything in the repository that reads TOML (the library, cache_tools, the ci/
scripts, the tests) imports ``tomllib`` from here; tests/unit/core/test_policies.py fails on a
second ``import tomllib``. Writing TOML that keeps comments is the manifest module's
(``manifest.py``, tomlkit).

Standard library only: ci/ scripts import it from the source tree before any install.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import ManifestError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "reading TOML on Python 3.10 needs the tomli package: `python -m pip install tomli` "
            "(or use Python 3.11+)"
        ) from None

__all__ = ["TOMLDecodeError", "TomlError", "load_toml", "loads_toml", "tomllib"]

TOMLDecodeError = tomllib.TOMLDecodeError


class TomlError(ManifestError):
    """A TOML file that is missing, unreadable or malformed (the message names file:line)."""


def loads_toml(text: str, where: str | Path = "<string>") -> dict[str, Any]:
    """Parses text; a syntax error names ``where`` and tomllib's line and column."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line = getattr(e, "lineno", None)  # Python 3.14+; older ones say "(at line N, column M)"
        prefix = f"{where}:{line}" if line else f"{where}"
        raise TomlError(f"{prefix}: malformed TOML: {e}") from None


def read_toml_text(path: str | Path) -> str:
    """The text of a UTF-8 TOML file (a BOM is tolerated); TomlError naming the file when
    it is missing or cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TomlError(f"{path}: file not found") from None
    except OSError as e:
        raise TomlError(f"{path}: cannot read: {e}") from None


def load_toml(path: str | Path) -> dict[str, Any]:
    """Reads and parses a UTF-8 TOML file (a BOM is tolerated)."""
    return loads_toml(read_toml_text(path), path)
