"""Where the suite keeps what it generates or downloads: the one lookup rule.

An option given on the command line wins; else an environment variable; else a folder
in the user cache dir (platformdirs: ``~/.cache/iree-conformance/<name>`` on Linux).
The store, the ONNX operator data, the zoo cache and the HTML report's operator
scoreboard all find their folders this way, so they agree.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "iree-conformance"
# The environment variables of the folders (each read only through resolve_dir).
STORE_ENV = "IREE_CONFORMANCE_STORE"  # the artifact store (store.py)
DATA_ENV = "IREE_CONFORMANCE_DATA"  # generated ONNX operator test data (onnx_ops suite)
ZOO_CACHE_ENV = "IREE_CONFORMANCE_ZOO_CACHE"  # downloaded zoo models (onnx_models suite)
VERSION_STORES_ENV = "IREE_CONFORMANCE_VERSION_STORES"  # per-version stores (versions, bisect)
#: The folder under the per-version stores' root where ``versions`` and ``bisect`` put each
#: run's results by default (no version's folder: a slug never starts with "_").
RUNS_FOLDER = "_runs"


def user_cache_dir(name: str) -> Path:
    """<user cache dir>/iree-conformance/<name>."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP)) / name


def resolve_dir(option: str | os.PathLike[str] | None, env: str | None, name: str) -> Path:
    """option, else $env, else the user cache dir's name folder."""
    if option:
        return Path(option)
    if env and os.environ.get(env):
        return Path(os.environ[env])
    return user_cache_dir(name)


def version_stores_dir(option: str | os.PathLike[str] | None = None) -> Path:
    """The root of the per-version artifact stores (``--stores-dir``, else the variable)."""
    return resolve_dir(option, VERSION_STORES_ENV, "version-stores")
