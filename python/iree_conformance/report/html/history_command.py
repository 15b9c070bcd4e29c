"""``iree-conformance history RESULTS... --site DIR``: the CLI side of the history site.

Each group of inputs that started within 12 hours of each other is one night (the rule
of the HTML report's current run, ``inputs.CURRENT_WINDOW``); the nights go into the
state (``--state``), old nights are folded into weeks, the state is written back
(``--state-out``, default ``--state``) and the site is rendered from it (``--site``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.report.html import history, inputs


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "history",
        help="add nightly results to the history state and write the static history site",
    )
    p.add_argument(
        "results",
        nargs="+",
        help="results JSON files (from --report-json, or merged): one or more nights",
    )
    p.add_argument(
        "--state",
        metavar="FILE",
        help="the history so far (from an earlier --state-out); a missing file starts a new history",
    )
    p.add_argument(
        "--state-out", metavar="FILE", help="write the updated history here (default: --state)"
    )
    p.add_argument("--site", metavar="DIR", help="write the site (index.html, cases/) here")
    p.add_argument(
        "--keep-nights",
        type=int,
        default=history.KEEP_NIGHTS,
        help=f"nights kept in full; older ones are folded into weeks (default {history.KEEP_NIGHTS})",
    )
    p.add_argument(
        "--keep-weeks",
        type=int,
        default=history.KEEP_WEEKS,
        help=f"folded weeks kept (default {history.KEEP_WEEKS})",
    )
    p.add_argument("--title", default="IREE conformance history", help="the site's title")
    p.set_defaults(func=cmd_history)


def nights_of(loaded: list[inputs.Loaded]) -> list[history.Night]:
    """The inputs grouped into nights, oldest first."""
    missing = [x.source for x in loaded if x.started is None]
    if missing:
        raise history.HistoryError(
            f"{', '.join(missing)}: no metadata.started; a history needs each night's start time "
            "(results files written by pytest conformance --report-json have it)"
        )
    groups: list[list[inputs.Loaded]] = []
    for x in sorted(loaded, key=lambda x: x.started or datetime.datetime.min):
        assert x.started is not None
        if (
            groups
            and groups[-1][0].started
            and x.started - groups[-1][0].started <= inputs.CURRENT_WINDOW
        ):
            groups[-1].append(x)
        else:
            groups.append([x])
    nights = []
    for files in groups:
        merged = inputs.merge_loaded(files)
        start = min(x.started for x in files if x.started).astimezone(datetime.timezone.utc)
        versions = sorted(
            {
                str(m.get("iree_compiler"))
                for x in files
                for m in inputs.metadata_list(x.data)
                if m.get("iree_compiler")
            }
        )
        nights.append(
            history.Night(
                id=start.isoformat(timespec="seconds"),
                iree_compiler=", ".join(versions) or "?",
                sources=[x.source for x in files],
                outcomes=merged["outcomes"],
            )
        )
    return nights


def read_state(path: Path) -> dict[str, Any]:
    """The state in ``path``; a new one (with a note on stderr) when it does not exist."""
    if not path.exists():
        print(f"{path}: no history yet, starting one", file=sys.stderr)
        return history.empty_state()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise history.HistoryError(f"{path}: cannot read the history state ({e})") from None
    return history.check_state(data, str(path))


def write_state(path: Path, state: dict[str, Any]) -> int:
    text = json.dumps(state, separators=(",", ":"), sort_keys=True) + "\n"
    atomic_write_text(path, text)
    return len(text.encode("utf-8"))


def cmd_history(args: argparse.Namespace) -> int:
    out = args.state_out or args.state
    if not out and not args.site:
        raise history.HistoryError("nothing to write: give --state-out (or --state) and/or --site")
    state = read_state(Path(args.state)) if args.state else history.empty_state()
    for night in nights_of(inputs.load([Path(p) for p in args.results])):
        history.add_night(state, night)
        print(
            f"night {night.id}: {len(night.outcomes)} outcome(s) from {', '.join(night.sources)}",
            file=sys.stderr,
        )
    history.fold(state, args.keep_nights, args.keep_weeks)
    if out:
        size = write_state(Path(out), state)
        print(f"wrote {out} ({size / 1024:.1f} KiB)", file=sys.stderr)
    if args.site:
        from iree_conformance.report.html import site  # Jinja2: only when the site is asked for

        stats = site.build_site(state, Path(args.site), args.title)
        print(
            f"wrote {args.site}: {stats.pages} page(s), {stats.bytes / 1024:.1f} KiB",
            file=sys.stderr,
        )
    return 0
