"""cache_tools.toml default paths: each OS's cache folders, as the suite and pip use them.

macOS and Windows are given by their platformdirs classes (Windows' folder lookup is
replaced by a fixed LOCALAPPDATA); no test here claims a macOS or Windows run.
"""

from __future__ import annotations

from pathlib import Path, PureWindowsPath

import platformdirs
import pytest
from platformdirs.macos import MacOS
from platformdirs.unix import Unix

from cache_tools.config import load_config
from cache_tools.errors import ConfigError
from cache_tools.user_dirs import expand_user_dirs

ROOT = Path(__file__).resolve().parents[3]


def test_linux_and_macos_folders(monkeypatch):
    monkeypatch.setenv("HOME", "/home/me")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert expand_user_dirs("{pip-cache}", dirs=Unix) == "/home/me/.cache/pip"
    assert (
        expand_user_dirs("{iree-conformance-cache}/data", dirs=Unix)
        == "/home/me/.cache/iree-conformance/data"
    )
    assert expand_user_dirs("{pip-cache}", dirs=MacOS) == "/home/me/Library/Caches/pip"
    assert (
        expand_user_dirs("{iree-conformance-cache}/data", dirs=MacOS)
        == "/home/me/Library/Caches/iree-conformance/data"
    )


def test_windows_folders(monkeypatch):
    import platformdirs.windows as windows

    local = r"C:\Users\me\AppData\Local"
    monkeypatch.setattr(windows, "get_win_folder", lambda csidl: local)
    pip = PureWindowsPath(expand_user_dirs("{pip-cache}", dirs=windows.Windows))
    suite = PureWindowsPath(expand_user_dirs("{iree-conformance-cache}", dirs=windows.Windows))
    assert pip == PureWindowsPath(local, "pip", "Cache")  # pip's own %LOCALAPPDATA%\pip\Cache
    assert suite == PureWindowsPath(local, "iree-conformance", "iree-conformance", "Cache")


def test_the_suite_and_the_config_agree_on_this_os(monkeypatch):
    from iree_conformance.suites.onnx_ops import data_dir

    monkeypatch.delenv("IREE_CONFORMANCE_DATA", raising=False)
    config = load_config(str(ROOT / "cache_tools.toml"))
    assert config.get_class("onnx-data").paths == (str(data_dir(None)),)
    assert config.get_class("pip").paths == (
        platformdirs.PlatformDirs("pip", appauthor=False).user_cache_dir,
    )


def test_unknown_folder_names_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown folder \{pip\}.*\{pip-cache\}"):
        expand_user_dirs("{pip}/wheels", "[classes.pip].paths")
    assert expand_user_dirs("build/llvm-mlir") == "build/llvm-mlir"
