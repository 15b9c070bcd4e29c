"""``cache-tools``: argument parsing and error handling for the subcommands."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

from . import __version__
from .commands import audit, key, measure, plan, prune
from .commands.common import Context
from .errors import CacheToolsError

COMMANDS = {"measure": measure, "key": key, "plan": plan, "audit": audit, "prune": prune}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cache-tools",
        description="Size-aware GitHub Actions cache keys, pre-save size checks and cache audits.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log API retries and details to stderr"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS.values():
        module.register(sub)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    sleep: Callable[[float], None] | None = None,
) -> int:
    """Entry point; keyword arguments exist so tests can run it in-process."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="cache-tools: %(message)s",
        stream=sys.stderr,
    )
    ctx = Context()
    if env is not None:
        ctx.env = env
    if out is not None:
        ctx.out = out
    if sleep is not None:
        ctx.sleep = sleep
    try:
        return COMMANDS[args.command].run(args, ctx)
    except CacheToolsError as exc:
        sys.stderr.write(f"cache-tools {args.command}: error: {exc}\n")
        return exc.return_code
    except KeyboardInterrupt:
        sys.stderr.write("cache-tools: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
