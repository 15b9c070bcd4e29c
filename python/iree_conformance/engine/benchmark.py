"""The speed and memory figures of a case (``--benchmark``): which cases are timed, and
how the worker's timing becomes the outcome's ``metrics["benchmark"]``.

Timing never changes a verdict: it runs only after the case passed, and its figures go
next to the verdict. A case asked for figures that did not pass gets
``info["benchmark"]``: why it has none. report/speed.py reads the figures.
"""

from __future__ import annotations

from typing import Any

from iree_conformance.common.stats import summarize
from iree_conformance.common.vocabulary import Status
from iree_conformance.model.cases import Case
from iree_conformance.model.jobs import CaseResult
from iree_conformance.model.outcome import Outcome

#: Suites whose cases are timed by default: models, where users ask about speed (and the
#: JAX and torch suites' models: case ids under MODEL_CASE_PREFIXES).
MODEL_SUITES = frozenset({"onnx_models", "onnx_dir"})
MODEL_CASE_PREFIXES = ("jax/models/", "torch/models/")


def is_model(case: Case) -> bool:
    return case.suite in MODEL_SUITES or case.case_id.startswith(MODEL_CASE_PREFIXES)


#: The minimum count of samples with --benchmark (--timing-runs N sets another).
DEFAULT_MIN_RUNS = 20


def timing_runs_for(case: Case, timing_runs: int, benchmark: bool | None) -> int:
    """The minimum samples for this case: --timing-runs N, else DEFAULT_MIN_RUNS when
    --benchmark is on, or when it is left unset (None) and the case is a model; else 0."""
    if timing_runs:
        return timing_runs
    if benchmark or (benchmark is None and is_model(case)):
        return DEFAULT_MIN_RUNS
    return 0


def timing_budget_for(
    timing_runs: int, benchmark: bool | None, budget: float | None
) -> float | None:
    """The case's timing budget: ``budget`` (--timing-budget) bounds the timing a run does
    unasked (the models', by default); figures the user asked for (--benchmark,
    --timing-runs N, check-model --benchmark) are taken in full (None), so that every
    timed case gets what ``compare`` needs to judge it, its reference included."""
    return None if benchmark or timing_runs else budget


def timed_reference(case: Case, timing_runs: int) -> str | None:
    """What the case's frontend times beside IREE in the worker (Case.timed_reference)."""
    return case.timed_reference() if timing_runs else None


def note_untimed(outcome: Outcome, timing_runs: int) -> None:
    """Says why a case asked for figures has none; for a timed one, what the timing cost
    against the case's untimed time (the rest of its duration)."""
    bench = outcome.metrics.get("benchmark")
    if isinstance(bench, dict) and bench.get("cost_s") is not None:
        untimed = outcome.duration - bench["cost_s"]
        bench["untimed_s"] = untimed
        bench["cost_ratio"] = outcome.duration / untimed if untimed > 0 else None
        return
    if not timing_runs or bench is not None or "benchmark" in outcome.info:
        return
    if outcome.status == Status.PASS:
        why = "not timed: the case's worker returned no timing"
    elif outcome.status == Status.SKIP:
        why = "not timed: the case was skipped"
    else:
        why = f"not timed: the case did not pass ({outcome.status} at {outcome.stage})"
    outcome.info["benchmark"] = why


def figures(timing: dict[str, Any], outcome: Outcome, missing_reason: str) -> dict[str, Any] | None:
    """The results schema's figures from the worker's timing (None without samples)."""
    if not timing.get("iree_samples_s"):
        return None
    samples = list(timing["iree_samples_s"])
    bench: dict[str, Any] = {
        "iree": {
            "samples_s": samples,
            "loops": timing.get("iree_loops", 1),
            "summary": summarize(samples).as_dict(),
            "upload_median_s": timing.get("iree_upload_median_s"),
            **({"from_checked_run": True} if timing.get("iree_from_checked_run") else {}),
            **({"function": timing["iree_function"]} if timing.get("iree_function") else {}),
        },
        "sampling": timing.get("sampling"),
        "memory": timing.get("memory"),
        "load_s": outcome.stage_times.get("load"),
        "cost_s": timing.get("cost_s"),
    }
    if isinstance(timing.get("quiet"), dict):  # timed alone on the machine (quiet_lock)
        bench["quiet"] = timing["quiet"]
    compiled = outcome.info.get("compile_figures")
    if isinstance(compiled, dict):
        bench["compile"] = {**compiled, "wall_s": outcome.stage_times.get("compile")}
    elif "batch" in outcome.info:
        bench["compile"] = {"note": "compiled in a batch module: no per-case compile figures"}
    else:
        bench["compile"] = {"note": "the store's entry predates compile figures"}
    reference = timing.get("reference")
    if isinstance(reference, dict) and reference.get("samples_s"):
        ref_samples = list(reference["samples_s"])
        ref_summary = summarize(ref_samples)
        bench["reference"] = {**reference, "summary": ref_summary.as_dict()}
        bench["ratio"] = summarize(samples).median_s / ref_summary.median_s
    else:
        bench["reference_missing"] = timing.get("reference_missing") or missing_reason
    return bench


def _missing_reason(case: Case) -> str:
    return f"no timed reference for this case (its reference is {case.reference_name!r}): IREE's figures alone"


#: Why a bundled case's figures have no reference: run-bundle times IREE alone.
BUNDLE_MISSING = "run-bundle times IREE alone (the reference runs where the bundle was made)"


def attach_timing(outcome: Outcome, timing: dict[str, Any], missing_reason: str) -> None:
    """Puts a passing case's figures in the outcome (with the raw samples, which
    ``compare`` tests), and the old medians in ``metrics["timing"]`` (--timing-runs);
    a timing that failed leaves ``info["benchmark"]``: why there are no figures."""
    if timing.get("failed"):
        outcome.info["benchmark"] = f"not timed: the timing failed: {timing['failed']}"
        return
    if timing.get("skipped"):
        outcome.info["benchmark"] = f"not timed: {timing['skipped']}"
        return
    outcome.metrics["timing"] = {
        k: v
        for k, v in timing.items()
        if k in ("iree_median_s", "iree_upload_median_s", "runs", "onnxruntime_median_s")
    }
    bench = figures(timing, outcome, missing_reason)
    if bench is not None:
        outcome.metrics["benchmark"] = bench


def attach(case: Case, outcome: Outcome, result: CaseResult, timing_runs: int) -> None:
    """attach_timing for a case run by the pipeline."""
    if result.timing is not None:
        attach_timing(outcome, result.timing, _missing_reason(case))
