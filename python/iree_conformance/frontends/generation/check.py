"""Runs one generation check in a child process (``child.py``) with a time limit, and
gives what it found as a plain dict: ``stage``, ``status`` (pass, fail, error, crash,
timeout), ``diagnostics``, ``info`` and ``stage_times``. The caller never imports torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.frontends.generation.spec import GenerationSpec

DEFAULT_TIMEOUT_S = 900.0


def run_check(spec: GenerationSpec, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="iree-conformance-generation-") as tmp:
        out = Path(tmp)
        (out / "spec.json").write_text(spec.to_json(), encoding="utf-8", newline="\n")
        env = dict(os.environ, TRANSFORMERS_VERBOSITY="error", HF_HUB_OFFLINE="1")
        command = [sys.executable, "-m", "iree_conformance.frontends.generation.child"]
        try:
            proc = subprocess.run(
                [*command, str(out / "spec.json"), str(out)],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env=env,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return _stopped(out, Status.TIMEOUT, [f"the generation check ran past {timeout_s:g} s"])
        result_file = out / "result.json"
        if proc.returncode == 0 and result_file.is_file():
            result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
            result["repro"] = read_repro(out / "repro")
            return result
        tail = [line for line in proc.stderr.strip().splitlines() if line.strip()][-6:]
        return _stopped(
            out, Status.CRASH, [f"the check's process ended with status {proc.returncode}", *tail]
        )


def _stopped(out: Path, status: str, diagnostics: list[str]) -> dict[str, Any]:
    stage_file = out / "stage"
    stage = (
        stage_file.read_text(encoding="utf-8").strip() if stage_file.is_file() else Stage.PREPARE
    )
    return {
        "stage": stage,
        "status": status,
        "diagnostics": diagnostics,
        "info": {},
        "stage_times": {},
    }


def read_repro(folder: Path) -> dict[str, Any] | None:
    """The failing function's MLIR, the call's inputs and torch eager's outputs on them,
    as the child wrote them (None when nothing failed in IREE)."""
    record = folder / "repro.json"
    if not record.is_file():
        return None
    import numpy as np

    meta = json.loads(record.read_text(encoding="utf-8"))
    with np.load(folder / "arrays.npz", allow_pickle=False) as arrays:
        inputs = [arrays[f"input_{i}"] for i in range(meta["inputs"])]
        expected = [arrays[f"expected_{i}"] for i in range(meta["expected"])]
    return {
        "which": meta["function"],
        "mlir": (folder / "input.mlir").read_bytes(),
        "inputs": inputs,
        "expected": expected or None,
    }
