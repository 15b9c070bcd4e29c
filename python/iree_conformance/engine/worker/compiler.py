"""The compiler inside a worker: one ``iree.compiler.api`` Session per flag set."""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.engine.worker.errors import StageError

_VERSION_LINE = re.compile(r"""^VERSION\s*=\s*(['"])([^'"]*)\1\s*$""", re.MULTILINE)


@functools.lru_cache(maxsize=1)
def compiler_version() -> str:
    """``iree.compiler.version.VERSION``, read from its file without importing
    ``iree.compiler``: the package's ``__init__`` loads the MLIR libraries (about
    0.5 s and 60 MB per worker), which a warm case never needs."""
    try:
        spec = importlib.util.find_spec("iree")
        for base in (spec.submodule_search_locations or []) if spec else []:
            path = Path(base) / "compiler" / "version.py"
            if path.is_file():
                match = _VERSION_LINE.search(path.read_text(encoding="utf-8"))
                if match:
                    return match.group(2)
    except (ImportError, OSError, ValueError):
        pass
    import iree.compiler.version as v

    return v.VERSION


class Compiler:
    """Compiles MLIR to VM bytecode; a Session per flag set lives as long as the worker."""

    def __init__(self, read_diagnostics: Callable[[], str]):
        self.read_diagnostics = read_diagnostics
        self._sessions: dict[tuple[str, ...], Any] = {}
        self._context = None
        self._merge_session = None

    def session(self, flags: tuple[str, ...]):
        from iree.compiler.api import Session

        session = self._sessions.get(flags)
        if session is None:
            session = Session()
            try:
                session.set_flags(*flags)
            except ValueError as e:
                raise StageError("compile", f"bad compile flags: {e}") from None
            self._sessions[flags] = session
        return session

    def mlir_context(self):
        """A long-lived MLIR context for parsing (the StableHLO check rewrite)."""
        if self._context is None:
            self._context = self.session(("--iree-input-type=auto",)).context
        return self._context

    def fresh_context(self):
        """A new MLIR context for one merge, so that the members' constants do not pile
        up in a context that lives as long as the worker."""
        from iree.compiler.api import Session

        session = Session()
        self._merge_session = session  # the context lives as long as its session
        return session.context

    def compile(self, mlir: bytes, flags: tuple[str, ...]) -> bytes:
        from iree.compiler.api import Output, Source

        session = self.session(flags)
        inv = session.invocation()
        try:
            inv.enable_console_diagnostics()
            source = Source.wrap_buffer(session, mlir)
            if not inv.parse_source(source):
                raise StageError(
                    "import", self.read_diagnostics() or "the compiler could not parse the module"
                )
            if not inv.execute():
                raise StageError("compile", self.read_diagnostics() or "compilation failed")
            out = Output.open_membuffer()
            inv.output_vm_bytecode(out)
            return bytes(out.map_memory())
        finally:
            inv.close()
