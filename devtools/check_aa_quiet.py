"""Check that the figures are quiet on an unchanged commit and loud on a change (an A/A
check, issue 45; benchmarks/compare.md, "Is the pull-request view quiet?").

A selection (default: the bundled StableHLO corpus and the light ONNX models, 92 cases;
``--quick``: the issue's five StableHLO cases, as ``.ci/run`` runs it) runs with ``--benchmark``
on an empty artifact store (cold: everything compiles), then on the same store (warm:
nothing compiles), as a pull request's baseline comes from one run and its own figures
from a run on the restored store. Each side is timed a second time on the warm store, as
``ci run-shard``'s timing confirm does, and that second timing is folded in as
``confirm_runs`` by the same code (ci/_timing_confirm.py). Then:

  quiet    ``iree-conformance compare`` of the two sides (each timed twice, as CI's
           are), in either order, lists no time, memory or module-size change and exits 0;
           of the two single runs, no memory or module-size change (a time change there
           is printed: one run a side cannot tell a loaded machine from a change); the
           pull-request view made from them by CI's own commands (``ci merge-results``,
           ``ci diff-results``, ``ci pr-comment --render-only``) lists no case as slower
           or larger
  loud     a copy of the warm run with a 30 % slowdown injected into IREE's samples of one
           case (the one whose two timings agree best, so that its injection is not inside
           its own noise) and twice IREE's device memory injected into another: ``compare``
           exits 1 naming both, and the pull-request view lists the memory (its time
           changes must also leave the spread of the baseline's two timings, which on a
           loaded runner can be wider than 30 %: whether it listed the slowdown is printed)

Exit status 1 when a check fails (each failure is named), 2 on a run that did not pass.
Four runs of the selection: on 2 cores, quiet, 7 minutes for the default (cold 130 s, each
warm run 90 s), about a minute for ``--quick`` (benchmarks/compare.md has the figures).

Examples:
  python -m devtools.check_aa_quiet
  python -m devtools.check_aa_quiet --quick
  python -m devtools.check_aa_quiet --work-dir .ci-cache/aa-quiet -m stablehlo -k "sort_f32 or ..."
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ci import _timing_confirm
from ci._common import CIError, run_main

REPO = Path(__file__).resolve().parent.parent
#: The issue's selection: the bundled StableHLO corpus (XLA timed beside IREE on its static
#: cases) and the light ONNX models (onnxruntime beside IREE): 92 cases.
DEFAULT_MARKER = "stablehlo or onnx_models"
#: The issue's first five cases (``--quick``): a softmax of 100,000, a small MLP, a
#: reduction, a sort and two elementwise ops.
QUICK_SELECTION = (
    "seed_softmax_100000 or mlp_layer_relu or reduce_sum_random_f32 or sort_f32 or seed_cos_sin"
)
SLOWDOWN = 1.3
MEMORY_FACTOR = 2


def run_selection(args: argparse.Namespace, store: Path, report: Path) -> dict[str, Any]:
    """One run of the selection with --benchmark on ``store``; its results."""
    cmd = [sys.executable, "-m", "pytest", "conformance", "-p", "no:cacheprovider", "-q"]
    cmd += ["-m", args.marker, "-k", args.k, "--benchmark", "--offline", "-n", "0"]
    cmd += ["--target", args.target, "--store-dir", str(store), "--report-json", str(report)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-2000:]
        raise CIError(f"the run for {report.name} failed (exit {proc.returncode}):\n{tail}")
    results = json.loads(report.read_text(encoding="utf-8"))
    if not any(_figures(o) for o in results["outcomes"]):
        raise CIError(f"{report.name}: no case was timed: the selection proves nothing")
    return results


def _figures(outcome: dict[str, Any]) -> dict[str, Any] | None:
    bench = (outcome.get("metrics") or {}).get("benchmark")
    return bench if isinstance(bench, dict) and (bench.get("iree") or {}).get("samples_s") else None


def ci_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ci ...`` as a workflow runs it (PYTHONPATH: the source tree)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-m", "ci", *args], cwd=REPO, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise CIError(f"python -m ci {args[0]} failed (exit {proc.returncode}): {proc.stderr}")
    return proc


def compare(*files: Path, new_runs: int = 1) -> tuple[int, str]:
    """``iree-conformance compare`` (the installed CLI's entry, in this interpreter)."""
    cmd = [sys.executable, "-m", "iree_conformance.cli.main", "compare", *map(str, files)]
    cmd += ["--new-runs", str(new_runs)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise CIError(f"compare failed (exit {proc.returncode}): {proc.stderr}")
    return proc.returncode, proc.stdout


def pr_view(work: Path, name: str, baseline: Path, current: Path) -> tuple[list[dict], str]:
    """The pull-request view of current against baseline, by CI's commands: the diff's
    speed list and the comment's body."""
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    merged = {}
    for side, path in (("baseline", baseline), ("current", current)):
        merged[side] = folder / f"{side}-merged.json"
        ci_command("merge-results", str(path), "--output", str(merged[side]))
    diff = folder / "diff.json"
    ci_command(
        "diff-results",
        "--current",
        str(merged["current"]),
        "--baseline",
        str(merged["baseline"]),
        "--output",
        str(diff),
        "--markdown",
        str(folder / "diff.md"),
    )
    body = ci_command("pr-comment", "--diff", str(diff), "--render-only").stdout
    (folder / "comment.md").write_text(body, encoding="utf-8")
    return json.loads(diff.read_text(encoding="utf-8")).get("speed") or [], body


def with_confirm(results: dict[str, Any], confirm: dict[str, Any]) -> dict[str, Any]:
    """The results with the confirm run's timing folded in (ci run-shard's fold)."""
    folded = copy.deepcopy(results)
    _timing_confirm.fold(folded, confirm["outcomes"])
    return folded


def quietest_case(results: dict[str, Any]) -> str:
    """The timed case whose two timings (the run and its confirm) agree best, with at
    least 20 samples: an injected 30 % is then far outside its own noise."""
    best: tuple[float, str] | None = None
    for o in results["outcomes"]:
        bench = _figures(o)
        if bench is None or len(bench["iree"]["samples_s"]) < 20:
            continue
        runs = [bench, *(bench.get("confirm_runs") or [])]
        if len(runs) < 2:
            continue
        medians = [_median(_basis(r)) for r in runs]
        spread = abs(math.log(max(medians) / min(medians)))
        if best is None or spread < best[0]:
            best = (spread, str(o["case_id"]))
    if best is None:
        raise CIError("no case was timed twice with 20 samples: nothing to inject into")
    return best[1]


def spread_of(results: dict[str, Any], case_id: str) -> float:
    """How far apart the case's timings' medians are (0.1: 10 %)."""
    for o in results["outcomes"]:
        bench = _figures(o)
        if bench is not None and o["case_id"] == case_id:
            medians = [_median(_basis(r)) for r in [bench, *(bench.get("confirm_runs") or [])]]
            return max(medians) / min(medians) - 1
    return math.nan


def _basis(run: dict[str, Any]) -> list[float]:
    """What compare tests: the interleaved ratios IREE/reference, else IREE's seconds."""
    iree = run["iree"]["samples_s"]
    ref = (run.get("reference") or {}).get("samples_s")
    if ref and len(ref) == len(iree):
        return [a / b for a, b in zip(iree, ref)]
    return list(iree)


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def inject(results: dict[str, Any], slower: str, larger: str) -> dict[str, Any]:
    """A copy with IREE's samples of ``slower`` 30 % slower (in every timing run) and
    IREE's device memory of ``larger`` doubled."""
    out = copy.deepcopy(results)
    for o in out["outcomes"]:
        bench = _figures(o)
        if bench is None:
            continue
        if o["case_id"] == slower:
            for run in [bench, *(bench.get("confirm_runs") or [])]:
                run["iree"]["samples_s"] = [x * SLOWDOWN for x in run["iree"]["samples_s"]]
        if o["case_id"] == larger:
            allocated = bench["memory"]["allocated_bytes"]
            allocated["device"] = allocated["device"] * MEMORY_FACTOR
    return out


def most_device_memory(results: dict[str, Any], other_than: str) -> str:
    found = [
        ((bench["memory"].get("allocated_bytes") or {}).get("device") or 0, str(o["case_id"]))
        for o in results["outcomes"]
        if (bench := _figures(o)) is not None and o["case_id"] != other_than
    ]
    size, case = max(found, default=(0, ""))
    if size < 1024:
        raise CIError("no other timed case allocates 1 KiB of device memory: nothing to double")
    return case


def listed_kinds(text: str) -> list[str]:
    """compare's lines that list a change (under 'Significantly worse/better')."""
    lines, listing = [], False
    for line in text.splitlines():
        if line.startswith("Significantly "):
            listing = True
        elif not line.startswith(" ") and not line.startswith("- "):
            listing = False
        elif listing:
            lines.append(line.strip())
    return lines


def write(path: Path, results: dict[str, Any]) -> Path:
    _timing_confirm.write_results(path, results)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="check_aa_quiet.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--work-dir", default=".ci-cache/aa-quiet", help="emptied first")
    parser.add_argument(
        "-m", dest="marker", default=DEFAULT_MARKER, help=f"the suites (default {DEFAULT_MARKER!r})"
    )
    parser.add_argument("-k", default="", help="the cases (pytest -k; default: every case)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"the issue's five StableHLO cases only (-m stablehlo -k {QUICK_SELECTION!r})",
    )
    parser.add_argument(
        "--target", default="llvm-cpu", help="the target timed (default llvm-cpu, CI's smoke run's)"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.marker, args.k = "stablehlo", QUICK_SELECTION
    work = (REPO / args.work_dir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    store = work / "store"
    runs = {}
    for name in ("cold", "cold-confirm", "warm", "warm-confirm"):
        began = time.monotonic()
        runs[name] = run_selection(args, store, work / f"{name}.json")
        took = time.monotonic() - began
        print(f"{name}: {len(runs[name]['outcomes'])} case(s) in {took:.0f} s", flush=True)
    cold, warm = work / "cold.json", work / "warm.json"
    base = write(work / "baseline.json", with_confirm(runs["cold"], runs["cold-confirm"]))
    current = write(work / "current.json", with_confirm(runs["warm"], runs["warm-confirm"]))
    problems: list[str] = []

    # -- quiet: the same commit, cold then warm ------------------------------------------
    for first, second in ((base, current), (current, base)):  # two timings a side, as CI
        code, out = compare(first, second)
        listed = listed_kinds(out)
        print(f"compare {first.name} {second.name}: exit {code}, {len(listed)} change(s) listed")
        if code != 0 or listed:
            problems.append(f"compare {first.name} {second.name} (A/A): exit {code}, {listed}")
    for first, second in ((cold, warm), (warm, cold)):  # one run a side, as the user
        code, out = compare(first, second)
        listed = listed_kinds(out)
        memory = [line for line in listed if " memory " in line or " module " in line]
        print(f"compare {first.name} {second.name}: exit {code}, {len(listed)} change(s) listed")
        if memory:
            problems.append(f"compare {first.name} {second.name} (A/A) lists {memory}")
        elif listed:
            # One run a side cannot tell a case whose ratio a loaded machine doubled (IREE's
            # thread pool waiting for a descheduled worker) from a change (docs/speed.md).
            print(f"note: one run a side, time only: {listed}")
    speed, body = pr_view(work, "aa", base, current)
    print(f"pull-request view (A/A): {len(speed)} case(s) listed as slower or larger")
    if speed or "Significantly slower or larger" in body:
        problems.append(f"the A/A pull-request view lists {[e['change'] for e in speed]}")

    # -- loud: a 30 % slowdown and twice the device memory, injected ---------------------
    slower = quietest_case(runs_folded := json.loads(current.read_text(encoding="utf-8")))
    larger = most_device_memory(runs_folded, slower)
    print(f"injected: {slower} {SLOWDOWN - 1:.0%} slower, {larger} {MEMORY_FACTOR}x device memory")
    injected = write(work / "warm-injected.json", inject(runs["warm"], slower, larger))
    code, out = compare(warm, injected)
    regressions = [line for line in out.splitlines() if line.startswith("Regressions")]
    print(f"compare warm.json warm-injected.json: exit {code}; {' '.join(regressions)}")
    for case, kind in ((slower, "slower by"), (larger, "more device memory")):
        if not any(case in line and kind in line for line in out.splitlines()):
            problems.append(f"compare did not list {case} as {kind!r}")
    if code != 1 or not all(c in " ".join(regressions) for c in (slower, larger)):
        problems.append(f"compare exited {code}, not 1 naming both: {regressions}")
    injected_side = write(work / "current-injected.json", inject(runs_folded, slower, larger))
    speed, body = pr_view(work, "injected", current, injected_side)
    shown = {(e["case_id"], e["change"].split(" by ")[0]) for e in speed}
    print(f"pull-request view (injected): {sorted(shown)}")
    if (larger, "more device memory") not in shown or "Significantly slower or larger" not in body:
        problems.append(f"the pull-request view does not list {larger} as more device memory")
    if (slower, "slower") not in shown:
        # Two timings a side: a change must leave the baseline's two runs' spread
        # (report/speed.beyond_baseline), which a loaded runner can make wider than 30 %.
        print(
            f"note: the pull-request view does not list {slower} as slower: its two timings "
            f"differ by {spread_of(runs_folded, slower):.0%}, and a change must leave that "
            "spread (docs/speed.md); compare, one run a side, did"
        )

    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        return 1
    print("quiet on the same commit, cold then warm; both injected changes listed")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
