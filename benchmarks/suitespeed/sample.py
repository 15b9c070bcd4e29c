"""suite_speed.py's case sample: the fixed list of case ids, the suites' indexes, the
suites' own Case objects and target for them, and the variants and groups of those cases
that the in-process measurements use."""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

CONFORMANCE = ROOT / "conformance"
DEFAULT_CASES_FILE = ROOT / "benchmarks" / "suite_speed_cases.txt"
TARGET = "llvm-cpu"
ONNX_PREFIX, STABLEHLO_PREFIX = "onnx-ops/", "stablehlo/"


# ---------------------------------------------------------------------------
# The case sample
# ---------------------------------------------------------------------------
def hashed_order(ids: list[str]) -> list[str]:
    """A fixed, deterministic order that does not follow operator names."""
    return sorted(ids, key=lambda s: hashlib.sha256(s.encode()).hexdigest())


def read_case_list(path: Path) -> tuple[list[str], list[str]]:
    """(onnx ids, stablehlo ids) in file order; '#' starts a comment."""
    onnx_ids, shlo_ids = [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        case_id = line.split("#", 1)[0].strip()
        if not case_id:
            continue
        if case_id.startswith(ONNX_PREFIX):
            onnx_ids.append(case_id)
        elif case_id.startswith(STABLEHLO_PREFIX):
            shlo_ids.append(case_id)
        else:
            raise ValueError(f"{path}: unknown case id {case_id!r}")
    return onnx_ids, shlo_ids


def write_case_list(path: Path, onnx_ids: list[str], shlo_ids: list[str], note: str) -> None:
    lines = [
        "# The fixed sample of benchmarks/suite_speed.py: ONNX operator tests, then bundled",
        "# StableHLO cases, each in sha256(case id) order, kept when they pass both in the",
        "# suite and in the baseline (so both sides do the full work). --quick takes the",
        "# first 10 + 5. Regenerate with `python benchmarks/suite_speed.py --select`.",
        f"# {note}",
        *onnx_ids,
        *shlo_ids,
    ]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")


def pick(cases_file: Path, n_onnx: int, n_shlo: int) -> tuple[list[str], list[str]]:
    """The first `n_onnx` ONNX and `n_shlo` StableHLO ids of `cases_file`; past the
    verified list, more cases are taken in the same hashed order."""
    onnx_ids, shlo_ids = read_case_list(cases_file)
    if n_onnx > len(onnx_ids):  # more than the verified list: extend in hashed order
        known = set(onnx_ids)
        onnx_ids += [
            c
            for c in hashed_order(
                [cid for cid, c in onnx_index(onnx_data_root()).items() if not c.unsupported_reason]
            )
            if c not in known
        ]
    if n_shlo > len(shlo_ids):
        known = set(shlo_ids)
        shlo_ids += [c for c in hashed_order(list(stablehlo_index())) if c not in known]
    return onnx_ids[:n_onnx], shlo_ids[:n_shlo]


def onnx_data_root() -> Path:
    from iree_conformance.frontends.onnx import node_tests
    from iree_conformance.suites.onnx_ops import data_dir

    return node_tests.materialize(data_dir(None))


def onnx_index(root: Path) -> dict[str, Any]:
    from iree_conformance.frontends.onnx import node_tests

    return {c.case_id: c for c in node_tests.load_cases(root)}


def stablehlo_index() -> dict[str, dict[str, Any]]:
    from iree_conformance.common.tomlio import load_toml

    corpus = load_toml(CONFORMANCE / "stablehlo" / "corpus.toml").get("cases", {})
    return {f"{STABLEHLO_PREFIX}{name}": spec for name, spec in corpus.items()}


def load_cases(case_ids: list[str]) -> list[Any]:
    """The suites' own Case objects for case_ids, in that order."""
    from iree_conformance.suites.registry import collect
    from iree_conformance.suites.run_options import RunOptions

    options = RunOptions()  # the pytest defaults
    found: dict[str, Any] = {}
    if any(c.startswith(STABLEHLO_PREFIX) for c in case_ids):
        found.update({c.case_id: c for c in collect("stablehlo", CONFORMANCE, options)})
    if any(c.startswith(ONNX_PREFIX) for c in case_ids):
        found.update({c.case_id: c for c in collect("onnx_ops", CONFORMANCE, options)})
    missing = [c for c in case_ids if c not in found]
    if missing:
        raise KeyError(f"cases not found in the suites: {missing[:5]}")
    return [found[c] for c in case_ids]


def _target():
    from iree_conformance.model.targets import load_targets

    return load_targets(CONFORMANCE / "targets.toml")[TARGET]


def cold_variant(case: Any, nonce: str) -> Any:
    """The same case with source bytes that hash differently (so it compiles again)."""
    source = case.source_path.read_bytes()
    if case.kind == "onnx":
        import onnx

        model = onnx.ModelProto()
        model.ParseFromString(source)
        model.doc_string = f"suite_speed {nonce}"
        source = model.SerializeToString()
    else:
        source = source + f"\n// suite_speed {nonce}\n".encode()
    return dataclasses.replace(case, source_bytes=source)


def largest_group(cases: list[Any], kind: str | None = None) -> list[Any]:
    """The sample's cases that may share a module (one suite, kind and flag set), biggest
    group (of that source kind when given)."""
    from iree_conformance.engine.batching import group_key

    target = _target()
    groups: dict[tuple[str, ...], list[Any]] = {}
    for case in cases:
        if case.batchable and not case.skip_reason_for(target) and kind in (None, case.kind):
            groups.setdefault(group_key(case, target), []).append(case)
    return max(groups.values(), key=len) if groups else []
