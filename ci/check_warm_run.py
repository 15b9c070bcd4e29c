"""Check that a conformance run compiled nothing: every outcome that reached the compile
stage took its module (or cached failure) from the artifact store.

Reads a results JSON (`--report-json`), or a zip artifact holding one (act's artifact
server and GitHub both store uploads as zip archives), counts per outcome what its
`stage_times` record (`store`, `import`, `compile`) and prints the counts. Exit status 1
when any outcome imported or compiled, or when none came from the store (an empty or
skipped run proves nothing); 2 when the file cannot be read.

Used by .ci/run on the second of two ci.yml runs under act (ci/act_local.py): the second
run restored the artifact store the first one saved.

Example:
  python ci/check_warm_run.py results-ubuntu-latest-py3.12.json
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CIError, run_main  # noqa: E402
from actlocal.warm import count_stages  # noqa: E402


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="check_warm_run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="results JSON, or a zip artifact holding one")
    args = parser.parse_args(argv)
    counts = count_stages(read_results(Path(args.results)))
    print(f"{args.results}: {counts.describe()}")
    if counts.warm:
        print("warm: nothing was imported or compiled")
        return 0
    if counts.compiled_cases:
        shown = ", ".join(counts.compiled_cases[:20])
        print(f"not warm: {len(counts.compiled_cases)} outcome(s) imported or compiled: {shown}")
    else:
        print("not warm: no outcome came from the artifact store")
    return 1


if __name__ == "__main__":
    sys.exit(run_main(main))
