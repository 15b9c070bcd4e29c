"""Run a StableHLO program on the StableHLO reference interpreter, in a child process.

The interpreter ships with jaxlib as ``jaxlib.mlir.dialects.stablehlo.eval_module``. It is
independent of IREE, which makes it usable as a reference for conformance cases. An op the
interpreter does not implement makes it call ``llvm::report_fatal_error``, which aborts the
whole process, so every evaluation happens in a fresh child process; a dead child is turned
into an :class:`InterpreterError` whose message names the op when the interpreter said which.

Usage::

    from iree_conformance.frontends.stablehlo.interpreter import InterpreterError, run_interpreter

    outputs = run_interpreter(mlir_text, [np.array([1.0, 2.0], np.float32)])

The program's entry must be ``func.func @main``. Inputs are numpy arrays whose dtypes match
the arguments (``np.bool_`` for ``i1``); outputs come back as numpy arrays in result order.
Dynamic dimensions (``tensor<?xf32>``) are fine: the interpreter takes the concrete input
shapes.

Running this file directly (``python interpreter.py --child DIR``) is the child's side of
the protocol and is not meant to be used by hand.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

import numpy as np

__all__ = ["InterpreterError", "run_interpreter", "interpreter_available"]

_MODULE_FILE = "module.mlir"
_INPUTS_FILE = "inputs.npz"
_OUTPUTS_FILE = "outputs.npz"
_ERROR_FILE = "error.txt"

# Exit status the child uses for a clean, reported failure (parse error, bad inputs, ...),
# always together with the error file. Not 3: that is also what MSVC's abort() exits with.
_CHILD_REPORTED_ERROR = 97


class InterpreterError(RuntimeError):
    """The reference interpreter could not evaluate the program.

    Attributes:
        reason: a one-line summary, e.g. ``"interpreter aborted: op stablehlo.custom_call
            unsupported"``.
        unsupported_op: the op the interpreter reported as unsupported, or ``None``.
        stderr: the child's standard error (possibly truncated).
    """

    def __init__(self, reason: str, *, unsupported_op: str | None = None, stderr: str = ""):
        self.reason = reason
        self.unsupported_op = unsupported_op
        self.stderr = stderr
        detail = stderr.strip()
        if len(detail) > 2000:
            detail = "..." + detail[-2000:]
        super().__init__(reason if not detail else f"{reason}\n{detail}")


def interpreter_available() -> bool:
    """Whether jaxlib (with the StableHLO interpreter) can be imported in this environment."""
    try:
        import jaxlib.mlir.dialects.stablehlo as _stablehlo  # noqa: F401
    except Exception:
        return False
    return True


_UNSUPPORTED_RE = re.compile(r"Unsupported op:\s*(?:%[^=]*=\s*)?\"?([A-Za-z_][\w.]*)")


def _describe_death(returncode: int, stderr: str, platform: str = sys.platform) -> InterpreterError:
    match = _UNSUPPORTED_RE.search(stderr)
    op = match.group(1) if match else None
    if op is not None:
        reason = f"interpreter aborted: op {op} unsupported"
    else:
        fatal = re.search(r"LLVM ERROR:\s*(.*)", stderr)
        from iree_conformance.common.platform_info import describe_exit  # parent side only

        reason = f"interpreter aborted ({describe_exit(returncode, platform)})"
        if fatal:
            reason += f": {fatal.group(1).strip()}"
    return InterpreterError(reason, unsupported_op=op, stderr=stderr)


def _run_child(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run the child; its output is read as UTF-8 whatever the console's code page."""
    env = {**os.environ, "PYTHONUTF8": "1"}
    try:
        return subprocess.run(
            cmd,
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired as e:
        err = (
            e.stderr.decode("utf-8", errors="replace")
            if isinstance(e.stderr, bytes)
            else (e.stderr or "")
        )
        raise InterpreterError(f"interpreter timed out after {timeout:g} s", stderr=err) from None


def _reported_error(workdir: str, returncode: int) -> str | None:
    """The child's own error message: its exit code *and* its error file, else None."""
    if returncode != _CHILD_REPORTED_ERROR:
        return None
    try:
        with open(os.path.join(workdir, _ERROR_FILE), encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "interpreter failed"
    except OSError:
        return None  # the code without the file: something else exited with it


def run_interpreter(
    mlir_text: str, inputs: list[np.ndarray], timeout: float = 60
) -> list[np.ndarray]:
    """Evaluate ``@main`` of ``mlir_text`` on ``inputs`` with the StableHLO interpreter.

    The evaluation runs in a child Python process (the same interpreter as the caller), so an
    abort inside the interpreter cannot take the caller down.

    Raises:
        InterpreterError: jaxlib is missing, the program does not parse, the interpreter
            aborted (e.g. an unsupported op), or it ran past ``timeout`` seconds.
    """
    with tempfile.TemporaryDirectory(prefix="shlo-interp-") as tmp:
        with open(os.path.join(tmp, _MODULE_FILE), "w", encoding="utf-8", newline="\n") as f:
            f.write(mlir_text)
        arrays = {f"input_{i}": np.asarray(x) for i, x in enumerate(inputs)}
        np.savez(os.path.join(tmp, _INPUTS_FILE), **arrays)  # type: ignore[arg-type]  # numpy stubs type **kwds as bool
        cmd = [sys.executable, os.path.abspath(__file__), "--child", tmp]
        proc = _run_child(cmd, timeout)
        message = _reported_error(tmp, proc.returncode)
        if message is not None:
            diagnostics = [ln.strip() for ln in proc.stderr.splitlines() if "error:" in ln]
            if diagnostics:
                message += ": " + "; ".join(diagnostics[:3])
            raise InterpreterError(message, stderr=proc.stderr)
        if proc.returncode != 0:
            raise _describe_death(proc.returncode, proc.stderr)
        with np.load(os.path.join(tmp, _OUTPUTS_FILE)) as data:
            count = len(data.files)
            return [np.array(data[f"output_{i}"]) for i in range(count)]


# --------------------------------------------------------------------------------------------
# Child side.


def _element_dtype(type_str: str) -> np.dtype | None:
    """``tensor<2x3xf32>`` -> float32, from the one MLIR type table (frontends/mlir_types.py,
    read from this file's own source tree: the child runs as a script)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    if root not in sys.path:
        sys.path.insert(0, root)
    from iree_conformance.frontends.mlir_types import numpy_dtype

    m = re.fullmatch(r"tensor<(?:[0-9?]+x)*([a-z0-9]+)>", type_str.strip())
    return numpy_dtype(m.group(1)) if m else None


def _child_main(workdir: str) -> int:
    def fail(message: str) -> int:
        with open(os.path.join(workdir, _ERROR_FILE), "w", encoding="utf-8", newline="\n") as f:
            f.write(message)
        return _CHILD_REPORTED_ERROR

    try:
        from jaxlib.mlir import ir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import stablehlo
    except Exception as e:  # pragma: no cover - depends on the environment
        return fail(f"jaxlib with the StableHLO interpreter is not importable: {e}")

    with open(os.path.join(workdir, _MODULE_FILE), encoding="utf-8") as f:
        text = f.read()
    with np.load(os.path.join(workdir, _INPUTS_FILE)) as data:
        # np.array, not np.ascontiguousarray: the latter turns 0-d arrays into 1-d ones.
        inputs = [np.array(data[f"input_{i}"], order="C") for i in range(len(data.files))]

    with ir.Context() as ctx, ir.Location.unknown():
        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)  # func, arith, ... (upstream dialects)
        ctx.append_dialect_registry(registry)
        ctx.load_all_available_dialects()
        stablehlo.register_dialect(ctx)
        try:
            module = ir.Module.parse(text)
        except Exception as e:
            return fail(f"interpreter could not parse the program: {e}")
        main = None
        for op in module.body.operations:
            if (
                op.operation.name == "func.func"
                and ir.StringAttr(op.attributes["sym_name"]).value == "main"
            ):
                main = op
        if main is None:
            return fail("the program has no func.func @main")
        fn_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        if len(fn_type.inputs) != len(inputs):
            return fail(f"@main takes {len(fn_type.inputs)} arguments, got {len(inputs)} inputs")
        result_dtypes = [_element_dtype(str(t)) for t in fn_type.results]
        # ndarray is a buffer; the MLIR stubs only accept collections.abc.Buffer (Python 3.12+).
        args = [ir.DenseElementsAttr.get(x) for x in inputs]  # type: ignore[call-overload]
        try:
            results = stablehlo.eval_module(module, args)
        except Exception as e:
            # Diagnostics (e.g. "invalid input argument type") went to stderr; the parent
            # adds them to the message.
            return fail(f"interpreter rejected the evaluation: {e}")
        outputs = {}
        for i, attr in enumerate(results):
            dtype = result_dtypes[i] if i < len(result_dtypes) else None
            value = np.array(attr)
            if dtype is not None:
                value = value.astype(dtype, copy=False)
            outputs[f"output_{i}"] = value
    np.savez(os.path.join(workdir, _OUTPUTS_FILE), **outputs)  # type: ignore[arg-type]  # numpy stubs type **kwds as bool
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.exit(_child_main(sys.argv[2]))
    print(__doc__)
    sys.exit(2)
