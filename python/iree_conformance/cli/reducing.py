"""What ``reduce`` and ``check-model --reduce`` share: the budget option, the output
folder's check, the progress bar and the printed result (cli/reduce.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.vocabulary import Status

__all__ = [
    "DEFAULT_BUDGET_S",
    "add_budget_argument",
    "check_output",
    "progress_bar",
    "run_reduction",
]

#: --reduce-budget's default: ten minutes of compiles.
DEFAULT_BUDGET_S = 600.0


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected seconds above 0, got {text!r}")
    return value


def add_budget_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reduce-budget",
        type=_budget,
        default=DEFAULT_BUDGET_S,
        metavar="SECONDS",
        help=f"stop reducing after this long and keep the smallest failing graph found "
        f"(default {DEFAULT_BUDGET_S:g})",
    )


def progress_bar():
    """A tqdm bar on a terminal (stderr), nothing elsewhere: (callback, close)."""
    from tqdm import tqdm

    bar = tqdm(desc="reducing", unit=" candidates", disable=not sys.stderr.isatty(), leave=False)

    def update(tested: int, smallest: int) -> None:
        bar.n = tested
        bar.set_postfix_str(f"smallest {smallest} nodes", refresh=True)

    return update, bar.close


def check_output(out_dir: Path, force: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigurationError(f"{out_dir} exists and is no folder; give another -o")
    if (out_dir / "reduced").exists() and not force:
        raise ConfigurationError(
            f"{out_dir / 'reduced'} exists; give another -o, or --force to replace its files"
        )


def run_reduction(case, target, worker, args, out_dir: Path, out, outcome=None) -> int:
    """Reduces the case's failure, prints what it found and writes ``out_dir/reduced``
    (shared by ``reduce`` and ``check-model --reduce``)."""
    from iree_conformance.engine.reduction import reduce_case, write_reduced

    update, close = progress_bar()
    try:
        report = reduce_case(case, target, worker, args.reduce_budget, update, outcome)
    finally:
        close()
    if report.signature is None:
        print(f"pass: {report.note}", file=out)
        return 0
    print(f"failure: {report.signature.stage}: {report.signature.first_line}", file=out)
    if report.result is not None:
        print(report.result.summary(), file=out)
    if report.numerics is not None:
        print(report.numerics.summary(), file=out)
    elif report.outcome.status == Status.FAIL:
        print("no intermediate tensor diverges: no node to isolate", file=out)
    if report.note:
        print(report.note, file=out)
    if report.reduced is not None:
        written = write_reduced(report, out_dir, target)
        print(f"wrote {', '.join(str(p) for p in written)}", file=out)
    return 1
