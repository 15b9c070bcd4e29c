"""A suite added by a conftest.py, run through pytest conformance in a child process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.core_helpers import ROOT, output

EXAMPLE = ROOT / "docs" / "examples" / "toy_suite_conftest.py"


def _project(pytester: pytest.Pytester) -> Path:
    """A project folder: the conformance folder's loader, test module and targets, and the
    guide's example as the conftest.py above it."""
    root = pytester.path
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    shutil.copy(EXAMPLE, root / "conftest.py")
    conformance = root / "conformance"
    conformance.mkdir()
    for name in ("conftest.py", "test_conformance.py", "targets.toml"):
        shutil.copy(ROOT / "conformance" / name, conformance / name)
    (conformance / "expectations").mkdir()
    return conformance


def test_a_conftest_adds_a_suite_with_its_own_option(pytester, tmp_path):
    conformance = _project(pytester)
    (conformance / "expectations" / "llvm-cpu.toml").write_text(
        '[xfail]\n"toy/add_1" = { stage = "fail-compile", reason = "an example entry" }\n',
        encoding="utf-8",
    )
    report = tmp_path / "results.json"
    common = ["-p", "no:cacheprovider", "--store-dir", str(tmp_path / "store")]
    help_text = pytester.runpytest_subprocess("conformance", "--help", *common)
    assert "--toy-count=N" in help_text.stdout.str() and "--stablehlo-dir" in help_text.stdout.str()
    result = pytester.runpytest_subprocess(
        "conformance", "-m", "toy", "--toy-count", "3", "-n", "2", "--report-json", str(report),
        *common, timeout=600,
    )  # fmt: skip
    # The bundled StableHLO corpus is not in this project: -m toy does not collect it.
    result.assert_outcomes(passed=2, failed=1)
    assert "XPASS(strict): toy/add_1 now passes" in output(result)
    outcomes = {o["case_id"]: o for o in json.loads(report.read_text())["outcomes"]}
    assert sorted(outcomes) == ["toy/add_0", "toy/add_1", "toy/add_2"]
    assert {o["suite"] for o in outcomes.values()} == {"toy"}
    assert [outcomes[c]["verdict"] for c in sorted(outcomes)] == ["pass", "xpass", "pass"]


def test_a_conftest_suite_breaking_the_contract_is_a_clear_error(pytester, tmp_path):
    _project(pytester)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(
        conftest.read_text(encoding="utf-8").replace('f"toy/add_{i}"', 'f"other/add_{i}"'),
        encoding="utf-8",
    )
    result = pytester.runpytest_subprocess("conformance", "-m", "toy", "-p", "no:cacheprovider")
    assert result.ret != 0
    assert "suite toy: case id 'other/add_0' does not start with its case_prefix 'toy/'" in output(
        result
    )
