"""The flake finder: run the same selection several times and list every case whose
result varied.

Runs alternate between two ways of shaking out nondeterminism: every case in a fresh
worker process (nothing shared between cases), and shared workers with the cases in a
shuffled order (order-dependent heap corruption, leaked state). Each run compiles afresh
in its own empty artifact store unless ``keep_store`` is set, so compiler flakes show
too. Retries are off inside the runs: the finder wants every raw result.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import ConformanceError
from iree_conformance.common.vocabulary import CaseKey, Status
from iree_conformance.model.outcome import Outcome


class FlakesError(ConformanceError):
    """A run of the finder could not produce results (bad pytest arguments, no cases)."""


@dataclasses.dataclass
class CaseResults:
    target: str
    case_id: str
    seen: list[str]  # observed kind per run: "pass", "fail-numerics", "crash", ...
    first_lines: dict[str, str]  # a diagnostic line per observed kind

    @property
    def varied(self) -> bool:
        return len(set(self.seen)) > 1

    def counts(self) -> dict[str, int]:
        return dict(collections.Counter(self.seen))


def run_modes(repeat: int) -> list[list[str]]:
    """The pytest arguments of each run: fresh workers, then shuffled shared workers, ..."""
    return [["--fresh-worker"] if i % 2 == 0 else ["--shuffle", str(i)] for i in range(repeat)]


def run_once(
    conformance_dir: Path, pytest_args: list[str], mode: list[str], report: Path, store: Path | None
) -> list[dict[str, Any]]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(conformance_dir),
        "-p",
        "no:cacheprovider",
        "-q",
        "--retries",
        "0",
        "--report-json",
        str(report),
        *mode,
        *pytest_args,
    ]
    command += ["--store-dir", str(store)] if store is not None else []
    proc = subprocess.run(
        command, capture_output=True, text=True, encoding="utf-8", errors="replace"
    )
    if proc.returncode not in (0, 1) or not report.exists():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise FlakesError(
            f"pytest exited {proc.returncode} without results ({' '.join(command)}):\n{tail}"
        )
    return json.loads(report.read_text(encoding="utf-8"))["outcomes"]


def collate(runs: list[list[dict[str, Any]]]) -> list[CaseResults]:
    """One CaseResults per (target, case) seen in every run, skips left out."""
    by_case: dict[tuple[str, str], CaseResults] = {}
    for outcomes in runs:
        for data in outcomes:
            outcome = Outcome.from_json(data)
            if outcome.status == Status.SKIP:
                continue
            key = (outcome.target, outcome.case_id)
            entry = by_case.setdefault(key, CaseResults(outcome.target, outcome.case_id, [], {}))
            entry.seen.append(outcome.observed)
            entry.first_lines.setdefault(
                outcome.observed, outcome.diagnostics[0] if outcome.diagnostics else ""
            )
    return sorted(by_case.values(), key=lambda c: (c.target, c.case_id))


def find_flakes(
    conformance_dir: Path,
    pytest_args: list[str],
    repeat: int,
    keep_store: bool = False,
    progress: Callable[[str], None] = lambda line: None,
) -> list[CaseResults]:
    if repeat < 2:
        raise FlakesError("--repeat must be 2 or more: one run cannot show a varying result")
    runs: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="iree-conformance-flakes-") as tmp:
        for i, mode in enumerate(run_modes(repeat)):
            store = None if keep_store else Path(tmp) / f"store{i}"
            progress(f"run {i + 1}/{repeat} ({' '.join(mode)})")
            runs.append(
                run_once(conformance_dir, pytest_args, mode, Path(tmp) / f"run{i}.json", store)
            )
    results = collate(runs)
    if not results:
        raise FlakesError("the selection ran no case (all skipped or deselected)")
    return results


def as_outcomes(results: list[CaseResults]) -> list[Outcome]:
    """Varied cases as Outcomes carrying every kind seen, for the manifest updater."""
    outcomes = []
    for r in results:
        if not r.varied:
            continue
        kinds = sorted(set(r.seen))
        last = Outcome.of_kind(r.case_id, "", r.target, kinds[0])
        last.attempts = [{"kind": k} for k in kinds[1:]]
        outcomes.append(last)
    return outcomes


def render(results: list[CaseResults], repeat: int) -> str:
    varied = [r for r in results if r.varied]
    lines = [f"{len(results)} cases, {repeat} runs each: {len(varied)} varied"]
    for r in varied:
        counts = ", ".join(f"{kind} {n}/{repeat}" for kind, n in sorted(r.counts().items()))
        lines.append(f"FLAKY {CaseKey(r.target, r.case_id)}: {counts}")
        for kind, line in sorted(r.first_lines.items()):
            if line:
                lines.append(f"    {kind}: {line[:200]}")
    return "\n".join(lines)


def to_json(results: list[CaseResults], repeat: int) -> dict[str, Any]:
    return {
        "repeat": repeat,
        "cases": len(results),
        "flaky": [
            {
                "target": r.target,
                "case_id": r.case_id,
                "counts": r.counts(),
                "seen": r.seen,
                "examples": r.first_lines,
            }
            for r in results
            if r.varied
        ],
    }
