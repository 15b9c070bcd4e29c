import pytest

from iree_conformance.common.tomlio import load_toml
from iree_conformance.engine.verdicts import judge
from iree_conformance.expectations.lookup import (
    ExpectationsError,
    load_expectations,
    render_manifest,
    updated_entries,
    write_updated_manifest,
)
from iree_conformance.model.outcome import Outcome


def outcome(case_id, status="pass", stage="compare", diag=("error: boom",)):
    return Outcome(
        case_id=case_id,
        suite="stablehlo",
        target="llvm-cpu",
        status=status,
        stage=stage,
        diagnostics=list(diag),
    )


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


MANIFEST = """# header kept
[xfail]
"s/a" = { stage = "fail-compile", reason = "error: a" }
"s/b" = { stage = "fail-numerics", reason = "slightly off" }

[tolerance]
"s/c" = { rtol = 0.001, reason = "fast exp" }
"""


def test_judge_xfail_strict_xpass_and_regression(tmp_path):
    write(tmp_path / "llvm-cpu.toml", MANIFEST)
    exp = load_expectations(tmp_path, "llvm-cpu", "linux")
    assert judge(exp, outcome("s/a", "error", "compile")).name == "xfail"
    xpass = judge(exp, outcome("s/a"))
    assert (
        xpass.name == "xpass" and "llvm-cpu.toml:3" in xpass.message and "delete" in xpass.message
    )
    moved = judge(exp, outcome("s/a", "error", "run"))
    assert moved.name == "fail" and "later stage" in moved.message
    earlier = judge(exp, outcome("s/b", "error", "import"))
    assert earlier.name == "fail" and "earlier stage" in earlier.message
    assert judge(exp, outcome("s/new", "crash", "compile")).name == "fail"
    assert judge(exp, outcome("s/new")).name == "pass"
    assert exp.tolerance_for("s/c").rtol == 0.001


def test_a_case_the_harness_cannot_judge_is_neither_a_failure_nor_a_pass(tmp_path):
    write(tmp_path / "llvm-cpu.toml", MANIFEST)
    exp = load_expectations(tmp_path, "llvm-cpu", "linux")
    no_ref = outcome("s/new", "error", "reference", ("no input shapes gave a usable reference",))
    judged = judge(exp, no_ref)
    assert judged.name == "skip" and judged.message == (
        "not judged: no input shapes gave a usable reference"
    )
    assert judged.record(no_ref).reason.startswith("not judged: ")
    # A listed case the harness cannot judge is not tested either: a skip, never an XPASS.
    assert judge(exp, outcome("s/a", "timeout", "reference")).name == "skip"
    assert judge(exp, outcome("s/new", "error", "run")).name == "fail"  # IREE's: red


def test_overlay_replaces_and_pass_removes(tmp_path):
    write(tmp_path / "llvm-cpu.toml", MANIFEST)
    write(
        tmp_path / "llvm-cpu.windows.toml",
        '[xfail]\n"s/a" = { stage = "pass", reason = "ok on windows" }\n"s/w" = { stage = "crash", reason = "win only" }\n',
    )
    exp = load_expectations(tmp_path, "llvm-cpu", "windows")
    assert "s/a" not in exp.xfail and exp.xfail["s/w"].expect == "crash" and "s/b" in exp.xfail
    assert "s/a" in load_expectations(tmp_path, "llvm-cpu", "linux").xfail


@pytest.mark.parametrize(
    "text, needle",
    [
        ('[xfail]\n"s/a" = { stage = "fail-compile" \n', "malformed TOML"),
        (
            '[xfail]\n\n"s/a" = { stage = "fail-sometimes", reason = "x" }\n',
            ":3: stage 'fail-sometimes'",
        ),
        (
            '[xfail]\n"s/a" = { stage = "fail-compile", reason = "" }\n',
            ":2: 's/a' needs a non-empty reason",
        ),
        ("[xfails]\n", "unknown table"),
        ('[tolerance]\n"s/a" = { rtol = -1, reason = "x" }\n', "non-negative"),
        ('[tolerance]\n"s/a" = { rtol = nan, reason = "x" }\n', "finite"),
        ('[tolerance]\n"s/a" = { rtol = true, reason = "x" }\n', "finite"),
        ('xfail = "oops"\n', ":1: xfail must be a table"),
        ('[xfail]\n"s/a" = { stage = "pass", reason = "x" }\n', "not one of"),
    ],
)
def test_broken_manifest_names_file_and_line(tmp_path, text, needle):
    write(tmp_path / "llvm-cpu.toml", text)
    with pytest.raises(ExpectationsError) as e:
        load_expectations(tmp_path, "llvm-cpu", "linux")
    assert "llvm-cpu.toml" in str(e.value) and needle in str(e.value)


