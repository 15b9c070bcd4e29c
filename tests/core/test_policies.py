"""One implementation per policy: manifests, the tomllib shim, sizes, errors and exit
codes, metric aggregation, step summaries (ARCHITECTURE.md, "One place per policy")."""

from __future__ import annotations

import difflib
import importlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from iree_conformance.common import errors, ghactions
from iree_conformance.expectations import manifest
from iree_conformance.expectations.lookup import ExpectationsError, load_expectations
from iree_conformance.model.compare import Tolerance, compare_checks, compare_outputs
from iree_conformance.model.outcome import Outcome

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "python" / "iree_conformance"
MANIFESTS = sorted((REPO / "conformance" / "expectations").glob("*.toml"))
XFAIL_MANIFESTS = [p for p in MANIFESTS if "[xfail]" in p.read_text(encoding="utf-8")]


def _diff(old: str, new: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


# -- the manifest module ------------------------------------------------------------------


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_real_manifest_round_trips_byte_for_byte(path, tmp_path):
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    parsed = manifest.read_manifest(copy)
    tables = {name: parsed.table(name) for name in ("xfail", "tolerance") if name in parsed.data}
    changed = manifest.write_manifest(
        copy, path.stem, tables.get("xfail", {}), tables.get("tolerance")
    )
    assert not changed and copy.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", XFAIL_MANIFESTS, ids=lambda p: p.name)
def test_changing_one_entry_changes_only_its_line(path, tmp_path):
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    before = copy.read_text(encoding="utf-8")
    xfail = manifest.read_manifest(copy).table("xfail")
    victim = sorted(xfail)[len(xfail) // 2]
    xfail[victim] = {"stage": "crash", "reason": 'died: "quoted" \\ ünïcode'}
    assert manifest.write_manifest(copy, path.stem, xfail)
    after = copy.read_text(encoding="utf-8")
    diff = _diff(before, after)
    assert len(diff) == 2 and diff[0].startswith(f"-{manifest.toml_string(victim)} =")
    assert diff[1] == "+" + manifest.entry_line("xfail", victim, xfail[victim])
    assert (
        after.splitlines()[: len(manifest.header_of(before).splitlines())]
        == manifest.header_of(before).splitlines()
    )
    assert manifest.read_manifest(copy).table("xfail") == xfail


@pytest.mark.parametrize("path", XFAIL_MANIFESTS[:1], ids=lambda p: p.name)
def test_added_entry_lands_sorted_and_removed_entry_disappears(path, tmp_path):
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    before = copy.read_text(encoding="utf-8")
    xfail = manifest.read_manifest(copy).table("xfail")
    gone = sorted(xfail)[3]
    del xfail[gone]
    new_key = sorted(xfail)[10] + "_new"
    xfail[new_key] = {"stage": "fail-compile", "reason": "error: new"}
    manifest.write_manifest(copy, path.stem, xfail)
    after = copy.read_text(encoding="utf-8")
    assert len(_diff(before, after)) == 2
    keys = [
        line.key for line in manifest.scan(after) if line.kind == "entry" and line.table == "xfail"
    ]
    assert keys == sorted(keys) and new_key in keys and gone not in keys


def test_recorded_on_header_survives_an_update(tmp_path):
    source = REPO / "conformance" / "expectations" / "llvm-cpu-host.toml"
    copy = tmp_path / "llvm-cpu-host.toml"
    shutil.copyfile(source, copy)
    fingerprint = manifest.recorded_on(copy)
    assert fingerprint
    failing = Outcome(
        "stablehlo/zz_new",
        "stablehlo",
        "llvm-cpu-host",
        stage="compile",
        status="error",
        diagnostics=["error: boom"],
    )
    assert manifest.update_manifest(copy, "llvm-cpu-host", [failing], host=fingerprint)
    text = copy.read_text(encoding="utf-8")
    assert text.startswith(manifest.header_of(source.read_text(encoding="utf-8")) + "\n")
    assert _diff(source.read_text(encoding="utf-8"), text) == [
        "+"
        + manifest.entry_line(
            "xfail", "stablehlo/zz_new", {"expect": "fail-compile", "reason": "error: boom"}
        )
    ]


def test_update_manifests_is_what_every_entry_point_calls():
    plugin = (PKG / "plugin" / "pytest_plugin.py").read_text(encoding="utf-8")
    cli = (PKG / "cli" / "main.py").read_text(encoding="utf-8")
    assert "update_manifests(" in plugin and cli.count("update_manifests(") == 2
    for text in (plugin, cli):
        assert "write_updated_manifest" not in text and "load_toml(base_path)" not in text


def test_overlay_holds_only_differences(tmp_path):
    manifest.write_manifest(
        tmp_path / "t.toml", "t", {"s/a": {"stage": "fail-compile", "reason": "x"}}
    )
    ran = [
        Outcome("s/a", "stablehlo", "t", stage="compare", status="pass"),
        Outcome("s/b", "stablehlo", "t", stage="run", status="crash", diagnostics=["boom"]),
    ]
    [(path, changed)] = manifest.update_manifests(tmp_path, ran, "macos", overlay=True)
    assert changed and path.name == "t.macos.toml"
    assert manifest.read_manifest(path).table("xfail") == {
        "s/a": {"expect": "pass", "reason": manifest.OVERLAY_PASS_REASON},
        "s/b": {"expect": "crash", "reason": "boom"},
    }


def test_manifest_errors_name_file_and_line(tmp_path):
    (tmp_path / "t.toml").write_text(
        '# h\n\n[xfail]\n"a" = { stage = "fail-compile", reason = "r" }\n"b" = { stage = "nope", reason = "r" }\n',
        encoding="utf-8",
    )
    with pytest.raises(ExpectationsError, match=r"t\.toml:5: stage 'nope'") as info:
        load_expectations(tmp_path, "t", "linux")
    assert (
        isinstance(info.value, errors.ManifestError)
        and info.value.return_code == errors.EXIT_MANIFEST
    )
    (tmp_path / "t.toml").write_text('[xfail]\n"a" = { stage = \n', encoding="utf-8")
    with pytest.raises(ExpectationsError, match=r"t\.toml.*malformed TOML"):
        load_expectations(tmp_path, "t", "linux")


def test_one_line_scanner_serves_the_shard_merge():
    text = '# c\n[xfail]\n"b" = { stage = "crash", reason = "r" }\n"a" = { stage = "crash", reason = "r" }\n'
    tables = manifest.entry_tables(text)
    assert tables is not None and list(tables["xfail"]) == ['"b"', '"a"']
    assert manifest.rebuild(text, tables).splitlines()[2].startswith('"a"')
    assert manifest.entry_tables('[xfail]\n"a" = """\nmulti\n"""\n') is None


# -- the tomllib shim -----------------------------------------------------------------------

_TOML_IMPORT = re.compile(r"^\s*(import\s+(tomllib|tomli)\b|from\s+(tomllib|tomli)\s+import)", re.M)


def test_tomllib_is_imported_in_one_place():
    # cache-tools, its own distribution, runs without the library: its config reader is
    # the one other place.
    allowed = {PKG / "common" / "tomlio.py", REPO / "cache_tools" / "config.py"}
    found = []
    for folder in ("python", "ci", "cache_tools", "tests", "benchmarks", "conformance"):
        for path in (REPO / folder).rglob("*.py"):
            if (
                _TOML_IMPORT.search(path.read_text(encoding="utf-8", errors="replace"))
                and path not in allowed
            ):
                found.append(str(path.relative_to(REPO)))
    assert not found, f"import tomllib from iree_conformance.common.tomlio instead: {found}"


# -- sizes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1024", 1024),
        ("2B", 2),
        ("1k", 1000),
        ("1KB", 1000),
        ("1Ki", 1024),
        ("1KiB", 1024),
        ("1.5M", 1_500_000),
        ("1Mi", 2**20),
        ("1MiB", 2**20),
        ("6G", 6 * 10**9),
        ("6Gi", 6 * 2**30),
        ("6GiB", 6 * 2**30),
        ("1T", 10**12),
        ("1TB", 10**12),
        ("1Ti", 2**40),
        ("1 TiB", 2**40),
        (42, 42),
    ],
)
def test_one_size_parser_for_cache_tools_and_ci(text, expected):
    from cache_tools.units import parse_size

    common = importlib.import_module("ci._common")
    assert parse_size(text) == expected == common.parse_size(text)


