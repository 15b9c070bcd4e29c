"""The installed version of a Python distribution, read from its metadata (None: absent)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable

__all__ = ["dist_version", "dist_versions"]


def dist_version(name: str) -> str | None:
    """The distribution's version, or None when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def dist_versions(names: Iterable[str]) -> dict[str, str | None]:
    """Each distribution's version, in the order given (None: not installed)."""
    return {name: dist_version(name) for name in names}
