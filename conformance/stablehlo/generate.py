#!/usr/bin/env python3
"""Write the inputs and expected outputs of the bundled StableHLO corpus.

The sources are hand-written: ``cases/<name>.mlir`` (the program, entry ``func.func @main``),
``corpus.toml`` (description, reference, tolerances) and ``references.py`` (each case's
seeded inputs and numpy reference). This script computes the expected outputs, checks them
and the inputs against ``@main``'s signature, and writes ``cases/<name>.npz`` (``input_0``
..., ``expected_0`` ...). It never writes a program or ``corpus.toml``.

Expected outputs never come from IREE: the numpy reference in float64 (``numpy-float64``),
cast once to the result type ``@main`` declares, or the StableHLO reference interpreter
(``interpreter``).

Usage::

    python conformance/stablehlo/generate.py                      # (re)write every .npz
    python conformance/stablehlo/generate.py --check-interpreter  # + cross-check with the interpreter
    python conformance/stablehlo/generate.py --verify-iree        # + compile and run with IREE
    python conformance/stablehlo/generate.py --only add_f32 --no-write --verify-iree
    python conformance/stablehlo/generate.py --output-dir /tmp/npz  # write elsewhere, e.g. to compare

``--verify-iree`` runs each case through the suite's own pipeline on a target of
``conformance/targets.toml`` (default llvm-cpu) and compares with the expected values; IREE
never produces an expected value.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from references import REFERENCES, wrap_int  # beside this script

from iree_conformance.common.tomlio import load_toml
from iree_conformance.common.vocabulary import Status
from iree_conformance.frontends.mlir_types import numpy_dtype
from iree_conformance.frontends.stablehlo.interpreter import InterpreterError, run_interpreter
from iree_conformance.model.compare import Tolerance, compare_outputs

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
CORPUS_TOML = HERE / "corpus.toml"
TARGETS_TOML = HERE.parent / "targets.toml"

# npz files above this many bytes (uncompressed) are written with np.savez_compressed.
COMPRESS_ABOVE_BYTES = 256 * 1024

REFERENCE_NUMPY = "numpy-float64"
REFERENCE_INTERPRETER = "interpreter"


class CorpusError(ValueError):
    """corpus.toml, the programs in cases/ and references.py do not agree."""


@dataclass
class CorpusCase:
    """One case: its program, its table in corpus.toml, its inputs and expected outputs."""

    name: str
    mlir: str
    spec: dict[str, Any]
    inputs: list[np.ndarray]
    expected: list[np.ndarray] = field(default_factory=list)

    @property
    def reference(self) -> str:
        return self.spec.get("reference", REFERENCE_NUMPY)

    @property
    def tolerance(self) -> Tolerance:
        return Tolerance(self.spec.get("rtol"), self.spec.get("atol"))


def load_cases(cases_dir: Path = CASES_DIR, corpus_toml: Path = CORPUS_TOML) -> list[CorpusCase]:
    """Every case, in the order of references.py; errors when the three sources disagree."""
    index = load_toml(corpus_toml).get("cases", {})
    programs = {p.stem for p in cases_dir.glob("*.mlir")}
    problems = [
        f"{n}: in corpus.toml but has no cases/{n}.mlir" for n in sorted(set(index) - programs)
    ]
    problems += [
        f"{n}: cases/{n}.mlir has no [cases.{n}] in corpus.toml"
        for n in sorted(programs - set(index))
    ]
    problems += [
        f"{n}: in corpus.toml but not in references.py"
        for n in sorted(set(index) - set(REFERENCES))
    ]
    problems += [
        f"{n}: in references.py but not in corpus.toml"
        for n in sorted(set(REFERENCES) - set(index))
    ]
    for name, spec in sorted(index.items()):
        kind = spec.get("reference", REFERENCE_NUMPY)
        if kind not in (REFERENCE_NUMPY, REFERENCE_INTERPRETER):
            problems.append(f"{name}: unknown reference {kind!r}")
        elif kind == REFERENCE_NUMPY and name in REFERENCES and REFERENCES[name].compute is None:
            problems.append(
                f"{name}: reference is {REFERENCE_NUMPY} but references.py has no function"
            )
        if ("rtol" in spec or "atol" in spec) and not spec.get("tolerance_reason"):
            problems.append(f"{name}: a tolerance override needs a tolerance_reason")
    if problems:
        raise CorpusError("the corpus sources disagree:\n  " + "\n  ".join(problems))
    return [
        CorpusCase(
            name, (cases_dir / f"{name}.mlir").read_text(encoding="utf-8"), index[name], ref.inputs
        )
        for name, ref in REFERENCES.items()
    ]


# -- @main's signature ---------------------------------------------------------------------


def _split_types(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def main_signature(mlir: str) -> tuple[list[str], list[str]]:
    """(argument types, result types) of func.func @main, from the program text."""
    m = re.search(
        r"func\.func\s+(?:public\s+)?@main\((.*?)\)\s*->\s*(\(.*?\)|tensor<[^>]*>)\s*\{", mlir, re.S
    )
    if not m:
        raise ValueError("no func.func @main(...) -> ... { found")
    args = [a.split(":", 1)[1].strip() for a in _split_types(m.group(1))]
    return args, _split_types(m.group(2))


def parse_tensor_type(type_str: str) -> tuple[list[str], np.dtype]:
    """``tensor<2x?xf32>`` -> (["2", "?"], float32)."""
    m = re.fullmatch(r"tensor<((?:[0-9?]+x)*)([a-z0-9]+)>", type_str)
    dtype = numpy_dtype(m.group(2)) if m else None
    if m is None or dtype is None:
        raise ValueError(f"cannot read type {type_str!r}")
    return [d for d in m.group(1).split("x") if d], dtype


def _check_type(what: str, type_str: str, value: np.ndarray) -> None:
    dims, dtype = parse_tensor_type(type_str)
    if dtype != value.dtype:
        raise ValueError(f"{what}: {type_str} but the array is {value.dtype}")
    if len(dims) != value.ndim or any(
        d != "?" and int(d) != n for d, n in zip(dims, value.shape, strict=True)
    ):
        raise ValueError(f"{what}: {type_str} but the array has shape {value.shape}")


def check_signature(c: CorpusCase) -> None:
    """The inputs and expected outputs must match @main's declared types."""
    arg_types, result_types = main_signature(c.mlir)
    if len(arg_types) != len(c.inputs) or len(result_types) != len(c.expected):
        raise ValueError(
            f"{c.name}: @main has {len(arg_types)} args / {len(result_types)} results; "
            f"case has {len(c.inputs)} inputs / {len(c.expected)} outputs"
        )
    for i, (t, x) in enumerate(zip(arg_types, c.inputs, strict=True)):
        _check_type(f"{c.name} input_{i}", t, x)
    for i, (t, x) in enumerate(zip(result_types, c.expected, strict=True)):
        _check_type(f"{c.name} expected_{i}", t, x)
    is_dynamic = "?" in "".join(arg_types + result_types)
    if is_dynamic != bool(c.spec.get("dynamic", False)):
        raise ValueError(
            f"{c.name}: dynamic={c.spec.get('dynamic', False)} in corpus.toml but the signature says {is_dynamic}"
        )


