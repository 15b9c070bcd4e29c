"""A pytest conformance run on an Intel Mac (faked) refuses clearly."""

from __future__ import annotations

import os

import pytest

from tests.support.core_helpers import output


def test_pytest_run_refuses_an_intel_mac_clearly(tmp_path, monkeypatch, run_conformance):
    (tmp_path / "fake_intel_mac.py").write_text(
        "import types\n"
        "import iree_conformance.common.platform_info as p\n"
        "p.sys = types.SimpleNamespace(platform='darwin')\n"
        "p.platform = types.SimpleNamespace(machine=lambda: 'x86_64')\n"
    )
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    )
    result = run_conformance(
        "-p",
        "fake_intel_mac",
        "--collect-only",
        "-q",
        "-m",
        "stablehlo",
        "--no-cache",
        suite="",
        timeout=300,
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output(result)
    assert "arm64 binaries only" in result.stderr.str()
