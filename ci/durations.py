"""Turn results JSON files into the durations file that balances `pytest --shard I/N`.

The conformance plugin reads `--durations-file` as one JSON object mapping
"<target>:<case_id>" to seconds (python/iree_conformance/engine/sharding.py). This script builds
that object from results JSON (or merged) files: each case's `duration`, averaged over
the runs that have it. Durations differ by OS, so --per-os writes one file per OS
(durations-linux.json, ...) and each OS's shards use their own: every shard of one OS
must read the same file, or cases would be dropped or run twice.

--previous merges an older durations file under the new values, so that cases that did
not run this time (a failed shard) keep their last known duration.

Examples:
  python -m ci durations baseline/ --per-os durations/
  python -m ci durations merged.json --os linux --output durations-linux.json
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from ci._common import CIError, expand_json_inputs, load_json, normalize_os
from ci.merge_results import merge
from iree_conformance.common.vocabulary import CaseKey


def durations_by_os(merged: dict) -> dict[str, dict[str, float]]:
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for o in merged["outcomes"]:
        duration = o.get("duration")
        if not isinstance(duration, (int, float)) or isinstance(duration, bool) or duration < 0:
            continue
        sums[str(o["os"])][str(CaseKey.of(o))].append(float(duration))
    return {
        os_name: {key: round(sum(v) / len(v), 4) for key, v in sorted(cases.items())}
        for os_name, cases in sums.items()
    }


def with_previous(new: dict[str, float], previous: Path | None) -> dict[str, float]:
    if previous is None or not previous.is_file():
        return new
    old = load_json(previous)
    if not isinstance(old, dict):
        raise CIError(f"{previous}: a durations file must be a JSON object")
    merged = {str(k): float(v) for k, v in old.items() if isinstance(v, (int, float))}
    merged.update(new)
    return dict(sorted(merged.items()))


def write(path: Path, data: dict[str, float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(data, indent=0, sort_keys=True) + "\n", encoding="utf-8", newline="\n"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs", nargs="*", metavar="RESULTS", help="results JSON files or folders (may be none)"
    )
    out = parser.add_mutually_exclusive_group(required=True)
    out.add_argument(
        "--output", metavar="FILE", help="write the durations of --os (or of all OSes) here"
    )
    out.add_argument(
        "--per-os", metavar="DIR", help="write DIR/durations-<os>.json for linux, macos, windows"
    )
    parser.add_argument("--os", help="only this OS's runs (with --output)")
    parser.add_argument(
        "--previous",
        metavar="PATH",
        help="older durations kept for cases missing now (with --per-os: a folder of durations-<os>.json)",
    )


def run(args: argparse.Namespace) -> int:
    existing = [p for p in args.inputs if Path(p).exists()]
    paths = expand_json_inputs(existing) if existing else []
    by_os = durations_by_os(merge(paths)) if paths else {}
    previous = Path(args.previous) if args.previous else None
    if args.per_os:
        for os_name in ("linux", "macos", "windows"):
            prev = (
                previous / f"durations-{os_name}.json"
                if previous and previous.is_dir()
                else previous
            )
            data = with_previous(by_os.get(os_name, {}), prev)
            write(Path(args.per_os) / f"durations-{os_name}.json", data)
            print(f"{os_name}: {len(data)} case durations")
        return 0
    if args.os:
        data = by_os.get(normalize_os(args.os), {})
    else:
        data = {}
        for os_name in sorted(by_os):
            for key, value in by_os[os_name].items():
                data[key] = max(value, data.get(key, 0.0))
    data = with_previous(data, previous)
    write(Path(args.output), data)
    print(f"{len(data)} case durations -> {args.output}")
    return 0
