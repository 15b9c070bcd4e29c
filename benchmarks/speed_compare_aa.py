"""How often ``iree-conformance compare`` cries wolf, and whether it sees a real slowdown.

    python benchmarks/speed_compare_aa.py            # 40 timed cases, 3 + 3 passes
    python benchmarks/speed_compare_aa.py --quick    # 12 cases, shorter sampling
    python benchmarks/speed_compare_aa.py --repeat 3 --json out.json   # 3 groups, pooled

A/A: the same build measured in several passes. Every case (at ten lengths: the seed's softmax compiled
by IREE llvm-cpu against numpy and against XLA through jax.jit, XLA's against numpy,
numpy's sort against numpy's softmax) is sampled interleaved with its reference in pass A,
then all of them again in the next pass, with the suite's calibrated sampling
(common/stats.py). Each pass is a results file, and they go through the comparison that
``iree-conformance compare`` runs (report/speed.compare_results): any case it flags is a
false alarm. By default three baseline passes (main's last nights) are followed by three
judged ones (``compare B1 B2 B3 N1 N2 N3 --new-runs 3``: the build judged, timed three times);
the figures with fewer runs are printed for contrast. Then, for each case in turn, the
judged passes' samples of that one case are multiplied by 1.2 (a 20 % slowdown) and the
comparison must flag it. Prints both rates; exits 1 when the A/A rate is over 1 %
or no injected slowdown is flagged.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from iree_conformance.cli.bench import iree_softmax, numpy_softmax, softmax_input
from iree_conformance.common.stats import Sampling, sample_interleaved
from iree_conformance.common.vocabulary import Status, Verdict
from iree_conformance.frontends.jax_export.xla_timing import xla_softmax
from iree_conformance.report.speed import compare_results

SIZES = (4, 16, 64, 256, 1024, 4096, 16384, 65536, 100_000, 262_144)


Pair = tuple[Callable[[], object], str, Callable[[], object]]  # (measured, ref name, ref)


def cases(sizes) -> dict[str, Pair]:
    """Each timed case: the measured callable and the reference it is interleaved with,
    as the suite times IREE against onnxruntime or XLA."""
    table: dict[str, Pair] = {}
    xla = xla_softmax()
    for n in sizes:
        x = softmax_input(n)
        call, _ = iree_softmax(n)

        def iree(call=call, x=x):
            return call(x)

        def numpy(x=x):
            return numpy_softmax(x)

        table[f"iree_softmax_{n}~numpy"] = (iree, "numpy", numpy)
        if xla is not None:
            jitted, put = xla
            x_dev = put(x)

            def xla_call(jitted=jitted, x_dev=x_dev):
                return jitted(x_dev)

            table[f"iree_softmax_{n}~xla"] = (iree, "xla", xla_call)
            table[f"xla_softmax_{n}~numpy"] = (xla_call, "numpy", numpy)
        table[f"numpy_sort_{n}~numpy"] = (lambda x=x: np.sort(x), "numpy", numpy)
    return table


def measure(table: dict[str, Pair], sampling: Sampling) -> list[dict]:
    """One pass: each case sampled on its own, interleaved with its reference, as the
    suite samples one case at a time."""
    outcomes = []
    for name, (fn, ref_name, ref) in table.items():
        taken = sample_interleaved({"iree": fn, "ref": ref}, sampling)
        outcomes.append(
            {
                "case_id": name,
                "target": "llvm-cpu",
                "suite": "aa",
                "status": Status.PASS,
                "verdict": Verdict.PASS,
                "metrics": {
                    "benchmark": {
                        "iree": {"samples_s": taken["iree"].values_s, "loops": taken["iree"].loops},
                        "reference": {
                            "name": ref_name,
                            "interleaved": True,
                            "samples_s": taken["ref"].values_s,
                            "loops": taken["ref"].loops,
                        },
                    }
                },
            }
        )
    return outcomes


def without_reference(outcomes: list[dict]) -> list[dict]:
    out = json.loads(json.dumps(outcomes))
    for o in out:
        del o["metrics"]["benchmark"]["reference"]
    return out


def injected(outcomes: list[dict], case_id: str, factor: float) -> list[dict]:
    out = json.loads(json.dumps(outcomes))
    for o in out:
        if o["case_id"] == case_id:
            iree = o["metrics"]["benchmark"]["iree"]
            iree["samples_s"] = [x * factor for x in iree["samples_s"]]
    return out


def _rate(count: int, total: int) -> str:
    return (
        f"{count} of {total} timed cases flagged ({count / total:.1%})" if total else "none timed"
    )


@dataclasses.dataclass
class Judged:
    """One A/A group's figures: alarms and timed cases of each comparison, injections."""

    counts: dict[str, tuple[int, int]]  # comparison -> (flagged, timed)
    false_alarms: list[str]
    detected: list[str]
    missed: list[str]


