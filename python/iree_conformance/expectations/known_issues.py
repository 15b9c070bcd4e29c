"""Known upstream issues by failure signature (``conformance/known_issues.toml``).

A failure's *signature* is its stage and its normalized first error line
(``common.diagnostics.normalize``): the key of the report's failure groups. The file
maps signatures to upstream issues::

    [[known]]
    issue = "iree-org/iree#10841"
    stage = "compile"
    line = "error: failed to legalize operation 'stablehlo.select_and_scatter'"
    note = "the issue names the mhlo form of the op"

An entry matches a failure at its stage whose normalized first line starts with the
entry's normalized ``line`` (so an entry may give the stable head of a long line). A
manifest entry may also name its issue (``issue = "iree-org/iree#N"``,
expectations/lookup.py); that link wins for its case.

Standard library only: ``report/model.py`` and ci/ read it before any install.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from pathlib import Path

from iree_conformance.common.diagnostics import normalize
from iree_conformance.common.errors import ManifestError
from iree_conformance.common.tomlio import load_toml

__all__ = [
    "FILE_NAME",
    "ISSUE_PATTERN",
    "KnownIssue",
    "KnownIssues",
    "default_path",
    "issue_of",
    "issue_url",
    "load_known_issues",
    "valid_issue",
]

#: ``owner/repo#N``: what a link to an upstream issue is written as.
ISSUE_PATTERN = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+#[1-9]\d*$")
#: The file's name in the conformance folder.
FILE_NAME = "known_issues.toml"
_KEYS = ("issue", "stage", "line", "note")


def valid_issue(value: object) -> bool:
    return isinstance(value, str) and bool(ISSUE_PATTERN.match(value))


def issue_url(issue: str) -> str:
    """``iree-org/iree#12`` -> ``https://github.com/iree-org/iree/issues/12``."""
    repo, _, number = issue.partition("#")
    return f"https://github.com/{repo}/issues/{number}"


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    issue: str
    stage: str
    line: str  # normalized
    note: str = ""


@dataclasses.dataclass(frozen=True)
class KnownIssues:
    entries: tuple[KnownIssue, ...] = ()

    def match(self, stage: str, first_line: str) -> KnownIssue | None:
        """The first entry whose signature the failure (its stage, its first line, raw
        or normalized) has; None when no entry matches."""
        line = normalize(first_line)
        for entry in self.entries:
            if entry.stage == stage and entry.line and line.startswith(entry.line):
                return entry
        return None

    @classmethod
    def of(cls, entries: Iterable[KnownIssue]) -> KnownIssues:
        return cls(tuple(entries))


def default_path() -> Path:
    """./conformance/known_issues.toml, else the one of this checkout."""
    here = Path.cwd() / "conformance" / FILE_NAME
    return (
        here if here.is_file() else Path(__file__).resolve().parents[3] / "conformance" / FILE_NAME
    )


def issue_of(outcome: dict, known: KnownIssues, line: str) -> str | None:
    """The upstream issue of a failing outcome (a results record): its manifest entry's
    ``issue``, else the known issue of its signature (its stage, its first line)."""
    manifest = (outcome.get("info") or {}).get("manifest") or {}
    if valid_issue(manifest.get("issue")):
        return str(manifest["issue"])
    match = known.match(str(outcome.get("stage", "")), line)
    return match.issue if match is not None else None


def load_known_issues(path: Path | None) -> KnownIssues:
    """The file's entries; none when path is None or the file does not exist. A malformed
    entry is a ``ManifestError`` naming the file and the entry."""
    if path is None or not Path(path).is_file():
        return KnownIssues()
    data = load_toml(path)
    unknown = set(data) - {"known"}
    if unknown:
        raise ManifestError(
            f"{path}: unknown table(s) {sorted(unknown)}; expected [[known]] entries"
        )
    raw = data.get("known", [])
    if not isinstance(raw, list):
        raise ManifestError(f"{path}: known must be an array of tables ([[known]])")
    entries = []
    for index, spec in enumerate(raw, 1):
        where = f"{path}: [[known]] entry {index}"
        if not isinstance(spec, dict):
            raise ManifestError(f"{where} must be a table")
        extra = set(spec) - set(_KEYS)
        if extra:
            raise ManifestError(
                f"{where}: unknown keys {sorted(extra)}; allowed: {', '.join(_KEYS)}"
            )
        if not valid_issue(spec.get("issue")):
            raise ManifestError(
                f'{where}: issue must read "owner/repo#N", e.g. "iree-org/iree#123"'
            )
        for key in ("stage", "line"):
            if not isinstance(spec.get(key), str) or not spec[key].strip():
                raise ManifestError(f"{where}: {key} must be a non-empty string")
        entries.append(
            KnownIssue(
                spec["issue"], spec["stage"], normalize(spec["line"]), str(spec.get("note", ""))
            )
        )
    return KnownIssues(tuple(entries))
