"""GitHub annotations for unexpected results, at the file and line a reader fixes.

Fed from results JSON outcomes (``report.py``'s schema; ``merging`` adds os/arch):

- a strict XPASS is an ``error`` at the manifest line to delete (``info["manifest"]``,
  written by ``Verdict.record``);
- a failure of a listed case with another kind is an ``error`` at its manifest line;
- a new failure is an ``error`` at the case's source (``info["source"]``: the ``.mlir``
  file and line of the failing check op, a lit case's RUN line, the ONNX model), with the
  manifest line to add in the message; a source outside the workspace (generated ONNX
  operator tests, downloaded zoo models) cannot be linked, so it points at the manifest
  where the line goes instead;
- a result that changed when retried (flaky, not declared in the manifest) is a
  ``warning``. A declared flaky case is expected and gets none.

GitHub shows only the first 10 annotations of each level per step, so the most useful
come first (linked sources, then XPASS lines to delete, then the rest) and whatever is
over the limit is counted in one closing ``notice``.

Workflow commands are escaped as the runner reads them (actions/toolkit's
``command.ts``): ``%``, ``\\r``, ``\\n`` in the message, and also ``:`` and ``,`` in
properties. Standard library only: the ci/ scripts import it before any install.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

LEVELS = ("error", "warning", "notice")
PER_LEVEL = 10  # GitHub's display limit per level and step
MESSAGE_LIMIT = 4000  # characters of a message (the annotation API cuts at 64 KiB)
EXPECTATIONS_DIR = "conformance/expectations"

__all__ = [
    "Annotation",
    "annotations_for",
    "emit",
    "escape_data",
    "escape_property",
    "limited",
]


def escape_data(text: str) -> str:
    """A workflow command's message: % CR LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (file, title): the message's escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclasses.dataclass(frozen=True)
class Annotation:
    level: str  # error | warning | notice
    title: str
    message: str
    file: str | None = None  # relative to the workspace, "/" separated
    line: int | None = None
    rank: int = 0  # lower first within a level

    def command(self) -> str:
        """The ``::level file=...,line=...,title=...::message`` line."""
        props = []
        if self.file:
            props.append(f"file={escape_property(self.file)}")
            if self.line:
                props.append(f"line={int(self.line)}")
        if self.title:
            props.append(f"title={escape_property(self.title)}")
        message = self.message
        if len(message) > MESSAGE_LIMIT:
            message = message[: MESSAGE_LIMIT - 1] + "…"
        head = f"::{self.level} {','.join(props)}" if props else f"::{self.level}"
        return f"{head}::{escape_data(message)}"


def workspace_path(path: str | None, workspace: Path) -> str | None:
    """``path`` relative to the workspace ("/" separated), None when outside it."""
    if not path:
        return None
    p = Path(path)
    if not p.is_absolute():
        p = workspace / p
    try:
        rel = Path(os.path.abspath(p)).relative_to(os.path.abspath(workspace))
    except ValueError:
        return None
    return rel.as_posix()


def _where(info: Any, key: str) -> tuple[str | None, int | None]:
    loc = info.get(key) if isinstance(info, Mapping) else None
    if not isinstance(loc, Mapping):
        return None, None
    path, line = loc.get("path"), loc.get("line")
    return (
        str(path) if isinstance(path, str) and path else None,
        line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None,
    )


def _manifest_for(target: str, os_name: str | None, directory: str) -> str:
    """The manifest a new failure is recorded in: the base file on Linux, the per-OS
    overlay elsewhere (as the nightly's ``--update-expectations`` writes them)."""
    if os_name and os_name != "linux":
        return f"{directory}/{target}.{os_name}.toml"
    return f"{directory}/{target}.toml"


def _insertion_line(manifest: Path, case_id: str) -> int | None:
    """The line above which ``case_id``'s entry goes in the sorted ``[xfail]`` table (the
    table's header line when it would be last or the table is empty); None without it."""
    from iree_conformance.common.errors import ConformanceError
    from iree_conformance.expectations.manifest import read_manifest

    try:
        parsed = read_manifest(manifest)
    except (ConformanceError, OSError):
        return None
    keys = sorted((k, n) for (table, k), n in parsed.key_lines.items() if table == "xfail")
    for key, number in keys:
        if key > case_id:
            return number
    return parsed.table_lines.get("xfail")


def _entry_to_add(outcome: Mapping[str, Any], stages: list[str]) -> str:
    """The manifest line that would list this result (``manifest.entry_line``)."""
    from iree_conformance.expectations.manifest import EXPECT_KEY, _reason_for, entry_line

    reason = _reason_for(_as_outcome(outcome))
    expect: Any = stages[0] if len(stages) == 1 else stages
    return entry_line("xfail", str(outcome.get("case_id")), {EXPECT_KEY: expect, "reason": reason})


def _first_line(outcome: Mapping[str, Any]) -> str:
    for line in outcome.get("diagnostics") or []:
        if str(line).strip():
            return str(line).strip()
    return str(outcome.get("reason") or "")


def _as_outcome(outcome: Mapping[str, Any]) -> Any:
    """The Outcome of a results JSON record (the loaders require fewer fields)."""
    from iree_conformance.model.outcome import Outcome

    record = {"suite": "", "diagnostics": [], **outcome}
    record["diagnostics"] = [str(d) for d in record.get("diagnostics") or []]
    return Outcome.from_json(record)


