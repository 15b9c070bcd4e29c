#!/usr/bin/env python3
"""What ``--repro-dir`` costs a run (issue 42, item 6; docs/reproducers.md "Cost"): the same
selection on a warm store with and without ``--repro-dir D --repro-expected``.

    python benchmarks/repro_cost.py                         # -m onnx_ops --onnx-ops-sample 200
    python benchmarks/repro_cost.py --repeats 3 -- -m stablehlo

Runs ``pytest conformance -n 1 --offline`` once to fill a private store and once with
reproducers (their first verification; printed, not counted), then without and with
reproducers in the order A B B A (A B B A ... with ``--repeats``), each with a fresh
reproducer folder and this Python's IREE tools first on PATH, and prints each run's CPU
seconds (this process's children: pytest, its workers and the reproducers' verification)
and the ratio of the sums (with / without) against the 1.10 target. It also checks that only red and
expected-failure cases got a folder and an ``info.repro``: a green case gets nothing.
Exits 1 when the target is missed or a green case got a folder, 2 when a run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT / "python", ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from benchmarks.whole_job import load_outcomes, run_pytest  # noqa: E402

DEFAULT_SELECTION = ("-m", "onnx_ops", "--onnx-ops-sample", "200")
JOB = ("conformance", "-n", "1", "--offline")
#: Issue 42: the main job with --repro-dir for its reds costs at most 10 % more CPU.
TARGET = 1.10
GREEN = ("pass", "flaky", "skip")


def folders(repro_dir: Path) -> set[str]:
    """The case ids (target/case id) that got a reproducer folder."""
    return {
        record.parent.relative_to(repro_dir).as_posix() for record in repro_dir.rglob("repro.json")
    }


def green_with_repro(outcomes: list[dict[str, Any]], written: set[str]) -> list[str]:
    """Green cases that got a folder or an info.repro: there should be none."""
    found = []
    for o in outcomes:
        if o.get("verdict") not in GREEN:
            continue
        name = f"{o['target']}/{o['case_id']}"
        if name in written or (o.get("info") or {}).get("repro"):
            found.append(name)
    return found


def order(repeats: int) -> list[str]:
    """A B B A, repeated: neither side always runs first on a machine that warms up."""
    pattern = ("without", "with", "with", "without")
    return [pattern[i % 4] for i in range(2 * repeats)]


def tools_env() -> dict[str, str]:
    """The environment of the runs: IREE's tools of this Python first on PATH (the
    reproducers are verified with them), as the job's own venv has them."""
    env = dict(os.environ)
    here = Path(sys.executable).parent
    if shutil.which("iree-compile", path=str(here)):
        env["PATH"] = os.pathsep.join([str(here), env.get("PATH", "")])
    return env


def one_run(label: str, side: str, args: list[str], work: Path, i: int, env) -> dict[str, Any]:
    store, repro_dir, report = work / "store", work / f"repro-{i}", work / f"run-{i}.json"
    extra = ["--repro-dir", str(repro_dir), "--repro-expected"] if side == "with" else []
    run = run_pytest(label, [*args, *extra], store, report, env)
    outcomes = load_outcomes(report)
    run["side"] = side
    run["cases"] = len(outcomes)
    run["red_or_xfail"] = sum(o.get("verdict") not in GREEN for o in outcomes)
    if side == "with":
        notes = [(o.get("info") or {}).get("repro") or {} for o in outcomes]
        written = folders(repro_dir) if repro_dir.is_dir() else set()
        run["folders"] = len(written)
        run["verified"] = sum(n.get("reproduced") is not None for n in notes)
        run["reproduced"] = sum(bool(n.get("reproduced")) for n in notes)
        run["from_store"] = sum(bool(n.get("from_store")) for n in notes)
        run["green_with_repro"] = green_with_repro(outcomes, written)
    return run


def measure(selection: list[str], repeats: int, work: Path) -> dict[str, Any]:
    """Fills the store (not counted), makes the reproducers once (their verification runs
    the first time: reported, not counted), then the A B B A runs."""
    env = tools_env()
    args = [*JOB, *selection]
    warm_up = run_pytest("fill the store", args, work / "store", work / "fill.json", env)
    first = one_run("first reproducers", "with", args, work, 0, env)
    runs = [
        one_run(f"{side} ({i})", side, args, work, i, env)
        for i, side in enumerate(order(repeats), 1)
    ]
    return {
        "selection": selection,
        "warm_up": warm_up,
        "first": first,
        "runs": runs,
        "cpus": os.cpu_count(),
    }


def judge(figures: dict[str, Any]) -> tuple[float, bool, list[str]]:
    """(ratio of the CPU sums with / without, whether it meets TARGET, green cases that
    got a reproducer)."""
    runs = figures["runs"]
    cpu = {side: sum(r["cpu_s"] for r in runs if r["side"] == side) for side in ("with", "without")}
    ratio = cpu["with"] / max(cpu["without"], 1e-9)
    greens = sorted({g for r in runs for g in r.get("green_with_repro", [])})
    return ratio, ratio <= TARGET, greens


def _row(r: dict[str, Any]) -> str:
    return (
        f"| {r['label']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['cases']} | {r['red_or_xfail']} "
        f"| {r.get('folders', '-')} | {r.get('verified', '-')} ({r.get('from_store', '-')}) "
        f"| {r.get('reproduced', '-')} "
        f"| {r['load_before']} -> {r['load_after']} |"
    )


def format_figures(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"repro cost: pytest {' '.join([*JOB, *figures['selection']])} ({figures['cpus']} CPUs), warm store",
        "| run | wall s | CPU s | cases | red or xfail | folders | verified (from the store) | reproduced | load before -> after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(r) for r in [figures["first"], *figures["runs"]]]
    ratio, ok, greens = judge(figures)
    without = [r["cpu_s"] for r in figures["runs"] if r["side"] == "without"]
    first = figures["first"]
    ratio_first = first["cpu_s"] / max(sum(without) / max(len(without), 1), 1e-9)
    lines.append(
        f"the first reproducers ({first.get('verified', 0) - first.get('from_store', 0)} verified "
        f"now, {first.get('from_store', 0)} from the store) cost {ratio_first:.2f}x a run without"
    )
    unverified = [r["label"] for r in figures["runs"] if r.get("folders") and not r.get("verified")]
    if unverified:
        lines.append(
            f"WARNING: nothing was verified in {', '.join(unverified)}: IREE's tools not on PATH?"
        )
    lines.append(
        f"{'MET' if ok else 'MISSED'}: --repro-dir --repro-expected costs {ratio:.3f}x the CPU "
        f"of the same warm run without it, target {TARGET:.2f}x"
    )
    lines.append(
        "green cases with a reproducer: "
        + (", ".join(greens) if greens else "none (nothing is written or run for a green case)")
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs of each side (default 2)")
    parser.add_argument("--work-dir", type=Path, help="keep the store, results and folders here")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "selection", nargs="*", help=f"pytest selection (default: {' '.join(DEFAULT_SELECTION)})"
    )
    args = parser.parse_args(argv)
    selection = list(args.selection or DEFAULT_SELECTION)
    with tempfile.TemporaryDirectory(prefix="repro-cost-") as tmp:
        work = args.work_dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        figures = measure(selection, args.repeats, work)
    print("\n".join(format_figures(figures)))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8", newline="\n")
    if any(
        r["returncode"] not in (0, 1)
        for r in [figures["warm_up"], figures["first"], *figures["runs"]]
    ):
        return 2
    ratio, ok, greens = judge(figures)
    return 0 if ok and not greens else 1


if __name__ == "__main__":
    sys.exit(main())
