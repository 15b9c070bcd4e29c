"""Suites as plugins: the registry's checks, -m pruning, and a suite added by a conftest.py
(the example of docs/adding-a-suite.md) whose cases run and get verdicts."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from iree_conformance.cli import options_table
from iree_conformance.common.errors import CorpusError
from iree_conformance.model.cases import Case
from iree_conformance.plugin.pytest_plugin import suites_selected_by
from iree_conformance.suites.base import Suite, SuiteContext, SuiteOption
from iree_conformance.suites.registry import SuiteError, SuiteRegistry, option_values
from iree_conformance.suites.run_options import RunOptions

from .conftest import ROOT, output

EXAMPLE = ROOT / "docs" / "examples" / "toy_suite_conftest.py"
GUIDE = ROOT / "docs" / "adding-a-suite.md"


@dataclasses.dataclass
class Fake:
    name: str = "fake"
    description: str = "a fake suite"
    case_prefix: str | tuple[str, ...] = "fake/"
    floor: int = 0
    options: tuple[SuiteOption, ...] = ()
    ids: tuple[str, ...] = ("fake/a",)
    suite_field: str | None = None
    skip: str | None = None

    def collect(self, context: SuiteContext) -> list[Case]:
        suite = self.suite_field or self.name
        return [Case(i, suite, "mlir", skip_reason=self.skip) for i in self.ids]


def context(values=None) -> SuiteContext:
    return SuiteContext(ROOT / "conformance", RunOptions(), values or {})


def test_builtin_suites_satisfy_the_protocol():
    registry = SuiteRegistry.builtin()
    assert registry.names == ["stablehlo", "onnx_ops", "onnx_models", "onnx_dir", "jax"]
    assert all(isinstance(s, Suite) for s in registry)
    assert registry.suite_of("jax/ext/mine/double") == "jax"
    assert registry.suite_of("onnx-zoo/mnist-12") == "onnx_models"
    assert registry.suite_of("onnx-dir/vision/a.onnx:dynamic") == "onnx_dir"
    assert registry.suite_of("stablehlo-ext/x.mlir") == "stablehlo"
    assert registry.suite_of("nobody/x") is None


def test_names_must_be_unique_and_prefixes_must_not_overlap():
    with pytest.raises(SuiteError, match="suite fake: registered twice"):
        SuiteRegistry([Fake(), Fake()])
    with pytest.raises(SuiteError, match="'fake/x/' overlaps 'fake/' of suite fake"):
        SuiteRegistry([Fake(), Fake(name="other", case_prefix="fake/x/")])
    with pytest.raises(SuiteError, match="must be an identifier"):
        SuiteRegistry([Fake(name="not a marker")])


def test_an_option_is_declared_once():
    """Two suites (or a suite and the core) cannot both own a flag; the error says where a
    shared one goes instead of pytest's bare "option names already added"."""
    dim = SuiteOption("--fake-dim", "a dim", {})
    with pytest.raises(SuiteError, match="--fake-dim is already declared by suite fake"):
        SuiteRegistry([Fake(options=(dim,)), Fake(name="other", case_prefix="o/", options=(dim,))])
    with pytest.raises(SuiteError, match="--dim is already declared by the core options"):
        SuiteRegistry([Fake(options=(SuiteOption("--dim", "a dim", {}),))])
    SuiteRegistry([Fake(options=(dim,))])  # one owner is fine


def test_collected_cases_are_checked_against_the_suite():
    bad_prefix = SuiteRegistry([Fake(ids=("fake/a", "elsewhere/b"))])
    with pytest.raises(SuiteError, match="suite fake: case id 'elsewhere/b' does not start"):
        bad_prefix.collect("fake", context())
    wrong_suite = SuiteRegistry([Fake(suite_field="stablehlo")])
    with pytest.raises(SuiteError, match="suite fake: case 'fake/a' says Case.suite"):
        wrong_suite.collect("fake", context())
    under_floor = SuiteRegistry([Fake(floor=2)])
    with pytest.raises(CorpusError, match="suite fake: 1 cases, fewer than the floor of 2"):
        under_floor.collect("fake", context())
    assert [c.case_id for c in SuiteRegistry([Fake(floor=1)]).collect("fake", context())] == [
        "fake/a"
    ]
    # A suite that cannot run here (a missing optional dependency) says so in skip cases:
    # not a broken corpus. An empty collection still is.
    missing = SuiteRegistry([Fake(floor=30, skip="needs fakelib: pip install fakelib")])
    assert [c.skip_reason for c in missing.collect("fake", context())] == [
        "needs fakelib: pip install fakelib"
    ]
    with pytest.raises(CorpusError, match="0 cases, fewer than the floor of 1"):
        SuiteRegistry([Fake(floor=1, ids=(), skip="x")]).collect("fake", context())


def test_option_values_take_the_environment_then_the_default(monkeypatch):
    suite = Fake(
        options=(SuiteOption("--fake-count", "n", {"type": int, "default": 2}, env="FAKE_N"),)
    )
    assert option_values(suite) == {"fake_count": 2}
    monkeypatch.setenv("FAKE_N", "5")
    assert option_values(suite) == {"fake_count": 5}
    assert option_values(suite, {"fake_count": 7}) == {"fake_count": 7}


@pytest.mark.parametrize(
    ("expression", "selected"),
    [
        ("", ["stablehlo", "onnx_ops", "onnx_models"]),
        ("stablehlo", ["stablehlo"]),
        ("stablehlo or onnx_ops", ["stablehlo", "onnx_ops"]),
        ("not onnx_ops", ["stablehlo", "onnx_models"]),
        ("slow", ["stablehlo", "onnx_ops", "onnx_models"]),  # not a suite marker: no pruning
    ],
)
def test_a_marker_expression_prunes_only_the_suites_it_rules_out(expression, selected):
    assert suites_selected_by(expression, ["stablehlo", "onnx_ops", "onnx_models"]) == selected


def test_generated_markers_and_suite_list_are_current():
    readme = (ROOT / "docs" / "suites.md").read_text(encoding="utf-8")
    assert options_table.SUITES_START in readme and options_table.updated(readme) == readme
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert options_table.pyproject_updated(pyproject) == pyproject, (
        "pyproject.toml's markers differ from the suite registry; run: python -m iree_conformance.cli.options_table"
    )
    assert options_table.MARKERS_TOML.read_text(encoding="utf-8") == options_table.markers_toml()
    assert all(f"`{o.flag}" in readme for _, o in SuiteRegistry.builtin().options())


def test_the_guide_shows_the_example_that_the_test_runs():
    guide = GUIDE.read_text(encoding="utf-8")
    assert EXAMPLE.read_text(encoding="utf-8") in guide, (
        f"{GUIDE} must quote {EXAMPLE} verbatim (the test below runs that file)"
    )


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


def test_onnx_ops_sample_is_taken_after_the_floor(monkeypatch):
    from iree_conformance.suites import onnx_ops

    ids = [f"onnx-ops/test_{i}" for i in range(onnx_ops.FLOOR)]
    monkeypatch.setattr(
        onnx_ops, "collect", lambda data_dir: [Case(i, "onnx_ops", "onnx") for i in ids]
    )
    registry = SuiteRegistry([onnx_ops.OnnxOpsSuite()])
    values = {"onnx_ops_sample": 5, "onnx_data_dir": None}
    sampled = registry.collect("onnx_ops", context(values))
    assert {c.case_id for c in sampled} == onnx_ops.sample(ids, 5) and len(sampled) == 5
    assert len(registry.collect("onnx_ops", context({**values, "onnx_ops_sample": None}))) == len(
        ids
    )
