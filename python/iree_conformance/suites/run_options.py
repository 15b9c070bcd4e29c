"""The conformance run's core pytest options: declared once, parsed once into ``RunOptions``.

Each option is written once, as a field of ``RunOptions`` (``option(...)``: flag, help,
argparse keywords, and the conversion of the parsed value into the field's type).
``OPTIONS`` lists them in field order: ``add_options`` registers them with pytest,
``RunOptions.from_config`` reads them back into the frozen record, and ``options_table``
renders docs/suites.md's table from the same help strings
(``python -m iree_conformance.cli.options_table``). A suite's own options (``--stablehlo-dir``,
``--zoo-manifest``, ...) are declared by the suite (``suites/base.py``).

A value that is wrong on its own (a negative count, a malformed ``--shard``, a bad
``--stage-timeout``) is refused by the option's ``type`` callable, so pytest stops with a
usage error that names the option; options that contradict each other are refused by
``from_config``, also as a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from iree_conformance.common.timing import DEFAULT_TIMING_BUDGET, parse_timing_budget
from iree_conformance.engine.batching import DEFAULT_BATCH_SIZE
from iree_conformance.engine.sharding import ShardError, parse_shard
from iree_conformance.model.targets import DEFAULT_STAGE_TIMEOUTS
from iree_conformance.suites.option import SuiteOption

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


def dim_size(text: str) -> tuple[str, int]:
    """'NAME=SIZE' (--dim)."""
    from iree_conformance.frontends.onnx.specs import SpecError, parse_dim

    try:
        return parse_dim(text)
    except SpecError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--dim ")) from None


def input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """'INPUT=1x3x224x224' (--input-shape)."""
    from iree_conformance.frontends.onnx.specs import SpecError, parse_input_shape

    try:
        return parse_input_shape(text)
    except SpecError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--input-shape ")) from None


def _seconds(value: float) -> str:
    return f"{value:g}"


_DEFAULT_TIMEOUTS_TEXT = ", ".join(
    f"{stage} {_seconds(s)}" for stage, s in DEFAULT_STAGE_TIMEOUTS.items()
)


# -- the options ---------------------------------------------------------------------------
def option(
    flag: str,
    help: str,
    field_default: Any = None,
    convert: Callable[[Any], Any] | None = None,
    **kwargs: Any,
) -> Any:
    """A RunOptions field that is also its command-line option.

    field_default is the field's default (what ``RunOptions()`` holds); kwargs are the argparse
    keywords (their own ``default`` is what pytest parses when the flag is absent);
    convert turns the parsed value into the field's value."""
    metadata = {"option": SuiteOption(flag, help, kwargs), "convert": convert}
    if isinstance(field_default, (dict, list)):
        empty = type(field_default)
        return dataclasses.field(default_factory=empty, metadata=metadata)
    return dataclasses.field(default=field_default, metadata=metadata)


def switch(flag: str, help: str) -> Any:
    """An on/off RunOptions field: False unless the flag is given."""
    return option(flag, help, False, bool, action="store_true")


def path_option(flag: str, help: str, metavar: str) -> Any:
    """A RunOptions field holding a path, None unless the flag is given."""
    return option(flag, help, metavar=metavar, type=Path)


def repeated(
    flag: str, help: str, field_default: Any, convert: Callable[[Any], Any], **kwargs: Any
) -> Any:
    """A RunOptions field gathered from every use of a repeatable flag."""
    return option(flag, help, field_default, convert, action="append", default=[], **kwargs)


def number(flag: str, help: str, default: Any, metavar: str, type: Callable[[str], Any]) -> Any:
    """A RunOptions field holding a number, ``default`` unless the flag is given."""
    return option(flag, help, default, default=default, metavar=metavar, type=type)


def _targets(value: list[str]) -> tuple[str, ...]:
    return tuple(value) or (DEFAULT_TARGET,)


