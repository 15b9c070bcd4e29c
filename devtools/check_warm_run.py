"""Check that a conformance run compiled nothing: every outcome that reached the compile
stage took its module (or cached failure) from the artifact store.

With --summary (devtools/act_local.py's summary of a ci.yml run) it also checks the wiring: the
artifact store was restored by an exact or prefix hit (--restored CLASS), every cache
save of the run was decided by `cache-tools plan`, and it takes the results JSON from the
run's artifact files (--artifact NAME, default results-*).

Reads a results JSON (`--report-json`), or a zip artifact holding one (act's artifact
server and GitHub both store uploads as zip archives), counts per outcome what its
`stage_times` record (`store`, `import`, `compile`) and prints the counts. Exit status 1
when any outcome imported or compiled, or when none came from the store (an empty or
skipped run proves nothing); 2 when the file cannot be read.

Used by .ci/run on the second of two ci.yml runs under act (devtools/act_local.py): the second
run restored the artifact store the first one saved.

Examples:
  python -m devtools.check_warm_run results-ubuntu-latest-py3.12.json
  python -m devtools.check_warm_run --summary .ci-cache/act-ci-2.json --restored iree-artifacts
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from ci._common import CIError, run_main
from devtools.actlocal.warm import count_stages


def read_results(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CIError(f"{path}: {exc.strerror or exc}") from None
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [n for n in archive.namelist() if n.endswith(".json")]
            if len(names) != 1:
                raise CIError(f"{path}: expected one .json in the archive, found {names}")
            data = archive.read(names[0])
    try:
        results = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CIError(f"{path}: not a results JSON ({exc})") from None
    if not isinstance(results, dict) or "outcomes" not in results:
        raise CIError(f"{path}: no 'outcomes' (not a results JSON)")
    return results


def check_summary(summary: dict[str, Any], restored: list[str]) -> list[str]:
    """Problems with a ci.yml run's cache wiring (empty when it is right)."""
    problems = []
    caches = summary.get("caches") or []
    for cls in restored:
        hits = [c for c in caches if c["action"] == "restore" and c["class"] == cls]
        if not any(c["result"] in ("exact", "prefix") for c in hits):
            problems.append(
                f"{cls}: not restored (restores: {[c['result'] for c in hits] or 'none'})"
            )
        else:
            print(f"{cls}: restored, {', '.join(c['result'] + ' ' + c['key'] for c in hits)}")
    planned = {(c["job"], c["class"]) for c in caches if c["action"] == "plan"}
    for c in caches:
        if c["action"] == "save" and (c["job"], c["class"]) not in planned:
            problems.append(f"{c['class']}: saved without a cache-tools plan decision ({c['key']})")
    for c in caches:
        if c["action"] == "plan":
            print(f"plan {c['job']} {c['class']}: {c['result']} ({c.get('reason', '')})")
    if not planned:
        problems.append("no cache-tools plan decision in the run")
    return problems


def results_from_summary(summary: dict[str, Any], pattern: str) -> Path:
    files = [Path(f) for f in summary.get("artifact_files") or []]
    matching = [f for f in files if any(fnmatch.fnmatch(part, pattern) for part in f.parts)]
    if len(matching) != 1:
        raise CIError(
            f"expected one artifact file matching {pattern!r}, found {[str(f) for f in matching]}"
        )
    return matching[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="check_warm_run.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", nargs="?", help="results JSON, or a zip artifact holding one")
    parser.add_argument("--summary", help="devtools/act_local.py's summary JSON of the run")
    parser.add_argument(
        "--artifact", default="results-*", help="with --summary: the results artifact's name"
    )
    parser.add_argument(
        "--restored",
        action="append",
        default=[],
        help="with --summary: a cache class that must have been restored (repeatable)",
    )
    args = parser.parse_args(argv)
    problems: list[str] = []
    if args.summary:
        try:
            summary = json.loads(Path(args.summary).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise CIError(f"{args.summary}: {exc}") from None
        problems += check_summary(summary, args.restored)
        results_path = (
            Path(args.results) if args.results else results_from_summary(summary, args.artifact)
        )
    elif args.results:
        results_path = Path(args.results)
    else:
        raise CIError("give a results JSON or --summary")
    counts = count_stages(read_results(results_path))
    print(f"{results_path}: {counts.describe()}")
    if counts.compiled_cases:
        shown = ", ".join(counts.compiled_cases[:20])
        problems.append(
            f"not warm: {len(counts.compiled_cases)} outcome(s) imported or compiled: {shown}"
        )
    elif not counts.warm:
        problems.append("not warm: no outcome came from the artifact store")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("warm: nothing was imported or compiled")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
