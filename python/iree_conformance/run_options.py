"""The conformance run's pytest options: declared once, parsed once into ``RunOptions``.

``OPTIONS`` is the one list of the plugin's command-line options: ``add_options`` registers
them with pytest, ``RunOptions.from_config`` reads them back into a frozen record that the
rest of the plugin and the suite providers use, and ``options_table`` renders the README's
table from the same help strings (``python -m iree_conformance.options_table``).

A value that is wrong on its own (a negative count, a malformed ``--shard``, a bad
``--stage-timeout``) is refused by the option's ``type`` callable, so pytest stops with a
usage error that names the option; options that contradict each other are refused by
``from_config``, also as a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from .batching import DEFAULT_BATCH_SIZE
from .sharding import ShardError, parse_shard
from .worker import DEFAULT_STAGE_TIMEOUTS

DEFAULT_TARGET = "llvm-cpu"


# -- type callables: each returns the parsed value or raises ArgumentTypeError ---------------
def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_int(text: str) -> int:
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def seed_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def shard_spec(text: str) -> tuple[int, int]:
    """'I/N' with 1 <= I <= N."""
    try:
        return parse_shard(text)
    except ShardError as e:
        raise argparse.ArgumentTypeError(
            str(e).removeprefix(f"--shard {text!r}: ") + f" (got {text!r})"
        ) from None


def stage_timeout(text: str) -> tuple[str, float]:
    """'STAGE=SECONDS' with a known stage and a finite number of seconds above 0."""
    stage, _, seconds = text.partition("=")
    if stage not in DEFAULT_STAGE_TIMEOUTS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: stage must be one of {', '.join(DEFAULT_STAGE_TIMEOUTS)}"
        )
    try:
        value = float(seconds)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: SECONDS must be a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: SECONDS must be a finite number above 0")
    return stage, value


def case_list(text: str) -> frozenset[str]:
    """The case ids listed in the file at text: one per line, '#' starts a comment."""
    try:
        lines = Path(text).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{text}: cannot read: {e.strerror or e}") from None
    return frozenset(
        line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()
    )


def _seconds(value: float) -> str:
    return f"{value:g}"


_DEFAULT_TIMEOUTS_TEXT = ", ".join(
    f"{stage} {_seconds(s)}" for stage, s in DEFAULT_STAGE_TIMEOUTS.items()
)


# -- the options ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Option:
    """One command-line option: its name, pytest/argparse keywords and help text."""

    name: str
    help: str
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def usage(self) -> str:
        """The option as the README's table shows it: name and metavar or choices."""
        kw = self.kwargs
        if kw.get("action") == "store_true":
            return self.name
        if "choices" in kw:
            values = "|".join(kw["choices"])
            return f"{self.name} [{values}]" if kw.get("nargs") == "?" else f"{self.name} {values}"
        return f"{self.name} {kw.get('metavar', 'VALUE')}"