# -- expected outputs ----------------------------------------------------------------------


def cast_output(value, dtype: np.dtype) -> np.ndarray:
    """The reference's value (float64, int64 or Python integers) as the declared result type."""
    arr = np.asarray(value)
    if dtype.kind in "iu" and arr.dtype == object:
        return wrap_int(arr, dtype)
    if dtype.kind in "iu":
        return (
            wrap_int(arr.astype(np.int64), dtype) if arr.dtype.kind in "iu" else arr.astype(dtype)
        )
    if dtype == np.bool_:
        return arr.astype(np.bool_)
    with np.errstate(over="ignore"):  # f64 -> f16 overflow to inf is the intended rounding
        return arr.astype(dtype)


def compute_expected(c: CorpusCase) -> list[np.ndarray]:
    dtypes = [parse_tensor_type(t)[1] for t in main_signature(c.mlir)[1]]
    if c.reference == REFERENCE_INTERPRETER:
        outs = run_interpreter(c.mlir, c.inputs, timeout=600)
    else:
        outs = REFERENCES[c.name].compute(*[np.copy(x) for x in c.inputs])
    if len(outs) != len(dtypes):
        raise ValueError(
            f"{c.name}: the reference gave {len(outs)} outputs, @main returns {len(dtypes)}"
        )
    return [np.array(cast_output(o, dt), order="C") for o, dt in zip(outs, dtypes, strict=True)]


# -- writing -------------------------------------------------------------------------------


def _npz_equal(path: Path, arrays: dict[str, np.ndarray]) -> bool:
    if not path.exists():
        return False
    try:
        with np.load(path) as old:
            if sorted(old.files) != sorted(arrays):
                return False
            for k, v in arrays.items():
                o = old[k]
                if o.dtype != v.dtype or o.shape != v.shape or o.tobytes() != v.tobytes():
                    return False
    except Exception:
        return False
    return True


def write_npz(c: CorpusCase, out_dir: Path) -> None:
    """cases/<name>.npz, rewritten only on a content change (zip files carry timestamps)."""
    arrays = {f"input_{i}": x for i, x in enumerate(c.inputs)}
    arrays.update({f"expected_{i}": x for i, x in enumerate(c.expected)})
    path = out_dir / f"{c.name}.npz"
    if _npz_equal(path, arrays):
        return
    total = sum(a.nbytes for a in arrays.values())
    (np.savez_compressed if total > COMPRESS_ABOVE_BYTES else np.savez)(path, **arrays)


# -- cross-checks --------------------------------------------------------------------------


def _mismatch(c: CorpusCase, actual: list[np.ndarray]) -> str | None:
    comparison = compare_outputs(actual, c.expected, c.tolerance)
    return None if comparison.ok else "; ".join(comparison.messages)


