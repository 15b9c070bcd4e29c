"""Merges the imported modules of several cases into one module, so that one compile
serves them all (batched compilation, ``batching.py``).

Every top-level symbol of member ``i`` (functions, private helpers, globals) is renamed
``b<i>_<name>`` and every use of it follows, so nothing collides. The check imports of a
self-checking program (``conformance_check.expect_<site>``) keep their module name and
get batch-wide site numbers instead; ``MemberInfo.site_offset`` maps them back. Module
attributes must agree (``mhlo.num_partitions`` and the like): a member whose attributes
differ from the first member's is left out, and runs alone.
"""

from __future__ import annotations

import dataclasses
import io
import re
from typing import Any

from iree_conformance.frontends.stablehlo.checks import CHECK_MODULE


@dataclasses.dataclass(frozen=True)
class MergeMember:
    """One case's imported module and the metadata its import produced."""

    case_id: str
    mlir: bytes
    meta: dict[str, Any]


@dataclasses.dataclass
class MemberInfo:
    """Where one case landed in the merged module."""

    prefix: str
    public_functions: list[str]  # the member's own public function names, in module order
    site_offset: int = 0
    site_count: int = 0

    def renamed(self, name: str) -> str:
        return self.prefix + name


def _symbol_name(op) -> str | None:
    attr = op.attributes["sym_name"] if "sym_name" in op.attributes else None
    return None if attr is None else str(attr).strip('"')


def _module_attributes(module) -> dict[str, str]:
    attrs = module.attributes
    return {
        attrs[i].name: str(attrs[i].attr) for i in range(len(attrs)) if attrs[i].name != "sym_name"
    }


def _body(module):
    return module.regions[0].blocks[0]


def member_source_name(index: int) -> str:
    return f"batch-member-{index}.mlir"


_MEMBER_ERROR = re.compile(r"batch-member-(\d+)\.mlir:\d+:\d+: error:")


def culprits_of(diagnostics: str) -> set[int]:
    """The members that a failed merged compile's error lines point at."""
    return {int(match.group(1)) for match in _MEMBER_ERROR.finditer(diagnostics)}


def _parse_module(ir, text: str, index: int, context, keep_alive: list):
    """The member's ``builtin.module`` operation. It parses under its own source name, so
    that a diagnostic of the merged compile names the member it is about (culprits_of).
    A source of bare top-level operations (no ``module { }``) gets a module around it,
    as MLIR's own parser does: one operation is moved into a new module; several fall
    back to ``Module.parse`` (diagnostics then do not name the member: bisection)."""
    try:
        op = ir.Operation.parse(
            text, source_name=member_source_name(index), context=context
        ).operation
    except Exception:  # noqa: BLE001 - several top-level operations: parse as a module
        module = ir.Module.parse(text, context=context)
        keep_alive.append(module)
        return module.operation
    if op.name == "builtin.module":
        return op
    with ir.Location.unknown(context):
        wrapper = ir.Module.create()
    keep_alive.append(wrapper)
    wrapper.body.append(op)
    return wrapper.operation


def _is_declaration(op) -> bool:
    return op.name == "func.func" and len(op.regions[0].blocks) == 0


def _is_public(op) -> bool:
    return op.name == "func.func" and (
        "sym_visibility" not in op.attributes
        or str(op.attributes["sym_visibility"]).strip('"') == "public"
    )


def merge_modules(
    members: list[MergeMember], context
) -> tuple[bytes, dict[str, MemberInfo], dict[str, str]]:
    """Returns (merged module as MLIR bytecode, where each merged member landed, and the
    members left out with the reason). ``context`` is an MLIR context with IREE's dialects
    (a compiler Session's); the merged module holds the members' check sites renumbered."""
    from iree.compiler import ir

    placed: dict[str, MemberInfo] = {}
    left_out: dict[str, str] = {}
    merged = None
    first_attrs: dict[str, str] | None = None
    sites = 0
    keep_alive: list = []  # modules made here must outlive the merge
    for index, member in enumerate(members):
        try:
            module = _parse_module(
                ir, member.mlir.decode("utf-8", errors="replace"), index, context, keep_alive
            )
        except Exception as e:  # noqa: BLE001 - a module that no longer parses runs alone
            left_out[member.case_id] = f"cannot be parsed for merging: {e}"
            continue
        attrs = _module_attributes(module)
        if first_attrs is None:
            first_attrs = attrs
        elif attrs != first_attrs:
            left_out[member.case_id] = "its module attributes differ from the batch's"
            continue
        info = MemberInfo(prefix=f"b{index}_", public_functions=[])
        check_sites = (member.meta.get("checks") or {}).get("sites") or []
        info.site_offset, info.site_count = sites, len(check_sites)
        renames: list[tuple[str, str]] = []
        for op in list(_body(module).operations):
            op = op.operation
            name = _symbol_name(op)
            if name is None:
                continue
            if name.startswith(CHECK_MODULE + ".expect_"):
                site = int(name.rsplit("_", 1)[1])
                renames.append((name, f"{CHECK_MODULE}.expect_{site + sites}"))
                continue
            if _is_declaration(op):
                continue  # an import of another module keeps its name
            if _is_public(op):
                info.public_functions.append(name)
            renames.append((name, info.renamed(name)))
        # Two passes through a temporary name: b0_x must not capture a use of another x.
        for step, (old, _) in enumerate(renames):
            ir.SymbolTable.replace_all_symbol_uses(old, f"__merge_tmp_{step}", module)
        for step, (_, new) in enumerate(renames):
            ir.SymbolTable.replace_all_symbol_uses(f"__merge_tmp_{step}", new, module)
        symbol_ops = {(_symbol_name(op.operation)): op.operation for op in _body(module).operations}
        for old, new in renames:
            ir.SymbolTable.set_symbol_name(symbol_ops[old], new)
        if merged is None:
            merged = module
        else:
            existing = {_symbol_name(op.operation) for op in _body(merged).operations}
            for op in list(_body(module).operations):
                name = _symbol_name(op.operation)
                if name is not None and name in existing and _is_declaration(op.operation):
                    continue  # the same import, declared once
                _body(merged).append(op.operation)
        sites += len(check_sites)
        placed[member.case_id] = info
    if merged is None:
        return b"", placed, left_out
    buffer = io.BytesIO()
    merged.write_bytecode(buffer)
    return buffer.getvalue(), placed, left_out
