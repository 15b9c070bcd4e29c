"""The compiler inside a worker: one ``iree.compiler.api`` Session per flag set."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iree_conformance.common import quiet_lock
from iree_conformance.engine.worker.errors import StageError

_VERSION_LINE = re.compile(r"""^VERSION\s*=\s*(['"])([^'"]*)\1\s*$""", re.MULTILINE)

#: IREE's scheduling statistics (the stream dialect's aggregate: dispatches, executables),
#: written by the compile itself as a small JSON file: no second tool, no second pass.
STATS_FLAG = "--iree-scheduling-dump-statistics-file"
STATS_FORMAT_FLAG = "--iree-scheduling-dump-statistics-format=json"


def parse_statistics(text: str) -> dict[str, int]:
    """The dispatch and executable counts of ``--iree-scheduling-dump-statistics-format=json``
    output ({} when the text is not that JSON: the figures are informative, never an error)."""
    try:
        data = json.loads(text)
        aggregate = data["stream-aggregate"]
        execution, executable = aggregate.get("execution", {}), aggregate.get("executable", {})
        stats = {
            "dispatches": int(execution["dispatch-count"]),
            "executables": int(executable["executable-count"]),
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return {}
    return stats


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


_EXPORT = re.compile(r"stream\.executable\.export @([\w$.-]+)::@([\w$.-]+)")


def dispatch_names(verbose: str) -> list[str]:
    """The dispatch functions listed by ``--iree-scheduling-dump-statistics-format=verbose``
    (its ``stream.executable.export @EXECUTABLE::@FUNCTION`` headers), in order."""
    return [m.group(2) for m in _EXPORT.finditer(verbose)]


class Compiler:
    """Compiles MLIR to VM bytecode; a Session per flag set lives as long as the worker.

    Each session also writes IREE's scheduling statistics (``STATS_FLAG``) to a file of
    its own in a temporary folder; after a compile ``last_statistics`` holds its dispatch
    and executable counts (``compile_statistics`` adds the module's size).

    A compile waits while another process times a case (``common/quiet_lock.py``):
    ``tell`` passes ("waiting", text) and ("waited", seconds) to the parent, and
    ``last_lock_wait_s`` is what the caller leaves out of the compile's time."""

    def __init__(
        self,
        read_diagnostics: Callable[[], str],
        tell: Callable[[tuple[str, Any]], None] | None = None,
    ):
        self.read_diagnostics = read_diagnostics
        self.tell = tell
        #: The seconds the last compile waited for the quiet lock.
        self.last_lock_wait_s = 0.0
        self._sessions: dict[tuple[str, ...], Any] = {}
        self._stats_files: dict[tuple[str, ...], Path] = {}
        self._stats_dir: tempfile.TemporaryDirectory[str] | None = None
        self._context = None
        self._merge_session = None
        #: The last compile's statistics (``compile_statistics``), {} when it had none.
        self.last_statistics: dict[str, int] = {}

    def _stats_file(self, flags: tuple[str, ...]) -> Path | None:
        """Where a session with these flags writes its statistics (None: the flags set
        their own statistics file, which is theirs to keep)."""
        if any(f.startswith(STATS_FLAG) for f in flags):
            return None
        if self._stats_dir is None:
            self._stats_dir = tempfile.TemporaryDirectory(prefix="iree-conformance-stats-")
        return Path(self._stats_dir.name) / f"session-{len(self._stats_files)}.json"

    def session(self, flags: tuple[str, ...]):
        from iree.compiler.api import Session

        session = self._sessions.get(flags)
        if session is None:
            session = Session()
            try:
                session.set_flags(*flags)
            except ValueError as e:
                raise StageError("compile", f"bad compile flags: {e}") from None
            stats = self._stats_file(flags)
            if stats is not None:
                try:  # the statistics are not part of the store key: they change no module
                    session.set_flags(STATS_FORMAT_FLAG, f"{STATS_FLAG}={stats}")
                    self._stats_files[flags] = stats
                except ValueError:  # an IREE without the flag: no statistics, same module
                    pass
            self._sessions[flags] = session
        return session

    def _take_statistics(self, flags: tuple[str, ...]) -> dict[str, int]:
        stats = self._stats_files.get(flags)
        if stats is None:
            return {}
        try:
            text = stats.read_text(encoding="utf-8")
            os.unlink(stats)
        except OSError:
            return {}
        return parse_statistics(text)

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
        self._take_statistics(flags)  # nothing left over from an earlier compile
        self.last_statistics = {}
        inv = session.invocation()
        try:
            inv.enable_console_diagnostics()
            source = Source.wrap_buffer(session, mlir)
            if not inv.parse_source(source):
                raise StageError(
                    "import", self.read_diagnostics() or "the compiler could not parse the module"
                )
            tell = self.tell
            on_wait = None if tell is None else (lambda text: tell(("waiting", text)))
            # not while another case is timed
            with quiet_lock.holding(exclusive=False, on_wait=on_wait) as quiet:
                self.last_lock_wait_s = float(quiet["wait_s"])
                if tell is not None and self.last_lock_wait_s > quiet_lock.SAY_AFTER_S:
                    tell(("waited", self.last_lock_wait_s))
                compiled = inv.execute()
            if not compiled:
                raise StageError("compile", self.read_diagnostics() or "compilation failed")
            out = Output.open_membuffer()
            inv.output_vm_bytecode(out)
            vmfb = bytes(out.map_memory())
            self.last_statistics = self._take_statistics(flags)
            return vmfb
        finally:
            inv.close()


def compile_statistics(
    vmfb: bytes, counts: dict[str, int], scope: str, size: int = 1
) -> dict[str, Any]:
    """What a compiled case's results carry (``metrics.compile_stats``): the module's size,
    its dispatch and executable counts where IREE wrote them, and whether they are the
    case's own module's (scope "case") or its batch module's ("batch", of ``size`` cases)."""
    stats: dict[str, Any] = {"module_bytes": len(vmfb), **counts, "scope": scope}
    if scope == "batch":
        stats["batch_size"] = size
    return stats