def test_update_adds_drops_and_keeps_reasons():
    current = {
        "s/a": {"stage": "fail-compile", "reason": "kept reason"},
        "s/fixed": {"stage": "crash", "reason": "x"},
    }
    entries = updated_entries(
        current,
        [
            outcome("s/a", "error", "compile", ["error: a different message"]),
            outcome("s/fixed"),
            outcome("s/new", "fail", "compare", ["output 0: 3 of 4 elements differ"]),
            outcome("s/moved", "timeout", "compile", ["compile ran past"]),
            Outcome("s/skipped", "stablehlo", "llvm-cpu", status="skip"),
        ],
    )
    assert entries["s/a"] == {"stage": "fail-compile", "reason": "kept reason"}
    assert "s/fixed" not in entries
    assert entries["s/new"]["expect"] == "fail-numerics"  # writers write expect
    assert entries["s/moved"]["expect"] == "timeout"
    assert "s/skipped" not in entries


def test_write_updated_manifest_is_sorted_and_reloadable(tmp_path):
    path = write(tmp_path / "llvm-cpu.toml", MANIFEST)
    changed = write_updated_manifest(
        path, "llvm-cpu", [outcome("s/0new", "error", "import", ['error: "quoted" \\ back'])]
    )
    assert changed
    text = path.read_text()
    assert text.startswith("# header kept")
    data = load_toml(path)
    assert list(data["xfail"]) == ["s/0new", "s/a", "s/b"]
    assert data["xfail"]["s/0new"]["reason"] == 'error: "quoted" \\ back'
    assert data["tolerance"]["s/c"]["rtol"] == 0.001
    assert not write_updated_manifest(path, "llvm-cpu", [outcome("s/0new", "error", "import")])


def test_overlay_update_keeps_only_differences(tmp_path):
    write(tmp_path / "llvm-cpu.toml", MANIFEST)
    base = load_toml(tmp_path / "llvm-cpu.toml")["xfail"]
    overlay = tmp_path / "llvm-cpu.macos.toml"
    write_updated_manifest(
        overlay,
        "llvm-cpu",
        [outcome("s/a"), outcome("s/b", "fail"), outcome("s/m", "crash", "run")],
        base=base,
    )
    data = load_toml(overlay)["xfail"]
    assert data == {
        "s/a": {"expect": "pass", "reason": "passes on this OS"},
        "s/m": {"expect": "crash", "reason": "error: boom"},
    }
    exp = load_expectations(tmp_path, "llvm-cpu", "macos")
    assert set(exp.xfail) == {"s/b", "s/m"}


def test_render_escapes_strings():
    text = render_manifest("t", {'a"b': {"stage": "crash", "reason": "line\nbreak"}}, {})
    assert '"a\\"b"' in text and "line\\nbreak" in text


# -- the expect key (old name: stage) and its migration ---------------------------------------


def test_expect_is_read_like_stage_and_both_is_an_error(tmp_path):
    from iree_conformance.common.vocabulary import Verdict
    from iree_conformance.expectations.lookup import ExpectationsError

    write(tmp_path / "llvm-cpu.toml", '[xfail]\n"s/a" = { expect = "crash", reason = "r" }\n')
    exp = load_expectations(tmp_path, "llvm-cpu", "linux")
    assert exp.xfail["s/a"].kinds == ("crash",)
    assert judge(exp, Outcome("s/a", "s", "llvm-cpu", status="crash")).name == Verdict.XFAIL
    write(
        tmp_path / "llvm-cpu.toml",
        '[xfail]\n"s/a" = { expect = "crash", stage = "crash", reason = "r" }\n',
    )
    with pytest.raises(
        ExpectationsError, match=r"llvm-cpu.toml:2: 's/a' has both expect and stage"
    ):
        load_expectations(tmp_path, "llvm-cpu", "linux")


def test_migration_renames_stage_only(tmp_path):
    from iree_conformance.expectations.manifest import migrate_manifests, migrated_text

    text = (
        "# header\n\n[xfail]\n"
        '"s/a" = { stage = "crash", reason = "stage = x" }\n'
        '"s/b" = { stage = ["pass", "crash"], reason = "flaky" }\n'
        '\n[tolerance]\n"s/c" = { rtol = 0.1, reason = "stage" }\n'
    )
    new = migrated_text(text)
    assert new == text.replace('{ stage = "crash"', '{ expect = "crash"').replace(
        '{ stage = ["pass"', '{ expect = ["pass"'
    )
    assert migrated_text(new) == new
    write(tmp_path / "vmvx.toml", text)
    assert migrate_manifests(tmp_path) == [(tmp_path / "vmvx.toml", True)]
    assert load_expectations(tmp_path, "vmvx", "linux").xfail["s/b"].flaky
