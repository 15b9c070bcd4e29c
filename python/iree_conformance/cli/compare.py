"""``iree-conformance compare BASE.json [BASE2.json ...] NEW.json [NEW2.json ...]``: verdict
changes and significant speed and memory changes between results files (main and a pull
request, or two IREE versions). The last file is the one judged (the last M with
``--new-runs M``); several baseline files (main's last nights) let the test measure the
noise between runs, which one run cannot show, and several new runs (the same build timed
again) confirm a change: it must be seen in each of them.

It also lists each case whose compile statistics changed (IREE's dispatch count, the
module's size: ``metrics.compile_stats``, report/compile_stats.py).

Exit status: 0 no regression, 1 a case became significantly worse in any way listed (slower,
more memory, more device or host memory per call, a larger module, more dispatches or a
module at least 10 % and 1 KiB bigger in its compile statistics; the last line names each
kind and its cases), 2 a results file is missing or malformed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.model.results import load_results
from iree_conformance.report import compile_stats, speed


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compare",
        help="compare two results files: verdict changes and significant speed/memory changes "
        "(exit 1 on a significant slowdown, memory growth or larger module)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="RESULTS",
        help="baseline results JSON file(s) (e.g. main's), then the one(s) to judge (the last)",
    )
    p.add_argument(
        "--new-runs",
        type=int,
        default=1,
        metavar="M",
        help="the last M files are runs of the build judged (default 1); a change must be "
        "significant in each",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=speed.ALPHA,
        help=(
            "the comparison's chance of listing an unchanged case's time (default "
            f"{speed.ALPHA}); each case is tested at alpha over the cases judged"
        ),
    )
    p.add_argument(
        "--min-effect",
        type=float,
        default=speed.MIN_EFFECT,
        help=f"smallest relative change of the median reported (default {speed.MIN_EFFECT})",
    )
    p.add_argument("--markdown", action="store_true", help="print Markdown (for a PR comment)")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    if not 0 < args.alpha < 1:
        raise ConfigurationError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.min_effect < 0:
        raise ConfigurationError(f"--min-effect must be 0 or more, got {args.min_effect}")
    if args.new_runs < 1:
        raise ConfigurationError(f"--new-runs must be 1 or more, got {args.new_runs}")
    if len(args.files) < args.new_runs + 1:
        raise ConfigurationError(
            f"compare needs a baseline results file and {args.new_runs} new one(s), "
            f"got {len(args.files)} file(s)"
        )
    keys = ("case_id", "target", "status")
    runs = [load_results(Path(f), keys)["outcomes"] for f in args.files]
    base, new = runs[: -args.new_runs], runs[-args.new_runs :]
    result = speed.compare_results(
        base[0], new[0], args.alpha, args.min_effect, more_base=base[1:], more_new=new[1:]
    )
    for line in speed.comparison_lines(result, markdown=args.markdown):
        print(line, file=sys.stdout)
    stat_changes, compared = compile_stats.compare_compile_stats(base[0], new[0], args.min_effect)
    for line in compile_stats.stat_change_lines(stat_changes, compared, markdown=args.markdown):
        print(line, file=sys.stdout)
    regressions = speed.regression_line(result)
    if regressions:
        print(regressions, file=sys.stdout)
    grown = [c for c in stat_changes if c.worse]
    if grown:
        kinds = sorted({c.kind for c in grown})
        print(
            f"Compile statistics regressions ({len(grown)}; exit status 1): {', '.join(kinds)}",
            file=sys.stdout,
        )
    return 1 if result.regressions or grown else 0
