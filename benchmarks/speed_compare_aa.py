"""How often ``iree-conformance compare`` cries wolf, and whether it sees a real slowdown.

    python benchmarks/speed_compare_aa.py            # 40 timed cases, two passes
    python benchmarks/speed_compare_aa.py --quick    # 12 cases, shorter sampling
    python benchmarks/speed_compare_aa.py --json out.json

A/A: the same build measured twice. Every case (at ten lengths: the seed's softmax compiled
by IREE llvm-cpu against numpy and against XLA through jax.jit, XLA's against numpy,
numpy's sort against numpy's softmax) is sampled interleaved with its reference in pass A,
then all of them again in pass B, with the suite's calibrated sampling (common/stats.py). Each pass is written as a results file and the two
files go through the comparison that ``iree-conformance compare`` runs
(report/speed.compare_results): any case it flags is a false alarm. By default there are
three baseline passes before the judged one (``compare B1 B2 B3 NEW``), as CI has main's
last nights; the one-baseline figures are printed for contrast. Then, for each case in
turn, the judged pass's samples of that one case are multiplied by 1.2 (a 20 % slowdown)
and the comparison must flag it. Prints both rates; exits 1 when the A/A rate is over 1 %
or no injected slowdown is flagged.
"""

from __future__ import annotations

import argparse
import json
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 lengths, shorter sampling")
    parser.add_argument(
        "--base-runs", type=int, default=3, help="baseline passes before the judged one (default 3)"
    )
    parser.add_argument("--json", help="write every pass and the rates here")
    parser.add_argument(
        "--from-json", help="judge the passes saved by an earlier --json run (no measuring)"
    )
    args = parser.parse_args(argv)
    if args.base_runs < 1:
        parser.error("--base-runs must be 1 or more")
    sizes = SIZES[:3] if args.quick else SIZES
    sampling = (
        Sampling(warmup_s=0.02, min_runs=10, min_time_s=0.1, max_time_s=2)
        if args.quick
        else Sampling(warmup_s=0.05, min_runs=20, min_time_s=0.3, max_time_s=5)
    )
    if args.from_json:
        passes = json.loads(Path(args.from_json).read_text())["passes"]
    else:
        table = cases(sizes)
        passes = [measure(table, sampling) for _ in range(args.base_runs + 1)]
    base, more, new = passes[0], passes[1:-1], passes[-1]
    for label, one in (("raw seconds", True), ("interleaved ratio", False)):
        strip = without_reference if one else (lambda x: x)
        single = compare_results(strip(base), strip(new))
        alarms = [c for c in single.changes if c.kind == "time"]
        print(f"A/A, one baseline run, {label}: {_rate(len(alarms), single.timed)}")
    aa = compare_results(base, new, more_base=more)
    false_alarms = [c for c in aa.changes if c.kind == "time"]
    rate = len(false_alarms) / aa.timed
    print(
        f"A/A, {aa.base_runs} baseline runs (what compare does with several files): "
        f"{_rate(len(false_alarms), aa.timed)}"
    )
    for c in false_alarms:
        print(f"  false alarm: {c.key[1]}: {c.describe()}")
    detected: list[str] = []
    missed: list[str] = []
    for o in new:
        slowed = compare_results(base, injected(new, o["case_id"], 1.2), more_base=more)
        hit = any(c.key[1] == o["case_id"] and c.worse for c in slowed.slowdowns)
        (detected if hit else missed).append(o["case_id"])
    print(
        f"injected 20 % slowdown, {aa.base_runs} baseline runs: flagged in {len(detected)} of "
        f"{len(new)} cases ({len(detected) / len(new):.0%})"
    )
    if detected:
        print(f"  flagged: {', '.join(detected)}")
    if missed:
        print(f"  missed (the runs' own spread is over 20 %): {', '.join(missed)}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"passes": passes, "aa_rate": rate, "detected": detected, "missed": missed}),
            encoding="utf-8",
            newline="\n",
        )
    ok = rate <= 0.01 and bool(detected)
    print(("MET" if ok else "MISSED") + ": A/A <= 1 % and an injected 20 % slowdown flagged")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
