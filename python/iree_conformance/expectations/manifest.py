"""The expectations manifest format: the one module that reads, locates, updates, merges
and writes ``conformance/expectations/<target>.toml`` (and ``<target>.<os>.toml``).

The format (``expectations.py`` gives the meaning)::

    # Known IREE failures and tolerance overrides for target llvm-cpu-host.
    # recorded on: x86_64:AMD EPYC:6a93d771884cba54

    [xfail]
    "stablehlo/foo" = { expect = "fail-compile", reason = "error: ..." }

    [tolerance]
    "onnx-ops/test_bar" = { rtol = 1e-3, reason = "fast exp approximation" }

Three layers, used by everything that touches a manifest:

* **reading** (standard library only; ``ci/expectations_patch.py`` imports it from the
  source tree): ``read_manifest`` parses with ``tomlio`` and keeps, from one scan of the
  lines (``scan``), the line of every table header and key, so errors say
  ``file:line``; ``header_of`` / ``recorded_on`` read the leading comment block.
* **updating** (``updated_entries``, ``update_manifest``, ``update_manifests``): a run's
  Outcomes turned into the new ``[xfail]`` table (new failures added, fixed ones
  dropped, reasons kept; in overlay mode only the differences from the base file). The
  pytest plugin's ``--update-expectations``, ``iree-conformance update-expectations``
  and ``iree-conformance flakes --update-expectations`` all call ``update_manifests``.
* **writing** (``write_manifest``) edits the existing file with tomlkit: comments, the
  header and the layout stay; an unchanged entry keeps its bytes, a changed entry is
  replaced in place, a new one is inserted at its sorted position, a fixed one's line
  is deleted. Writes go through ``fsutil`` (atomic, ``\\n`` line ends).
* **merging** (``entry_tables``, ``merge_tables``, ``rebuild``): the nightly's three-way
  merge of the shards' versions of one manifest, entry by entry (one entry per line).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iree_conformance.common.errors import ManifestError
from iree_conformance.common.tomlio import TomlError, loads_toml, read_toml_text
from iree_conformance.common.vocabulary import Status

if TYPE_CHECKING:  # pragma: no cover
    from iree_conformance.model.outcome import Outcome

TABLES = ("xfail", "tolerance")
RECORDED_ON = "# recorded on: "
OVERLAY_PASS_REASON = "passes on this OS"

# -- reading -----------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(?:#.*)?$")
_KEY = re.compile(r"""^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")


@dataclasses.dataclass(frozen=True)
class Line:
    """One line of a manifest, as ``scan`` classifies it."""

    number: int  # 1-based
    text: str
    kind: str  # "blank" | "comment" | "header" | "entry" | "other"
    table: str  # the table it is in ("" before the first header); for a header, its name
    key: str | None = None  # an entry's key, unquoted
    raw_key: str | None = None  # an entry's key as written


def _unquote(raw: str) -> str | None:
    if raw.startswith('"'):
        try:
            return json.loads(raw)
        except ValueError:
            return None
    return raw.strip("'")


def scan(text: str) -> Iterator[Line]:
    """Every line with its kind, table and (for an entry) key: the one line scanner."""
    table = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            yield Line(number, line, "blank", table)
        elif stripped.startswith("#"):
            yield Line(number, line, "comment", table)
        elif header := _HEADER.match(line):
            table = header.group(1).strip()
            yield Line(number, line, "header", table)
        elif (m := _KEY.match(line)) and (key := _unquote(m.group(1))) is not None:
            yield Line(number, line, "entry", table, key, m.group(1))
        else:
            yield Line(number, line, "other", table)


@dataclasses.dataclass
class ManifestFile:
    """A parsed manifest: its data, and where each table and key is written."""

    path: Path
    text: str
    data: dict[str, Any]
    table_lines: dict[str, int]
    key_lines: dict[tuple[str, str], int]

    def table(self, name: str) -> dict[str, Any]:
        value = self.data.get(name, {})
        return value if isinstance(value, dict) else {}

    def where(self, table: str, key: str | None = None) -> str:
        """``path:line`` of a key (or of the table's header), ``path`` if not found."""
        line = self.key_lines.get((table, key)) if key is not None else None
        line = line or self.table_lines.get(table) or self.key_lines.get(("", table))
        return f"{self.path}:{line}" if line else str(self.path)

    @property
    def header(self) -> str:
        return header_of(self.text)

    @property
    def recorded_on(self) -> str | None:
        return _recorded_on(self.header)


