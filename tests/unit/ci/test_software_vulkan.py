"""python -m ci software-vulkan: lavapipe where it is missing (Linux: Debian's packages;
Windows: a pinned Mesa build for MSVC, its ICD named in VK_DRIVER_FILES; macOS: nothing)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ci import software_vulkan as sv
from ci._common import CIError


def test_linux_installs_only_when_the_icd_is_missing(tmp_path: Path):
    assert sv.plan("linux", tmp_path, have_icd=lambda: True).commands == []
    commands = sv.plan("linux", tmp_path, have_icd=lambda: False).commands
    assert commands[-1][-2:] == ["mesa-vulkan-drivers", "libvulkan1"]
    assert any(c[-2:] == ["update", "-qq"] for c in commands)


def test_windows_extracts_the_pinned_mesa_build_and_names_its_icd(tmp_path: Path):
    p = sv.plan("windows", tmp_path)
    assert p.download is not None
    url, archive = p.download
    assert url.startswith("https://github.com/pal1000/mesa-dist-win/releases/download/")
    assert sv.MESA_WIN_VERSION in url and archive.parent == tmp_path
    (command,) = p.commands
    assert command[:2] == ["7z", "x"] and str(archive) in command
    assert "x64/vulkan_lvp.dll" in command and "x64/lvp_icd.x86_64.json" in command
    assert p.env == {"VK_DRIVER_FILES": str(tmp_path / "x64" / "lvp_icd.x86_64.json")}


def test_macos_installs_nothing(tmp_path: Path):
    p = sv.plan("macos", tmp_path)
    assert not p.commands and p.download is None and "compile-only" in p.note


def test_unknown_os_is_one_clear_error(tmp_path: Path):
    with pytest.raises(CIError, match="unknown OS 'beos'"):
        sv.plan("beos", tmp_path)


def test_windows_plan_sets_the_variable_for_later_steps(tmp_path: Path, monkeypatch):
    env_file = tmp_path / "github_env"
    monkeypatch.setenv("GITHUB_ENV", str(env_file))
    p = sv.plan("windows", tmp_path)
    ran: list[list[str]] = []

    def fake_run(command: list[str], check: bool) -> argparse.Namespace:
        ran.append(command)
        return argparse.Namespace(returncode=0)

    monkeypatch.setattr(sv, "_fetch", lambda url, path: path.write_bytes(b"7z"))
    monkeypatch.setattr(sv.subprocess, "run", fake_run)
    sv.execute(p)
    assert ran == p.commands
    assert f"VK_DRIVER_FILES={tmp_path / 'x64' / 'lvp_icd.x86_64.json'}" in env_file.read_text()


def test_a_failed_install_names_the_command(tmp_path: Path, monkeypatch):
    p = sv.plan("linux", tmp_path, have_icd=lambda: False)
    monkeypatch.setattr(
        sv.subprocess, "run", lambda command, check: argparse.Namespace(returncode=100)
    )
    with pytest.raises(CIError, match="apt-get update -qq` exited 100"):
        sv.execute(p)
