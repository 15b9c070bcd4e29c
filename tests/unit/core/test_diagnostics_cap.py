"""No diagnostic line over MAX_LINE_CHARS reaches a person; the full text is kept."""

from pathlib import Path

from iree_conformance.common.diagnostics import (
    KEPT_CHARS,
    MAX_LINE_CHARS,
    cap_diagnostics,
    cap_outcome_diagnostics,
    diagnostics_dir,
)
from iree_conformance.model.outcome import Outcome

LONG = "error: failed to legalize 'torch.operator' {" + "0 : si64, " * 5000 + '} "onnx.Foo"'


def test_short_lines_pass_untouched(tmp_path: Path):
    lines = ["a", "b\n" + "c" * MAX_LINE_CHARS]
    assert cap_diagnostics(lines, tmp_path) == (lines, None)
    assert not any(tmp_path.iterdir())


def test_long_line_keeps_its_start_and_op_and_the_file_keeps_all(tmp_path: Path):
    capped, where = cap_diagnostics(["first", "head\n" + LONG], tmp_path)
    assert where is not None and Path(where).parent == tmp_path
    assert capped[0] == "first" and capped[1].startswith("head\n" + LONG[:KEPT_CHARS])
    cut = capped[1].splitlines()[1]
    assert len(cut) < MAX_LINE_CHARS and "(op onnx.Foo)" in cut and where in cut
    assert Path(where).read_text() == "first\nhead\n" + LONG + "\n"
    again, same = cap_diagnostics(["first", "head\n" + LONG], tmp_path)
    assert same == where and again == capped  # content-keyed: one file


def test_unwritable_folder_says_the_text_was_not_kept(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    capped, where = cap_diagnostics([LONG], blocker / "diagnostics")
    assert where is None and "not kept" in capped[0] and len(capped[0]) < MAX_LINE_CHARS


def test_outcome_names_the_file_in_the_store(tmp_path: Path):
    outcome = Outcome("c", "s", "t", diagnostics=[LONG])
    cap_outcome_diagnostics(outcome, tmp_path)
    assert Path(outcome.info["diagnostics_file"]).parent == tmp_path / "diagnostics"
    assert diagnostics_dir(None).name == "iree-conformance-diagnostics"
