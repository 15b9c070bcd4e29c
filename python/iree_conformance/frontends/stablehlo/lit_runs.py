"""lit ``RUN:`` lines of IREE's model tests: what to compile, with which inputs, for which backend.

A supported line runs the file through IREE and pipes the printed results into FileCheck:

    // RUN: iree-run-mlir --Xcompiler,iree-hal-target-device=local \\
    // RUN:   --Xcompiler,iree-hal-local-target-device-backends=llvm-cpu %s --input=2xf32=1,2 | FileCheck %s
    // RUN: iree-compile %s --iree-hal-target-backends=llvm-cpu | \\
    // RUN:   iree-run-module --device=local-task --module=- --function=f --input=... | FileCheck %s

Any other RUN line (another tool, no FileCheck, an input from a file) is kept with the
reason it cannot run, so that it is reported rather than dropped.
"""

from __future__ import annotations

import dataclasses
import re
import shlex

import numpy as np

from iree_conformance.frontends.mlir_types import ELEMENT_TYPES, numpy_dtype

_RUN = re.compile(r"^\s*//\s*RUN:\s?(.*)$")
_BACKEND_FLAGS = ("iree-hal-local-target-device-backends", "iree-hal-target-backends")
_DEVICE_FLAG = "iree-hal-target-device"
# Backend names in RUN lines, as our targets name them.
_BACKEND_ALIASES = {"vulkan-spirv": "vulkan", "rocm": "hip", "metal-spirv": "metal", "local": None}
# Flags the target decides: the RUN line's choice of device and backend is what we match.
_TARGET_FLAGS = (
    *_BACKEND_FLAGS,
    _DEVICE_FLAG,
    "iree-input-type",
    "iree-llvmcpu-target-cpu",
    "iree-llvmcpu-target-triple",
)


class InputError(ValueError):
    pass


@dataclasses.dataclass
class RunLine:
    """One RUN command (continuation lines joined), at the line where it starts."""

    line: int
    command: str
    compile_flags: list[str] = dataclasses.field(default_factory=list)
    input_type: str = "auto"
    inputs: list[str] = dataclasses.field(default_factory=list)
    function: str | None = None
    backend: str | None = None
    filecheck_args: list[str] = dataclasses.field(default_factory=list)
    problem: str | None = None  # why this line cannot run here

    @property
    def label(self) -> str:
        return f"RUN line {self.line}"


def run_commands(text: str) -> list[tuple[int, str]]:
    """(first line number, command) of each RUN command; a trailing backslash continues it."""
    commands: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _RUN.match(line)
        if not match:
            continue
        body = match.group(1).rstrip()
        start, prefix = pending if pending else (number, "")
        if body.endswith("\\"):
            pending = (start, prefix + body[:-1] + " ")
            continue
        pending = None
        commands.append((start, prefix + body))
    if pending:
        commands.append(pending)
    return commands


def is_iree_command(command: str) -> bool:
    """Whether a RUN command runs the file through IREE (other tools' RUN lines, such as
    openxla/stablehlo's ``stablehlo-opt``, belong to other projects)."""
    first = command.strip().split(maxsplit=1)[:1]
    return bool(first) and first[0] in ("iree-run-mlir", "iree-compile")


def _flag(arg: str) -> tuple[str, str | None]:
    name, _, value = arg.lstrip("-").partition("=")
    return name, (value if "=" in arg else None)


