"""Suites as plugins: the registry's checks, -m pruning, and the example suite of
docs/adding-a-suite.md (its run: tests/e2e/core/test_suite_plugins_run.py)."""

from __future__ import annotations

import dataclasses

import pytest

from iree_conformance.cli import options_table
from iree_conformance.common.errors import CorpusError
from iree_conformance.model.cases import Case
from iree_conformance.plugin.pytest_plugin import suites_selected_by
from iree_conformance.suites.base import Suite, SuiteContext, SuiteOption
from iree_conformance.suites.registry import SuiteError, SuiteRegistry, option_values
from iree_conformance.suites.run_options import RunOptions
from tests.support.core_helpers import ROOT

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
    assert registry.names == [
        "stablehlo",
        "onnx_ops",
        "onnx_models",
        "onnx_dir",
        "jax",
        "torch",
        "llm",
    ]
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
