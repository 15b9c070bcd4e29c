"""pytest plugin of the GitHub Action (action.yml): keep only the user's own cases.

`-m stablehlo` and `-m jax` also collect this project's bundled corpora (and `-m
onnx_dir` nothing else); a user's pull request check must judge the user's files only,
against the user's manifests. This deselects every conformance case whose source file
is not under one of the folders in $IREE_CONFORMANCE_ACTION_DIRS (os.pathsep-separated,
absolute), as `-k` would: they do not run and are not in the results.

Loaded by ci/user_action.py as `-p ci.action_select` (the action's checkout on
PYTHONPATH); without the variable it deselects nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENV = "IREE_CONFORMANCE_ACTION_DIRS"


def _roots() -> list[Path]:
    value = os.environ.get(ENV, "")
    return [Path(p).resolve() for p in value.split(os.pathsep) if p]


def _inside(path: Path | None, roots: list[Path]) -> bool:
    if path is None:
        return False
    resolved = Path(path).resolve()
    return any(resolved.is_relative_to(root) for root in roots)


def _source(case: object) -> Path | None:
    """The case's file: its source_path, else where it is written (a torch case's .py),
    else the case file it was listed from (a JAX case's .py: its source_location is left
    unset, since its check ops' lines are the exported MLIR's, not the .py's)."""
    path = getattr(case, "source_path", None)
    if path is None and callable(getattr(case, "source_location", None)):
        location = case.source_location()  # type: ignore[attr-defined]
        path = location.get("path") if isinstance(location, dict) else None
    if path is None:
        path = getattr(getattr(case, "listed", None), "source", None)
    return Path(path) if path else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    roots = _roots()
    if not roots:
        return
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("conformance_case") if callspec is not None else None
        if case is None or _inside(_source(case), roots):
            kept.append(item)
        else:
            dropped.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
