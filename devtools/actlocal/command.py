"""act's command line for one run, with every address checked to be loopback.

Nothing a local run starts may listen on or reach a non-loopback address: act's cache
and artifact servers bind to 127.0.0.1 (act's default, 192.0.2.2, is refused), every
action comes from a local folder (`--local-repository`, `--action-offline-mode`), and
every URL handed to the workflow (the GitHub API, the zoo manifest and mirror) must be
http(s) on a loopback host or a local path.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PLATFORM = "ubuntu-latest=-self-hosted"
_ACTION_DIR = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)@(?P<ref>[0-9a-f]{40}|v[0-9][0-9.]*)$")
# Variables act sets itself that name github.com; a local run points them elsewhere.
GITHUB_URL_VARIABLES = ("GITHUB_API_URL", "GITHUB_GRAPHQL_URL", "GITHUB_SERVER_URL")


class NotLoopback(ValueError):
    """An address or URL that would leave this machine."""


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_loopback_host(host: str, what: str) -> str:
    if not is_loopback_host(host):
        raise NotLoopback(f"{what}: {host!r} is not a loopback address (use 127.0.0.1)")
    return host


def require_local_url(url: str, what: str) -> str:
    """http(s) URLs must name a loopback host; file URLs and plain paths are local."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("http", "https"):
        require_loopback_host(parts.hostname or "", f"{what} ({url})")
        return url
    if parts.scheme in ("", "file") or (len(parts.scheme) == 1 and url[1:2] == ":"):
        return url  # a local path (a drive letter parses as a scheme)
    raise NotLoopback(f"{what}: {url!r} is neither a loopback http(s) URL nor a local path")


# Pinned actions that do not work under act here, and the local folder that runs in their
# place (same inputs, same protocol): name@ref -> (substitute name@ref, why).
SUBSTITUTES: dict[str, tuple[str, str]] = {
    "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f": (
        "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02",
        "upload-artifact v7.0.0 runs as v4.6.2: act 0.2.89's artifact server answers v7's "
        "CreateArtifact with an empty body ('Unexpected end of JSON input'); v4.6.2 uses the "
        "same artifact API and inputs, and download-artifact v8.0.1 reads what it uploads",
    ),
}


def with_substitutes(
    actions: list[tuple[str, Path]], substitutes: dict[str, tuple[str, str]] | None = None
) -> tuple[list[tuple[str, Path]], list[str]]:
    """The actions with each substituted one pointing at its substitute's folder, and why."""
    substitutes = SUBSTITUTES if substitutes is None else substitutes
    folders = dict(actions)
    out, notes = [], []
    for name, folder in actions:
        if name in substitutes and substitutes[name][0] in folders:
            out.append((name, folders[substitutes[name][0]]))
            notes.append(f"{name}: {substitutes[name][1]}")
        else:
            out.append((name, folder))
    return out, notes


def local_actions(actions_root: Path) -> list[tuple[str, Path]]:
    """`owner/name@ref` for each `<owner>/<name>@<ref>` folder under actions_root."""
    found: list[tuple[str, Path]] = []
    if not actions_root.is_dir():
        return found
    for owner in sorted(p for p in actions_root.iterdir() if p.is_dir()):
        for folder in sorted(p for p in owner.iterdir() if p.is_dir()):
            if _ACTION_DIR.match(folder.name):
                found.append((f"{owner.name}/{folder.name}", folder))
    return found


@dataclass
class ActRun:
    """Everything one act invocation needs."""

    act: str
    workflow: Path
    event: str
    event_path: Path
    action_cache: Path
    cache_dir: Path
    cache_port: int
    artifact_dir: Path
    artifact_port: int
    actions: Sequence[tuple[str, Path]]
    job: str | None = None
    matrix: Mapping[str, Sequence[str]] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    inputs: Mapping[str, str] = field(default_factory=dict)
    secrets: Sequence[str] = ()  # names only: the values travel in act's environment
    variables: Mapping[str, str] = field(default_factory=dict)  # ${{ vars.NAME }}
    server_host: str = "127.0.0.1"

    def argv(self) -> list[str]:
        require_loopback_host(self.server_host, "act's cache and artifact servers")
        for name in GITHUB_URL_VARIABLES:
            if name in self.env:
                require_local_url(self.env[name], name)
        argv = [
            self.act,
            self.event,
            "-W",
            str(self.workflow),
            "-e",
            str(self.event_path),
            "-P",
            PLATFORM,
            "--json",
            "--action-offline-mode",
            "--action-cache-path",
            str(self.action_cache),
            "--cache-server-addr",
            self.server_host,
            "--cache-server-port",
            str(self.cache_port),
            "--cache-server-path",
            str(self.cache_dir),
            "--artifact-server-addr",
            self.server_host,
            "--artifact-server-port",
            str(self.artifact_port),
            "--artifact-server-path",
            str(self.artifact_dir),
            "--concurrent-jobs",
            "1",
        ]
        if self.job:
            argv += ["-j", self.job]
        for name, folder in self.actions:
            argv += ["--local-repository", f"{name}={folder}"]
        for key, values in sorted(self.matrix.items()):
            for value in values:
                argv += ["--matrix", f"{key}:{value}"]
        for key, value in sorted(self.env.items()):
            argv += ["--env", f"{key}={value}"]
        for key, value in sorted(self.inputs.items()):
            argv += ["--input", f"{key}={value}"]
        for key, value in sorted(self.variables.items()):
            argv += ["--var", f"{key}={value}"]
        for name in self.secrets:
            argv += ["-s", name]  # act reads the value from its own environment
        return argv