def parse_manifest(text: str, path: str | Path = "<manifest>") -> ManifestFile:
    """Parses a manifest's text; a TOML syntax error is a ManifestError naming path:line."""
    data = loads_toml(text, path)
    table_lines: dict[str, int] = {}
    key_lines: dict[tuple[str, str], int] = {}
    for line in scan(text):
        if line.kind == "header":
            table_lines.setdefault(line.table, line.number)
        elif line.kind == "entry" and line.key is not None:
            key_lines.setdefault((line.table, line.key), line.number)
    return ManifestFile(Path(path), text, data, table_lines, key_lines)


def read_manifest(path: str | Path) -> ManifestFile:
    """Reads and parses one manifest file (ManifestError when missing or malformed)."""
    return parse_manifest(read_toml_text(path), path)


def xfail_table(path: Path) -> dict[str, dict[str, Any]]:
    """The [xfail] table of path, {} when the file does not exist."""
    return read_manifest(path).table("xfail") if Path(path).exists() else {}


def header_of(text: str) -> str:
    """The comment lines at the top of a manifest (its header), without a final newline."""
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    return "\n".join(header)


def _recorded_on(header: str) -> str | None:
    for line in header.splitlines():
        if line.startswith(RECORDED_ON):
            return line[len(RECORDED_ON) :].strip()
    return None


def recorded_on(path: Path) -> str | None:
    """The CPU fingerprint in a host-specific manifest's header (``# recorded on: ...``)."""
    try:
        return _recorded_on(header_of(Path(path).read_text(encoding="utf-8-sig")))
    except OSError:
        return None


def with_recorded_on(header: str, fingerprint: str) -> str:
    """The header with its ``# recorded on:`` line set to fingerprint."""
    lines = [ln for ln in header.splitlines() if not ln.startswith(RECORDED_ON)]
    return "\n".join([*lines, RECORDED_ON + fingerprint])


def manifest_paths(directory: Path, target: str, os_name: str) -> tuple[Path, Path]:
    """The target's base manifest and its per-OS overlay."""
    return Path(directory) / f"{target}.toml", Path(directory) / f"{target}.{os_name}.toml"


# -- updating ----------------------------------------------------------------------------


def _reason_for(outcome: Outcome) -> str:
    from iree_conformance.common.diagnostics import normalize

    for line in outcome.diagnostics:
        if line.strip():
            return normalize(line) if len(line) > 200 else line.strip()
    return outcome.failure_kind or "failed"


#: The key of an [xfail] entry that holds the expected kind; ``stage`` is its old name,
#: still read (``migrate_manifest`` renames it).
EXPECT_KEY = "expect"
OLD_EXPECT_KEY = "stage"


def expected_of(spec: Mapping[str, Any]) -> Any:
    """An [xfail] entry's expected kind (or list of kinds), under either key."""
    return spec.get(EXPECT_KEY, spec.get(OLD_EXPECT_KEY))


def _as_list(stage: Any) -> list[str]:
    return list(stage) if isinstance(stage, list) else [stage] if stage else []


def _kind_order(kind: str) -> int:
    from iree_conformance.model.outcome import EXPECTATION_KINDS

    order = ("pass",) + EXPECTATION_KINDS
    return order.index(kind) if kind in order else len(order)


def updated_entries(
    current: dict[str, dict[str, Any]], outcomes: Iterable[Outcome]
) -> dict[str, dict[str, Any]]:
    """The xfail table after a run: new failures added, fixed ones dropped, reasons kept."""
    entries = {k: dict(v) for k, v in current.items()}
    for outcome in outcomes:
        kind = outcome.failure_kind
        if outcome.status == Status.SKIP:
            continue
        seen = sorted({a["kind"] for a in outcome.attempts} | {outcome.observed}, key=_kind_order)
        old = entries.get(outcome.case_id)
        old_stages = _as_list(expected_of(old)) if old else []
        if len(old_stages) > 1 and set(seen) <= set(old_stages):
            continue  # a declared flaky case stays declared while it keeps to its kinds
        if len(seen) > 1:
            entries[outcome.case_id] = {
                EXPECT_KEY: seen,
                "reason": f"flaky: {' and '.join(seen)} in one run (retried in a fresh worker)",
            }
            continue
        if kind is None:
            entries.pop(outcome.case_id, None)
            continue
        if old and expected_of(old) == kind:
            continue
        entries[outcome.case_id] = {EXPECT_KEY: kind, "reason": _reason_for(outcome)}
    return entries


