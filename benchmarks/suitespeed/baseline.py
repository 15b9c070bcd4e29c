"""suite_speed.py's baseline: each case the way the IREE test suites drive IREE (one
process per tool, .npy files, a numpy compare), compiled with the suite's exact flags."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.common.vocabulary import Stage, Status

from .sample import (
    CONFORMANCE,
    ONNX_PREFIX,
    STABLEHLO_PREFIX,
    _target,
    load_cases,
    onnx_data_root,
    onnx_index,
    stablehlo_index,
)


# ---------------------------------------------------------------------------
# Baseline: one process per tool, .npy files, numpy compare
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class BaselinePlan:
    case_id: str
    kind: str  # "onnx" | "mlir"
    source: str  # model.onnx or .mlir
    work_dir: str
    import_args: list[str]
    compile_flags: list[str]
    device: str
    function: str | None  # None: read from the imported MLIR
    data_sets: list[tuple[list[str], list[str]]]  # (input .npy files, expected .npy files)
    rtol: float | None
    atol: float | None


#: Executable suffix: the wheels' binaries and pip's console scripts are ``.exe`` on Windows.
EXE = ".exe" if sys.platform == "win32" else ""


def iree_tools(bin_dir: Path | None = None, native: bool = False) -> dict[str, str]:
    """The three tools. By default the commands that ``pip install iree-base-compiler
    iree-base-runtime`` puts on PATH (what the IREE test suites call): ``iree-compile``
    and ``iree-run-module`` there are Python scripts that start the native binary.
    ``native``: the native binaries inside the wheels, without that Python start."""
    tools = {}
    for key, name in (
        ("import", "iree-import-onnx"),
        ("compile", "iree-compile"),
        ("run", "iree-run-module"),
    ):
        candidates = [bin_dir / name] if bin_dir else []
        if native and key != "import":
            candidates += _native_tool_paths(name)
        candidates.append(Path(sys.executable).parent / (name + EXE))
        found = next((str(p) for p in candidates if p.is_file()), None) or shutil.which(name)
        if not found:
            raise FileNotFoundError(
                f"{name} not found (looked in {', '.join(map(str, candidates))} and PATH)"
            )
        tools[key] = found
    return tools


def _native_tool_paths(name: str) -> list[Path]:
    import importlib.util

    spec = importlib.util.find_spec("iree")
    bases = [Path(b) for b in (spec.submodule_search_locations or [])] if spec else []
    sub = {"iree-compile": ("compiler", "_mlir_libs"), "iree-run-module": ("_runtime_libs",)}[name]
    paths = [base.joinpath(*sub, name + EXE) for base in bases]
    if not any(p.is_file() for p in paths):
        raise FileNotFoundError(
            f"no native {name} in the installed IREE wheels ({', '.join(map(str, paths))})"
        )
    return paths


def _save_sets(
    case_dir: Path, sets: list[tuple[list[np.ndarray], list[np.ndarray]]]
) -> list[tuple[list[str], list[str]]]:
    out = []
    for n, (inputs, expected) in enumerate(sets):
        names: tuple[list[str], list[str]] = ([], [])
        for role, arrays, acc in (("input", inputs, names[0]), ("expected", expected, names[1])):
            for i, array in enumerate(arrays):
                path = case_dir / f"{role}_{n}_{i}.npy"
                np.save(path, np.asarray(array))
                acc.append(str(path))
        out.append(names)
    return out


def plan_baseline(case_ids: list[str], work_dir: Path) -> list[BaselinePlan]:
    """Writes each case's inputs and expected outputs as .npy files (not timed: the
    IREE test suites ship theirs) and the commands' arguments."""
    from iree_conformance.frontends.onnx.prepare import MIN_IREE_OPSET, default_opset
    from iree_conformance.frontends.onnx.values import load_data_set

    target = _target()
    # The suite's exact flags for each case (Target.case_flags: the target's, its kind's,
    # the input type and the ONNX operator tests' --iree-input-demote-f64-to-f32=false).
    suite_flags = {c.case_id: list(target.case_flags(c)) for c in load_cases(case_ids)}
    plans = []
    onnx_cases = (
        onnx_index(onnx_data_root()) if any(c.startswith(ONNX_PREFIX) for c in case_ids) else {}
    )
    shlo = stablehlo_index()
    for case_id in case_ids:
        # The hash keeps onnx-ops/test_elu and onnx-ops/test_ELU apart where case is folded.
        safe = re.sub(r"[^\w.-]", "_", case_id)
        case_dir = work_dir / f"{safe}-{hashlib.sha256(case_id.encode()).hexdigest()[:8]}"
        case_dir.mkdir(parents=True, exist_ok=True)
        if case_id.startswith(ONNX_PREFIX):
            import onnx

            c = onnx_cases[case_id]
            model = onnx.load(str(c.model_path), load_external_data=False)
            opset = default_opset(model)
            sets = [load_data_set(d, model) for d in c.data_set_dirs]
            plans.append(
                BaselinePlan(
                    case_id=case_id,
                    kind="onnx",
                    source=str(c.model_path),
                    work_dir=str(case_dir),
                    import_args=["--opset-version", str(MIN_IREE_OPSET)]
                    if opset is not None and opset < MIN_IREE_OPSET
                    else [],
                    compile_flags=suite_flags[case_id],
                    device=target.device_uri,
                    function=None,
                    data_sets=_save_sets(case_dir, sets),
                    rtol=c.rtol,
                    atol=c.atol,
                )
            )
        else:
            name = case_id[len(STABLEHLO_PREFIX) :]
            spec = shlo[case_id]
            with np.load(CONFORMANCE / "stablehlo" / "cases" / f"{name}.npz") as data:
                count = lambda prefix: sum(1 for k in data.files if k.startswith(prefix))  # noqa: E731
                inputs = [data[f"input_{i}"] for i in range(count("input_"))]
                expected = [data[f"expected_{i}"] for i in range(count("expected_"))]
            plans.append(
                BaselinePlan(
                    case_id=case_id,
                    kind="mlir",
                    source=str(CONFORMANCE / "stablehlo" / "cases" / f"{name}.mlir"),
                    work_dir=str(case_dir),
                    import_args=[],
                    compile_flags=suite_flags[case_id],
                    device=target.device_uri,
                    function="main",
                    data_sets=_save_sets(case_dir, [(inputs, expected)]),
                    rtol=spec.get("rtol"),
                    atol=spec.get("atol"),
                )
            )
    return plans


