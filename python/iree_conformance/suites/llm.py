"""The ``llm`` suite: decoder-only language models generating tokens on IREE.

Each case is an architecture built from a transformers config listed in
``conformance/llm/architectures.toml`` (a data file: no code runs from it), with seeded
random weights. The case runs IREE itself (``Case.run_itself``): the generation check
(``frontends/generation``) exports a prefill and a decode step with the KV cache passed in
and returned, compiles both once, decodes greedily on IREE and compares the tokens and every
step's logits with transformers' own ``generate``. Without torch, transformers or
iree-turbine the suite is one skip case that says what to install.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from typing import Any

from iree_conformance.common import errors
from iree_conformance.common.tomlio import TomlError, load_toml
from iree_conformance.common.vocabulary import Stage, Status
from iree_conformance.engine.worker.build_identity import build_identity
from iree_conformance.frontends.generation.check import run_check
from iree_conformance.frontends.generation.spec import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    DEFAULT_TOKENS,
    GenerationSpec,
)
from iree_conformance.model.cases import Case, Check, ChecksFailed
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.jobs import CaseResult
from iree_conformance.suites.base import SuiteContext, SuiteOption

SUITE = "llm"
CASE_PREFIX = "llm/"
FLOOR = 6
ARCHITECTURES = "architectures.toml"
INSTALL_HINT = (
    "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu, then "
    'pip install -e ".[torch]" "transformers>=4.50" (docs/generation.md)'
)


class CorpusError(errors.CorpusError):
    pass


def missing_reason() -> str | None:
    """Why generation checks cannot run here, or None."""
    missing = []
    for module, dist in (
        ("torch", "torch"),
        ("iree.turbine", "iree-turbine"),
        ("transformers", "transformers"),
    ):
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None or found.origin is None and not found.submodule_search_locations:
            missing.append(dist)
    return f"{', '.join(missing)} not installed: {INSTALL_HINT}" if missing else None


@dataclasses.dataclass
class GenerationCase(Case):
    """One architecture's generation check (or a user's save_pretrained folder)."""

    config: dict[str, Any] | None = None
    folder: str | None = None
    tokens: int = DEFAULT_TOKENS
    prompt_ids: tuple[int, ...] | None = None
    prompt: str | None = None
    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    timing: bool = False
    line: int = 1
    _compared: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    _repro: dict[str, Any] | None = dataclasses.field(default=None, repr=False)
    _tolerance: tuple[float, float] | None = dataclasses.field(default=None, repr=False)

    def source_line(self) -> int:
        return self.line

    def run_itself(
        self, target: Any, store_dir: Path | None, compile_only: bool
    ) -> CaseResult | None:
        spec = GenerationSpec(
            config=self.config,
            folder=self.folder,
            tokens=self.tokens,
            prompt_ids=self.prompt_ids,
            prompt=self.prompt,
            atol=self.atol,
            rtol=self.rtol,
            timing=self.timing and not compile_only,
            compile_flags=tuple(target.case_flags(self)),
            device=target.device_uri,
            store_dir=str(store_dir) if store_dir else None,
            iree_build=build_identity(),
            compile_only=compile_only,
        )
        found = run_check(spec)
        self._repro = found.get("repro")
        self._tolerance = (spec.rtol, spec.atol)
        info = dict(found.get("info") or {})
        self._compared = {
            "status": found["status"],
            "diagnostics": found.get("diagnostics", []),
            "info": info,
        }
        if found["status"] == Status.FAIL:  # compared: the reference stage says how (checks)
            return CaseResult(
                status=Status.PASS,
                stage=Stage.RUN,
                info=_shown(info),
                stage_times=found.get("stage_times", {}),
                outputs=[[]],
            )
        return CaseResult(
            status=found["status"],
            stage=found["stage"],
            diagnostics=list(found.get("diagnostics", [])),
            info=_shown(info),
            stage_times=found.get("stage_times", {}),
            outputs=[[]],
        )

    def own_reproducer(self) -> dict[str, Any] | None:
        """The failing function (prefill or decode) alone: its MLIR, the inputs of the
        failing call (the prompt, or one token, its position and the KV cache IREE returned
        the step before) and torch eager's outputs of the same wrapper on them."""
        if self._repro is None:
            raise RuntimeError(
                "the generation check left no failing call to reproduce (a crash or time-out "
                "of its process, or a failure before IREE compiled)"
            )
        which = self._repro["which"]
        step = (self._compared.get("info") or {}).get("failing_step")
        what = (
            "the prefill (the prompt's ids)"
            if which == "prefill"
            else "one decode step (a token, its position, and the KV cache IREE returned the step before)"
        )
        notes = [
            f"A generation check: the folder holds the {which} function, {what}"
            + (f", at step {step} of greedy decoding" if step is not None else "")
            + "; expected outputs are torch eager's of the same function on the same inputs "
            "(docs/generation.md)."
        ]
        return {**self._repro, "notes": notes, "tolerance": self._tolerance}

    def checks(self, input_sets: Any, output_sets: Any, worker_result: CaseResult) -> list[Check]:
        compared = self._compared
        if compared.get("status") == Status.FAIL:
            raise ChecksFailed(list(compared["diagnostics"]))
        info = compared.get("info", {})
        eager, iree = info.get("eager_tokens", []), info.get("iree_tokens", [])
        last = info.get("first_diff_step", len(eager))
        import numpy as np

        return [
            Check(
                [np.asarray(iree[:last], np.int64)],
                [np.asarray(eager[:last], np.int64)],
                Tolerance(0.0, 0.0),
            )
        ]