# -- the parsed record ---------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Every core option of a conformance run, parsed and checked; the defaults are pytest's."""

    targets: tuple[str, ...] = repeated(
        "--target",
        f"a target from conformance/targets.toml (repeatable; default {DEFAULT_TARGET}); an unknown name is an error that lists the known ones, and a target whose driver or device is absent is skipped with a reason that names it",
        (DEFAULT_TARGET,),
        _targets,
        metavar="NAME",
    )
    report_json: Path | None = path_option(
        "--report-json",
        "write every Outcome and the run metadata (IREE, onnx and onnxruntime versions, platform, targets, start and end) to PATH",
        "PATH",
    )
    store_dir: Path | None = path_option(
        "--store-dir",
        "artifact store folder (default: $IREE_CONFORMANCE_STORE, else the user cache dir, e.g. ~/.cache/iree-conformance/store)",
        "DIR",
    )
    no_cache: bool = switch("--no-cache", "neither read nor write the artifact store")
    update_expectations: str | None = option(
        "--update-expectations",
        "rewrite the target's manifest from this run (adds new failures, drops fixed ones, keeps reasons, sorted); overlay: the per-OS file, with the differences from the base file only",
        nargs="?",
        const="base",
        choices=["base", "overlay"],
    )
    expectations_dir: Path | None = path_option(
        "--expectations-dir",
        "folder of <target>.toml manifests (default conformance/expectations)",
        "DIR",
    )
    stage_timeouts: Mapping[str, float] = repeated(
        "--stage-timeout",
        f"per-stage time limit in seconds (the worker's CPU seconds on Linux; a hang: 4 times it in wall seconds), "
        f"e.g. compile=600 (repeatable; defaults {_DEFAULT_TIMEOUTS_TEXT}, or the target's stage_timeouts "
        "in targets.toml; this option overrides both)",
        {},
        dict,
        metavar="STAGE=SECONDS",
        type=stage_timeout,
    )
    timing_runs: int = number(
        "--timing-runs",
        "time each passing case's function N times after a warm-up (median; onnxruntime beside it for models); informative, never pass/fail",
        0,
        "N",
        non_negative_int,
    )
    benchmark: bool = switch(
        "--benchmark",
        "time every passing case with every figure (samples beside its reference, compile, load, memory; docs/speed.md), whatever it costs; "
        "by default models only, within --timing-budget; never pass/fail",
    )
    timing_budget: float | None = number(
        "--timing-budget",
        "the most the default timing of models may add, as a fraction of a case's untimed run (default 0.05: a timed case costs at most 1.05x, "
        "and a reference never timed here is left out; a warm case gets few samples), or 'full': every figure whatever it costs (CI's runs; docs/speed.md); "
        "--benchmark and --timing-runs N always take every figure",
        DEFAULT_TIMING_BUDGET,
        "FRACTION|full",
        parse_timing_budget,
    )
    no_benchmark: bool = switch(
        "--no-benchmark",
        "time no case, models included",
    )
    compile_only: bool = switch(
        "--compile-only",
        "stop after compile (no device needed); with --bundle, write a bundle",
    )
    bundle: Path | None = path_option(
        "--bundle",
        "with --compile-only: write a self-contained bundle of the compiled cases to DIR",
        "DIR",
    )
    cases: frozenset[str] | None = option(
        "--cases-file",
        "run only the case ids listed in PATH (one per line, '#' comments)",
        metavar="PATH",
        type=case_list,
    )
    shard: tuple[int, int] | None = option(
        "--shard",
        "run the I-th of N shards of near-equal recorded duration (see --durations-file)",
        metavar="I/N",
        type=shard_spec,
    )
    durations_file: Path | None = path_option(
        "--durations-file",
        "recorded durations used to balance --shard",
        "PATH",
    )
    record_durations: Path | None = path_option(
        "--record-durations",
        "merge this run's per-case durations into PATH",
        "PATH",
    )
    # Core, not a suite's: both ONNX model suites (onnx_models' zoo models, onnx_dir) read
    # them, and a suite's own options reach only that suite's collect.
    dims: tuple[tuple[str, int], ...] = repeated(
        "--dim",
        "the size of a symbolic dim of every ONNX model input that names it, e.g. height=320 (repeatable; wins over spec files; suites onnx_models and onnx_dir)",
        (),
        tuple,
        metavar="NAME=SIZE",
        type=dim_size,
    )
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...] = repeated(
        "--input-shape",
        "the shape of every ONNX model input of this name, e.g. x=1x3x224x224 (repeatable; wins over spec files; suites onnx_models and onnx_dir)",
        (),
        tuple,
        metavar="INPUT=SHAPE",
        type=input_shape,
    )
    offline: bool = switch(
        "--offline",
        "never download; cases that need a download are skipped with reason 'offline'",
    )
    retries: int = number(
        "--retries",
        "retry an unexpected result up to N times in a fresh worker, compiling afresh (default 1; 0: off); a case whose result then changes is reported flaky with every try, never as a pass",
        1,
        "N",
        non_negative_int,
    )
    fresh_worker: bool = switch(
        "--fresh-worker",
        "run every case in a new worker process (slower; for flake hunting: no state shared between cases)",
    )
    shuffle: int | None = option(
        "--shuffle",
        "run the selected cases in an order shuffled by SEED (for flake hunting: order-dependent failures)",
        metavar="SEED",
        type=seed_int,
    )
    bisect_numerics: bool = switch(
        "--bisect-numerics",
        "on a numerics failure, report the first ONNX node, StableHLO op or torch FX node whose output diverges (docs/reducing.md)",
    )
    repro_dir: Path | None = path_option(
        "--repro-dir",
        "write a reproducer folder (IREE's own commands and files, verified; docs/reproducers.md) for each red case under DIR/<target>/<case id>",
        "DIR",
    )
    repro_expected: bool = switch(
        "--repro-expected",
        "with --repro-dir, also write one for each expected failure (xfail)",
    )
    batch_size: int = number(
        "--batch-size",
        f"compile up to B small cases (StableHLO programs, ONNX operator tests, JAX cases) of one suite, target and flag set as one module (default {DEFAULT_BATCH_SIZE}; 1: each case alone); a case that is not a pass in its batch runs alone, and that is its result",
        DEFAULT_BATCH_SIZE,
        "B",
        positive_int,
    )

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
        values = {}
        for field in dataclasses.fields(cls):
            value = config.getoption(field.metadata["option"].dest)
            convert = field.metadata["convert"]
            values[field.name] = convert(value) if convert is not None else value
        return cls(**values)


OPTIONS: tuple[SuiteOption, ...] = tuple(
    f.metadata["option"] for f in dataclasses.fields(RunOptions)
)


def add_options(parser: pytest.Parser, suite_options: tuple[SuiteOption, ...] = ()) -> None:
    """Registers the core options and then the suites' own ones."""
    group = parser.getgroup("iree-conformance")
    for opt in (*OPTIONS, *suite_options):
        kwargs = dict(opt.kwargs)
        if opt.env:  # None when not given, so that the environment variable can apply
            kwargs.pop("default", None)
        group.addoption(opt.flag, help=opt.help, **kwargs)
