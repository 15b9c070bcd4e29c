"""Turn the paths given to actions/cache into the ordered list of tar members.

Order matters only for compression ratio and for per-folder attribution; we
walk depth-first with sorted names so results are reproducible (GNU tar uses
directory order, which differs slightly: the 1% tolerance covers that).
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .errors import MeasureError


@dataclass(frozen=True)
class Member:
    """One archive entry: where it is on disk and what tar will call it."""

    path: str
    arcname: str
    st: os.stat_result
    group: str  # the top-level contributor it is counted under

    @property
    def is_file(self) -> bool:
        return stat.S_ISREG(self.st.st_mode)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.st.st_mode)


def archive_name(path: str, cwd: str) -> str:
    """Name as actions/cache stores it: relative to the workspace, '/'-separated."""
    rel = os.path.relpath(os.path.abspath(path), cwd)
    return rel.replace(os.sep, "/")


def expand_patterns(patterns: Iterable[str], cwd: str) -> list[str]:
    """Expand ``~`` and glob patterns the way a ``path:`` input would.

    A literal path that does not exist, or a pattern matching nothing, is an
    error rather than a silent zero: a cache of nothing is always a mistake.
    """
    out: list[str] = []
    for raw in patterns:
        pattern = raw.strip()
        if not pattern:
            continue
        if pattern.startswith("!"):
            raise MeasureError(
                f"path {raw!r}: exclusion patterns ('!...') are not supported; "
                "list the paths to include instead"
            )
        expanded = os.path.expanduser(pattern)
        if not os.path.isabs(expanded):
            expanded = os.path.join(cwd, expanded)
        if glob.has_magic(expanded):
            matches = sorted(glob.glob(expanded, recursive=True))
            if not matches:
                raise MeasureError(
                    f"path pattern {raw!r} matches nothing under {cwd!r}; "
                    "check the pattern and the working directory"
                )
            out.extend(matches)
        else:
            if not os.path.lexists(expanded):
                raise MeasureError(
                    f"path {raw!r} does not exist (looked for {expanded!r}); "
                    "check the path or run from the workspace root"
                )
            out.append(expanded)
    if not out:
        raise MeasureError("no paths given: name at least one file or directory to measure")
    return out


def _lstat(path: str) -> os.stat_result:
    try:
        return os.lstat(path)
    except OSError as exc:
        raise MeasureError(
            f"cannot stat {path!r}: {exc.strerror}; check it exists and is readable"
        ) from None


def _children(path: str) -> list[str]:
    try:
        with os.scandir(path) as it:
            return sorted(entry.name for entry in it)
    except PermissionError:
        raise MeasureError(
            f"directory {path!r} is not readable (permission denied); "
            "fix its permissions or leave it out of the cache paths"
        ) from None
    except OSError as exc:
        raise MeasureError(f"cannot list directory {path!r}: {exc.strerror}") from None


def _walk_one(path: str, arcname: str, group: str) -> Iterator[Member]:
    st = _lstat(path)
    if stat.S_ISSOCK(st.st_mode):
        return  # tar skips sockets ("socket ignored")
    yield Member(path, arcname, st, group)
    if stat.S_ISDIR(st.st_mode):  # lstat: symlinked dirs are stored as links, not followed
        for name in _children(path):
            yield from _walk_one(os.path.join(path, name), f"{arcname}/{name}", group)


def iter_members(paths: Iterable[str], cwd: str | None = None) -> Iterator[Member]:
    """Yield members for already-expanded paths, grouped by top-level entry.

    For a directory argument each child is its own group (e.g. one zoo model);
    for a file argument the file is the group.
    """
    cwd = cwd or os.getcwd()
    for path in paths:
        arc = archive_name(path, cwd)
        st = _lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            yield from _walk_one(path, arc, arc)
            continue
        yield Member(path, arc, st, arc)
        for name in _children(path):
            child_arc = f"{arc}/{name}" if arc != "." else name
            yield from _walk_one(os.path.join(path, name), child_arc, child_arc)


def collect_members(patterns: Iterable[str], cwd: str | None = None) -> list[Member]:
    """Expand patterns and list every member (stat only; contents not read)."""
    cwd = cwd or os.getcwd()
    return list(iter_members(expand_patterns(patterns, cwd), cwd))
