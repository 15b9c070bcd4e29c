"""ISSUE.md's "Did it work before?": the case's verdict per IREE version, from a
``versions`` or ``bisect`` result.

``repro --versions-result PATH`` names one: a results folder those commands wrote (their
``--out``, one results file per version), a ``versions --json`` comparison or a ``bisect
--json`` result. Without it, the newest run stored under ``<version stores>/_runs/`` that
holds the case answers. A result that cannot answer (not found, malformed, of another
target, without the case) is said so; the reproducer is written all the same.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import stat
import time
from pathlib import Path
from typing import Any

from iree_conformance.common.userdirs import RUNS_FOLDER, version_stores_dir
from iree_conformance.model.results import SCHEMA, ResultsError, load_results, parse_json
from iree_conformance.report import version_compare

#: (version label, what the case did there: "pass", a failure kind, "flaky", ...; None:
#: not run there, its revision)
Seen = tuple[str, str | None, str | None]
_RUN_STAMP = re.compile(r"-(\d{8}-\d{6})-\d+$")
#: The largest file read as a result (a results file of every onnx_ops case on one
#: target is about 10 MiB).
MAX_BYTES = 256 * 2**20


class Unusable(Exception):
    """A result that cannot say whether the case worked before (the message says why)."""


@dataclasses.dataclass(frozen=True)
class WorkedBefore:
    """The answer: ``text`` for ISSUE.md; ``source`` the file or folder it came from;
    ``problem`` why the result given could not answer; ``command`` what finds out."""

    text: str
    source: str | None = None
    problem: str | None = None
    command: str | None = None
    link: str | None = None  # GitHub's compare page between the last pass and the failure
    versions: tuple[Seen, ...] = ()
    skipped: tuple[str, ...] = ()  # files not read (not regular, too large or deep), and why

    def record(self) -> dict[str, Any]:
        """What repro.json keeps (``context.worked_before``): of its source, the name
        alone (the folder holds no path of this machine)."""
        return {
            "text": self.text,
            "source": Path(self.source).name if self.source else None,
            "problem": self.problem,
            "command": self.command,
            "compare": self.link,
            "versions": [
                {"version": label, "observed": kind, "revision": revision}
                for label, kind, revision in self.versions
            ],
        }


def find_out_command(case_id: str) -> str:
    """The command that answers the question for this case."""
    name = case_id.rsplit("/", 1)[-1]
    return f"iree-conformance versions previous installed -- -k {shlex.quote(name)}"


def not_known(case_id: str, problem: str | None = None) -> WorkedBefore:
    return WorkedBefore("not known", problem=problem, command=find_out_command(case_id))


def lookup(given: str | None, case_id: str, target: str) -> WorkedBefore:
    """From ``given`` (a path), else the newest stored run that holds the case."""
    skipped: list[str] = []
    if given:
        try:
            found = from_path(Path(given), case_id, target, skipped)
        except Unusable as e:
            found = not_known(case_id, str(e))
        except (TypeError, ValueError, KeyError, AttributeError) as e:  # a field of another shape
            found = not_known(case_id, f"{given} could not be read ({type(e).__name__}: {e})")
        return dataclasses.replace(found, skipped=tuple(skipped))
    runs = version_stores_dir() / RUNS_FOLDER
    for folder in stored_runs(runs):
        try:
            found = from_path(folder, case_id, target, skipped)
        except (Unusable, TypeError, ValueError, KeyError, AttributeError):
            continue
        return dataclasses.replace(found, skipped=tuple(skipped))
    return dataclasses.replace(not_known(case_id), skipped=tuple(skipped))


def read_json(path: Path) -> Any:
    """The JSON of ``path``, read only when it is a regular file (a FIFO or device is
    never opened for a blocking read) of at most ``MAX_BYTES``; ``Unusable`` names the
    file and why, nesting too deep for the parser included."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise Unusable(f"{path} cannot be read ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Unusable(f"{path} is not a regular file")
        if info.st_size > MAX_BYTES:
            raise Unusable(f"{path} is larger than {MAX_BYTES // 2**20} MiB")
        data = f.read(MAX_BYTES + 1)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise Unusable(f"{path} is not JSON ({e})") from None
    return parse_json(text, f"{path} is not JSON", Unusable)


def _is_results(data: Any) -> bool:
    """A JSON object of the results schema with an outcomes list."""
    return (
        isinstance(data, dict)
        and data.get("schema") == SCHEMA
        and isinstance(data.get("outcomes"), list)
    )


def stored_runs(root: Path) -> list[Path]:
    """The run folders of ``versions`` and ``bisect``, newest first (by their names' UTC
    stamp, else their modification time)."""
    if not root.is_dir():
        return []

    def when(folder: Path) -> str:
        """A sortable UTC stamp, from the name or else the modification time."""
        found = _RUN_STAMP.search(folder.name)
        if found:
            return found.group(1)
        try:
            mtime = folder.stat().st_mtime
        except OSError:
            return ""
        return time.strftime("%Y%m%d-%H%M%S", time.gmtime(mtime))

    try:
        folders = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        return []
    return sorted(folders, key=when, reverse=True)


