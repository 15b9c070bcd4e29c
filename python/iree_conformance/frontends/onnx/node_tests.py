"""ONNX backend operator tests, written to disk once per onnx version.

The onnx wheel does not ship its ``data/node`` folder: the 1,800-odd operator tests
live as Python code (``onnx.backend.test.case.node``) that builds each model and its
data set in memory. ``materialize`` runs that code once and writes every case in the
standard layout ``<name>/model.onnx`` + ``<name>/test_data_set_N/{input,output}_i.pb``,
together with copies of the wheel's ``simple``, ``pytorch-converted`` and
``pytorch-operator`` folders (copies, so the cache does not point into one venv), and
an ``index.json`` that later runs read instead of importing the generators (~12 s).
Names that collide when case is folded (``test_elu``, ``test_ELU``) get folders with a
hash suffix (``folder_names``), so the tree works on case-insensitive file systems.

Concurrency: the tree is built in a private temporary folder next to the target and
renamed into place; ``index.json`` is written last inside it, so a target folder that
exists always holds a complete tree. When two processes (pytest-xdist workers) race,
the first rename wins and the loser deletes its copy and uses the winner's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
import warnings
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import onnx

from iree_conformance.common.fsutil import atomic_write_text, make_temp_dir, rename_dir
from iree_conformance.frontends.onnx.backend_data import (
    BackendModel,
    data_tolerances,
    wheel_data_dir,
)
from iree_conformance.frontends.onnx.stale import remove_stale
from iree_conformance.frontends.onnx.values import (
    UnsupportedValue,
    graph_inputs,
    load_data_set,
    value_kind,
    write_value,
)

__all__ = [
    "INDEX_NAME",
    "INDEX_SCHEMA",
    "WHEEL_FOLDERS",
    "NodeTestCase",
    "NodeTestsError",
    "UnsupportedValue",
    "folder_names",
    "load_cases",
    "load_data_set",
    "materialize",
    "tree_name",
]

INDEX_NAME = "index.json"
INDEX_SCHEMA = 1
#: Folders of ``onnx/backend/test/data`` that hold ready-made cases in the same layout.
WHEEL_FOLDERS = ("simple", "pytorch-converted", "pytorch-operator")
CASE_ID_PREFIX = "onnx-ops/"


class NodeTestsError(Exception):
    """The operator-test tree cannot be built or its index cannot be read."""


@dataclass(frozen=True)
class NodeTestCase(BackendModel):
    """One ONNX backend test: a model plus one or more data sets."""

    ID_PREFIX: ClassVar[str] = CASE_ID_PREFIX

    data_set_dirs: tuple[Path, ...]
    source: str
    unsupported_reason: str | None = None


def tree_name() -> str:
    """Folder name of the tree for the installed onnx version."""
    return f"onnx-node-tests-{onnx.__version__}"


def _io_report(model: onnx.ModelProto) -> tuple[dict[str, bool], str | None]:
    """Flags for non-tensor graph inputs/outputs and the first one as a skip reason."""
    flags = {f"has_{kind}": False for kind in ("sequence", "map", "optional", "sparse")}
    reason = None
    ios = [("input", vi) for vi in graph_inputs(model)]
    ios += [("output", vi) for vi in model.graph.output]
    for role, vi in ios:
        kind = value_kind(vi.type)
        if kind in ("tensor", "unknown"):
            continue
        flags[f"has_{kind}"] = True
        if reason is None:
            reason = f"{kind} {role} '{vi.name}' is unsupported by the runtime path"
    return flags, reason


def folder_names(names: Iterable[str]) -> dict[str, str]:
    """A folder name per case name that stays unique when case is folded.

    macOS (APFS) and Windows (NTFS) fold case by default, and onnx ships both
    ``test_elu`` (generated) and ``test_ELU`` (pytorch-converted). A name that shares its
    case-folded form with another gets ``-<8 hex digits of sha256(name)>``; the case id
    keeps the exact name, ``index.json`` maps it to its folder.
    """
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[name.casefold()].append(name)
    folders = {}
    for group in groups.values():
        for name in group:
            suffix = hashlib.sha256(name.encode()).hexdigest()[:8]
            folders[name] = name if len(group) == 1 else f"{name}-{suffix}"
    folded = [f.casefold() for f in folders.values()]
    if len(set(folded)) != len(folded):
        clash = sorted(f for f in folders.values() if folded.count(f.casefold()) > 1)
        raise NodeTestsError(f"operator test folders {clash} collide when case is folded")
    return folders


def _entry(
    root: Path, name: str, case_dir: Path, source: str, rtol: float, atol: float
) -> dict[str, Any]:
    model = onnx.load(str(case_dir / "model.onnx"), load_external_data=False)
    flags, reason = _io_report(model)
    data_sets = sorted(
        (p for p in case_dir.iterdir() if p.is_dir() and p.name.startswith("test_data_set_")),
        key=lambda p: int(p.name.rsplit("_", 1)[1]),
    )
    return {
        "name": name,
        "source": source,
        "model": (case_dir / "model.onnx").relative_to(root).as_posix(),
        "data_sets": [d.relative_to(root).as_posix() for d in data_sets],
        "rtol": rtol,
        "atol": atol,
        "flags": flags,
        "unsupported_reason": reason,
    }


def _write_generated_case(case_dir: Path, case: Any) -> Path:
    """Write one in-memory ``onnx.backend.test`` TestCase in the standard layout."""
    case_dir.mkdir()
    model: onnx.ModelProto = case.model
    (case_dir / "model.onnx").write_bytes(model.SerializeToString())
    in_infos = list(model.graph.input)
    out_infos = list(model.graph.output)
    for n, (inputs, outputs) in enumerate(case.data_sets):
        ds = case_dir / f"test_data_set_{n}"
        ds.mkdir()
        for j, value in enumerate(inputs):
            info = in_infos[j] if j < len(in_infos) else None
            write_value(
                ds / f"input_{j}.pb", value, info.type if info else None, info.name if info else ""
            )
        for j, value in enumerate(outputs):
            info = out_infos[j] if j < len(out_infos) else None
            write_value(
                ds / f"output_{j}.pb", value, info.type if info else None, info.name if info else ""
            )
    return case_dir


def _collect_generated() -> list[Any]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        # The generators compute expected values with numpy and trip overflow and
        # divide-by-zero warnings on purpose (inf/nan cases).
        warnings.simplefilter("ignore")
        return list(collect_testcases(None))


def _build(tmp: Path, generated: Iterable[Any], wheel_data: Path) -> None:
    entries: list[dict[str, Any]] = []
    seen: dict[str, str] = {}

    def claim(name: str, source: str) -> None:
        if name in seen:
            raise NodeTestsError(
                f"case name {name!r} appears in both {seen[name]!r} and {source!r}; "
                f"operator test names must be unique"
            )
        seen[name] = source

    generated = list(generated)
    wheel_cases = [
        (folder, case_src)
        for folder in WHEEL_FOLDERS
        if (wheel_data / folder).is_dir()
        for case_src in sorted((wheel_data / folder).iterdir())
        if (case_src / "model.onnx").is_file()
    ]
    for case in generated:
        claim(case.name, "node")
    for folder, case_src in wheel_cases:
        claim(case_src.name, folder)
    folders = folder_names(seen)

    for case in generated:
        case_dir = _write_generated_case(tmp / folders[case.name], case)
        entries.append(_entry(tmp, case.name, case_dir, "node", float(case.rtol), float(case.atol)))
    for folder, case_src in wheel_cases:
        case_dir = tmp / folders[case_src.name]
        shutil.copytree(case_src, case_dir)
        rtol, atol = data_tolerances(case_src)
        entries.append(_entry(tmp, case_src.name, case_dir, folder, rtol, atol))
    entries.sort(key=lambda e: e["name"])
    index = {"schema": INDEX_SCHEMA, "onnx_version": onnx.__version__, "cases": entries}
    # Written last: its presence marks the tree as complete.
    atomic_write_text(tmp / INDEX_NAME, json.dumps(index, indent=1, sort_keys=True))


def _discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def materialize(
    cache_dir: Path,
    *,
    generated: Iterable[Any] | None = None,
    wheel_data: Path | None = None,
) -> Path:
    """Return the operator-test tree under ``cache_dir``, building it on first use.

    ``generated`` and ``wheel_data`` replace the onnx generators and the wheel's data
    folder (tests use them to build small trees); normal callers pass neither.
    """
    cache_dir = Path(cache_dir)
    root = cache_dir / tree_name()
    if (root / INDEX_NAME).is_file():
        return root
    cache_dir.mkdir(parents=True, exist_ok=True)
    remove_stale(cache_dir, f".{root.name}.tmp-*")
    tmp = make_temp_dir(f".{root.name}.tmp-", cache_dir)
    try:
        _build(
            tmp,
            _collect_generated() if generated is None else generated,
            wheel_data_dir() if wheel_data is None else wheel_data,
        )
        if root.exists() and not (root / INDEX_NAME).is_file():
            # Not made by this code (its renames are atomic): move it out of the way.
            stale = cache_dir / f".{root.name}.stale-{uuid.uuid4().hex}"
            try:
                os.rename(root, stale)
                _discard(stale)
            except OSError:
                pass
        # False: another process renamed its complete tree first; use the winner's.
        if not rename_dir(tmp, root) and not (root / INDEX_NAME).is_file():
            raise NodeTestsError(
                f"cannot move the operator-test tree into {root}: the folder exists "
                f"without {INDEX_NAME}; delete {root} and run again"
            )
    finally:
        if tmp.exists():
            _discard(tmp)
    return root


def _read_index(root: Path) -> dict[str, Any]:
    index_path = Path(root) / INDEX_NAME
    try:
        index = json.loads(index_path.read_text())
    except FileNotFoundError:
        raise NodeTestsError(
            f"{index_path} does not exist; build the tree with materialize() first"
        ) from None
    except json.JSONDecodeError as e:
        raise NodeTestsError(f"{index_path} is not valid JSON ({e}); delete {root}") from e
    if not isinstance(index, dict) or index.get("schema") != INDEX_SCHEMA:
        raise NodeTestsError(
            f"{index_path} has schema {index.get('schema') if isinstance(index, dict) else '?'}"
            f", expected {INDEX_SCHEMA}; delete {root} so it is rebuilt"
        )
    return index


def _inside(root: Path, relative: str) -> Path:
    """``root / relative`` for a path the index names, refused (ValueError) unless it is
    relative, has no ``..`` and stays inside ``root`` with symlinks resolved."""
    if not isinstance(relative, str):
        raise TypeError(f"path {relative!r} is not text")
    rel = Path(relative)
    if rel.is_absolute() or rel.drive or ".." in rel.parts or "\\" in relative:
        raise ValueError(f"path {relative!r} is not inside the tree")
    path = root / rel
    if not path.resolve().is_relative_to(root.resolve()):
        raise ValueError(f"path {relative!r} leads outside the tree")
    return path


def load_cases(root: Path) -> list[NodeTestCase]:
    """The cases listed in ``root/index.json``, sorted by name."""
    root = Path(root)
    index = _read_index(root)
    cases = []
    for i, entry in enumerate(index.get("cases", [])):
        try:
            cases.append(
                NodeTestCase(
                    name=entry["name"],
                    model_path=_inside(root, entry["model"]),
                    data_set_dirs=tuple(_inside(root, d) for d in entry["data_sets"]),
                    rtol=float(entry["rtol"]),
                    atol=float(entry["atol"]),
                    source=entry["source"],
                    unsupported_reason=entry.get("unsupported_reason"),
                )
            )
        except (KeyError, TypeError, ValueError) as e:
            raise NodeTestsError(
                f"{root / INDEX_NAME}: case #{i} ({entry.get('name', '?') if isinstance(entry, dict) else entry!r})"
                f" is malformed ({e!r}); delete {root} so it is rebuilt"
            ) from e
    return sorted(cases, key=lambda c: c.name)