def update_manifest(
    path: Path,
    target: str,
    outcomes: Sequence[Outcome],
    base: dict[str, dict[str, Any]] | None = None,
    host: str | None = None,
) -> bool:
    """Rewrites path from a run; with base given (an overlay), keeps only the differences.

    host: for a host-specific target, the CPU fingerprint the header records. Returns
    True when the file changed.
    """
    path = Path(path)
    current = read_manifest(path) if path.exists() else None
    existing = current.table("xfail") if current else {}
    if base is None:
        entries = updated_entries(existing, outcomes)
    else:
        merged = {**base, **existing}
        merged = {k: v for k, v in merged.items() if expected_of(v) != "pass"}
        entries_all = updated_entries(merged, outcomes)
        entries = {k: v for k, v in entries_all.items() if base.get(k) != v}
        for case_id in base:
            if case_id not in entries_all:
                entries[case_id] = {EXPECT_KEY: "pass", "reason": OVERLAY_PASS_REASON}
    header = None
    if host is not None:
        old_header = current.header if current else ""
        header = with_recorded_on(old_header or default_header(target), host)
    return write_manifest(path, target, entries, header=header)


def update_manifests(
    directory: Path,
    outcomes: Sequence[Outcome],
    os_name: str,
    overlay: bool = False,
    hosts: Mapping[str, str | None] | None = None,
    targets: Iterable[str] | None = None,
) -> list[tuple[Path, bool]]:
    """Applies a run's Outcomes to each target's manifest: the base file, or with overlay
    the per-OS file holding the differences from the base. The one implementation behind
    ``--update-expectations``, ``iree-conformance update-expectations`` and ``flakes``.

    hosts: target -> CPU fingerprint for host-specific targets (the base header records
    it). targets: the targets to write (default: those the Outcomes name). Returns
    ``(path, changed)`` per target.
    """
    hosts = hosts or {}
    names = sorted(set(targets) if targets is not None else {o.target for o in outcomes})
    written = []
    for target in names:
        ran = [o for o in outcomes if o.target == target]
        base_path, overlay_path = manifest_paths(directory, target, os_name)
        if overlay:
            changed = update_manifest(overlay_path, target, ran, base=xfail_table(base_path))
            written.append((overlay_path, changed))
        else:
            written.append(
                (base_path, update_manifest(base_path, target, ran, host=hosts.get(target)))
            )
    return written


# -- writing -----------------------------------------------------------------------------


def default_header(target: str) -> str:
    return f"# Known IREE failures and tolerance overrides for target {target}."


def toml_string(value: str) -> str:
    """A basic TOML string (JSON's escapes are TOML's; DEL escaped too)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return repr(value)
    raise ManifestError(f"cannot write {value!r} into a manifest entry")


_ORDER = {
    "xfail": (EXPECT_KEY, OLD_EXPECT_KEY, "reason", "issue"),
    "tolerance": ("rtol", "atol", "reason"),
}


def entry_text(table: str, spec: dict[str, Any]) -> str:
    """An entry's inline table as the manifests write it: ``{ expect = ..., reason = ... }``."""
    order = _ORDER.get(table, ())
    keys = [k for k in order if spec.get(k) is not None] + sorted(k for k in spec if k not in order)
    return "{ " + ", ".join(f"{k} = {_toml_value(spec[k])}" for k in keys) + " }"


def entry_line(table: str, key: str, spec: dict[str, Any]) -> str:
    return f"{toml_string(key)} = {entry_text(table, spec)}"


def render_manifest(
    target: str,
    xfail: dict[str, dict[str, Any]],
    tolerance: dict[str, dict[str, Any]],
    header: str = "",
) -> str:
    """A new manifest's text: header, then each table sorted by key."""
    lines = [(header or default_header(target)).rstrip("\n"), "", "[xfail]"]
    lines += [entry_line("xfail", k, xfail[k]) for k in sorted(xfail)]
    lines += ["", "[tolerance]"]
    lines += [entry_line("tolerance", k, tolerance[k]) for k in sorted(tolerance)]
    return "\n".join(lines) + "\n"