OPTIONS: tuple[Option, ...] = (
    Option(
        "--target",
        f"a target from conformance/targets.toml (repeatable; default {DEFAULT_TARGET}); an unknown name is an error that lists the known ones, and a target whose driver or device is absent is skipped with a reason that names it",
        {"action": "append", "default": [], "metavar": "NAME"},
    ),
    Option(
        "--report-json",
        "write every Outcome and the run metadata (IREE, onnx and onnxruntime versions, platform, targets, start and end) to PATH",
        {"metavar": "PATH", "type": Path},
    ),
    Option(
        "--store-dir",
        "artifact store folder (default: $IREE_CONFORMANCE_STORE, else the user cache dir, e.g. ~/.cache/iree-conformance/store)",
        {"metavar": "DIR", "type": Path},
    ),
    Option("--no-cache", "neither read nor write the artifact store", {"action": "store_true"}),
    Option(
        "--update-expectations",
        "rewrite the target's manifest from this run (adds new failures, drops fixed ones, keeps reasons, sorted); overlay: the per-OS file, with the differences from the base file only",
        {"nargs": "?", "const": "base", "choices": ["base", "overlay"]},
    ),
    Option(
        "--expectations-dir",
        "folder of <target>.toml manifests (default conformance/expectations)",
        {"metavar": "DIR", "type": Path},
    ),
    Option(
        "--stablehlo-dir",
        "also run every .mlir test file under PATH: check ops or lit RUN/FileCheck lines (repeatable)",
        {"action": "append", "default": [], "metavar": "PATH", "type": Path},
    ),
    Option(
        "--jax-dir",
        "also run the JAX cases of every .py file under DIR (functions with example inputs, or flax modules; see README 'Your own JAX function') against XLA (repeatable)",
        {"action": "append", "default": [], "metavar": "DIR", "type": Path},
    ),
    Option(
        "--reference",
        "bundled StableHLO expected values: shipped (default) or recomputed by the StableHLO reference interpreter",
        {"choices": ["shipped", "interpreter"], "default": "shipped"},
    ),
    Option(
        "--stage-timeout",
        f"per-stage time limit in seconds, e.g. compile=600 (repeatable; defaults {_DEFAULT_TIMEOUTS_TEXT})",
        {"action": "append", "default": [], "metavar": "STAGE=SECONDS", "type": stage_timeout},
    ),
    Option(
        "--timing-runs",
        "time each passing case's function N times after a warm-up (median; onnxruntime beside it for models); informative, never pass/fail",
        {"default": 0, "metavar": "N", "type": non_negative_int},
    ),
    Option(
        "--compile-only",
        "stop after compile (no device needed); with --bundle, write a bundle",
        {"action": "store_true"},
    ),
    Option(
        "--bundle",
        "with --compile-only: write a self-contained bundle of the compiled cases to DIR",
        {"metavar": "DIR", "type": Path},
    ),
    Option(
        "--cases-file",
        "run only the case ids listed in PATH (one per line, '#' comments)",
        {"metavar": "PATH", "type": case_list},
    ),
    Option(
        "--shard",
        "run the I-th of N shards of near-equal recorded duration (see --durations-file)",
        {"metavar": "I/N", "type": shard_spec},
    ),
    Option(
        "--durations-file",
        "recorded durations used to balance --shard",
        {"metavar": "PATH", "type": Path},
    ),
    Option(
        "--record-durations",
        "merge this run's per-case durations into PATH",
        {"metavar": "PATH", "type": Path},
    ),
    Option(
        "--onnx-ops-sample",
        "run a fixed, deterministic sample of N ONNX operator tests (the PR smoke run) instead of all",
        {"metavar": "N", "type": positive_int},
    ),
    Option(
        "--onnx-data-dir",
        "where generated ONNX operator test data lives (default: $IREE_CONFORMANCE_DATA, else the user cache dir)",
        {"metavar": "DIR"},
    ),
    Option(
        "--zoo-manifest",
        "ONNX Model Zoo manifest in the onnx.hub ONNX_HUB_MANIFEST.json format; a model with a model_with_data tarball is checked on its test_data_set_N against the shipped outputs, one without runs on seeded random inputs against onnxruntime",
        {"metavar": "PATH_OR_URL"},
    ),
    Option(
        "--zoo-models",
        "comma-separated zoo model names to select (file stems such as mnist-12)",
        {"metavar": "NAMES"},
    ),
    Option("--zoo-tags", "comma-separated zoo tags to select", {"metavar": "TAGS"}),
    Option(
        "--zoo-max-bytes",
        "select zoo models of at most N bytes",
        {"metavar": "N", "type": positive_int},
    ),
    Option(
        "--zoo-mirror",
        "URL or folder template for zoo downloads with {model_path}, {file_name} or {sha256} (default: $IREE_CONFORMANCE_ZOO_MIRROR, else the Hugging Face mirror); files are verified by sha256 and size and kept in $IREE_CONFORMANCE_ZOO_CACHE",
        {"metavar": "TEMPLATE"},
    ),
    Option(
        "--offline",
        "never download; cases that need a download are skipped with reason 'offline'",
        {"action": "store_true"},
    ),
    Option(
        "--retries",
        "retry an unexpected result up to N times in a fresh worker, compiling afresh (default 1; 0: off); a case whose result then changes is reported flaky with every try, never as a pass",
        {"default": 1, "metavar": "N", "type": non_negative_int},
    ),
    Option(
        "--fresh-worker",
        "run every case in a new worker process (slower; for flake hunting: no state shared between cases)",
        {"action": "store_true"},
    ),
    Option(
        "--shuffle",
        "run the selected cases in an order shuffled by SEED (for flake hunting: order-dependent failures)",
        {"metavar": "SEED", "type": seed_int},
    ),
    Option(
        "--bisect-numerics",
        "on a model numerics failure, report the first ONNX node whose output diverges",
        {"action": "store_true"},
    ),
    Option(
        "--batch-size",
        f"compile up to B small cases (StableHLO programs, ONNX operator tests) of one suite, target and flag set as one module (default {DEFAULT_BATCH_SIZE}; 1: each case alone); a case that is not a pass in its batch runs alone, and that is its result",
        {"default": DEFAULT_BATCH_SIZE, "metavar": "B", "type": positive_int},
    ),
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("iree-conformance")
    for option in OPTIONS:
        group.addoption(option.name, help=option.help, **option.kwargs)


# -- the parsed record ---------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Every option of a conformance run, parsed and checked; the defaults are pytest's."""

    targets: tuple[str, ...] = (DEFAULT_TARGET,)
    report_json: Path | None = None
    store_dir: Path | None = None
    no_cache: bool = False
    update_expectations: str | None = None
    expectations_dir: Path | None = None
    stablehlo_dirs: tuple[Path, ...] = ()
    jax_dirs: tuple[Path, ...] = ()
    reference: str = "shipped"
    stage_timeouts: Mapping[str, float] = dataclasses.field(default_factory=dict)
    timing_runs: int = 0
    compile_only: bool = False
    bundle: Path | None = None
    cases: frozenset[str] | None = None
    shard: tuple[int, int] | None = None
    durations_file: Path | None = None
    record_durations: Path | None = None
    onnx_ops_sample: int | None = None
    onnx_data_dir: str | None = None
    zoo_manifest: str | None = None
    zoo_models: str | None = None
    zoo_tags: str | None = None
    zoo_max_bytes: int | None = None
    zoo_mirror: str | None = None
    offline: bool = False
    retries: int = 1
    fresh_worker: bool = False
    shuffle: int | None = None
    bisect_numerics: bool = False
    batch_size: int = DEFAULT_BATCH_SIZE

    def __post_init__(self) -> None:
        if self.bundle is not None and not self.compile_only:
            raise pytest.UsageError("--bundle needs --compile-only")
        if self.compile_only and self.update_expectations:
            raise pytest.UsageError(
                "--update-expectations needs a full run: with --compile-only, run-stage failures would be dropped"
            )

    @property
    def effective_retries(self) -> int:
        """Retries judge verdicts, and a compile-only run judges none that would need them."""
        return 0 if self.compile_only else self.retries

    @property
    def effective_batch_size(self) -> int:
        """Bundles hold one module per case, and a fresh worker per case would load a
        whole batch for each: both run every case alone."""
        return 1 if self.compile_only or self.fresh_worker else self.batch_size

    @classmethod
    def from_config(cls, config: pytest.Config) -> RunOptions:
        opt = config.getoption
        return cls(
            targets=tuple(opt("--target")) or (DEFAULT_TARGET,),
            report_json=opt("--report-json"),
            store_dir=opt("--store-dir"),
            no_cache=bool(opt("--no-cache")),
            update_expectations=opt("--update-expectations"),
            expectations_dir=opt("--expectations-dir"),
            stablehlo_dirs=tuple(opt("--stablehlo-dir")),
            jax_dirs=tuple(opt("--jax-dir")),
            reference=opt("--reference"),
            stage_timeouts=dict(opt("--stage-timeout")),
            timing_runs=opt("--timing-runs"),
            compile_only=bool(opt("--compile-only")),
            bundle=opt("--bundle"),
            cases=opt("--cases-file"),
            shard=opt("--shard"),
            durations_file=opt("--durations-file"),
            record_durations=opt("--record-durations"),
            onnx_ops_sample=opt("--onnx-ops-sample"),
            onnx_data_dir=opt("--onnx-data-dir"),
            zoo_manifest=opt("--zoo-manifest"),
            zoo_models=opt("--zoo-models"),
            zoo_tags=opt("--zoo-tags"),
            zoo_max_bytes=opt("--zoo-max-bytes"),
            zoo_mirror=opt("--zoo-mirror"),
            offline=bool(opt("--offline")),
            retries=opt("--retries"),
            fresh_worker=bool(opt("--fresh-worker")),
            shuffle=opt("--shuffle"),
            bisect_numerics=bool(opt("--bisect-numerics")),
            batch_size=opt("--batch-size"),
        )