def parse_run_line(line: int, command: str) -> RunLine:
    run = RunLine(line=line, command=command.strip())
    try:
        stages = [shlex.split(stage) for stage in command.split("|")]
    except ValueError as e:
        run.problem = f"{run.label}: cannot split the command: {e}"
        return run
    if not stages or not stages[0]:
        run.problem = f"{run.label}: empty command"
        return run
    checker = stages[-1]
    if len(stages) < 2 or not checker or checker[0] != "FileCheck":
        run.problem = (
            f"{run.label}: the output is not piped into FileCheck; nothing would be checked"
        )
        return run
    if "%s" not in checker[1:]:
        run.problem = f"{run.label}: FileCheck checks another file than this one"
        return run
    run.filecheck_args = [a for a in checker[1:] if a != "%s"]
    tool = stages[0]
    compiler_args: list[str] = []
    runtime_args: list[str] = []
    if tool[0] == "iree-run-mlir" and len(stages) == 2:
        for arg in tool[1:]:
            if arg.startswith("--Xcompiler,"):
                compiler_args.append("--" + arg.split(",", 1)[1].lstrip("-"))
            elif arg != "%s":
                runtime_args.append(arg)
    elif (
        tool[0] == "iree-compile"
        and len(stages) == 3
        and stages[1]
        and stages[1][0] == "iree-run-module"
    ):
        compiler_args = [a for a in tool[1:] if a not in ("%s", "-o", "-")]
        runtime_args = stages[1][1:]
    else:
        run.problem = f"{run.label}: unsupported command {' | '.join(s[0] for s in stages if s)!r}; supported: iree-run-mlir | FileCheck, iree-compile | iree-run-module | FileCheck"
        return run
    device = None
    for arg in compiler_args:
        name, value = _flag(arg)
        if name in _BACKEND_FLAGS and value:
            run.backend = _BACKEND_ALIASES.get(value, value)
        elif name == _DEVICE_FLAG and value:
            device = _BACKEND_ALIASES.get(value, value)
        elif name == "iree-input-type" and value:
            run.input_type = value
        if name not in _TARGET_FLAGS:
            run.compile_flags.append(arg)
    run.backend = run.backend or device
    for arg in runtime_args:
        name, value = _flag(arg)
        if name == "input" and value is not None:
            if value.startswith("@") or "@" in value.split("=", 1)[-1][:1]:
                run.problem = f"{run.label}: input {value!r} comes from a file; only inline inputs are supported"
                return run
            run.inputs.append(value)
        elif name == "function" and value:
            run.function = value
        elif name in ("device", "module") or arg == "-":
            continue
        else:
            run.problem = f"{run.label}: unsupported runtime flag {arg!r}"
            return run
    if run.backend is None:
        run.problem = f"{run.label}: names no compiler backend (--iree-hal-local-target-device-backends or --iree-hal-target-device)"
    for spec in run.inputs:
        try:
            parse_input(spec)
        except InputError as e:
            run.problem = f"{run.label}: {e}"
    return run


def parse_run_lines(text: str, other_tools: bool = False) -> list[RunLine]:
    """The IREE RUN lines of a file, each parsed (or with the reason it cannot run); with
    other_tools, also the other RUN lines, each with the tool it would need."""
    runs = []
    for line, command in run_commands(text):
        if is_iree_command(command):
            runs.append(parse_run_line(line, command))
        elif other_tools:
            tool = (command.split() or ["(empty)"])[0]
            problem = f"RUN line {line}: runs {tool!r}, not iree-run-mlir or iree-compile | iree-run-module"
            runs.append(RunLine(line=line, command=command.strip(), problem=problem))
    return runs


def parse_input(spec: str) -> np.ndarray:
    """One value in IREE's ``--input`` syntax: ``2x3xf32=1,2,3,4,5,6``, ``2x3xf32=[1 2 3][4 5 6]``,
    ``f32=1.5``, or a bare ``2x3xf32`` for zeros."""
    shape_text, has_value, values = spec.partition("=")
    parts = shape_text.strip().split("x")
    dtype_name = parts[-1]
    dtype = numpy_dtype(dtype_name)
    if dtype is None:
        raise InputError(
            f"input {spec!r}: element type {dtype_name!r} is not supported (known: {', '.join(ELEMENT_TYPES)})"
        )
    try:
        shape = tuple(int(p) for p in parts[:-1])
    except ValueError:
        raise InputError(
            f"input {spec!r}: shape {shape_text!r} is not dims 'x'-separated, e.g. 2x3xf32"
        ) from None
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if not has_value:
        return np.zeros(shape, dtype)
    tokens = [t for t in re.split(r"[\s,\[\]]+", values) if t]
    if len(tokens) == 1 and count > 1:
        tokens = tokens * count  # IREE splats a single value
    if len(tokens) != count:
        raise InputError(
            f"input {spec!r}: {len(tokens)} values for shape {shape or '()'} ({count} elements)"
        )
    try:
        if dtype == np.bool_:
            flat = np.array(
                [int(t, 0) != 0 if t not in ("true", "false") else t == "true" for t in tokens]
            )
        elif dtype.kind == "f":
            flat = np.array([float(t) for t in tokens], dtype)
        else:
            flat = np.array([int(t, 0) for t in tokens], dtype)
    except ValueError as e:
        raise InputError(f"input {spec!r}: {e}") from None
    return flat.reshape(shape)


def target_backend(compile_flags: tuple[str, ...] | list[str]) -> str | None:
    """The backend a target compiles for, named as RUN lines name it (llvm-cpu, vmvx, cuda, ...)."""
    device = None
    for arg in compile_flags:
        name, value = _flag(arg)
        if name in _BACKEND_FLAGS and value:
            return _BACKEND_ALIASES.get(value, value)
        if name == _DEVICE_FLAG and value:
            device = _BACKEND_ALIASES.get(value, value)
    return device
