"""XLA, as the reference a timing runs beside IREE: the seed's softmax (cli/bench.py), a
JAX case's own function through ``jax.jit`` (``--benchmark`` on the jax suite), and a
bundled StableHLO case's own text compiled by XLA's CPU client (the stablehlo frontend).
Here because only this package imports JAX (ARCHITECTURE.md, layering)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.frontends.base import TimingReference

#: Separates the case file from the case's name in a job's ``timed_reference``.
SEPARATOR = "::"


def case_reference(reference: str) -> TimingReference:
    """XLA's call of the JAX case ``FILE::NAME``, jitted and compiled ahead (the worker
    makes its first call), on its arguments already on the CPU device (as the export ran
    it), and IREE's ``main`` on the same arguments. Raises ValueError for a reference that
    names no case."""
    import jax

    from iree_conformance.frontends.jax_export.folder import load_cases

    path, sep, name = reference.rpartition(SEPARATOR)
    if not sep or not path or not name:
        raise ValueError(f"not a JAX case reference (FILE{SEPARATOR}NAME): {reference!r}")
    cases = {c.name: c for c in load_cases(Path(path))}
    if name not in cases:
        raise ValueError(f"{path}: no case named {name!r}")
    case = cases[name]
    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        # As the export made them (export.export_case): the exported main's parameters
        # are these arrays' leaves, with JAX's dtypes (a Python float is f32 there).
        args = jax.tree_util.tree_map(lambda x: jax.numpy.asarray(np.asarray(x)), case.args)
        leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(args)]
        compiled = jax.jit(case.function(), keep_unused=True).lower(*args).compile()
    call = lambda: jax.block_until_ready(compiled(*args))  # noqa: E731
    info = {
        "version": jax.__version__,
        "settings": {"device": str(cpu), "jit": "jax.jit(keep_unused=True), compiled ahead"},
    }
    return TimingReference("xla", info, call, entry="main", inputs=leaves)


#: XLA is the StableHLO timing reference only where JAX is installed.
JAX_MISSING = (
    "XLA times the StableHLO cases and comes with JAX, which is not installed: "
    "pip install -e '.[jax]'"
)
_DYNAMIC_DIM = re.compile(r"tensor<[^>]*\?")
_STATUS = re.compile(r"^[A-Z_]+: ")  # XLA's status code
_LOCATION = re.compile(r"^-:(\d+):\d+: error: ")


def stablehlo_reference(path: str, inputs: list[Any]) -> TimingReference:
    """XLA's run of the StableHLO file ``path`` (its ``@main``) on the case's inputs, already
    on the CPU device, compiled ahead and called once; IREE keeps its own entry and inputs.
    Raises ImportError without JAX, ValueError with a one-line reason for a program XLA
    does not compile (dynamic ``?`` dimensions, an op it lacks) or run."""
    try:
        import jax
    except ImportError:
        raise ImportError(JAX_MISSING) from None

    text = Path(path).read_text(encoding="utf-8")
    name = Path(path).name
    device = jax.devices("cpu")[0]
    client = device.client  # XLA's CPU client
    compile_and_load = getattr(client, "compile_and_load", None)  # jax >= 0.6
    try:
        if compile_and_load is not None:
            executable = compile_and_load(text, [device])
        else:
            executable = client.compile(text)  # jax 0.4: compiles and loads
    except Exception as e:  # noqa: BLE001 - XLA's errors have no public type
        # "UNKNOWN: -:8:10: error: 'op' can't be ..." names the line of the text it read.
        why = _LOCATION.sub(lambda m: f"line {m[1]}: ", _first_line(e))
        if _DYNAMIC_DIM.search(text):
            why += " (the program has dynamic `?` dimensions; XLA compiles static or bounded ones)"
        raise ValueError(f"XLA could not compile {name}: {why}") from None
    # As IREE reads them: without x64, JAX would put an i64 or f64 input as 32 bits.
    with _x64(jax):
        args = [jax.device_put(np.asarray(x), device) for x in inputs]
    call = lambda: jax.block_until_ready(executable.execute(args))  # noqa: E731
    first = time.perf_counter()
    try:
        call()  # the first call: inputs XLA refuses are said here, in one line
    except Exception as e:  # noqa: BLE001
        raise ValueError(
            f"XLA could not run {name} on the case's inputs: {_first_line(e)}"
        ) from None
    info = {
        "version": jax.__version__,
        "settings": {
            "device": str(device),
            "compile": "the case's StableHLO text, compiled ahead by XLA's CPU client",
        },
    }
    return TimingReference("xla", info, call, first_call_s=time.perf_counter() - first)


def _first_line(error: Exception) -> str:
    """XLA's message, its first line, without its status code."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return _STATUS.sub("", lines[0] if lines else type(error).__name__)[:300]


def _x64(jax: Any) -> Any:
    """A context in which JAX keeps 64-bit values (``jax.enable_x64``, or the experimental
    one of older JAX)."""
    enable = getattr(jax, "enable_x64", None)
    if enable is None:
        from jax import experimental

        enable = getattr(experimental, "enable_x64")  # noqa: B009 - absent from new JAX's stubs
    return enable(True)


def xla_softmax() -> tuple[Callable[[Any], Any], Callable[[np.ndarray], Any]] | None:
    """(the seed's softmax jitted, blocking until its result is ready; put-on-device), or
    None without jax."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    fn = jax.jit(lambda x: jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True))
    return (lambda x: fn(x).block_until_ready()), jax.device_put
