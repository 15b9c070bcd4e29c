"""Check that batched compilation changes no verdict: the same cases run with
``--batch-size 1`` (each case compiled alone) and with the default batch size, each on
an empty artifact store, must give every case the same status, stage and verdict.

The cases: the bundled StableHLO corpus, a fixed sample of ONNX operator tests
(``--onnx-ops-sample``) and, with ``--stablehlo-dir``, a fixed sample of an external
corpus of self-checking StableHLO files (the first N files in sha256(name) order, linked
into a temporary folder). Prints the counts, how the batched run placed the cases, the
CPU seconds of both runs, and every difference; exit status 1 when any case differs or
a run did not produce results, 0 otherwise.

Examples:
  python -m devtools.check_batch_equivalence --onnx-ops-sample 200 \\
      --stablehlo-dir ../shared/stablehlo-testdata --stablehlo-files 200
  python -m devtools.check_batch_equivalence --onnx-ops-sample 20 --batch-size 4 -- -k "add or abs"
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iree_conformance.model.results import VERDICT_FIELDS, diff_outcomes

ROOT = Path(__file__).resolve().parents[1]


def sample_files(folder: Path, count: int) -> list[Path]:
    """The first ``count`` .mlir files of folder in sha256(name) order: a fixed sample
    that does not follow the alphabet (which would be all one op)."""
    files = sorted(folder.glob("*.mlir"), key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())
    return files[:count]


def run(label: str, args: list[str], work: Path) -> tuple[dict[str, dict], float, float]:
    """Runs pytest; returns (outcomes by target:case id, wall seconds, CPU seconds)."""
    results = work / f"{label}.json"
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(ROOT / "conformance"),
        "-p",
        "no:cacheprovider",
        "-q",
        "--store-dir",
        str(work / f"store-{label}"),
        "--report-json",
        str(results),
        *args,
    ]
    print(f"== {label}: {' '.join(command[3:])}", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = proc.stdout.strip().splitlines()[-1:] or ["(no output)"]
    print(f"   {tail[0]}  [{wall:.0f} s wall, {cpu:.0f} s CPU]", flush=True)
    if not results.exists():
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        raise SystemExit(f"{label}: pytest wrote no results (exit {proc.returncode})")
    from iree_conformance.common.vocabulary import CaseKey  # the project's own env runs this script

    outcomes = json.loads(results.read_text(encoding="utf-8"))["outcomes"]
    return {str(CaseKey.of(o)): o for o in outcomes}, wall, cpu


def differences(alone: dict[str, dict], batched: dict[str, dict]) -> list[str]:
    """One line per case whose (status, stage, verdict) differs, or that one run lacks."""
    diff = diff_outcomes(alone, batched, VERDICT_FIELDS)
    lines = []
    for key in diff.changed_keys:
        if key in diff.only_before or key in diff.only_after:
            lines.append(
                f"{key}: only in the {'unbatched' if key in diff.only_before else 'batched'} run"
            )
            continue
        seen_a = [str(alone[key][f]) for f in VERDICT_FIELDS]
        seen_b = [str(batched[key][f]) for f in VERDICT_FIELDS]
        lines.append(f"{key}: alone {'/'.join(seen_a)}, batched {'/'.join(seen_b)}")
    return lines


def placement_counts(batched: dict[str, dict]) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for outcome in batched.values():
        batch = (outcome.get("info") or {}).get("batch")
        counts[
            "alone (not batchable, or bisected out)"
            if batch is None
            else "ran alone after its batch"
            if batch.get("ran_alone")
            else "in a batch"
        ] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--onnx-ops-sample", type=int, default=200, help="ONNX operator tests (default 200)"
    )
    parser.add_argument(
        "--stablehlo-dir",
        type=Path,
        help="a folder of self-checking StableHLO files (e.g. openxla/stablehlo's testdata)",
    )
    parser.add_argument(
        "--stablehlo-files", type=int, default=200, help="how many of its files (default 200)"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        help="the batched run's --batch-size (default: the plugin's default)",
    )
    parser.add_argument(
        "-n", "--workers", default="2", help="pytest-xdist workers per run (default 2)"
    )
    parser.add_argument(
        "--work-dir", type=Path, help="keep stores and results here (default: a temporary folder)"
    )
    parser.add_argument(
        "pytest_args", nargs="*", help="more pytest arguments for both runs (after --)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="batch-equivalence-") as tmp:
        work = args.work_dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        common = [
            "--offline",
            "-n",
            args.workers,
            "--retries",
            "0",
            "--onnx-ops-sample",
            str(args.onnx_ops_sample),
            "-m",
            "stablehlo or onnx_ops",
            *args.pytest_args,
        ]
        if args.stablehlo_dir is not None:
            if not args.stablehlo_dir.is_dir():
                parser.error(f"--stablehlo-dir {args.stablehlo_dir}: not a folder")
            chosen = work / "stablehlo-sample"
            chosen.mkdir(exist_ok=True)
            for path in sample_files(args.stablehlo_dir, args.stablehlo_files):
                link = chosen / path.name
                if not link.exists():
                    os.symlink(path.resolve(), link)
            common += ["--stablehlo-dir", str(chosen)]
        alone, wall_a, cpu_a = run("unbatched", [*common, "--batch-size", "1"], work)
        batched, wall_b, cpu_b = run(
            "batched",
            [*common, *(["--batch-size", str(args.batch_size)] if args.batch_size else [])],
            work,
        )
        print(
            f"cases: {len(alone)} unbatched, {len(batched)} batched; verdicts {dict(collections.Counter(o['verdict'] for o in alone.values()))}"
        )
        print(f"placement in the batched run: {dict(placement_counts(batched))}")
        print(
            f"CPU seconds: unbatched {cpu_a:.0f}, batched {cpu_b:.0f} ({cpu_a / max(cpu_b, 1e-9):.2f}x); wall {wall_a:.0f} s vs {wall_b:.0f} s"
        )
        diffs = differences(alone, batched)
        for line in diffs:
            print("DIFFERS", line)
        if not alone:
            print("no cases ran: nothing was compared")
            return 1
        print("identical verdicts" if not diffs else f"{len(diffs)} case(s) differ")
        return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
