"""A reproducer names only files inside itself and ISSUE.md no path of the user's machine
(issue 58, item 4): a large model's parameter file is linked or copied in as params.irpa
(it was the store's path, relative to where repro ran for a relative --store-dir), the
"did it work before" source is a name, the tools are "PATH" or "--tools"."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from iree_conformance.repro import source, worked_before, writer
from iree_conformance.repro import spec as spec_mod
from iree_conformance.repro.spec import ReproSpec

VERSIONS = {"iree-base-compiler": {"version": "0"}, "python": "3"}


def _spec(**kw) -> ReproSpec:
    base = dict(
        case_id="onnx-models/big",
        target="llvm-cpu",
        kind="fail-run",
        stage="run",
        first_line="error: out of memory",
        compile_flags=("--iree-hal-target-device=local",),
        device="local-task",
        function="main",
        mlir=b"func.func @main() { return }\n",
    )
    base.update(kw)
    return ReproSpec(**base)


def _fake_store(monkeypatch, params: Path) -> None:
    found = SimpleNamespace(runtime_parameters=lambda meta: ("model", params))
    monkeypatch.setattr(source, "ModuleCache", lambda store: SimpleNamespace(params=found))


def test_a_large_models_parameter_file_is_inside_the_folder(tmp_path, monkeypatch):
    machine = tmp_path / "home" / "me" / "st" / "params" / "ab"
    machine.mkdir(parents=True)
    (machine / "ab.irpa").write_bytes(b"IRPA weights")
    _fake_store(monkeypatch, machine / "ab.irpa")
    spec = _spec()
    source._large_model_notes(None, spec, {}, None)
    out = tmp_path / "out"
    writer.write(spec, out, VERSIONS, verify_it=False)
    assert (out / "params.irpa").read_bytes() == b"IRPA weights"
    assert "--parameters=model=params.irpa" in (out / "run.flags").read_text().splitlines()
    for path in out.iterdir():
        assert str(tmp_path) not in path.read_text(errors="replace"), path.name
    record = json.loads((out / "repro.json").read_text())
    assert "params.irpa" in [f["name"] for f in record["files"]]


def test_issue_md_names_the_versions_result_not_where_it_lies(tmp_path):
    found = worked_before.WorkedBefore("Yes, on IREE 3.12.0: ...", source=str(tmp_path / "v.json"))
    spec = _spec(context={"worked_before": found.record()})
    writer.write(spec, tmp_path / "out", VERSIONS, verify_it=False)
    issue = (tmp_path / "out" / "ISSUE.md").read_text()
    assert "(from `v.json`)" in issue and str(tmp_path) not in issue
    assert str(tmp_path) not in (tmp_path / "out" / "repro.json").read_text()


def test_the_verifying_tools_are_named_not_located(tmp_path, monkeypatch):
    tools = tmp_path / "home" / "me" / "venv" / "bin"
    monkeypatch.setattr(writer.verify, "tools_dir", lambda spec, given: tools)
    monkeypatch.setattr(
        writer.verify_cache, "run_reproducer", lambda *a: {"stage": "run", "exit": 1}
    )
    monkeypatch.setattr(writer.verify, "judge", lambda spec, ran: {"reproduced": False})
    for given, named in ((None, "PATH"), (str(tools), "--tools")):
        out = tmp_path / f"out-{named}"
        record = writer.write(_spec(), out, VERSIONS, tools_path=given)
        assert record["verification"]["tools"] == named
        assert str(tmp_path) not in (out / "repro.json").read_text()
    assert spec_mod.PARAMS_FILE == "params.irpa"


def test_repro_sh_runs_as_sh_repro_sh_inside_its_folder(tmp_path):
    """$0 is then "repro.sh": `cd "${0%/*}"` was `cd repro.sh`, exit 2 before any tool."""
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("iree-compile", "iree-run-module"):
        tool = bin_dir / name
        tool.write_text(f"#!{sys.executable}\nimport sys\nprint('ran', sys.argv[1:2])\n")
        tool.chmod(0o755)
    out = tmp_path / "out"
    writer.write(_spec(), out, VERSIONS, verify_it=False)
    for argv, cwd in (
        (["/bin/sh", "repro.sh"], out),
        (["/bin/sh", str(out / "repro.sh")], tmp_path),
    ):
        ran = subprocess.run(
            argv, cwd=cwd, env={"PATH": str(bin_dir)}, capture_output=True, text=True, timeout=60
        )
        assert ran.returncode == 0 and ran.stdout.count("ran") == 2, ran.stdout + ran.stderr