_FUNC = re.compile(r'func\.func\s+@("(?:[^"\\]|\\.)*"|[\w$.\-]+)\s*\(')


def entry_from_mlir(path: Path) -> str | None:
    """The first public function of an imported module (the ONNX graph's name)."""
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        if "func.func" in line and " private " not in line:
            m = _FUNC.search(line)
            if m:
                return m.group(1).strip('"')
    return None


def numpy_compare(
    actual: np.ndarray, expected: np.ndarray, rtol: float | None, atol: float | None
) -> str | None:
    """None when equal within tolerance; else what differs."""
    from iree_conformance.model.compare import DEFAULT_TOLERANCES, FALLBACK_TOLERANCE

    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)} != {list(expected.shape)}"
    if expected.dtype.kind in "fc":
        d_rtol, d_atol = DEFAULT_TOLERANCES.get(expected.dtype.name, FALLBACK_TOLERANCE)
        r = d_rtol if rtol is None else rtol
        a = d_atol if atol is None else atol
        if actual.dtype.kind not in "fc":
            return f"dtype {actual.dtype} != {expected.dtype}"
        if not np.allclose(actual, expected, rtol=r, atol=a, equal_nan=True):
            err = (
                np.nanmax(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
                if actual.size
                else 0.0
            )
            return f"values differ (max abs error {err:.3g}, rtol={r:g} atol={a:g})"
        return None
    if not np.array_equal(actual, expected):
        return "values differ"
    return None


class _StepFailed(Exception):
    def __init__(self, stage: str, message: str):
        super().__init__(message)
        self.stage = stage


def _tail(text: str, lines: int = 6) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(kept[:lines])


def run_baseline_case(plan: BaselinePlan, tools: dict[str, str]) -> dict[str, Any]:
    """One case the way the IREE test suites do it: three tools, files, numpy."""
    start = time.perf_counter()
    times: dict[str, float] = {}
    work = Path(plan.work_dir)

    def step(stage: str, cmd: list[str]) -> None:
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        times[stage] = times.get(stage, 0.0) + time.perf_counter() - t
        if proc.returncode != 0:
            raise _StepFailed(
                stage,
                f"{Path(cmd[0]).name} exited {proc.returncode}: {_tail(proc.stderr or proc.stdout)}",
            )

    status, stage, message = Status.PASS, Stage.COMPARE, ""
    try:
        if plan.kind == "onnx":
            mlir = work / "model.mlir"
            step("import", [tools["import"], plan.source, "-o", str(mlir), *plan.import_args])
        else:
            mlir = Path(plan.source)
        vmfb = work / "module.vmfb"
        step("compile", [tools["compile"], str(mlir), *plan.compile_flags, "-o", str(vmfb)])
        t = time.perf_counter()
        function = plan.function or entry_from_mlir(mlir)
        times["harness"] = time.perf_counter() - t
        for n, (inputs, expected) in enumerate(plan.data_sets):
            outputs = [work / f"actual_{n}_{k}.npy" for k in range(len(expected))]
            cmd = [tools["run"], f"--module={vmfb}", f"--device={plan.device}"]
            if function:
                cmd.append(f"--function={function}")
            cmd += [f"--input=@{p}" for p in inputs] + [f"--output=@{p}" for p in outputs]
            step("run", cmd)
            t = time.perf_counter()
            problems = []
            for k, (out, exp) in enumerate(zip(outputs, expected)):
                problem = numpy_compare(np.load(out), np.load(exp), plan.rtol, plan.atol)
                if problem:
                    problems.append(f"data set {n} output {k}: {problem}")
            times["compare"] = times.get("compare", 0.0) + time.perf_counter() - t
            if problems:
                raise _StepFailed("compare", "; ".join(problems[:4]))
    except _StepFailed as e:
        failed = Status.FAIL if e.stage == Stage.COMPARE else Status.ERROR
        status, stage, message = failed, Stage(e.stage), str(e)
    except Exception as e:  # noqa: BLE001 - a broken output file etc. is the case's error
        status, stage, message = Status.ERROR, Stage.COMPARE, f"{type(e).__name__}: {e}"
    return {
        "case_id": plan.case_id,
        "status": status,
        "stage": stage,
        "message": message,
        "stage_times": times,
        "duration": time.perf_counter() - start,
    }
