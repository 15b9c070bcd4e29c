"""Compile here, run there: self-contained bundles of compiled cases.

``pytest conformance --target cuda --compile-only --bundle DIR`` writes, for every case
that compiled, the .vmfb (named by its sha256), the inputs and expected outputs (npz,
compressed), tolerances and check pairs, plus the expectations that apply;
``iree-conformance run-bundle DIR --driver cuda`` runs them with only
iree-base-runtime and numpy, and writes the same results JSON as a normal run. A case
whose inputs are no verdict (``Case.unjudged_reason``) carries its reason instead of
expected values, and gets the suite's error at ``reference`` there too.

Layout::

    DIR/manifest.json      versions, flags, targets, one record per case
    DIR/manifest.json.sha256  the manifest's digest (bundles/manifest_check.py)
    DIR/modules/<sha256>.vmfb
    DIR/data/<key>.npz     input_<set>_<i>, expected_<set>_<i>
    DIR/cases/<key>.json   per-case fragments (pytest-xdist workers write these;
                           the controlling process merges them into manifest.json)
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import hashlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.bundles import manifest_check
from iree_conformance.common import errors
from iree_conformance.common.diagnostics import cap_outcome_diagnostics
from iree_conformance.common.dist_versions import dist_version
from iree_conformance.common.fsutil import atomic_write_bytes
from iree_conformance.common.timing import time_iree_call
from iree_conformance.common.vocabulary import CaseKey, Stage, Status
from iree_conformance.engine import benchmark
from iree_conformance.engine.after_run import RunJudging, after_run
from iree_conformance.engine.verdicts import judge
from iree_conformance.expectations.lookup import Expectations, ManifestEntry
from iree_conformance.frontends.mlir_types import numpy_dtype
from iree_conformance.model.compare import Check, Tolerance
from iree_conformance.model.jobs import CaseResult
from iree_conformance.model.outcome import Outcome

# 2: a case's function name is "entry_function" (schema 1 called it "entry").
# 3: "checks" holds the check sites that run-bundle's check module records (schema 2 held
#    (actual, expected) pairs of returned values).
# 4: a record of inputs that are no verdict holds "unjudged" (the reason) and no expected
#    values; run-bundle judges it as the suite does (model/unjudged.py).
#    (A record's optional "bf16" lists its arrays stored as their uint16 bits: a .npz reads
#    bfloat16 back as void. Older bundles lack it, and are read as before.)
# 5: manifest.json.sha256 beside the manifest; "source" and "expected" paths are relative
#    to the checkout that made the bundle (or the file's name), never absolute.
BUNDLE_SCHEMA = 5


BundleError = errors.BundleError


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BundleWriter:
    """Adds compiled cases to a bundle folder; safe for several processes at once."""

    def __init__(self, root: Path):
        self.root = Path(root)
        for sub in ("modules", "data", "cases"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    def add(self, case, target, result: CaseResult, expectations) -> None:
        if getattr(case, "bundle_unsupported", None):
            print(
                f"\niree-conformance: {case.case_id} not bundled: {case.bundle_unsupported}",
                file=sys.stderr,
            )
            return
        vmfb = result.vmfb
        assert vmfb is not None, "a bundle holds compile-only results"
        digest = _sha256(vmfb)
        module_path = self.root / "modules" / f"{digest}.vmfb"
        if not module_path.exists():
            atomic_write_bytes(module_path, vmfb, exists_ok=True)  # named by its sha256
        key = _sha256(str(CaseKey(target.name, case.case_id)).encode())[:24]
        input_sets = case.input_sets()
        arrays: dict[str, np.ndarray] = {}
        for s, inputs in enumerate(input_sets):
            for i, value in enumerate(inputs):
                arrays[f"input_{s}_{i}"] = np.asarray(value)
        record: dict[str, Any] = {
            "case_id": case.case_id,
            "suite": case.suite,
            "target": target.name,
            "module": f"modules/{digest}.vmfb",
            "module_sha256": digest,
            "entry_function": case.entry_function,
            "input_sets": len(input_sets),
            "info": {**case.outcome_info(), **result.info},  # as the pipeline's Outcome
            "source": _portable_source(case.source_location()),  # annotations point here
        }
        override = expectations.tolerance_for(case.case_id)
        tolerances = [
            override.merged_over(t) if override else t
            for t in case.set_tolerances(max(len(input_sets), 1))
        ]
        record["tolerances"] = [dataclasses.asdict(t) for t in tolerances]
        unjudged = case.unjudged_reason()
        if unjudged:  # no expected values: run-bundle judges the run as the suite does
            record["unjudged"] = unjudged
        elif result.check_sites is not None:
            record["checks"] = result.check_sites
        else:
            for s, expected in enumerate(case.expected_sets(input_sets)):
                for i, value in enumerate(expected):
                    arrays[f"expected_{s}_{i}"] = np.asarray(value)
        bf16 = sorted(k for k, a in arrays.items() if a.dtype.name == "bfloat16")
        if bf16:  # a .npz cannot type bfloat16 (it reads back as void): kept as its bits
            record["bf16"] = bf16
            arrays.update({k: arrays[k].view(np.uint16) for k in bf16})
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]  # numpy stubs type **kwds as bool
        data = buffer.getvalue()
        atomic_write_bytes(self.root / "data" / f"{key}.npz", data)
        record["data"] = f"data/{key}.npz"
        record["data_sha256"] = _sha256(data)
        listed = expectations.xfail.get(case.case_id)
        if listed is not None:
            record["expected"] = {
                "stage": list(listed.kinds) if listed.flaky else listed.kinds[0],
                "reason": listed.reason,
                # Outside the checkout: none, and run-bundle points at the bundle's manifest.
                "path": manifest_check.portable_path(listed.path, [Path.cwd()]),
                "line": listed.line,
            }
        atomic_write_bytes(
            self.root / "cases" / f"{key}.json", json.dumps(record, sort_keys=True).encode()
        )

    def finish(self, outcomes: list[dict[str, Any]], targets) -> Path:
        passed = {(o["target"], o["case_id"]) for o in outcomes if o["status"] == Status.PASS}
        fragments = [
            json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((self.root / "cases").glob("*.json"))
        ]
        # Fragments of earlier runs into the same folder are not part of this bundle.
        cases = [c for c in fragments if (c["target"], c["case_id"]) in passed]
        manifest = {
            "schema": BUNDLE_SCHEMA,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "iree_compiler": dist_version("iree-base-compiler"),
            "iree_runtime": dist_version("iree-base-runtime"),
            "targets": {
                t.name: {"compile_flags": list(t.compile_flags), "driver": t.driver}
                for t in targets
            },
            "not_bundled": sorted(
                f"{CaseKey.of(o)} ({o['status']} at {o['stage']})"
                for o in outcomes
                if o["status"] != Status.PASS
            ),
            "cases": sorted(cases, key=lambda c: (c["target"], c["case_id"])),
        }
        path = self.root / manifest_check.MANIFEST_NAME
        encoded = json.dumps(manifest, indent=1).encode()
        atomic_write_bytes(path, encoded)
        manifest_check.write_digest(self.root, encoded)
        size = sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())
        print(f"\niree-conformance: bundle {self.root}: {len(cases)} cases, {size / 1e6:.1f} MB")
        return path


def _portable_source(source: dict[str, Any] | None) -> dict[str, Any] | None:
    """A case's source location as a bundle records it: the path relative to the checkout
    (the working folder), where run-bundle's annotations find it again; a file outside
    the checkout keeps only its name (``file``), so the bundle names no folder of the
    machine that made it."""
    if not source or not source.get("path"):
        return source
    relative = manifest_check.portable_path(source["path"], [Path.cwd()])
    if relative is not None:
        return {**source, "path": relative}
    rest = {k: v for k, v in source.items() if k != "path"}
    return {**rest, "file": Path(source["path"]).name}


def load_manifest(root: Path) -> dict[str, Any]:
    """The bundle's manifest, after its schema, digest and records are checked
    (bundles/manifest_check.py); nothing it names has been opened yet."""
    root = Path(root)
    data = manifest_check.read_manifest_bytes(root)
    manifest = manifest_check.parse_manifest(root, data)
    if manifest.get("schema") != BUNDLE_SCHEMA:
        raise BundleError(
            f"{root / 'manifest.json'}: bundle schema {manifest.get('schema')!r}, but this iree-conformance reads schema "
            f"{BUNDLE_SCHEMA}; rebuild the bundle with this version (--compile-only --bundle)"
        )
    manifest_check.check_manifest(root, data, manifest)
    return manifest


_read_verified = manifest_check.read_verified


def _checks_from(
    record: dict[str, Any],
    arrays: Any,
    outputs_by_set: list[list[np.ndarray]],
    records: list[list[tuple[int, list[np.ndarray]]]],
) -> list[Check]:
    """The reference stage of a bundled case: its recorded check ops, or what ran paired
    with the expected values the bundle holds."""
    if "checks" in record:
        from iree_conformance.suites.check_pairs import checks_from_records

        return checks_from_records(record["checks"], records[0] if records else [])
    tolerances = [Tolerance(**t) for t in record["tolerances"]]
    checks = []
    for s, outputs in enumerate(outputs_by_set):
        count = sum(1 for k in arrays.files if k.startswith(f"expected_{s}_"))
        expected = [arrays[f"expected_{s}_{i}"] for i in range(count)]
        checks.append(Check(outputs, expected, tolerances[s]))
    return checks


class BundleArrays:
    """A bundled case's arrays (its .npz), its bfloat16 ones given back their type."""

    def __init__(self, npz: Any, bf16: list[str]):
        self._npz, self._bf16 = npz, set(bf16)
        self.files = npz.files

    def __getitem__(self, key: str) -> np.ndarray:
        value = self._npz[key]
        if key not in self._bf16:
            return value
        dtype = numpy_dtype("bf16")
        if dtype is None:
            raise BundleError(
                f"{key} is bfloat16, which numpy reads only with ml_dtypes: pip install ml_dtypes"
            )
        return value.view(dtype)