def _replace_header(text: str, header: str) -> str:
    lines = text.splitlines(keepends=True)
    n = 0
    while n < len(lines) and lines[n].startswith("#"):
        n += 1
    return "".join(line + "\n" for line in header.splitlines()) + "".join(lines[n:])


def _sync_table(table: Any, want: dict[str, dict[str, Any]], name: str) -> Any:
    """The tomlkit table that holds exactly ``want``, touching only the entries that differ.

    A changed entry is replaced in place; a new one goes right after the greatest key
    below it (else before the first entry), so a sorted table stays sorted and every
    comment and blank line keeps its place. tomlkit's public API has no positional
    insert, so the table's body is laid out anew through ``Container.append``."""
    import tomlkit

    for key in [k for k in table if k not in want]:
        del table[key]
    added: list[str] = []
    for key in sorted(want):
        spec = want[key]
        if key in table:
            old = table[key]
            if hasattr(old, "unwrap") and old.unwrap() == spec:
                continue
        item = tomlkit.parse(f"x = {entry_text(name, spec)}\n")["x"]
        if key in table:
            table[key] = item  # in place: the line keeps its position
        else:
            added.append(key)
            table[key] = item  # appended for now; placed below
    if added:
        return _with_new_entries_placed(table, set(added))
    return table


def _with_new_entries_placed(table: Any, added: set[str]) -> Any:
    """A copy of table (same header trivia) whose new keys sit in sorted position."""
    from tomlkit.container import Container
    from tomlkit.items import Table

    body = list(table.value.body)
    moved = sorted(
        ((k, v) for k, v in body if k is not None and k.key in added), key=lambda kv: kv[0].key
    )
    body = [(k, v) for k, v in body if k is None or k.key not in added]
    for key, item in moved:
        keyed = [i for i, (k, _) in enumerate(body) if k is not None]
        before = [i for i in keyed if body[i][0].key < key.key]
        if before:
            at = max(before, key=lambda i: body[i][0].key) + 1
        elif keyed:
            at = keyed[0]
        else:
            at = len(body)
        body.insert(at, (key, item))
    container = Container(parsed=True)
    for k, v in body:
        container.append(k, v)
    return Table(container, table.trivia, table.is_aot_element(), name=table.name)


def write_manifest(
    path: Path,
    target: str,
    xfail: dict[str, dict[str, Any]],
    tolerance: dict[str, dict[str, Any]] | None = None,
    header: str | None = None,
) -> bool:
    """Writes path so that its [xfail] (and, when given, [tolerance]) table holds exactly
    these entries, keeping everything else of the existing file: comments, blank lines,
    other tables, and the bytes of every entry that does not change. header replaces the
    leading comment block. Returns True when the file changed."""
    import tomlkit

    from iree_conformance.common.fsutil import atomic_write_text, sweep_stray_temps

    path = Path(path)
    old = path.read_text(encoding="utf-8-sig") if path.exists() else None
    text = old if old is not None else render_manifest(target, {}, {}, header or "")
    if header is not None and old is not None:
        text = _replace_header(text, header)
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as e:
        raise ManifestError(f"{path}:{e.line}: malformed TOML: {e}") from None
    for name, want in (("xfail", xfail), ("tolerance", tolerance)):
        if want is None:
            continue
        if name not in doc:
            if not want:
                continue
            doc.add(tomlkit.nl())
            doc.add(name, tomlkit.table())
        synced = _sync_table(doc[name], want, name)
        if synced is not doc[name]:
            doc[name] = synced
    new = doc.as_string()
    # A write killed before its rename (SIGKILL) leaves the manifest whole, old or new,
    # and a temporary file beside it: swept here, by the next write.
    sweep_stray_temps(path)
    if new == old:
        return False
    atomic_write_text(path, new)
    return True


# -- merging (the nightly's shards) -------------------------------------------------------

Tables = dict[str, dict[str, str]]


