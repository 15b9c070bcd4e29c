"""Pieces several subcommands share: API arguments, runner defaults, the run context."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TextIO

from ..config import Config, load_config
from ..credentials import token_from_env
from ..entries import parse_time
from ..errors import CacheToolsError
from ..github_api import DEFAULT_API_URL, GitHubClient, check_repo

DEFAULT_CONFIG = "cache_tools.toml"
_ARCH = {
    "x86_64": "X64",
    "amd64": "X64",
    "aarch64": "ARM64",
    "arm64": "ARM64",
    "i386": "X86",
    "i686": "X86",
}
_OS = {"linux": "Linux", "darwin": "macOS", "windows": "Windows", "win32": "Windows"}


@dataclass
class Context:
    """What a command may touch besides its arguments (swappable in tests)."""

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    out: TextIO = field(default_factory=lambda: sys.stdout)
    sleep: Callable[[float], None] = time.sleep


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print machine-readable JSON instead of a table"
    )


def add_config(parser: argparse.ArgumentParser, required: bool = False) -> None:
    parser.add_argument(
        "--config",
        required=required,
        help=f"cache classes config (TOML){'' if required else f'; default ./{DEFAULT_CONFIG} if present'}",
    )


def add_api(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("GitHub API (token from GITHUB_TOKEN or GH_TOKEN)")
    g.add_argument("--repo", help="OWNER/NAME; default $GITHUB_REPOSITORY")
    g.add_argument(
        "--api-url",
        help=f"API root; default $GITHUB_API_URL or {DEFAULT_API_URL} (GHES: https://HOST/api/v3)",
    )
    g.add_argument(
        "--max-wait",
        type=float,
        default=60.0,
        help="longest rate-limit wait to accept, seconds (default 60)",
    )
    g.add_argument(
        "--max-retries",
        type=int,
        default=4,
        help="retries on 5xx/rate limits/connection errors (default 4)",
    )


def add_now(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--now", help="evaluate as of this ISO 8601 time (reproducible reports); default: now"
    )


def load_config_arg(path: str | None, required: bool = False) -> Config:
    if path:
        return load_config(path)
    if os.path.exists(DEFAULT_CONFIG):
        return load_config(DEFAULT_CONFIG)
    if required:
        raise CacheToolsError(f"no config: pass --config (no ./{DEFAULT_CONFIG} here)")
    return Config()


def now_arg(value: str | None) -> datetime:
    if not value:
        return datetime.now(timezone.utc)
    try:
        return parse_time(value, "--now")
    except CacheToolsError:
        raise CacheToolsError(
            f"--now {value!r} is not an ISO 8601 time such as 2025-01-31T12:00:00Z"
        ) from None


def repo_arg(args: argparse.Namespace, ctx: Context) -> str:
    repo = args.repo or ctx.env.get("GITHUB_REPOSITORY", "")
    if not repo:
        raise CacheToolsError("no repository: pass --repo OWNER/NAME (or set GITHUB_REPOSITORY)")
    return check_repo(repo)


def make_client(args: argparse.Namespace, ctx: Context) -> GitHubClient:
    api_url = args.api_url or ctx.env.get("GITHUB_API_URL") or DEFAULT_API_URL
    return GitHubClient(
        token_from_env(ctx.env),
        api_url,
        max_retries=args.max_retries,
        max_wait=args.max_wait,
        sleep=ctx.sleep,
    )


def runner_os(env: Mapping[str, str]) -> str:
    return env.get("RUNNER_OS") or _OS.get(
        sys.platform, _OS.get(platform.system().lower(), platform.system())
    )


def runner_arch(env: Mapping[str, str]) -> str:
    machine = platform.machine().lower()
    return env.get("RUNNER_ARCH") or _ARCH.get(machine, machine.upper() or "UNKNOWN")
