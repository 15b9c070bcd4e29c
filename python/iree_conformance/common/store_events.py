"""What the artifact store could not do, told once at the end of a run.

The store is a cache: an entry it cannot write (a full disk, a read-only folder) or one
it finds damaged (a truncated file) costs time, never a verdict, so the run goes on. But
the user must hear of it, once: the workers that meet it run in child processes whose
stderr nobody reads. So each such event is appended, one JSON line, to the file that
``$IREE_CONFORMANCE_STORE_EVENTS`` names (the controlling pytest process makes it with
``begin`` and every worker inherits it), and the run's end prints ``summary`` of it.
Without the variable an event is printed to stderr.
"""

from __future__ import annotations

import collections
import errno
import json
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["EVENTS_ENV", "begin", "end", "not_stored", "damaged", "summary"]

EVENTS_ENV = "IREE_CONFORMANCE_STORE_EVENTS"

_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _record(event: dict[str, str]) -> None:
    path = os.environ.get(EVENTS_ENV)
    if path:
        try:
            with open(path, "a", encoding="utf-8", newline="\n") as f:  # one short append per event
                f.write(json.dumps(event, sort_keys=True) + "\n")
            return
        except OSError:
            pass
    print(
        f"iree-conformance: store: {event['event']} {event['entry']}: {event['detail']}",
        file=sys.stderr,
    )


def not_stored(root: Path | None, kind: str, key: str, error: OSError) -> None:
    """An entry the store could not write (``error``: why)."""
    reason = "full" if error.errno in _FULL else "not writable"
    _record(
        {
            "event": "not-stored",
            "reason": reason,
            "root": str(root or ""),
            "entry": f"{kind} {key[:12]}",
            "kind": kind,
            "detail": error.strerror or str(error),
        }
    )


def damaged(root: Path | None, kind: str, key: str, detail: str) -> None:
    """An entry found damaged (it fails its length or digest check) and dropped."""
    _record(
        {
            "event": "damaged",
            "root": str(root or ""),
            "entry": f"{kind} {key[:12]}",
            "kind": kind,
            "detail": detail,
        }
    )


def begin() -> Path | None:
    """Makes the events file of this run and names it in the environment the workers
    inherit; None when an outer process already did (its file is the run's)."""
    if os.environ.get(EVENTS_ENV):
        return None
    fd, name = tempfile.mkstemp(prefix="iree-conformance-store-events-", suffix=".jsonl")
    os.close(fd)
    os.environ[EVENTS_ENV] = name
    return Path(name)


def end(path: Path | None) -> None:
    """Removes the events file ``begin`` made."""
    if path is not None:
        if os.environ.get(EVENTS_ENV) == str(path):
            del os.environ[EVENTS_ENV]
        path.unlink(missing_ok=True)


_KIND_WORDS = {
    "vmfb": "compiled modules",
    "mlir": "imports",
    "failure": "failures",
    "member": "batch index entries",
    "timing": "reference set-up records",
    "repro-run": "reproducer verification runs",
}


def summary(path: Path | None) -> list[str]:
    """One line per store problem of the run (none: an empty list)."""
    if path is None:
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    events = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a killed worker
    out = []
    missed = [e for e in events if e.get("event") == "not-stored"]
    if missed:
        by_kind = collections.Counter(
            e.get("kind", "?") for e in {e["entry"]: e for e in missed}.values()
        )
        what = ", ".join(f"{n} {_KIND_WORDS.get(k, k)}" for k, n in sorted(by_kind.items()))
        first = missed[0]
        state = "is full" if first.get("reason") == "full" else "cannot be written"
        out.append(
            f"the artifact store {first.get('root')} {state} ({first.get('detail')}): "
            f"{sum(by_kind.values())} entries were not stored ({what}); the next run compiles "
            "them again. Free space there or point --store-dir (IREE_CONFORMANCE_STORE) elsewhere"
        )
    broken = {e["entry"]: e for e in events if e.get("event") == "damaged"}
    if broken:
        first = next(iter(broken.values()))
        names = ", ".join(sorted(broken)[:5]) + (" ..." if len(broken) > 5 else "")
        out.append(
            f"the artifact store {first.get('root')} held {len(broken)} damaged entries "
            f"({names}: {first.get('detail')}); they were dropped and compiled again"
        )
    return out