def from_path(
    path: Path, case_id: str, target: str, skipped: list[str] | None = None
) -> WorkedBefore:
    """The answer from a results folder or a JSON file; ``Unusable`` says why not. A file
    of a folder that cannot be read is added to ``skipped``, with why."""
    if path.is_dir():
        files = [p for p in sorted(path.glob("*.json")) if ".rerun" not in p.name]
        results = []
        for file in files:
            try:
                if _is_results(read_json(file)):
                    results.append(file)
            except Unusable as e:
                if skipped is not None:
                    skipped.append(str(e))
        if not results:
            raise Unusable(
                f"{path} holds no results file (the folder `versions` or `bisect` wrote: "
                "one <version>.json per version)"
            )
        return _from_results(path, results, case_id, target)
    if not path.exists():
        raise Unusable(f"{path}: no such file or folder")
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("outcomes"), list):
        return _from_results(path, [path], case_id, target)
    if isinstance(data, dict) and isinstance(data.get("candidates"), list):
        return _from_bisect(path, data, case_id, target)
    if isinstance(data, dict) and isinstance(data.get("versions"), list):
        return _from_comparison(path, data, case_id, target)
    raise Unusable(
        f"{path} is neither a results file, a `versions --json` comparison nor a "
        "`bisect --json` result"
    )


def _matching(path: Path, found: list[tuple[str, str]], case_id: str, target: str) -> None:
    """Raises Unusable unless (target, case_id) is among ``found``."""
    if (target, case_id) in found:
        return
    others = sorted({t for t, c in found if c == case_id})
    if others:
        raise Unusable(f"{path} holds {case_id} for target {', '.join(others)}, not {target}")
    raise Unusable(f"{path} does not hold {case_id} (on {target})")


def _from_results(where: Path, files: list[Path], case_id: str, target: str) -> WorkedBefore:
    columns = []
    for path in files:
        try:
            columns.append(version_compare.column_of_results(load_results(path), path.stem))
        except ResultsError as e:
            raise Unusable(str(e)) from None
    columns.sort(key=version_compare.version_order)
    rows = version_compare.compare(columns)
    _matching(
        where, [(r.target, r.case_id) for r in rows if any(r.cells.values())], case_id, target
    )
    row = next(r for r in rows if (r.target, r.case_id) == (target, case_id))
    seen: list[Seen] = []
    for column in columns:
        cell = row.cells.get(column.label)
        kind = None
        if cell is not None:
            kind = "harness-error" if cell.harness else "flaky" if cell.flaky else cell.kind
        seen.append((column.label, kind, column.info.get("revision")))
    return _answer(where, seen)


def _from_comparison(path: Path, data: dict[str, Any], case_id: str, target: str) -> WorkedBefore:
    versions = [v for v in data["versions"] if isinstance(v, dict)]
    cases = [c for c in data.get("cases") or [] if isinstance(c, dict)]
    _matching(path, [(str(c.get("target")), str(c.get("case_id"))) for c in cases], case_id, target)
    case = next(
        c for c in cases if (str(c.get("target")), str(c.get("case_id"))) == (target, case_id)
    )
    given_kinds = case.get("kinds")
    kinds: dict[str, Any] = given_kinds if isinstance(given_kinds, dict) else {}
    seen = [
        (
            str(v.get("label")),
            _text_or_none(kinds.get(str(v.get("label")))),
            _text_or_none(v.get("revision")),
        )
        for v in versions
    ]
    return _answer(path, seen)


def _from_bisect(path: Path, data: dict[str, Any], case_id: str, target: str) -> WorkedBefore:
    cases = [c for c in data.get("cases") or [] if isinstance(c, dict)]
    _matching(path, [(str(c.get("target")), str(c.get("case_id"))) for c in cases], case_id, target)
    f = next(c for c in cases if (str(c.get("target")), str(c.get("case_id"))) == (target, case_id))
    old, new = str(f.get("old_kind")), str(f.get("new_kind"))
    if f.get("flaky_at"):
        return WorkedBefore(
            f"bisect found it flaky at IREE {f['flaky_at']} ({old} at one end, {new} at "
            "the other); not bisected further",
            source=str(path),
        )
    given = f.get("revisions")
    revisions: list[Any] = [*given, None, None] if isinstance(given, list) else [None, None]
    r_old, r_new = (_text_or_none(r) for r in revisions[:2])
    last, first = str(f.get("last_old")), str(f.get("first_new"))
    seen: tuple[Seen, ...] = ((last, old, r_old), (first, new, r_new))
    said = f"last {_verb(old)} on IREE {last}{_rev(r_old)}, first {_verb(new)} on IREE {first}{_rev(r_new)}"
    lead = "Yes: bisect found the " if old == "pass" else "bisect found the "
    return WorkedBefore(
        lead + said,
        source=str(path),
        link=version_compare.compare_link(r_old, r_new),
        versions=seen,
    )


def _text_or_none(value: Any) -> str | None:
    return str(value) if value is not None else None


def _verb(kind: str | None) -> str:
    return {"pass": "passed", None: "not run", "flaky": "flaky"}.get(kind, f"{kind}")


def _rev(revision: str | None) -> str:
    return f" (revision {revision[:12]})" if revision else ""


def _answer(where: Path, seen: list[Seen]) -> WorkedBefore:
    """The sentence of a case's verdicts per version, oldest first."""
    ran = [s for s in seen if s[1] is not None]
    said = ", ".join(f"{_verb(kind)} on IREE {label}{_rev(rev)}" for label, kind, rev in ran)
    passes = [i for i, s in enumerate(ran) if s[1] == "pass"]
    link = None
    if not ran:
        raise Unusable(f"{where} holds the case, skipped in every version")
    if ran[-1][1] == "pass":
        lead = f"It passes on IREE {ran[-1][0]}: "
    elif passes:
        last_pass = ran[passes[-1]]
        broke = ran[passes[-1] + 1]
        lead = f"Yes, on IREE {last_pass[0]}: "
        link = version_compare.compare_link(last_pass[2], broke[2])
    else:
        lead = "Not on the versions compared: "
    return WorkedBefore(lead + said, source=str(where), link=link, versions=tuple(ran))
