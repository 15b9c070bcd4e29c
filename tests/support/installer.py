"""The installer the tests use to put wheels into an environment they made: this
environment's pip, or uv's where there is no pip (an environment made by ``uv venv``
and filled by ``uv pip install``, as the README allows)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest


def install_command(python: Path | str) -> list[str]:
    """``... install`` into the environment of ``python`` (the options that follow are
    those pip and uv share: ``--no-index``, ``--find-links``, ``--no-deps``, ``-q``);
    skips the test when neither pip nor uv is here."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", "--python", str(python), "install",
                "--disable-pip-version-check"]  # fmt: skip
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        pytest.skip("this environment has neither pip nor uv to install a wheel with")
    # copies: a test that damages a file must not damage uv's cache through a hard link
    return [uv, "pip", "install", "--link-mode", "copy", "--python", str(python)]