def bundle_expectations(root: Path, record: dict[str, Any]) -> Expectations:
    """The manifest entry the bundle carries for one case, judged like a normal run."""
    expectations = Expectations(record["target"])
    listed = record.get("expected")
    if listed:
        stages = tuple(listed["stage"]) if isinstance(listed["stage"], list) else (listed["stage"],)
        expectations.xfail[record["case_id"]] = ManifestEntry(
            stages,
            listed["reason"],
            Path(listed["path"]) if listed.get("path") else root / "manifest.json",
            listed.get("line"),
        )
    return expectations


def _run_record(
    executor: Any,
    record: dict[str, Any],
    vmfb: bytes,
    arrays: Any,
    driver: str,
    device: str | None,
    timing_runs: int,
    outcome: Outcome,
) -> RunJudging:
    """Loads and runs one bundled case on every input set, writing what happened into the
    Outcome; returns what the after-run steps need to judge it."""
    from iree_conformance.engine.worker.executor import StageError

    entry = record.get("entry_function")
    input_sets = []
    for s in range(record["input_sets"]):
        count = sum(1 for k in arrays.files if k.startswith(f"input_{s}_"))
        input_sets.append([arrays[f"input_{s}_{i}"] for i in range(count)])
    outputs: list[list[np.ndarray]] = []
    records: list[list[tuple[int, list[np.ndarray]]]] = []
    loaded: list[Any] = []
    try:
        loaded += executor.runtime.load(vmfb, driver, device, record.get("checks"))
        vm_module, context = loaded
        outcome.stage = Stage.RUN
        started = time.perf_counter()
        for inputs in input_sets:
            outputs.append(executor.run(vm_module, context, entry, inputs))
            if context.check_recorder is not None:
                records.append(context.check_recorder.take())
        outcome.stage_times["run"] = time.perf_counter() - started
    except StageError as e:
        outcome.status, outcome.stage, outcome.diagnostics = Status.ERROR, Stage(e.stage), e.lines
    except Exception as e:  # noqa: BLE001 - one broken case must not lose the others' results
        outcome.status, outcome.diagnostics = Status.ERROR, [f"{type(e).__name__}: {e}"]

    def timing() -> dict[str, Any] | None:
        if timing_runs <= 0:
            return None
        vm_module, context = loaded
        raw = time_iree_call(executor, vm_module, context, entry, input_sets[0], timing_runs)
        benchmark.attach_timing(outcome, raw, benchmark.BUNDLE_MISSING)  # samples, as the suite
        return outcome.metrics.get("timing")

    return RunJudging(
        checks=lambda: _checks_from(record, arrays, outputs, records),
        unjudged=record.get("unjudged"),
        timing=timing,
        source=record.get("source"),
    )


