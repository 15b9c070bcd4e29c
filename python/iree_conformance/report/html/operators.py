"""The ONNX operator scoreboard: operator tests (``onnx-ops/test_<op>_<variant>``) by operator.

A test's operator is the ``op_type`` of the first node of its model that is not a
``Constant`` (with the domain in front when it is not the default ONNX domain). The model
comes, in this order, from the generated operator-test tree of the run's onnx version
(``<data dir>/onnx-node-tests-<version>/<test>/model.onnx``, written by every run of the
suite), from the installed onnx wheel's ready-made folders, and, when ``generate`` is on,
from onnx's own test-case generators (``onnx.backend.test.case.node``, about 12 s).
A test with no model found falls back to its name: the longest ONNX operator name
(``ReduceSum`` as ``reducesum`` or ``reduce_sum``) that the test name starts with,
else the first word of the name.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iree_conformance.report.html.summary import first_line, platform_of

SUITE = "onnx_ops"
PREFIX = "onnx-ops/"
WHEEL_FOLDERS = ("simple", "pytorch-converted", "pytorch-operator")


def default_data_dir() -> Path | None:
    """$IREE_CONFORMANCE_DATA, else the user cache dir (as the onnx_ops suite chooses);
    None when platformdirs is not installed."""
    from iree_conformance.common.userdirs import DATA_ENV, resolve_dir

    try:
        return resolve_dir(None, DATA_ENV, "data")
    except ImportError:
        return None


def op_of_model(model: Any) -> str | None:
    """op_type of the first non-Constant node (domain-qualified outside ai.onnx)."""
    for node in model.graph.node:
        if node.op_type != "Constant":
            domain = node.domain if node.domain not in ("", "ai.onnx") else ""
            return f"{domain}.{node.op_type}" if domain else node.op_type
    return None


def _model_dirs(data_dir: Path | None, onnx_versions: Iterable[str]) -> list[Path]:
    dirs = [data_dir / f"onnx-node-tests-{v}" for v in onnx_versions] if data_dir else []
    try:
        import onnx.backend.test

        wheel = Path(onnx.backend.test.__file__).resolve().parent / "data"
        dirs += [wheel / folder for folder in WHEEL_FOLDERS]
    except ImportError:
        pass
    return [d for d in dirs if d.is_dir()]


def _from_models(names: set[str], dirs: list[Path]) -> dict[str, str]:
    try:
        import onnx
    except ImportError:
        return {}
    found: dict[str, str] = {}
    for name in sorted(names):
        for d in dirs:
            path = d / name / "model.onnx"
            if path.is_file():
                op = op_of_model(onnx.load(str(path), load_external_data=False))
                if op:
                    found[name] = op
                    break
    return found


def _from_generators(names: set[str]) -> dict[str, str]:
    try:
        from iree_conformance.frontends.onnx.node_tests import _collect_generated
    except ImportError:
        return {}
    return {
        c.name: op for c in _collect_generated() if c.name in names and (op := op_of_model(c.model))
    }


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _operator_names() -> list[str]:
    try:
        import onnx.defs
    except ImportError:
        return []
    return sorted({s.name for s in onnx.defs.get_all_schemas_with_history()})


def op_from_name(name: str, operators: list[str]) -> str:
    """The heuristic: the longest operator whose spelling starts the test name."""
    rest = name.removeprefix("test_")
    best, length = None, 0
    for op in operators:
        for key in {op.lower(), _snake(op)}:
            if len(key) > length and (rest == key or rest.startswith(key + "_")):
                best, length = op, len(key)
    return best or (rest.split("_", 1)[0] or name)


@dataclass
class OperatorMap:
    """Test name -> operator, and which names came from a model."""

    ops: dict[str, str]
    exact: set[str]


def resolve(
    names: Iterable[str], data_dir: Path | None, onnx_versions: Iterable[str], generate: bool
) -> OperatorMap:
    """Operators for the given test names (without the ``onnx-ops/`` prefix)."""
    wanted = set(names)
    ops = _from_models(wanted, _model_dirs(data_dir, onnx_versions))
    if generate and wanted - set(ops):
        ops.update(_from_generators(wanted - set(ops)))
    exact = set(ops)
    operators = _operator_names() if wanted - exact else []
    for name in wanted - exact:
        ops[name] = op_from_name(name, operators)
    return OperatorMap(ops, exact)


@dataclass
class Cell:
    """One operator on one target and platform."""

    passed: int = 0
    runnable: int = 0
    skipped: int = 0

    @property
    def rate(self) -> float:
        return self.passed / self.runnable if self.runnable else 0.0


@dataclass
class OperatorRow:
    """One operator: a cell per column and the cases that do not pass somewhere."""

    op: str
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)
    failing: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def anchor(self) -> str:
        return "op-" + re.sub(r"[^A-Za-z0-9_.-]", "_", self.op)


@dataclass
class Scoreboard:
    """Columns (target, platform), rows by operator, and how the operators were found."""

    columns: list[tuple[str, str]]
    rows: list[OperatorRow]
    exact: int
    by_name: int


def scoreboard(outcomes: list[dict[str, Any]], opmap: OperatorMap) -> Scoreboard:
    """The scoreboard of the ``onnx_ops`` outcomes."""
    rows: dict[str, OperatorRow] = {}
    columns: set[tuple[str, str]] = set()
    seen: set[str] = set()
    for o in outcomes:
        if o.get("suite") != SUITE or not str(o.get("case_id", "")).startswith(PREFIX):
            continue
        name = o["case_id"][len(PREFIX) :]
        op = opmap.ops.get(name, name)
        seen.add(name)
        col = (str(o.get("target", "?")), platform_of(o))
        columns.add(col)
        row = rows.setdefault(op, OperatorRow(op))
        cell = row.cells.setdefault(col, Cell())
        if o.get("status") == "skip":
            cell.skipped += 1
            continue
        cell.runnable += 1
        if o.get("status") == "pass":
            cell.passed += 1
        else:
            row.failing.setdefault(o["case_id"], []).append(o)
    counts = Counter(name in opmap.exact for name in seen)
    return Scoreboard(
        sorted(columns), [rows[k] for k in sorted(rows, key=str.lower)], counts[True], counts[False]
    )


def failing_lines(members: list[dict[str, Any]]) -> dict[str, Any]:
    """One failing case folded over targets and platforms: where, stage, first line."""
    where = defaultdict(list)
    for o in members:
        where[f"{o.get('stage')} ({o.get('verdict')})"].append(
            f"{o.get('target')} {platform_of(o)}"
        )
    return {
        "where": {k: sorted(v) for k, v in sorted(where.items())},
        "line": first_line(members[0]),
    }
