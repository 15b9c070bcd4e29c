"""The plugin as a pytest11 entry point: inert in a run that names no conformance folder,
active (and registered once) in one that does."""

from __future__ import annotations

import shutil

import pytest

from iree_conformance.plugin import pytest_plugin
from tests.support.core_helpers import ROOT, output

PLAIN_CONFTEST = """
def pytest_addoption(parser):
    # Names the plugin registers in a conformance run: no clash when it is inert.
    parser.addoption("--target", default="mine")
    parser.addoption("--offline", action="store_true")
"""
PLAIN_TEST = """
def test_own_options(pytestconfig):
    assert pytestconfig.getoption("target") == "theirs"
    assert pytestconfig.pluginmanager.get_plugin("iree_conformance.plugin.pytest_plugin") is not None
    assert pytestconfig.pluginmanager.get_plugin("iree-conformance-run") is None
    assert not hasattr(pytestconfig.option, "store_dir")
"""


def test_this_test_run_loaded_the_plugin_and_it_stayed_inert(pytestconfig):
    assert (
        pytestconfig.pluginmanager.get_plugin("iree_conformance.plugin.pytest_plugin")
        is pytest_plugin
    )
    assert pytestconfig.pluginmanager.get_plugin("iree-conformance-run") is None
    assert not hasattr(pytestconfig.option, "store_dir")  # no conformance option was added


def test_another_project_keeps_its_own_options_and_help(pytester):
    pytester.makeconftest(PLAIN_CONFTEST)
    pytester.makepyfile(test_plain=PLAIN_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--target", "theirs")
    result.assert_outcomes(passed=1)
    help_text = pytester.runpytest_subprocess("--help").stdout.str()
    assert "--store-dir" not in help_text and "iree-conformance" not in help_text


def _project(pytester: pytest.Pytester, *folders: str) -> None:
    for name in folders:
        folder = pytester.path / name
        folder.mkdir()
        for file in ("conftest.py", "test_conformance.py", "targets.toml"):
            shutil.copy(ROOT / "conformance" / file, folder / file)
        (folder / "expectations").mkdir()


@pytest.mark.parametrize(
    "env", [{}, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}], ids=["autoload", "no-autoload"]
)
def test_naming_the_plugin_with_p_registers_it_once(pytester, monkeypatch, env):
    """With autoload, -p names the plugin that the entry point also loads (registered once,
    or its options would clash); without, -p is the one way to load it."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = pytester.runpytest_subprocess(
        str(ROOT / "conformance"), "-p", "iree_conformance.plugin.pytest_plugin", "-p", "no:cacheprovider",
        "--co", "-q", "-m", "stablehlo", "-k", "add_f32 and not ext",
    )  # fmt: skip
    assert result.ret == 0, output(result)
    assert "test_conformance.py::test_conformance[llvm-cpu:stablehlo/add_f32]" in output(result)


def test_two_conformance_folders_are_a_usage_error(pytester):
    _project(pytester, "one", "two")
    result = pytester.runpytest_subprocess("one", "two", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "one conformance folder per run, but the command line names 2" in output(result)


def test_a_conformance_folder_found_only_by_collection_says_what_to_run(pytester):
    _project(pytester, "conformance")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")  # no folder named
    assert result.ret != 0
    assert "test_conformance.py is a conformance test, but its folder" in output(result)
    assert f"run: pytest {pytester.path / 'conformance'}" in output(result)
