"""Re-picking the case sample (``--select``): candidates in hashed order, kept when
they pass both in the suite and in the baseline, so both sides do all the work."""

from __future__ import annotations

import datetime
import math
from pathlib import Path

from iree_conformance.common.vocabulary import Status

from .baseline import plan_baseline
from .phases import log, run_baseline, run_ours
from .sample import hashed_order, onnx_data_root, onnx_index, stablehlo_index


def select_sample(
    n_onnx: int, n_shlo: int, workers: int, work_dir: Path, tools: dict[str, str], factor: float
) -> tuple[list[str], list[str], str]:
    """Candidates in hashed order; keep the first that pass in ours and in the baseline."""
    onnx_all = [cid for cid, c in onnx_index(onnx_data_root()).items() if not c.unsupported_reason]
    shlo_all = list(stablehlo_index())
    onnx_cand = hashed_order(onnx_all)[: math.ceil(n_onnx * factor)]
    shlo_cand = hashed_order(shlo_all)[: math.ceil(n_shlo * factor)]
    candidates = onnx_cand + shlo_cand
    sel_dir = work_dir / "select"
    sel_dir.mkdir(parents=True, exist_ok=True)
    ours = run_ours("select", candidates, sel_dir / "store", sel_dir, workers)
    ours_pass = {o["case_id"] for o in ours.outcomes if o["status"] == Status.PASS}
    plans = plan_baseline([c for c in candidates if c in ours_pass], sel_dir / "baseline")
    base = run_baseline(plans, workers, tools)
    both = {o["case_id"] for o in base.outcomes if o["status"] == Status.PASS}
    onnx_ids = [c for c in onnx_cand if c in both][:n_onnx]
    shlo_ids = [c for c in shlo_cand if c in both][:n_shlo]
    base_fail = sorted(c for c in ours_pass - both)
    note = (
        f"selected {datetime.date.today()}: {len(onnx_cand)} ONNX + {len(shlo_cand)} StableHLO candidates, "
        f"{len(ours_pass)} passed in the suite, {len(both)} also in the baseline"
        + (
            f" (baseline-only failures: {', '.join(base_fail[:6])}{' ...' if len(base_fail) > 6 else ''})"
            if base_fail
            else ""
        )
    )
    if len(onnx_ids) < n_onnx or len(shlo_ids) < n_shlo:
        log(
            f"only {len(onnx_ids)} ONNX and {len(shlo_ids)} StableHLO candidates passed; raise --select-factor"
        )
    return onnx_ids, shlo_ids, note
