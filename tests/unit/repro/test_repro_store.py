"""A reproducer's verification run comes from the artifact store when the same files were
run by the same tools before: a warm ``--repro-dir`` run compiles nothing (issue 42)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from iree_conformance.common.store import ArtifactStore
from iree_conformance.repro import verify_cache, writer
from iree_conformance.repro.spec import ReproSpec

VERSIONS = {"iree-base-compiler": {"version": "0"}, "iree-base-runtime": {"version": "0"}}
pytestmark = pytest.mark.skipif(os.name == "nt", reason="the fake tools are #! scripts")


def _spec(
    first_line: str = "error: 'linalg.generic' op inferred shape 4, but found 3",
) -> ReproSpec:
    return ReproSpec(
        case_id="stablehlo/x",
        target="llvm-cpu",
        kind="fail-compile",
        stage="compile",
        first_line=first_line,
        compile_flags=("--iree-hal-target-device=local",),
        device="local-task",
        function="main",
        mlir=b"func.func @main() { return }\n",
    )


def _counting_tools(folder: Path, calls: Path) -> Path:
    """A fake iree-compile that fails with the spec's line and counts its calls."""
    folder.mkdir(parents=True)
    compile_body = (
        f"open({str(calls)!r}, 'a').write('x')\n"
        "print(\"input.mlir:5:10: error: 'linalg.generic' op inferred shape 4, but found 3\", file=sys.stderr)\n"
        "sys.exit(1)"
    )
    for name, body in (("iree-compile", compile_body), ("iree-run-module", "sys.exit(0)")):
        path = folder / name
        path.write_text(f"#!{sys.executable}\nimport sys\n{body}\n", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return folder


def _calls(path: Path) -> int:
    return len(path.read_text()) if path.exists() else 0


def test_the_same_folder_and_tools_verify_once_then_come_from_the_store(tmp_path):
    calls = tmp_path / "calls"
    tools = _counting_tools(tmp_path / "bin", calls)
    store = ArtifactStore(tmp_path / "store")
    first = writer.write(_spec(), tmp_path / "a", VERSIONS, tools_path=str(tools), store=store)
    second = writer.write(_spec(), tmp_path / "b", VERSIONS, tools_path=str(tools), store=store)
    assert _calls(calls) == 1  # the second folder compiled nothing
    assert first["reproduced"] is True and second["reproduced"] is True
    assert first["verification"]["from_store"] is False
    assert second["verification"]["from_store"] is True
    assert second["verification"]["output"] == first["verification"]["output"]


def test_another_file_or_other_tools_run_again(tmp_path):
    calls = tmp_path / "calls"
    tools = _counting_tools(tmp_path / "bin", calls)
    store = ArtifactStore(tmp_path / "store")
    writer.write(_spec(), tmp_path / "a", VERSIONS, tools_path=str(tools), store=store)
    changed = _spec()
    changed.mlir = b"func.func @main() { return }\n// another program\n"
    writer.write(changed, tmp_path / "b", VERSIONS, tools_path=str(tools), store=store)
    assert _calls(calls) == 2
    other = _counting_tools(tmp_path / "other-bin", calls)
    writer.write(_spec(), tmp_path / "c", VERSIONS, tools_path=str(other), store=store)
    assert _calls(calls) == 3
    assert verify_cache.tools_identity(tools) != verify_cache.tools_identity(other)


def test_the_judgement_is_made_again_on_a_stored_run(tmp_path):
    """The store keeps what the tools did, not the verdict: a spec whose first line the
    output does not have is not reproduced, though the run came from the store."""
    calls = tmp_path / "calls"
    tools = _counting_tools(tmp_path / "bin", calls)
    store = ArtifactStore(tmp_path / "store")
    writer.write(_spec(), tmp_path / "a", VERSIONS, tools_path=str(tools), store=store)
    other = writer.write(
        _spec("error: something else"), tmp_path / "b", VERSIONS, tools_path=str(tools), store=store
    )
    assert _calls(calls) == 1
    assert other["reproduced"] is False and other["verification"]["from_store"] is True


def test_without_a_store_every_folder_runs(tmp_path):
    calls = tmp_path / "calls"
    tools = _counting_tools(tmp_path / "bin", calls)
    for name in ("a", "b"):
        writer.write(_spec(), tmp_path / name, VERSIONS, tools_path=str(tools))
    disabled = ArtifactStore(None)
    writer.write(_spec(), tmp_path / "c", VERSIONS, tools_path=str(tools), store=disabled)
    assert _calls(calls) == 3