def entry_tables(text: str) -> Tables | None:
    """{table: {raw key: line}} when every entry is one line (how the manifests are
    written); None for anything else (a multi-line value, a stray line)."""
    tables: Tables = {"": {}}
    for line in scan(text):
        if line.kind in ("blank", "comment"):
            continue
        if line.kind == "header":
            tables.setdefault(line.table, {})
            continue
        if line.kind != "entry" or not _one_line_entry(line.text):
            return None
        tables.setdefault(line.table, {})[line.raw_key or ""] = line.text
    return tables


def _one_line_entry(line: str) -> bool:
    try:
        loads_toml(line)
    except TomlError:
        return False
    return True


def merge_tables(base: Tables, ours: Tables, theirs: Tables) -> tuple[Tables, list[str]]:
    """Three-way merge by key: a side that changed a key wins; both changing it differently conflicts."""
    merged: Tables = {}
    conflicts = []
    for table in [*ours, *(t for t in theirs if t not in ours)]:
        b, o, t = base.get(table, {}), ours.get(table, {}), theirs.get(table, {})
        result = {}
        for key in [
            *o,
            *(k for k in t if k not in o),
            *(k for k in b if k not in o and k not in t),
        ]:
            bv, ov, tv = b.get(key), o.get(key), t.get(key)
            if ov == tv or tv == bv:
                value = ov
            elif ov == bv:
                value = tv
            else:
                conflicts.append(f"[{table}] {key}" if table else key)
                continue
            if value is not None:
                result[key] = value
        merged[table] = result
    return merged, conflicts


def _sort_key(raw_key: str) -> str:
    return _unquote(raw_key) or raw_key


def rebuild(skeleton: str, tables: Tables) -> str:
    """skeleton's comments, blank lines and headers, each table's entries sorted under its header."""
    out: list[str] = []
    placed = set()

    def place(table: str) -> None:
        entries = tables.get(table, {})
        out.extend(entries[k] for k in sorted(entries, key=_sort_key))
        placed.add(table)

    lines = list(scan(skeleton))
    first_header = next((i for i, line in enumerate(lines) if line.kind == "header"), len(lines))
    for i, line in enumerate(lines):
        if i == first_header:
            place("")
        if line.kind == "header":
            out.append(line.text)
            place(line.table)
        elif line.kind != "entry":
            out.append(line.text)
    if first_header == len(lines):
        place("")
    for table in tables:
        if table not in placed and tables[table]:
            out += ["", f"[{table}]"]
            place(table)
    return "\n".join(out) + "\n"


# -- migrating ---------------------------------------------------------------------------
_OLD_KEY_LINE = re.compile(r"^(\s*(?:\"(?:[^\"\\]|\\.)*\"|[A-Za-z0-9_.-]+)\s*=\s*\{\s*)stage(\s*=)")


def migrated_text(text: str, path: str | Path = "<manifest>") -> str:
    """text with every [xfail] entry's ``stage =`` renamed ``expect =``, nothing else
    changed (checked: the parsed tables are the same but for the key)."""
    lines = text.splitlines(keepends=True)
    for line in scan(text):
        if line.kind == "entry" and line.table == "xfail":
            lines[line.number - 1] = _OLD_KEY_LINE.sub(r"\1expect\2", lines[line.number - 1])
    new = "".join(lines)
    before, after = parse_manifest(text, path), parse_manifest(new, path)

    def renamed(table: dict[str, Any]) -> dict[str, Any]:
        return {
            k: {(EXPECT_KEY if key == OLD_EXPECT_KEY else key): v for key, v in spec.items()}
            for k, spec in table.items()
        }

    left = [k for k, spec in after.table("xfail").items() if OLD_EXPECT_KEY in spec]
    if left or renamed(before.table("xfail")) != after.table("xfail"):
        where = after.where("xfail", left[0]) if left else str(path)
        raise ManifestError(f"{where}: cannot rename stage to expect here; edit the entry by hand")
    return new


def migrate_manifests(directory: Path) -> list[tuple[Path, bool]]:
    """Renames ``stage`` to ``expect`` in every manifest of directory; (path, changed)."""
    from iree_conformance.common.fsutil import atomic_write_text

    done = []
    for path in sorted(Path(directory).glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        new = migrated_text(text, path)
        if new != text:
            atomic_write_text(path, new)
        done.append((path, new != text))
    return done
