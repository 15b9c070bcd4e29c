"""One implementation per policy: manifests, the tomllib shim, sizes, errors and exit
codes, metric aggregation, step summaries (ARCHITECTURE.md, "One place per policy")."""

from __future__ import annotations

import ast
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
from iree_conformance.model.compare import Check, Tolerance, compare_checks, compare_outputs
from iree_conformance.model.outcome import Outcome

REPO = Path(__file__).resolve().parents[3]
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


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("path", XFAIL_MANIFESTS, ids=lambda p: p.name)
def test_new_entry_anywhere_adds_exactly_its_line(path, where, tmp_path):
    """tomlkit 0.15.3 dropped the private insert the writer used: a new entry at the
    table's start, middle or end adds its one line, sorted, and nothing else moves."""
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    before = copy.read_text(encoding="utf-8")
    xfail = manifest.read_manifest(copy).table("xfail")
    keys = sorted(xfail)
    new_key = {
        "first": "_" + keys[0],
        "middle": keys[len(keys) // 2] + "_new",
        "last": keys[-1] + "~",
    }[where]
    xfail[new_key] = {"stage": "fail-compile", "reason": "error: new"}
    assert manifest.write_manifest(copy, path.stem, xfail)
    after = copy.read_text(encoding="utf-8")
    assert _diff(before, after) == ["+" + manifest.entry_line("xfail", new_key, xfail[new_key])]
    written = [
        line.key for line in manifest.scan(after) if line.kind == "entry" and line.table == "xfail"
    ]
    assert written == sorted(written)


def test_new_entries_into_a_commented_table_keep_its_comments(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(
        "# header\n\n[xfail]  # the table\n# leading comment\n"
        'b = { expect = "crash", reason = "x" }  # why b\n\n# a group\n'
        'd = { expect = "crash", reason = "y" }\n\n[tolerance]\n',
        encoding="utf-8",
    )
    before = path.read_text(encoding="utf-8")
    xfail = manifest.read_manifest(path).table("xfail")
    for key in ("a", "c", "e"):
        xfail[key] = {"stage": "crash", "reason": key}
    assert manifest.write_manifest(path, "t", xfail)
    after = path.read_text(encoding="utf-8")
    assert sorted(_diff(before, after)) == sorted(
        f"+{k} = " + manifest.entry_text("xfail", xfail[k]) for k in ("a", "c", "e")
    )
    assert after.index("# leading comment") < after.index("\na = ") < after.index("\nb = ")
    assert after.index("# why b") < after.index("\nc = ") < after.index("# a group")
    assert after.index("\nd = ") < after.index("\ne = ") < after.index("[tolerance]")
    assert "[xfail]  # the table" in after


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
    for folder in ("python", "ci", "devtools", "cache_tools", "tests", "benchmarks", "conformance"):
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
    both = compare_checks([Check(a, a, tol, "first"), Check(a, bad, tol, "second")])
    single = compare_outputs(a, bad, tol)
    assert not both.ok and both.messages[0].startswith("second: ")
    assert both.metrics["max_abs_error"] == single.metrics["max_abs_error"] == 0.5
    assert both.metrics["mismatch_count"] == 1 and both.metrics["compared_elements"] == 4
    assert both.metrics["first_mismatch_index"] == single.metrics["first_mismatch_index"]
    assert len(both.metrics["outputs"]) == 2
    override = compare_checks([Check(a, bad, tol)], Tolerance(atol=1.0))
    assert override.ok


def test_pipeline_and_bundle_share_the_after_run_steps():
    """The steps after a run live in engine/after_run.py alone: the pipeline and run-bundle
    call ``after_run``, and neither compares, judges inputs or times on its own."""
    after = (PKG / "engine" / "after_run.py").read_text(encoding="utf-8")
    assert "compare_checks(" in after and "judge_unjudged(" in after
    for name in ("engine/pipeline.py", "bundles/bundle.py"):
        text = (PKG / name).read_text(encoding="utf-8")
        assert "after_run(" in text, name
        for own_step in ("compare_checks(", "judge_unjudged(", 'info["source"]', "max_abs_error"):
            assert own_step not in text, (name, own_step)


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


# -- the vocabulary -------------------------------------------------------------------------

# A status, stage or verdict is named by its member (Status.PASS), never by a string:
# `outcome.status == "pass"`, `status="error"`, `{"stage": "compile"}`.
_VOCABULARY_FIELDS = {"status", "stage", "verdict"}
_VOCABULARY_SCANNED = ("python/iree_conformance", "ci", "devtools", "benchmarks", "conformance")


def _vocabulary_words() -> set[str]:
    from iree_conformance.common.vocabulary import Stage, Status, Verdict

    return {member.value for enum in (Stage, Status, Verdict) for member in enum}


def _names_a_field(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _VOCABULARY_FIELDS
    if isinstance(node, ast.Attribute):
        return node.attr in _VOCABULARY_FIELDS
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in _VOCABULARY_FIELDS
    if isinstance(node, (ast.Tuple, ast.List)):
        return any(_names_a_field(e) for e in node.elts)
    return False


def literal_vocabulary(source: str, words: set[str]) -> list[int]:
    """Lines where a status, stage or verdict is compared with, or set to, a string."""

    def word(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value in words

    def holds_word(node: ast.AST) -> bool:
        return any(word(n) for n in ast.walk(node))

    def is_word(node: ast.AST) -> bool:  # "pass", or ("pass", "skip")
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(is_word(e) for e in node.elts)
        return word(node)

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            hit = any(_names_a_field(s) for s in sides) and any(is_word(s) for s in sides)
        elif isinstance(node, ast.keyword):
            hit = node.arg in _VOCABULARY_FIELDS and holds_word(node.value)
        elif isinstance(node, ast.Assign):
            hit = any(_names_a_field(t) for t in node.targets) and holds_word(node.value)
        elif isinstance(node, ast.Dict):
            hit = any(
                isinstance(k, ast.Constant) and k.value in _VOCABULARY_FIELDS and holds_word(v)
                for k, v in zip(node.keys, node.values)
            )
        else:
            continue
        if hit:
            lines.append(node.lineno)
    return sorted(set(lines))


def test_no_literal_status_outside_the_vocabulary():
    words = _vocabulary_words()
    vocabulary = PKG / "common" / "vocabulary.py"
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for folder in _VOCABULARY_SCANNED
        for path in sorted((REPO / folder).rglob("*.py"))
        if path != vocabulary
        for line in literal_vocabulary(path.read_text(encoding="utf-8"), words)
    ]
    assert found == [], "name the member (Status.PASS), not the string: " + ", ".join(found)


def test_the_literal_status_check_can_fail():
    words = _vocabulary_words()
    source = (
        'if outcome.status == "pass": pass\n'
        'if o["verdict"] in ("fail", "xpass"): pass\n'
        'result = Outcome(status="error")\n'
        'outcome.stage, outcome.status = "reference", "error"\n'
        'meta = {"stage": "compile"}\n'
        "if outcome.status == Status.PASS: pass\n"  # the member: fine
        'if self.stage == "Main": pass\n'  # not a vocabulary word: fine
    )
    assert literal_vocabulary(source, words) == [1, 2, 3, 4, 5]


def test_outcome_fields_hold_the_vocabulary_members():
    from iree_conformance.common.vocabulary import Stage, Status, Verdict

    outcome = Outcome.from_json(
        {"case_id": "a", "suite": "s", "target": "t", "stage": "run", "status": "crash"}
    )
    assert outcome.stage is Stage.RUN and outcome.status is Status.CRASH
    assert Outcome("a", "s", "t", verdict="xfail").verdict is Verdict.XFAIL
    assert outcome.to_json()["status"] == "crash" and type(outcome.to_json()["status"]) is str
    # A word of a later version's results file stays as read (the reports give it a column).
    assert (
        Outcome.from_json({"case_id": "a", "suite": "s", "target": "t", "verdict": "new"}).verdict
        == "new"
    )


# -- one results diff -----------------------------------------------------------------------


def test_every_comparison_of_two_runs_uses_diff_outcomes():
    for name in (
        "ci/diff_results.py",
        "devtools/check_batch_equivalence.py",
        "benchmarks/suitespeed/outcome_stats.py",
    ):
        text = (REPO / name).read_text(encoding="utf-8")
        assert "diff_outcomes(" in text, name
    assert "FAILING = (" not in (REPO / "ci" / "diff_results.py").read_text(encoding="utf-8")


def test_the_three_comparisons_agree():
    from benchmarks.suitespeed.outcome_stats import compare_verdicts
    from ci.diff_results import compare
    from devtools.check_batch_equivalence import differences
    from iree_conformance.model.results import diff_outcomes

    def outcome(case_id, status, stage, verdict):
        return {
            "case_id": case_id,
            "target": "t",
            "status": status,
            "stage": stage,
            "verdict": verdict,
            "os": "linux",
            "arch": "x86_64",
        }

    before = [
        outcome("same", "pass", "compare", "pass"),
        outcome("broke", "pass", "compare", "pass"),
        outcome("moved", "error", "compile", "xfail"),
        outcome("gone", "pass", "compare", "pass"),
    ]
    after = [
        outcome("same", "pass", "compare", "pass"),
        outcome("broke", "fail", "compare", "fail"),
        outcome("moved", "error", "import", "fail"),
        outcome("new", "crash", "run", "fail"),
    ]
    diff = diff_outcomes({o["case_id"]: o for o in before}, {o["case_id"]: o for o in after})
    assert diff.compared == 3 and diff.only_before == ["gone"] and diff.only_after == ["new"]
    assert diff.differ["moved"] == {"stage": ("compile", "import"), "verdict": ("xfail", "fail")}
    assert sorted(diff.differ) == ["broke", "moved"]
    speed = compare_verdicts(before, after)
    assert speed["differ"] == diff.differ and speed["only_in_b"] == ["new"]
    keyed = [{f"t:{o['case_id']}": o for o in side} for side in (before, after)]
    lines = differences(*keyed)
    assert [line.split(":")[1] for line in lines] == ["broke", "gone", "moved", "new"]
    assert "t:moved: alone error/compile/xfail, batched error/import/fail" in lines
    runs = [{"os": "linux", "arch": "x86_64"}]
    ci = compare({"runs": runs, "outcomes": after}, {"runs": runs, "outcomes": before})
    assert [e["case_id"] for e in ci["new_failures"]] == ["broke", "new"]
    assert [e["case_id"] for e in ci["changed"]] == ["moved"]
    assert (ci["added"], ci["removed"]) == (1, 1)