def judge(base: list[list[dict]], new: list[list[dict]]) -> Judged:
    counts: dict[str, tuple[int, int]] = {}
    for label, one in (("raw seconds", True), ("interleaved ratio", False)):
        strip = without_reference if one else (lambda x: x)
        single = compare_results(strip(base[0]), strip(new[0]))
        counts[f"one baseline run, one new run, {label}"] = (_alarms(single), single.timed)
    one_new = compare_results(base[0], new[0], more_base=base[1:])
    counts[f"{len(base)} baseline run(s), one new run"] = (_alarms(one_new), one_new.timed)
    aa = compare_results(base[0], new[0], more_base=base[1:], more_new=new[1:])
    judged = f"{len(base)} baseline run(s), {len(new)} new run(s) (compare --new-runs {len(new)})"
    counts[judged] = (_alarms(aa), aa.timed)
    false_alarms = [f"{c.key[1]}: {c.describe()}" for c in aa.changes if c.kind == "time"]
    detected: list[str] = []
    missed: list[str] = []
    for o in new[0]:
        slowed = [injected(run, o["case_id"], 1.2) for run in new]
        # The whole group judged, as compare judges it: its level is over every case.
        one_case = compare_results(base[0], slowed[0], more_base=base[1:], more_new=slowed[1:])
        hit = any(c.key[1] == o["case_id"] and c.worse for c in one_case.slowdowns)
        (detected if hit else missed).append(o["case_id"])
    return Judged(counts, false_alarms, detected, missed)


def _alarms(c) -> int:
    return len([x for x in c.changes if x.kind == "time"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 lengths, shorter sampling")
    parser.add_argument(
        "--base-runs", type=int, default=3, help="baseline passes of a group (default 3)"
    )
    parser.add_argument(
        "--new-runs",
        type=int,
        default=3,
        help="judged passes after the baseline ones (default 3: a change must show in each)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="independent A/A groups, one after another (default 1); the rates pool them",
    )
    parser.add_argument("--json", help="write every pass (as it is taken) and the rates here")
    parser.add_argument(
        "--from-json", help="judge the passes saved by an earlier --json run (no measuring)"
    )
    args = parser.parse_args(argv)
    if min(args.base_runs, args.new_runs, args.repeat) < 1:
        parser.error("--base-runs, --new-runs and --repeat must be 1 or more")
    group = args.base_runs + args.new_runs
    sizes = SIZES[:3] if args.quick else SIZES
    sampling = (
        Sampling(warmup_s=0.02, min_runs=10, min_time_s=0.1, max_time_s=2)
        if args.quick
        else Sampling(warmup_s=0.05, min_runs=20, min_time_s=0.3, max_time_s=5)
    )
    loads: list[float | None] = []
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        passes = saved["passes"]
        loads = saved.get("loads") or []
        if len(passes) < group * args.repeat:
            parser.error(
                f"{args.from_json} has {len(passes)} passes, fewer than --repeat {args.repeat} "
                f"x (--base-runs {args.base_runs} + --new-runs {args.new_runs})"
            )
    else:
        table = cases(sizes)
        passes = []
        for i in range(group * args.repeat):
            loads.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else None)
            print(f"pass {i + 1} of {group * args.repeat}", file=sys.stderr, flush=True)
            passes.append(measure(table, sampling))
            if args.json:  # kept as taken: an interrupted run loses nothing measured
                _save(Path(args.json), {"passes": passes, "loads": loads})
    groups = [
        judge(
            passes[g * group : g * group + args.base_runs],
            passes[g * group + args.base_runs : (g + 1) * group],
        )
        for g in range(args.repeat)
    ]
    if loads:
        known = [x for x in loads if x is not None]
        if known:
            print(f"load average (1 min) at each pass: {min(known):.1f} to {max(known):.1f}")
    for label in groups[0].counts:
        flagged = sum(j.counts[label][0] for j in groups)
        timed = sum(j.counts[label][1] for j in groups)
        print(f"A/A, {label}: {_rate(flagged, timed)}")
    judged_label = list(groups[0].counts)[-1]
    flagged = sum(j.counts[judged_label][0] for j in groups)
    timed = sum(j.counts[judged_label][1] for j in groups)
    rate = flagged / timed if timed else 1.0
    for g, j in enumerate(groups):
        for alarm in j.false_alarms:
            print(f"  false alarm (group {g + 1}): {alarm}")
    detected = [f"{g + 1}:{c}" for g, j in enumerate(groups) for c in j.detected]
    missed = [f"{g + 1}:{c}" for g, j in enumerate(groups) for c in j.missed]
    total = len(detected) + len(missed)
    print(
        f"injected 20 % slowdown, {judged_label}: flagged in {len(detected)} of {total} "
        f"cases ({len(detected) / total:.0%})"
    )
    if detected:
        print(f"  flagged (group:case): {', '.join(detected)}")
    if missed:
        print(f"  missed (the runs' own spread is over 20 %): {', '.join(missed)}")
    if args.json:
        _save(
            Path(args.json),
            {
                "passes": passes,
                "loads": loads,
                "aa_rate": rate,
                "detected": detected,
                "missed": missed,
            },
        )
    ok = rate <= 0.01 and bool(detected)
    print(("MET" if ok else "MISSED") + ": A/A <= 1 % and an injected 20 % slowdown flagged")
    return 0 if ok else 1


def _save(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data), encoding="utf-8", newline="\n")


if __name__ == "__main__":
    sys.exit(main())