@pytest.mark.parametrize("bad", ["1 parsec", "-1", "GiB", True, -5])
def test_size_errors(bad):
    from cache_tools.errors import ConfigError
    from cache_tools.units import parse_size

    with pytest.raises(ConfigError) as info:
        parse_size(bad)
    assert info.value.return_code == errors.EXIT_CONFIGURATION
    common = importlib.import_module("ci._common")
    with pytest.raises(common.CIError):
        common.parse_size(bad)


# -- errors and exit codes ------------------------------------------------------------------


def test_error_classes_share_one_base_with_distinct_codes():
    """The library's and ci/'s errors derive from ConformanceError; cache-tools, its own
    distribution, has its own base with the same table's numbers."""
    from cache_tools.errors import ApiError, CacheToolsError
    from iree_conformance.bundles.bundle import BundleError
    from iree_conformance.model.targets import TargetError
    from iree_conformance.report.markdown import ReportError
    from iree_conformance.suites.stablehlo_files import CorpusError

    for cls, code in (
        (TargetError, 2),
        (ReportError, 2),
        (ExpectationsError, 3),
        (CorpusError, 4),
        (BundleError, 5),
    ):
        assert issubclass(cls, errors.ConformanceError) and cls("x").return_code == code, cls
    for cls, code in ((CacheToolsError, 2), (ApiError, 7)):
        assert not issubclass(cls, errors.ConformanceError) and cls("x").return_code == code, cls
    assert ApiError("x").exit_code == 7


