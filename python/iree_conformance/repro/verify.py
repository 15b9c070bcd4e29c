"""Runs a written reproducer in a clean subprocess and says whether it shows the failure.

The subprocess's environment holds only ``PATH`` (the folder of the IREE tools, nothing
else: no ``PYTHONPATH``, no project) and runs ``repro.sh`` in a scratch copy of the
folder, so the folder itself stays as written. The failure is the same when:

- numerics (``fail-numerics``): ``iree-run-module`` ran, exited 1 and printed IREE's own
  ``[FAILED] result[K]`` mismatch report;
- a crash: the same stage (compile, or load/run as ``run``) ended on a signal;
- an import, compile or run error: the same stage failed and one of its output lines
  has the harness's first error line, normalized as the report's failure groups
  normalize it (``common.diagnostics.normalize``: file:line:col, numbers and SSA names
  folded).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from iree_conformance.common.diagnostics import normalize
from iree_conformance.common.fsutil import link_or_copy
from iree_conformance.common.process_group import run_in_group
from iree_conformance.common.vocabulary import Stage
from iree_conformance.repro.spec import INPUT_MLIR, MODULE_FILE, ReproSpec, has_float8

#: The tools a reproducer calls, by whether it imports ONNX first.
TOOLS = ("iree-compile", "iree-run-module")
IMPORT_TOOL = "iree-import-onnx"
_STAGE_OF = {
    "prepare": "import",
    "import": "import",
    "compile": "compile",
    "load": "run",
    "run": "run",
}
_OUTPUT_LIMIT = 200  # lines of the reproducer's output kept in repro.json


class ToolsMissing(Exception):
    """The IREE tools the reproducer calls are not on PATH."""


def tools_dir(spec: ReproSpec, path: str | None = None) -> Path:
    """The one folder that holds every tool the reproducer calls (on ``path``, default
    ``$PATH``); ToolsMissing says which are missing."""
    wanted = list(TOOLS) + ([IMPORT_TOOL] if spec.import_line else [])
    found = {tool: shutil.which(tool, path=path) for tool in wanted}
    missing = [tool for tool, where in found.items() if where is None]
    if missing:
        raise ToolsMissing(
            f"{', '.join(missing)} not on PATH, so the reproducer could not be verified: "
            "install iree-base-compiler and iree-base-runtime (pip) or put their bin folder on PATH, "
            "or pass --no-verify"
        )
    folders = {str(Path(where).parent) for where in found.values() if where}
    return Path(sorted(folders)[0]) if len(folders) == 1 else Path(os.pathsep.join(sorted(folders)))


def clean_env(tools: Path) -> dict[str, str]:
    env = {"PATH": str(tools)}
    for keep in (
        "SYSTEMROOT",
        "TMPDIR",
        "TEMP",
        "TMP",
    ):  # Windows needs SYSTEMROOT to start a process
        if keep in os.environ:
            env[keep] = os.environ[keep]
    return env


def _run_tool(
    cmd: list[str], tools: Path, cwd: Path, timeout_s: float
) -> subprocess.CompletedProcess[str]:
    """Runs cmd in cwd with only the tools folder on PATH, its output captured as text; past
    the time limit its whole process group is stopped (``subprocess.TimeoutExpired``)."""
    return run_in_group(
        cmd,
        timeout=timeout_s,
        env=clean_env(tools),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    )


def run_reproducer(folder: Path, tools: Path, timeout_s: float) -> dict[str, Any]:
    """Runs ``repro.sh`` of a scratch copy of folder: (stage reached, exit status, output)."""
    sh = shutil.which("sh") or "/bin/sh"
    with tempfile.TemporaryDirectory(prefix="repro-verify-") as scratch:
        work = Path(scratch) / "repro"
        shutil.copytree(folder, work, copy_function=link_or_copy)  # params.irpa: GiB
        for stale in (MODULE_FILE,):
            (work / stale).unlink(missing_ok=True)
        had_mlir = (work / INPUT_MLIR).is_file()
        try:
            # past the limit, iree-compile is stopped with sh
            proc = _run_tool([sh, str(work / "repro.sh")], tools, work, timeout_s)
        except subprocess.TimeoutExpired:
            return {"stage": None, "returncode": None, "output": [], "timed_out": True}
        if not had_mlir and not (work / INPUT_MLIR).is_file():
            stage = Stage.IMPORT
        elif not (work / MODULE_FILE).is_file():
            stage = Stage.COMPILE
        else:
            stage = Stage.RUN
        lines = [ln for ln in (proc.stdout + "\n" + proc.stderr).splitlines() if ln.strip()]
        return {"stage": stage, "returncode": proc.returncode, "output": lines, "timed_out": False}


# The Python runtime's wrapping of a runtime error: "RuntimeError: Error invoking function: ".
_PY_PREFIX = re.compile(r"^(\w+Error: )?(Error invoking function: )?")


def _core(line: str) -> str:
    """The message of an in-process importer error, as the tool prints it in a traceback:
    ``importing ONNX graph 'g' failed (OnnxImportError): MESSAGE`` -> ``MESSAGE``."""
    head, sep, tail = line.partition("): ")
    if sep and head.startswith("importing ONNX"):
        return tail
    return _PY_PREFIX.sub("", line)


def has_line(first_line: str, output: list[str]) -> bool:
    want = normalize(first_line)
    core = normalize(_core(first_line))
    return any(normalize(ln) == want or (core and core in normalize(ln)) for ln in output)


def _value_mismatch(line: str) -> bool:
    """IREE's mismatch report of a value, not of a result's metadata (its type or shape:
    then the values were not compared)."""
    return "[FAILED] result[" in line and "metadata is" not in line


def _signalled(returncode: int | None) -> bool:
    return returncode is not None and (returncode < 0 or returncode > 128)


def signalled(returncode: int | None) -> bool:
    """Whether a reproducer's exit status says a tool ended on a signal (a crash)."""
    return _signalled(returncode)