def check_interpreter(cases: list[CorpusCase], jobs: int, timeout: float) -> int:
    """Cross-check every case's expected outputs against the StableHLO interpreter."""
    print(f"Cross-checking {len(cases)} cases against the StableHLO reference interpreter ...")

    def one(c: CorpusCase) -> tuple[CorpusCase, str, str]:
        t0 = time.monotonic()
        try:
            outs = run_interpreter(c.mlir, c.inputs, timeout=timeout)
        except InterpreterError as e:
            return c, "unsupported" if e.unsupported_op else "error", e.reason
        msg = _mismatch(c, outs)
        if msg is None:
            return c, "confirmed", f"{time.monotonic() - t0:.1f}s"
        return c, "MISMATCH", msg

    counts: dict[str, int] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for c, status, detail in pool.map(one, cases):
            counts[status] = counts.get(status, 0) + 1
            note = (
                " (expected values are from the interpreter)"
                if c.reference == REFERENCE_INTERPRETER
                else ""
            )
            print(f"  {status:11s} {c.name}: {detail}{note}")
    print("interpreter cross-check: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if counts.get("MISMATCH", 0) else 0


def verify_iree(cases: list[CorpusCase], target_name: str) -> int:
    """Compile and run every case with IREE through the suite's pipeline and compare.

    IREE's results are never written anywhere; this only tells whether IREE accepts the
    program and agrees with the independent reference.
    """
    from iree_conformance.engine.attempt import Attempt
    from iree_conformance.engine.pipeline import run_case
    from iree_conformance.engine.worker.parent import WorkerClient
    from iree_conformance.model.cases import Case
    from iree_conformance.model.targets import load_targets, select_targets, unavailable_reason

    @dataclass
    class InMemoryCase(Case):
        inputs: list = field(default_factory=list)
        expected: list = field(default_factory=list)

        def input_sets(self) -> list[list[np.ndarray]]:
            return [self.inputs]

        def expected_sets(self, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
            return [self.expected]

    (target,) = select_targets(load_targets(TARGETS_TOML), [target_name])
    reason = unavailable_reason(target)
    if reason:
        print(f"IREE check: {reason}")
        return 1
    print(f"IREE check ({target.name}) of {len(cases)} cases ...")
    failures = 0
    worker = WorkerClient(store_dir=None)  # no store: always compile afresh
    try:
        for c in cases:
            case = InMemoryCase(
                case_id=f"stablehlo/{c.name}",
                suite="stablehlo",
                kind="mlir",
                source_path=CASES_DIR / f"{c.name}.mlir",
                source_bytes=c.mlir.encode(),
                entry_function="main",
                input_type="stablehlo",
                tolerance=c.tolerance,
                inputs=c.inputs,
                expected=c.expected,
            )
            outcome, _ = run_case(Attempt(case, target), worker)
            if outcome.status == Status.PASS:
                print(f"  ok           {c.name} ({outcome.duration:.1f}s)")
            else:
                failures += 1
                detail = outcome.diagnostics[0] if outcome.diagnostics else outcome.reason or ""
                label = f"{outcome.status}-{outcome.stage}".upper()  # e.g. FAIL-COMPARE
                print(f"  {label:12s} {c.name}: {detail}")
    finally:
        worker.close()
    print(f"IREE check: {len(cases) - failures} ok, {failures} failed")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="process only these cases")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--no-write", action="store_true", help="do not write any file")
    parser.add_argument(
        "--output-dir",
        type=Path,
        default=CASES_DIR,
        help="where the .npz files go (default: cases/)",
    )
    parser.add_argument(
        "--check-interpreter",
        action="store_true",
        help="cross-check every expected output against the StableHLO interpreter",
    )
    parser.add_argument(
        "--interpreter-timeout",
        type=float,
        default=300.0,
        help="per-case interpreter timeout in seconds (default 300)",
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="parallel interpreter processes"
    )
    parser.add_argument(
        "--verify-iree", action="store_true", help="compile and run each case with IREE and compare"
    )
    parser.add_argument(
        "--target", default="llvm-cpu", help="target of conformance/targets.toml for --verify-iree"
    )
    args = parser.parse_args(argv)

    try:
        cases = load_cases()
    except (CorpusError, ValueError) as e:
        print(f"generate.py: {e}", file=sys.stderr)
        return 2
    if args.list:
        for c in cases:
            print(f"{c.name:36s} {c.spec.get('description', '')}")
        return 0
    if args.only:
        unknown = set(args.only) - {c.name for c in cases}
        if unknown:
            parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c.name in args.only]

    for c in cases:
        c.expected = compute_expected(c)
        check_signature(c)

    if not args.no_write:
        out_dir = args.output_dir
        out_dir.mkdir(parents=True, exist_ok=True)
        for c in cases:
            write_npz(c, out_dir)
        if not args.only and out_dir.resolve() == CASES_DIR:
            for path in out_dir.glob("*.npz"):
                if path.stem not in REFERENCES:
                    path.unlink()
        print(f"wrote {len(cases)} .npz files to {out_dir}")

    rc = 0
    if args.check_interpreter:
        rc |= check_interpreter(cases, args.jobs, args.interpreter_timeout)
    if args.verify_iree:
        rc |= verify_iree(cases, args.target)
    return rc


if __name__ == "__main__":
    sys.exit(main())
