"""Per-OS cache folders for the ``paths`` of cache_tools.toml.

A class's path may start with ``{iree-conformance-cache}`` (the suite's own cache folder,
``platformdirs.user_cache_dir("iree-conformance")`` as the suite computes it) or
``{pip-cache}`` (pip's download cache). They expand to each OS's location: e.g.
``~/.cache/pip`` on Linux, ``~/Library/Caches/pip`` on macOS, ``%LOCALAPPDATA%\\pip\\Cache``
on Windows.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import platformdirs

from .errors import ConfigError

__all__ = ["FOLDERS", "expand_user_dirs"]

DirsFactory = Callable[..., platformdirs.PlatformDirsABC]

#: Token -> its folder, given the PlatformDirs class of the OS.
FOLDERS: dict[str, Callable[[DirsFactory], str]] = {
    "iree-conformance-cache": lambda dirs: dirs("iree-conformance").user_cache_dir,
    # pip's own choice: no author folder on Windows (%LOCALAPPDATA%\pip\Cache).
    "pip-cache": lambda dirs: dirs("pip", appauthor=False).user_cache_dir,
}

_TOKEN = re.compile(r"\{([^{}]*)\}")


def expand_user_dirs(
    path: str, where: str = "path", dirs: DirsFactory = platformdirs.PlatformDirs
) -> str:
    """``path`` with its ``{token}`` replaced by this OS's folder (``dirs`` picks the OS)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in FOLDERS:
            raise ConfigError(
                f"{where}: unknown folder {{{name}}} in {path!r}; known: "
                + ", ".join(f"{{{k}}}" for k in FOLDERS)
            )
        return FOLDERS[name](dirs)

    return _TOKEN.sub(one, path)