def test_cli_main_turns_errors_into_exit_codes(tmp_path, capsys):
    from iree_conformance.cli import main as cli

    assert (
        cli.main(["update-expectations", str(tmp_path / "missing.json")])
        == errors.EXIT_CONFIGURATION
    )
    assert "error: " in capsys.readouterr().err
    assert cli.main(["run-bundle", str(tmp_path), "--driver", "local-task"]) == errors.EXIT_BUNDLE
    assert "manifest.json not found" in capsys.readouterr().err


def test_cache_tools_and_ci_catch_the_base(capsys):
    from cache_tools import cli as ct_cli

    assert ct_cli.main(["key", "--config", "/nonexistent/cache_tools.toml", "--class", "x"]) == 2
    common = importlib.import_module("ci._common")

    def broken(argv):
        raise errors.BundleError("bundle gone; rebuild it")

    assert common.run_main(broken, []) == errors.EXIT_BUNDLE
    assert "bundle gone" in capsys.readouterr().err

    def bad_cache_config(argv):
        from cache_tools.errors import ConfigError

        raise ConfigError("cache_tools.toml: no class 'x'")

    assert common.run_main(bad_cache_config, []) == errors.EXIT_CONFIGURATION
    assert "no class 'x'" in capsys.readouterr().err


def test_floors_raise_corpus_errors(monkeypatch):
    from iree_conformance.suites import onnx_models

    monkeypatch.setattr(onnx_models, "LIGHT_FLOOR", 10**6)
    monkeypatch.setattr(
        "iree_conformance.frontends.onnx.light_models.load_light_models", lambda: []
    )
    with pytest.raises(errors.CorpusError, match="fewer than the floor") as info:
        onnx_models.light_cases()
    assert info.value.return_code == errors.EXIT_CORPUS
    for module in ("onnx_ops", "onnx_models", "stablehlo"):
        text = (PKG / "suites" / f"{module}.py").read_text(encoding="utf-8")
        assert not re.search(r"raise ValueError\([^\n]*floor", text), module


# -- metric aggregation ---------------------------------------------------------------------


def test_compare_checks_aggregates_like_compare_outputs():
    a = [np.array([1.0, 2.0], np.float32)]
    bad = [np.array([1.0, 2.5], np.float32)]
    tol = Tolerance()
    both = compare_checks([(a, a, tol, "first"), (a, bad, tol, "second")])
    single = compare_outputs(a, bad, tol)
    assert not both.ok and both.messages[0].startswith("second: ")
    assert both.metrics["max_abs_error"] == single.metrics["max_abs_error"] == 0.5
    assert both.metrics["mismatch_count"] == 1 and both.metrics["compared_elements"] == 4
    assert both.metrics["first_mismatch_index"] == single.metrics["first_mismatch_index"]
    assert len(both.metrics["outputs"]) == 2
    override = compare_checks([(a, bad, tol)], Tolerance(atol=1.0))
    assert override.ok


def test_pipeline_and_bundle_use_compare_checks():
    for name in ("engine/pipeline.py", "bundles/bundle.py"):
        text = (PKG / name).read_text(encoding="utf-8")
        assert "compare_checks(" in text and 'metrics["max_abs_error"] = max' not in text, name


# -- step summaries -------------------------------------------------------------------------


def test_one_step_summary_writer_with_unix_newlines(tmp_path, monkeypatch):
    from cache_tools.output import write_step_summary
    from iree_conformance.report.markdown import append_step_summary

    summary = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert ghactions.append_step_summary("a\nb\n", env)
    assert write_step_summary("c", env)
    assert append_step_summary("d\n")
    assert summary.read_bytes() == b"a\nb\n\nc\n\nd\n\n"
    outputs = tmp_path / "out"
    assert ghactions.write_outputs(
        {"flag": True, "items": ["x", "y"]}, {"GITHUB_OUTPUT": str(outputs)}
    )
    text = outputs.read_bytes().decode()
    assert "\r" not in text and text.startswith("flag=true\nitems<<ghadelimiter_")
    # cache-tools (its own distribution) writes the file commands the same way.
    from cache_tools.output import format_outputs

    values = {"flag": False, "size": 3, "none": None, "map": {"a": 1}, "items": ["x"]}
    assert format_outputs(values) == ghactions.format_pairs(values)
    two = {"items": ["x", "y"]}
    assert re.sub(r"ghadelimiter_\S+", "D", format_outputs(two)) == re.sub(
        r"ghadelimiter_\S+", "D", ghactions.format_pairs(two)
    )
