"""A case by its id, as the pytest plugin collects it (suites/registry.py), and where its
reproducer folder goes."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.model.cases import Case
from iree_conformance.suites.base import SuiteContext
from iree_conformance.suites.registry import SuiteRegistry, option_values, prefixes
from iree_conformance.suites.run_options import RunOptions


class UnknownCase(ConfigurationError):
    """No suite has a case of this id; the message names the nearest ones."""


def find_case(
    case_id: str,
    conformance_dir: Path,
    options: RunOptions,
    given: Mapping[str, Any] | None = None,
    registry: SuiteRegistry | None = None,
) -> Case:
    registry = registry or SuiteRegistry.builtin()
    suite = registry.suite_of(case_id)
    if suite is None:
        known = ", ".join(p for s in registry for p in prefixes(s))
        raise UnknownCase(
            f"unknown case {case_id!r}: case ids start with a suite's prefix ({known})"
        )
    found = registry.get(suite)
    context = SuiteContext(conformance_dir, options, option_values(found, given))
    cases = registry.collect(suite, context)
    for case in cases:
        if case.case_id == case_id:
            return case
    for case in cases:  # a file whose cases cannot be listed here (a missing package)
        if case.skip_reason and case_id.startswith(case.case_id + "/"):
            raise UnknownCase(
                f"case {case_id!r} is not listed here: {case.case_id} is skipped "
                f"({case.skip_reason})"
            )
    ids = [c.case_id for c in cases]
    near = difflib.get_close_matches(case_id, ids, n=5, cutoff=0.6)
    hint = f"; the nearest: {', '.join(near)}" if near else f"; suite {suite} has {len(ids)} cases"
    raise UnknownCase(f"unknown case {case_id!r}{hint}")


_UNSAFE = re.compile(r'[\x00-\x1f<>:"|?*\\]')


def _variant(part: str) -> str:
    """``name:variant`` as ``name@variant``; a part that starts like a drive (``c:``) or
    holds a backslash is left for the refusal."""
    if ":" in part and "\\" not in part and not re.match(r"^[A-Za-z]:", part):
        return part.replace(":", "@")
    return part


def folder_for(root: Path, target: str, case_id: str) -> Path:
    """``root/<target>/<case id, its / as folders>``: refused (ConfigurationError) when the
    id would name a place outside root (``..``, an absolute path, a drive) or a name no
    file system takes. A ``:`` (a case's variant: ``x.onnx:dynamic``) is written ``@``
    (``x.onnx@dynamic``): Windows reads it as a drive or a data stream."""
    parts = [target, *(_variant(p) for p in case_id.split("/"))]
    bad = [p for p in parts if p in ("", ".", "..") or _UNSAFE.search(p) or p != p.strip()]
    if bad:
        raise ConfigurationError(
            f"case id {case_id!r} (target {target!r}) cannot name a folder under {root}: "
            f"{bad[0]!r} would escape it or is not a file name; pass -o FOLDER"
        )
    path = Path(root).joinpath(*parts)
    if not path.resolve().is_relative_to(Path(root).resolve()):
        raise ConfigurationError(f"case id {case_id!r} would write outside {root}; pass -o FOLDER")
    return path