def stage_of(stage: str) -> str | None:
    """The reproducer's stage (import, compile or run) that a harness stage maps to."""
    return _STAGE_OF.get(str(stage))


def judge(spec: ReproSpec, ran: dict[str, Any]) -> dict[str, Any]:
    """{"reproduced": bool, "why": str, "stage", "returncode", "output"}: whether the run
    shows the spec's failure, and why not when it does not."""
    record = {k: ran.get(k) for k in ("stage", "returncode", "timed_out")}
    record["output"] = list(ran.get("output") or [])[:_OUTPUT_LIMIT]
    if ran.get("timed_out"):
        return {**record, "reproduced": False, "why": "the reproducer ran past its time limit"}
    stage, rc, output = ran["stage"], ran["returncode"], ran["output"]
    want_stage = "run" if spec.kind == "fail-numerics" else _STAGE_OF.get(spec.stage, spec.stage)
    if spec.kind == "timeout":
        return {
            **record,
            "reproduced": None,
            "why": "a timeout is the harness's time limit, which IREE's tools do not apply",
        }
    if rc == 0:
        return {
            **record,
            "reproduced": False,
            "why": "IREE's tools ran it without an error: " + _hint(spec),
        }
    if stage != want_stage:
        return {
            **record,
            "reproduced": False,
            "why": f"it failed at {stage}, not at {want_stage}: " + (output[0] if output else ""),
        }
    if spec.kind == "fail-numerics":
        if rc == 1 and any(_value_mismatch(ln) for ln in output):
            return {
                **record,
                "reproduced": True,
                "why": "iree-run-module reports the mismatch ([FAILED] result[K])",
            }
        why = f"iree-run-module exited {rc} without IREE's mismatch report"
        if (
            _signalled(rc)
            and has_float8(spec.expected)
            and any("OUT_OF_RANGE" in ln for ln in output)
        ):
            why += (
                ": it aborts (OUT_OF_RANGE) reporting a mismatch of a float8 output, which "
                "IREE's tools compare but cannot print (the folder's notes say how to see the values)"
            )
        return {**record, "reproduced": False, "why": why}
    if spec.kind == "crash":
        if _signalled(rc):
            return {**record, "reproduced": True, "why": f"it crashed at {stage} (exit {rc})"}
        return {
            **record,
            "reproduced": False,
            "why": f"it failed at {stage} with exit {rc}, not a crash",
        }
    if has_line(spec.first_line, output):
        return {**record, "reproduced": True, "why": f"the same first error line at {stage}"}
    return {
        **record,
        "reproduced": False,
        "why": f"it failed at {stage}, but with another first line: "
        + (output[0] if output else "(no output)"),
    }


def _hint(spec: ReproSpec) -> str:
    if spec.kind == "fail-numerics" and not spec.compares:
        return "the harness's checks are not in the reproducer (see the notes)"
    return "the failure needs what the harness adds (its batch module, its runtime path, a thread count)"


def dump_sources(folder: Path, tools: Path, timeout_s: float) -> dict[str, Any]:
    """Compiles the folder's program in place with its compile.flags (which name the
    dump folders of ``--sources``), so the dispatch sources, the executable benchmarks
    and the compilation phases land inside it; the module itself is not kept."""
    compiler = shutil.which("iree-compile", path=str(tools)) or "iree-compile"
    try:
        proc = _run_tool(
            [compiler, "@compile.flags", INPUT_MLIR, "-o", MODULE_FILE], tools, folder, timeout_s
        )
    except subprocess.TimeoutExpired:
        return {"returncode": None, "why": "the compile ran past its time limit"}
    finally:
        (folder / MODULE_FILE).unlink(missing_ok=True)
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    return {"returncode": proc.returncode, "output": lines[:_OUTPUT_LIMIT]}