def _shown(info: dict[str, Any]) -> dict[str, Any]:
    """What the results keep of a check: the tokens, the route, the worst step."""
    kept = {k: v for k, v in info.items() if k != "max_logit_diff_per_step"}
    diffs = info.get("max_logit_diff_per_step") or []
    if diffs:
        kept["max_logit_diff"] = max(diffs)
    return {"generation": kept}


def load_architectures(path: Path) -> dict[str, tuple[dict[str, Any], int]]:
    """{name: (config fields, line)} from the suite's TOML."""
    try:
        data = load_toml(path)
    except TomlError as e:
        raise CorpusError(f"{path}: {e}; restore conformance/llm from git") from None
    text = path.read_text(encoding="utf-8").splitlines()
    found: dict[str, tuple[dict[str, Any], int]] = {}
    for name, fields in data.items():
        if not isinstance(fields, dict) or not isinstance(fields.get("model_type"), str):
            raise CorpusError(
                f"{path}: [{name}] needs a model_type string (a transformers architecture)"
            )
        line = next((i + 1 for i, t in enumerate(text) if t.strip() == f"[{name}]"), 1)
        found[name] = (dict(fields), line)
    return found


class LlmSuite:
    """Decoder-only language models: greedy tokens on IREE against transformers' generate."""

    name = SUITE
    description = (
        "decoder-only language models from transformers configs: greedy tokens on IREE "
        "(prefill and decode with a KV cache) against transformers' generate"
    )
    case_prefix = CASE_PREFIX
    floor = FLOOR
    options = (
        SuiteOption(
            "--llm-tokens",
            f"tokens each generation check decodes (default {DEFAULT_TOKENS})",
            {"default": DEFAULT_TOKENS, "type": int, "metavar": "N"},
        ),
    )

    def collect(self, context: SuiteContext) -> list[Case]:
        missing = missing_reason()
        if missing:
            return [
                Case(
                    case_id=f"{CASE_PREFIX}not-installed",
                    suite=SUITE,
                    kind="mlir",
                    skip_reason=f"the llm suite needs {missing}",
                )
            ]
        path = context.conformance_dir / "llm" / ARCHITECTURES
        if not path.is_file():
            raise CorpusError(f"{path}: no such file: restore conformance/llm from git")
        arches = load_architectures(path)
        if len(arches) < FLOOR:
            raise CorpusError(
                f"{path}: {len(arches)} architectures, fewer than the floor of {FLOOR}"
            )
        tokens = int(context.values.get("llm_tokens") or DEFAULT_TOKENS)
        return [
            GenerationCase(
                case_id=f"{CASE_PREFIX}{name}",
                suite=SUITE,
                kind="mlir",
                source_path=path,
                input_type="auto",
                reference_name="transformers-generate",
                config=fields,
                tokens=tokens,
                line=line,
            )
            for name, (fields, line) in arches.items()
        ]
