"""StableHLO cases: the bundled corpus, and external corpora (``stablehlo_files``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from iree_conformance.common.tomlio import load_toml
from iree_conformance.model.cases import Case, NpzCase
from iree_conformance.model.compare import Tolerance
from iree_conformance.suites.base import SuiteContext, SuiteOption
from iree_conformance.suites.stablehlo_files import CheckCase, CorpusError, LitCase, external_cases  # noqa: F401 - the suite's API

SUITE = "stablehlo"
BUNDLED_FLOOR = 40  # a broken corpus must not look green


def bundled_cases(corpus_dir: Path, reference: str = "shipped") -> list[Case]:
    """Cases of conformance/stablehlo: cases/<name>.mlir + <name>.npz, described in corpus.toml."""
    index = load_toml(corpus_dir / "corpus.toml").get("cases", {})
    cases: list[Case] = []
    for name in sorted(index):
        spec = index[name]
        mlir, data = corpus_dir / "cases" / f"{name}.mlir", corpus_dir / "cases" / f"{name}.npz"
        for path in (mlir, data):
            if not path.exists():
                raise CorpusError(
                    f"{corpus_dir / 'corpus.toml'}: case {name!r} has no {path.name} in {path.parent}"
                )
        case_cls = InterpreterCase if reference == "interpreter" else BundledCase
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
                reference_name=reference
                if reference == "interpreter"
                else spec.get("reference", "shipped"),
            )
        )
    if len(cases) < BUNDLED_FLOOR:
        raise CorpusError(
            f"{corpus_dir}: {len(cases)} bundled StableHLO cases, fewer than the floor of {BUNDLED_FLOOR}; "
            "restore conformance/stablehlo from git or regenerate it (python conformance/stablehlo/generate.py)"
        )
    return cases


@dataclasses.dataclass
class BundledCase(NpzCase):
    """A bundled case: its .mlir + .npz; XLA on the same file is timed beside IREE."""

    def timed_reference(self) -> str | None:
        """Its .mlir file (frontends/jax_export/xla_timing.stablehlo_reference)."""
        return str(self.source_path) if self.source_path is not None else None

    def bisect(self, run_candidate) -> str:
        """The first op of @main whose result diverges from the StableHLO interpreter
        (``--bisect-numerics``; frontends/stablehlo/divergence.py)."""
        from iree_conformance.frontends.stablehlo.divergence import bisect_stablehlo

        assert self.source_path is not None
        report = bisect_stablehlo(
            self.source_path.read_text(encoding="utf-8"),
            self.input_sets()[-1],
            run_candidate,
            rtol=self.tolerance.rtol,  # None: the dtype's default, as compared
            atol=self.tolerance.atol,
            entry=self.entry_function or "main",
        )
        return report.summary()


@dataclasses.dataclass
class InterpreterCase(BundledCase):
    """A bundled case whose expected outputs come from the StableHLO reference interpreter."""

    def expected_sets(self, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        from iree_conformance.frontends.stablehlo.interpreter import run_interpreter

        assert self.source_path is not None
        text = self.source_path.read_text(encoding="utf-8")
        return [run_interpreter(text, inputs) for inputs in input_sets]


class StablehloSuite:
    """StableHLO programs: the bundled corpus and any --stablehlo-dir corpus."""

    name = SUITE
    description = "StableHLO programs (bundled corpus and --stablehlo-dir corpora)"
    case_prefix = ("stablehlo/", "stablehlo-ext/")
    floor = BUNDLED_FLOOR
    options = (
        SuiteOption(
            "--stablehlo-dir",
            "also run every .mlir test file under PATH: check ops or lit RUN/FileCheck lines (repeatable)",
            {"action": "append", "default": [], "metavar": "PATH", "type": Path},
        ),
        SuiteOption(
            "--reference",
            "bundled StableHLO expected values: shipped (default) or recomputed by the StableHLO reference interpreter",
            {"choices": ["shipped", "interpreter"], "default": "shipped"},
        ),
    )

    def collect(self, context: SuiteContext) -> list[Case]:
        values = context.values
        cases = bundled_cases(context.conformance_dir / "stablehlo", values["reference"])
        for root in values["stablehlo_dir"] or ():
            cases += external_cases(Path(root))
        return cases
