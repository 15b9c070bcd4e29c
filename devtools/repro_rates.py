"""Measure how many of the manifests' known failures `iree-conformance repro` reproduces with IREE's tools alone.

Picks a sample of the xfail entries of a target's manifest (conformance/expectations/
<target>.toml): --per N cases (spread over the sorted ids) of each suite family (onnx-ops,
stablehlo, jax, torch: run it with a Python that has torch and iree-turbine) and each kind (fail-import, fail-compile, crash, fail-run,
fail-numerics), runs `iree-conformance repro` on each (verified with the tools of
--tools DIR, e.g. a fresh venv holding only iree-base-compiler and iree-base-runtime),
and prints the rates per kind, with each case that did not reproduce and why.
stablehlo-ext cases need their external corpus (--stablehlo-dir) and are left out.

A verification run of the same files with the same tools is read from the store
(repro/verify_cache.py): give a --store-dir without its repro-run/ folder to verify
every folder afresh.

Examples:
  python -m devtools.repro_rates --tools /tmp/fresh-iree/bin --per 3
  python -m devtools.repro_rates --tools /tmp/fresh-iree/bin --per 40 --jobs 2 --keep folders
  python -m devtools.repro_rates --json rates.json
  /path/to/torch-venv/bin/python -m devtools.repro_rates --family torch --per 16
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KINDS = ("fail-import", "fail-compile", "crash", "fail-run", "fail-numerics")
FAMILIES = ("onnx-ops", "stablehlo", "jax", "torch")


def sample(manifest: Path, per: int, families: tuple[str, ...] = FAMILIES) -> list[tuple[str, str]]:
    """(case id, kind) of `per` entries of each family and kind, spread evenly over the
    sorted ids (not the first few, which share an operator)."""
    from iree_conformance.common.tomlio import load_toml

    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for case_id, spec in sorted(load_toml(manifest).get("xfail", {}).items()):
        kind, family = spec.get("expect"), case_id.split("/", 1)[0]
        if isinstance(kind, str) and kind in KINDS and family in families:
            groups[(family, kind)].append(case_id)
    return [
        (ids[i * len(ids) // min(per, len(ids))], kind)
        for (family, kind), ids in sorted(groups.items())
        for i in range(min(per, len(ids)))
    ]


def run_one(case_id: str, target: str, tools: str | None, store: str, work: Path) -> dict:
    out = work / case_id.replace("/", "__")
    cmd = [
        sys.executable,
        "-m",
        "iree_conformance.cli.main",
        "repro",
        case_id,
        "--target",
        target,
        "--store-dir",
        store,
        "-o",
        str(out),
        "--force",
    ]
    if tools:
        cmd += ["--tools", tools]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=REPO, check=False)
    record_path = out / "repro.json"
    if not record_path.is_file():
        lines = proc.stdout.strip().splitlines() + proc.stderr.strip().splitlines()
        said = [ln for ln in lines if ln.startswith("no reproducer written")]
        last = (said or lines or ["?"])[-1]
        return {
            "case_id": case_id,
            "reproduced": None,
            "why": f"no folder (exit {proc.returncode}): {last}",
        }
    record = json.loads(record_path.read_text(encoding="utf-8"))
    return {
        "case_id": case_id,
        "kind": record["kind"],
        "reproduced": record.get("reproduced"),
        "why": (record.get("verification") or {}).get("why", ""),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m devtools.repro_rates", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--target", default="llvm-cpu")
    p.add_argument("--per", type=int, default=3, help="cases per family and kind (default 3)")
    p.add_argument("--tools", help="verify with the IREE tools of this folder (default: PATH)")
    p.add_argument(
        "--store-dir", default=None, help="artifact store (default: a fresh temporary one)"
    )
    p.add_argument(
        "--family",
        action="append",
        choices=FAMILIES,
        help="only these suite families (repeatable; default: all)",
    )
    p.add_argument("--json", help="also write the results here")
    p.add_argument(
        "--keep", help="write the folders here and keep them (default: a temporary folder)"
    )
    p.add_argument(
        "--jobs", type=int, default=1, help="cases run at once (default 1; each is a process)"
    )
    args = p.parse_args(argv)
    manifest = REPO / "conformance" / "expectations" / f"{args.target}.toml"
    picked = sample(manifest, args.per, tuple(args.family or FAMILIES))
    results = []
    with tempfile.TemporaryDirectory(prefix="repro-rates-") as tmp:
        store = args.store_dir or str(Path(tmp) / "store")

        def one(picked_case: tuple[str, str]) -> dict:
            case_id, listed = picked_case
            found = run_one(case_id, args.target, args.tools, store, Path(args.keep or tmp))
            found["listed"] = listed
            print(
                f"{'yes' if found['reproduced'] else 'no ':3} {listed:13} {case_id}: {found['why'][:160]}",
                flush=True,
            )
            return found

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(one, picked))
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_kind[r["listed"]].append(r)
    print("\nkind           reproduced")
    for kind in KINDS:
        rows = by_kind.get(kind, [])
        if rows:
            print(f"{kind:14} {sum(bool(r['reproduced']) for r in rows)}/{len(rows)}")
    stages = [
        r for r in results if r["listed"] in ("fail-import", "fail-compile", "crash", "fail-run")
    ]
    numerics = by_kind.get("fail-numerics", [])
    for label, rows in (("import/compile/crash/run", stages), ("numerics", numerics)):
        if rows:
            ok = sum(bool(r["reproduced"]) for r in rows)
            print(f"{label}: {ok}/{len(rows)} = {100 * ok / len(rows):.0f} %")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
