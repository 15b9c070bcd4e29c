"""StableHLO cases: the bundled corpus and self-checking external corpora."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from ..cases import Case, Check, NpzCase
from ..compare import Tolerance
from ..stablehlo_checks import list_test_functions
from ..tomlio import load_toml
from .check_pairs import checks_from_pairs

SUITE = "stablehlo"
BUNDLED_FLOOR = 40  # a broken corpus must not look green
# Part of the store key of rewritten modules: bump it when stablehlo_checks changes what
# the rewrite produces (the check pairs' metadata is cached with the module).
REWRITE_VERSION = 2


class CorpusError(ValueError):
    pass


def bundled_cases(corpus_dir: Path, reference: str = "shipped") -> list[Case]:
    """Cases of conformance/stablehlo: cases/<name>.mlir + <name>.npz, described in corpus.toml."""
    index = load_toml(corpus_dir / "corpus.toml").get("cases", {})
    cases: list[Case] = []
    for name in sorted(index):
        spec = index[name]
        mlir, data = corpus_dir / "cases" / f"{name}.mlir", corpus_dir / "cases" / f"{name}.npz"
        for path in (mlir, data):
            if not path.exists():
                raise CorpusError(f"{corpus_dir / 'corpus.toml'}: case {name!r} has no {path.name} in {path.parent}")
        case_cls = InterpreterCase if reference == "interpreter" else NpzCase
        cases.append(
            case_cls(
                case_id=f"stablehlo/{name}",
                suite=SUITE,
                kind="mlir",
                source_path=mlir,
                input_type="stablehlo",
                entry_function="main",
                tolerance=Tolerance(spec.get("rtol"), spec.get("atol")),
                data_path=data,
                reference_name=reference if reference == "interpreter" else spec.get("reference", "shipped"),
            )
        )
    if len(cases) < BUNDLED_FLOOR:
        raise CorpusError(f"{corpus_dir}: {len(cases)} bundled StableHLO cases, fewer than the floor of {BUNDLED_FLOOR}")
    return cases


@dataclasses.dataclass
class InterpreterCase(NpzCase):
    """A bundled case whose expected outputs come from the StableHLO reference interpreter."""

    def expected_sets(self, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        from ..interpreter import run_interpreter

        assert self.source_path is not None
        text = self.source_path.read_text(encoding="utf-8")
        return [run_interpreter(text, inputs) for inputs in input_sets]


@dataclasses.dataclass
class CheckCase(Case):
    """A function of a self-checking file; the rewritten function returns check pairs."""

    def checks(self, input_sets, output_sets, worker_result: dict[str, Any]) -> list[Check]:
        pairs = worker_result.get("checks")
        if not pairs:
            raise ValueError(f"the module reported no checks for function {self.entry_function!r}")
        return checks_from_pairs(pairs, output_sets[0])


def external_cases(root: Path) -> list[Case]:
    """Every test function of every .mlir file under root (recursively)."""
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"--stablehlo-dir {root}: not a directory")
    cases: list[Case] = []
    for path in sorted(root.rglob("*.mlir")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise CorpusError(f"{path}: cannot read: {e.strerror or e}") from None
        functions = list_test_functions(text)
        stem = path.relative_to(root).with_suffix("").as_posix()
        for func in functions:
            case_id = f"stablehlo-ext/{stem}" if functions == ["main"] else f"stablehlo-ext/{stem}:{func}"
            cases.append(
                CheckCase(
                    case_id=case_id,
                    suite=SUITE,
                    kind="mlir",
                    source_path=path,
                    entry_function=func,
                    input_type="stablehlo",
                    import_options={"rewrite_checks": True, "rewrite_version": REWRITE_VERSION},
                    reference_name="checks",
                )
            )
    if not cases:
        raise CorpusError(f"--stablehlo-dir {root}: no self-checking .mlir files found (check.expect_* ops)")
    return cases