def _kind(outcome: Mapping[str, Any]) -> str:
    return str(_as_outcome(outcome).observed)


def annotations_for(
    outcomes: Iterable[Mapping[str, Any]],
    workspace: str | Path | None = None,
    expectations_dir: str = EXPECTATIONS_DIR,
    os_name: str | None = None,
) -> list[Annotation]:
    """One annotation per unexpected result, most useful first (see the module doc).

    workspace: the checkout the paths are made relative to ($GITHUB_WORKSPACE, else the
    current folder); os_name: the run's OS when outcomes carry none (a results file's
    metadata), which picks the manifest a new failure goes to.
    """
    root = Path(workspace or os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    found: list[Annotation] = []
    for o in outcomes:
        verdict = o.get("verdict")
        case, target = str(o.get("case_id")), str(o.get("target"))
        where_run = o.get("os") or os_name
        label = f"{target}:{case}" + (f" ({where_run})" if o.get("os") else "")
        info = o.get("info") or {}
        manifest_path, manifest_line = _where(info, "manifest")
        manifest_file = workspace_path(manifest_path, root)
        if verdict == "xpass":
            found.append(
                Annotation(
                    "error",
                    f"XPASS(strict) {label}",
                    f"{case} now passes on {target} but is listed as {o.get('expected')}: "
                    "delete this line.",
                    manifest_file,
                    manifest_line,
                    rank=1 if manifest_file else 3,
                )
            )
            continue
        if verdict not in ("fail", "flaky"):
            continue
        kind = _kind(o)
        flaky = verdict == "flaky"
        if flaky and not o.get("attempts"):
            continue  # a declared flaky case: expected
        first = _first_line(o)
        if flaky:
            seen = [a.get("kind") for a in o.get("attempts") or [] if isinstance(a, Mapping)]
            stages = sorted({str(k) for k in [*seen, kind] if k})
            title, level = f"Flaky {label}", "warning"
            text = f"{case} changed when retried in a fresh worker ({' then '.join(map(str, [*seen, kind]))})."
        elif o.get("expected"):
            # Listed with another kind: the manifest line to change.
            stages, title, level = [kind], f"Failure {label}", "error"
            text = f"{case} is listed as {o.get('expected')} but got {kind}: {first}"
            if manifest_file:
                found.append(
                    Annotation(
                        level,
                        title,
                        text + "\nChange this line to:\n" + _entry_to_add(o, stages),
                        manifest_file,
                        manifest_line,
                        rank=2,
                    )
                )
                continue
        else:
            stages, title, level = [kind], f"New failure {label}", "error"
            text = f"{case} on {target}: {kind}: {first}"
        add_to = _manifest_for(target, where_run, expectations_dir)
        text += f"\nIf this is a known IREE failure, add to {add_to}:\n" + _entry_to_add(o, stages)
        source_path, source_line = _where(info, "source")
        source_file = workspace_path(source_path, root)
        if source_file:
            found.append(Annotation(level, title, text, source_file, source_line, rank=0))
        else:
            if source_path:
                text += f"\nSource: {source_path}"
            line = _insertion_line(root / add_to, case)
            linked = (root / add_to).is_file()
            found.append(
                Annotation(
                    level, title, text, add_to if linked else None, line if linked else None, 4
                )
            )
    order = {level: i for i, level in enumerate(LEVELS)}
    return sorted(found, key=lambda a: (order[a.level], a.rank, a.file or "~", a.line or 0))


def limited(annotations: list[Annotation], per_level: int = PER_LEVEL) -> list[Annotation]:
    """The first ``per_level`` of each level, then one notice counting the rest."""
    kept: list[Annotation] = []
    left: dict[str, int] = {}
    for a in annotations:
        if sum(1 for k in kept if k.level == a.level) < per_level:
            kept.append(a)
        else:
            left[a.level] = left.get(a.level, 0) + 1
    if left:
        counted = ", ".join(f"{n} more {level}(s)" for level, n in left.items())
        kept.append(
            Annotation(
                "notice",
                "More unexpected results",
                f"{counted} not shown here (GitHub shows {per_level} per level): see the "
                "step summary and the results JSON.",
            )
        )
    return kept


def emit(
    annotations: list[Annotation],
    out: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Prints the annotations (limited) as workflow commands on GitHub Actions, else as
    ``level: file:line: title: message`` lines on stderr; returns how many were printed."""
    env = os.environ if env is None else env
    on_actions = env.get("GITHUB_ACTIONS") == "true"
    stream = out or (sys.stdout if on_actions else sys.stderr)
    shown = limited(annotations)
    for a in shown:
        if on_actions:
            print(a.command(), file=stream)
        else:
            where = f"{a.file}:{a.line}: " if a.file and a.line else f"{a.file}: " if a.file else ""
            title = f"{a.title}: " if a.title else ""
            print(f"{a.level}: {where}{title}{a.message}", file=stream)
    stream.flush()
    return len(shown)


def annotate_results(
    data: Mapping[str, Any],
    workspace: str | Path | None = None,
    expectations_dir: str = EXPECTATIONS_DIR,
    out: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Emits the annotations of one results document (a run's or a merged one)."""
    meta = data.get("metadata") if isinstance(data.get("metadata"), Mapping) else {}
    outcomes = [o for o in data.get("outcomes") or [] if isinstance(o, Mapping)]
    found = annotations_for(outcomes, workspace, expectations_dir, (meta or {}).get("os"))
    return emit(found, out, env)
