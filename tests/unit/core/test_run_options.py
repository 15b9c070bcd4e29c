"""RunOptions: option values checked by their type callables, the parsed record, and
docs/suites.md's options table generated from the same help strings, and docs/commands.md's
command table and exit-status table from the parser and errors.EXIT_TABLE."""

import argparse

import pytest

from iree_conformance.cli import options_table
from iree_conformance.common import errors
from iree_conformance.suites.run_options import (
    OPTIONS,
    RunOptions,
    case_list,
    non_negative_int,
    positive_int,
    shard_spec,
    stage_timeout,
)
from tests.support.core_helpers import ROOT


def test_options_table_is_generated_from_the_help_strings():
    page = ROOT / "docs" / "suites.md"
    text = page.read_text(encoding="utf-8")
    assert options_table.START in text
    assert options_table.updated(text) == text, (
        "docs/suites.md's options table differs from the plugin's help strings; "
        "run: python -m iree_conformance.cli.options_table"
    )
    assert all(f"`{option.name}" in text for option in OPTIONS)


def test_commands_page_is_generated_from_the_parser_and_the_error_table():
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    assert options_table.CODES_START in text and options_table.COMMANDS_START in text
    assert options_table.updated(text) == text, (
        "docs/commands.md's command or exit-status table differs from the parser or "
        "errors.EXIT_TABLE; run: python -m iree_conformance.cli.options_table"
    )
    for name in ("devices", "check-model", "repro", "reduce", "versions", "bisect"):
        assert f"| `iree-conformance {name}` |" in text, name
    for code, kind in ((2, "configuration"), (6, "threshold"), (7, "api")):
        assert errors.EXIT_CODES[kind] == code and f"| {code} |" in text


def test_the_exit_table_covers_every_kind_once():
    codes = [code for code, _ in errors.EXIT_TABLE]
    assert codes == sorted(set(codes)) and set(errors.EXIT_CODES.values()) | {0, 1} == set(codes)
    text = errors.exit_help({0: "pass"}, errors.EXIT_CONFIGURATION, errors.EXIT_UNJUDGED)
    assert text.startswith("Exit status: 0 pass; 2 bad arguments") and "; 9 check-model: " in text


def test_the_command_table_follows_the_parser():
    table = options_table.render_commands()
    assert "| `iree-conformance export-jax` | write each JAX case as a self-checking" in table
    assert table.count("\n") == 2 + len(
        "devices report history compare bench update-expectations flakes compare-upstream "
        "run-bundle check-model export-jax versions bisect reduce repro".split()
    )


def test_options_table_check_mode_says_stale(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{options_table.START}\n| old |\n{options_table.END}\nafter\n")
    assert options_table.main(["--check", str(readme)]) == 1
    assert options_table.main(["--check", str(readme)]) == 1
    assert "| old |" in readme.read_text()
    assert options_table.main([str(readme)]) == 0
    text = readme.read_text()
    assert "| `--shard I/N` |" in text and text.endswith(f"{options_table.END}\nafter\n")
    assert options_table.main(["--check", str(readme)]) == 0


def test_options_table_needs_its_markers():
    with pytest.raises(ValueError, match="markers"):
        options_table.updated("no table here")


def test_a_stale_exit_table_is_found(tmp_path):
    page = tmp_path / "README.md"
    page.write_text(f"{options_table.CODES_START}\n| 6 | old |\n{options_table.CODES_END}\n")
    assert options_table.main(["--check", str(page)]) == 1
    assert options_table.main([str(page)]) == 0
    assert "| 6 | `cache-tools audit --fail-over` tripped |" in page.read_text()


@pytest.mark.parametrize(
    ("parse", "text", "value"),
    [
        (non_negative_int, "0", 0),
        (positive_int, "3", 3),
        (shard_spec, "2/4", (2, 4)),
        (stage_timeout, "compile=600", ("compile", 600.0)),
        (stage_timeout, "run=0.5", ("run", 0.5)),
    ],
)
def test_good_values_parse(parse, text, value):
    assert parse(text) == value


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (non_negative_int, "-1", "0 or more"),
        (non_negative_int, "x", "whole number"),
        (positive_int, "0", "1 or more"),
        (shard_spec, "3", "I/N"),
        (shard_spec, "5/4", "between 1 and N"),
        (stage_timeout, "link=5", "stage must be one of"),
        (stage_timeout, "compile=x", "a number"),
        (stage_timeout, "compile=nan", "finite"),
        (stage_timeout, "compile=inf", "finite"),
        (stage_timeout, "compile=0", "above 0"),
        (stage_timeout, "compile=-1", "above 0"),
    ],
)
def test_bad_values_are_argument_errors(parse, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse(text)


def test_case_list_reads_ids_and_drops_comments(tmp_path):
    path = tmp_path / "cases.txt"
    path.write_text("# header\nstablehlo/a  # why\n\n  onnx-ops/test_b\n")
    assert case_list(str(path)) == {"stablehlo/a", "onnx-ops/test_b"}
    with pytest.raises(argparse.ArgumentTypeError, match="cannot read"):
        case_list(str(tmp_path / "missing.txt"))


def test_contradicting_options_are_usage_errors(tmp_path):
    with pytest.raises(pytest.UsageError, match="--bundle needs --compile-only"):
        RunOptions(bundle=tmp_path)
    with pytest.raises(pytest.UsageError, match="needs a full run"):
        RunOptions(compile_only=True, update_expectations="base")
    assert RunOptions(compile_only=True, retries=3).effective_retries == 0
    assert RunOptions().targets == ("llvm-cpu",) and RunOptions().retries == 1


def test_run_options_are_frozen():
    with pytest.raises(AttributeError):
        RunOptions().retries = 5  # type: ignore[misc]
