"""Host names shared with ci/_common.py, and the Intel Mac refusal.

Other OSes are given by name (``platform_name``, ``machine``) or by replacing the
module's view of ``sys``/``platform``; no test here claims to have run on macOS.
"""

from __future__ import annotations

import types

import pytest

from iree_conformance.cli import main as cli
from iree_conformance.common import platform_info
from iree_conformance.common.platform_info import host_arch, host_os, unsupported_host_reason


@pytest.mark.parametrize("machine", ["x86_64", "AMD64", "arm64", "aarch64", "ARM64"])
def test_arch_names_match_the_ci_layer(machine):
    from ci._common import normalize_arch

    assert host_arch(machine) == normalize_arch(machine)


def test_apple_silicon_and_linux_arm_are_one_platform_name():
    assert host_arch("arm64") == host_arch("aarch64") == "arm64"
    assert (host_os("darwin"), host_os("linux"), host_os("win32")) == ("macos", "linux", "windows")


def test_only_an_x86_64_python_on_macos_is_refused():
    reason = unsupported_host_reason("darwin", "x86_64")
    assert reason is not None and "arm64 binaries only" in reason and "Rosetta" in reason
    assert unsupported_host_reason("darwin", "arm64") is None
    assert unsupported_host_reason("linux", "x86_64") is None
    assert unsupported_host_reason("win32", "AMD64") is None


def _pretend_intel_mac(monkeypatch):
    monkeypatch.setattr(platform_info, "sys", types.SimpleNamespace(platform="darwin"))
    monkeypatch.setattr(platform_info, "platform", types.SimpleNamespace(machine=lambda: "x86_64"))


def test_cli_refuses_an_intel_mac_clearly(monkeypatch, capsys):
    _pretend_intel_mac(monkeypatch)
    assert cli.main(["devices"]) == 2
    assert "cannot run here" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("code", "platform_name", "fault"),
    [
        (-6, "linux", True),  # SIGABRT: LLVM's fatal errors and assertions
        (-11, "linux", True),
        (-8, "darwin", True),  # SIGFPE
        (-9, "linux", False),  # SIGKILL: the OOM killer or a user, not the program
        (-15, "linux", False),
        (1, "linux", False),
        (0xC0000005, "win32", True),  # access violation
        (3, "win32", True),  # abort() in the MSVC runtime
        (1, "win32", False),
        (3, "linux", False),
    ],
)
def test_only_a_fault_of_the_program_itself_counts(code, platform_name, fault):
    from iree_conformance.common.platform_info import is_program_fault

    assert is_program_fault(code, platform_name) is fault
