#!/usr/bin/env python3
"""What timing costs a model's case: the cost bound of the default timing of models
(``--timing-budget``, issue 32, docs/speed.md "Cost"), measured cold and warm.

    python benchmarks/timing_cost.py                    # the light and JAX models
    python benchmarks/timing_cost.py -k light_squeezenet --warm-runs 3

Runs ``pytest conformance`` (models are timed by default, within the budget; ``--benchmark``
would take every figure whatever it costs) on an empty artifact store (cold: every case
compiles, and every reference is set up for the first time on this machine), then again
on that store (warm: every module is read from it), then on a store that holds only the
set-up records of the first (cold again, as after an IREE upgrade), and prints,
case by case, the case's untimed seconds (its duration less the timing's cost), the
timing's cost, their ratio (the case's timed run against its untimed run), IREE's
sample count and whether the reference was timed or why not. The bound is 1 + the default budget (1.05x) with
the default ``--timing-budget 0.5``; a case whose untimed run is a few milliseconds
can pass it by the machine's jitter (a garbage collection, a busy core), so a case over
1.5x by less than ``--jitter-ms`` is printed as such and not counted; nor is a reference's
first set-up on the machine, whose cost could not be known before (marked ``first``).
Exits 1 when another case is over the bound by more than that, 0 otherwise; 2 when a run
could not be made.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from iree_conformance.common.timing import DEFAULT_TIMING_BUDGET  # noqa: E402

BOUND = 1 + DEFAULT_TIMING_BUDGET


def run(selection: list[str], store: Path, report: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider"]
    cmd += [*selection, "--store-dir", str(store), "--report-json", str(report)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode not in (0, 1) or not report.is_file():
        sys.exit(f"timing_cost: pytest exited {proc.returncode}:\n{proc.stdout[-2000:]}")
    return json.loads(report.read_text(encoding="utf-8"))["outcomes"]


def rows(outcomes: list[dict]) -> list[dict]:
    found = []
    for o in outcomes:
        bench = (o.get("metrics") or {}).get("benchmark")
        if not isinstance(bench, dict) or bench.get("cost_s") is None:
            continue
        ref = bench.get("reference") or {}
        found.append(
            {
                "case": o["case_id"],
                "untimed_s": bench["untimed_s"],
                "cost_s": bench["cost_s"],
                "ratio": bench.get("cost_ratio") or 0.0,
                "iree_n": len(bench["iree"]["samples_s"]),
                "checked": bool(bench["iree"].get("from_checked_run")),
                "first": bool(ref.get("first_setup")),
                "reference": f"{ref['name']} x{len(ref['samples_s'])}"
                + ("" if ref.get("interleaved") else " alone")
                if ref
                else "- " + str(bench.get("reference_missing", ""))[:60],
            }
        )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="light or models", help="pytest -k (default: %(default)s)")
    parser.add_argument("-m", default="onnx_models or jax", help="pytest -m (default: %(default)s)")
    parser.add_argument("--warm-runs", type=int, default=2, help="warm runs after the cold one")
    parser.add_argument("--jitter-ms", type=float, default=5.0, help="allowance over the bound")
    parser.add_argument("--json", type=Path, help="also write every row here")
    args = parser.parse_args(argv)
    selection = ["-m", args.m, "-k", args.k]
    table: list[tuple[str, dict]] = []
    with tempfile.TemporaryDirectory(prefix="timing-cost-") as tmp:
        store = Path(tmp) / "store"
        for i in range(1 + args.warm_runs):
            state = "cold" if i == 0 else f"warm {i}"
            print(f"running {state} ...", flush=True)
            table += [(state, r) for r in rows(run(selection, store, Path(tmp) / f"{i}.json"))]
        records = Path(tmp) / "records"
        if (store / "timing").is_dir():  # the set-up records alone: cold, set-ups known
            shutil.copytree(store / "timing", records / "timing")
        print("running cold, set-ups known ...", flush=True)
        table += [("cold+", r) for r in rows(run(selection, records, Path(tmp) / "known.json"))]
    if not table:
        print("no timed case in the selection")
        return 2
    print(
        f"\n{'store':7} {'case':44} {'untimed':>9} {'timing':>9} {'ratio':>6} {'n':>5}  reference"
    )
    over = jitter = first = 0
    for state, r in table:
        excess_s = r["cost_s"] + r["untimed_s"] - BOUND * r["untimed_s"]
        mark = ""
        if r["ratio"] > BOUND:
            if r["first"]:
                first, mark = first + 1, f"  over by {excess_s * 1000:.1f} ms (first set-up)"
            elif excess_s * 1000 <= args.jitter_ms:
                jitter, mark = jitter + 1, f"  over by {excess_s * 1000:.1f} ms (jitter)"
            else:
                over, mark = over + 1, f"  OVER by {excess_s * 1000:.1f} ms"
        n = f"{r['iree_n']}{'c' if r['checked'] else ''}"
        print(
            f"{state:7} {r['case'][-44:]:44} {r['untimed_s']:9.3f} {r['cost_s']:9.3f} "
            f"{r['ratio']:6.2f} {n:>5}  {r['reference']}{mark}"
        )
    for state in dict.fromkeys(s for s, _ in table):
        ratios = sorted(r["ratio"] for s, r in table if s == state)
        print(
            f"{state}: {len(ratios)} cases, median {ratios[len(ratios) // 2]:.2f}x, max {ratios[-1]:.2f}x"
        )
    print(
        f"bound {BOUND}x: {over} case(s) over it; {jitter} over it by under {args.jitter_ms:g} ms, "
        f"{first} by a reference's first set-up (n: IREE's samples; c: its one sample is the "
        "checked run; cold+: an empty store but for the set-up records)"
    )
    if args.json:
        args.json.write_text(
            json.dumps([{"store": s, **r} for s, r in table], indent=1), newline="\n"
        )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