def run_bundle(
    root: Path,
    driver: str,
    report_json: Path,
    device: str | None = None,
    force: bool = False,
    timing_runs: int = 0,
) -> dict[str, int]:
    """Runs every case of the bundle; returns counts per verdict."""
    import iree.runtime as rt

    from iree_conformance.common.store import ArtifactStore
    from iree_conformance.engine.worker.executor import Executor
    from iree_conformance.report.annotations import annotate_results
    from iree_conformance.report.markdown import run_metadata, write_results

    root = Path(root)
    manifest = load_manifest(root)
    installed = dist_version("iree-base-runtime")
    if manifest.get("iree_compiler") != installed and not force:
        raise BundleError(
            f"bundle compiled with IREE {manifest.get('iree_compiler')} but iree-base-runtime {installed} is installed; "
            "install the matching runtime or pass --force"
        )
    drivers = rt.query_available_drivers()
    if driver not in drivers:
        raise BundleError(f"unknown HAL driver {driver!r}; this runtime has: {', '.join(drivers)}")
    for record in manifest["cases"]:  # verify everything before running anything
        _read_verified(root, record["module"], record["module_sha256"])
        _read_verified(root, record["data"], record["data_sha256"])
    bf16 = [r["case_id"] for r in manifest["cases"] if r.get("bf16")]
    if bf16 and numpy_dtype("bf16") is None:
        raise BundleError(
            f"{len(bf16)} bundled cases ({bf16[0]}, ...) hold bfloat16 arrays, which numpy "
            "reads only with ml_dtypes: pip install ml_dtypes"
        )
    executor = Executor(ArtifactStore(None), lambda: "")
    started = datetime.datetime.now(datetime.timezone.utc)
    outcomes: list[dict[str, Any]] = []
    counts: collections.Counter = collections.Counter()
    for record in manifest["cases"]:
        outcome = Outcome(
            record["case_id"],
            record["suite"],
            record["target"],
            stage=Stage.LOAD,
            info={"driver": driver, **record.get("info", {})},
        )
        start = time.perf_counter()
        vmfb = _read_verified(root, record["module"], record["module_sha256"])
        data = _read_verified(root, record["data"], record["data_sha256"])
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = BundleArrays(npz, record.get("bf16", []))
            judging = _run_record(
                executor, record, vmfb, arrays, driver, device, timing_runs, outcome
            )
            after_run(outcome, judging)  # the engine's after-run steps, as for a suite's run
        # A line too long for a console is cut, its full text kept in a file (the temp
        # folder's: a bundle may be read-only), as the pipeline does.
        cap_outcome_diagnostics(outcome, None)
        outcome.duration = time.perf_counter() - start
        judge(bundle_expectations(root, record), outcome).record(outcome)
        assert outcome.verdict is not None  # record() set it
        counts[outcome.verdict] += 1
        outcomes.append(outcome.to_json())
        print(
            f"{outcome.verdict.upper():5} {CaseKey.of(record)} ({outcome.duration:.2f} s)",
            flush=True,
        )
    meta = run_metadata(
        sorted(manifest.get("targets", {})), started, ["run-bundle", str(root), driver]
    )
    meta["bundle"] = {
        "iree_compiler": manifest.get("iree_compiler"),
        "driver": driver,
        "device": device,
    }
    write_results(Path(report_json), meta, outcomes)
    if os.environ.get("GITHUB_ACTIONS") == "true":  # the terminal already has the verdicts
        annotate_results({"metadata": meta, "outcomes": outcomes})
    return dict(counts)
