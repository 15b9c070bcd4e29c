"""``IreeBackend``: IREE behind the ONNX ecosystem's backend interface.

``onnx.backend.base.Backend`` is how onnx's test runner, the onnx backend scoreboard and
code written against ``onnxruntime.backend`` drive a runtime. This one runs the project's
own pipeline in its worker process (a compiler crash never takes the caller down):
prepare (check, opset upgrade; dims fixed from the inputs given when the model has
symbolic ones), import, compile, load, run, on a target from targets.toml
(``device="CPU"`` is llvm-cpu through local-task). Compiled modules live in the artifact
store under the same keys as the ``onnx_ops`` suite's (the same flags: ONNX_KEEP_F64), so
a second ``prepare`` of a model, or of an operator test the suite compiled, compiles
nothing. A failure raises ``IreeBackendError`` naming the stage and IREE's own message.

The module also exposes ``prepare``, ``run_model``, ``run_node``, ``supports_device`` and
``is_compatible`` at module level, as ``onnxruntime.backend.backend`` does: the scoreboard
imports a backend by module path (``ONNX_BACKEND=iree_conformance.onnx_backend.backend``).
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import os
import threading
import unittest
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.defs
import onnx.helper
import onnx.shape_inference
from onnx.backend.base import Backend, BackendRep, namedtupledict

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.store import ArtifactStore, default_store_dir
from iree_conformance.common.vocabulary import Status
from iree_conformance.engine.worker.parent import WorkerClient
from iree_conformance.engine.worker.store import ModuleCache, job_host
from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION
from iree_conformance.frontends.onnx.values import graph_inputs, value_kind
from iree_conformance.model.cases import ONNX_KEEP_F64, Case
from iree_conformance.model.compare import as_declared_unsigned
from iree_conformance.model.jobs import CaseJob, CaseResult, Program
from iree_conformance.model.targets import (
    Target,
    TargetError,
    load_targets,
    unavailable_reason,
    uncompilable_reason,
)

__all__ = [
    "BUILTIN_CPU_TARGET",
    "DEVICE_TARGETS",
    "TARGETS_ENV",
    "IreeBackend",
    "IreeBackendError",
    "IreeBackendRep",
    "UnsupportedModelError",
    "find_targets_file",
    "is_compatible",
    "node_model",
    "prepare",
    "resolve_target",
    "run",
    "run_model",
    "run_node",
    "supports_device",
]

#: onnx's device names and the targets (conformance/targets.toml) they mean.
DEVICE_TARGETS = {"CPU": "llvm-cpu", "CUDA": "cuda"}
#: Where the targets file is when neither ``targets_file=`` nor a checkout names one.
TARGETS_ENV = "IREE_CONFORMANCE_TARGETS"
_CHECKOUT_TARGETS = Path(__file__).resolve().parents[3] / "conformance" / "targets.toml"
#: The options ``prepare`` reads; onnx's runner also passes ``rtol``/``atol`` (its own).
_OPTIONS = ("target", "targets_file", "store_dir")


class IreeBackendError(RuntimeError):
    """IREE failed on the model: ``stage`` (prepare, import, compile, load or run),
    ``status`` (error, crash or timeout) and ``iree_message`` (IREE's own words)."""

    def __init__(self, stage: str, iree_message: str, status: str = Status.ERROR, model: str = ""):
        self.stage, self.iree_message, self.status, self.model = stage, iree_message, status, model
        what = "failed" if status == Status.ERROR else f"failed ({status})"
        super().__init__(
            f"IREE {what} at the {stage} stage of {model or 'the model'}: {iree_message}"
        )


class UnsupportedModelError(IreeBackendError, unittest.SkipTest):
    """The model has a value this backend cannot pass to IREE (a sequence, map or optional
    input or output). A ``unittest.SkipTest`` too: onnx's runner and the scoreboard count
    the case as skipped, as the ``onnx_ops`` suite does."""


class _BackendCase(Case):
    """The case a model given to the backend is: an ONNX program whose f64 stays f64, the
    ``onnx_ops`` suite's flags (suites.onnx_ops.OnnxNodeCase), so the store keys agree."""

    def compile_flags(self, target_flags: tuple[str, ...]) -> list[str]:
        return [*super().compile_flags(target_flags), ONNX_KEEP_F64]


# -- targets -------------------------------------------------------------------
#: llvm-cpu as conformance/targets.toml defines it, for an install without a checkout (the
#: scoreboard's container); tests/e2e/onnx_backend checks that the two stay the same.
BUILTIN_CPU_TARGET = Target(
    name="llvm-cpu",
    compile_flags=(
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=generic",
    ),
    driver="local-task",
    platforms=("linux", "macos", "windows"),
    description="LLVM CPU code, multithreaded local-task driver (default)",
    kind_flags=(("mlir", ("--iree-opt-const-eval=false",)),),
)


def find_targets_file(targets_file: str | os.PathLike[str] | None = None) -> Path | None:
    """``targets_file``, else $IREE_CONFORMANCE_TARGETS, else ./conformance/targets.toml,
    else the checkout's; None when there is none (only the built-in llvm-cpu then)."""
    if targets_file:
        return Path(targets_file)
    if os.environ.get(TARGETS_ENV):
        return Path(os.environ[TARGETS_ENV])
    for candidate in (Path.cwd() / "conformance" / "targets.toml", _CHECKOUT_TARGETS):
        if candidate.is_file():
            return candidate
    return None


def resolve_target(
    device: str | None, targets_file: str | os.PathLike[str] | None = None
) -> Target:
    """The target a device names: ``CPU`` (or ``CPU:0``) is llvm-cpu, ``CUDA`` cuda, any
    other name a target of the targets file."""
    name = (device or "CPU").split(":", 1)[0]
    name = DEVICE_TARGETS.get(name.upper(), name)
    path = find_targets_file(targets_file)
    if path is None:
        if name == BUILTIN_CPU_TARGET.name:
            return BUILTIN_CPU_TARGET
        raise TargetError(
            f"device {device!r}: no targets file names target {name!r}; pass targets_file=, "
            f"set ${TARGETS_ENV}, or run from an iree-conformance checkout"
        )
    targets = load_targets(path)
    if name not in targets:
        raise TargetError(
            f"device {device!r}: no target {name!r} in {path}; known: {', '.join(sorted(targets))}"
        )
    return targets[name]


# -- the worker ----------------------------------------------------------------
_WORKERS: dict[str, tuple[WorkerClient, threading.Lock]] = {}
_WORKERS_LOCK = threading.Lock()


def _execute_in_worker(store_root: Path | None, job: CaseJob) -> CaseResult:
    """Runs the job in the store's worker process (one per store, started on first use,
    closed at exit; one job at a time, so threads may share a backend)."""
    key = str(store_root)
    with _WORKERS_LOCK:
        if key not in _WORKERS:
            _WORKERS[key] = (WorkerClient(store_root), threading.Lock())
        client, lock = _WORKERS[key]
    with lock:
        return client.execute(job)


@atexit.register
def _close_workers() -> None:
    with _WORKERS_LOCK:
        for client, _ in _WORKERS.values():
            client.close()
        _WORKERS.clear()


# -- models --------------------------------------------------------------------
def _load(model: Any) -> tuple[onnx.ModelProto, bytes, str | None, str]:
    """(model, its serialized bytes, its file or None, a label for messages)."""
    if isinstance(model, onnx.ModelProto):
        return model, model.SerializeToString(), None, f"model {model.graph.name or '<unnamed>'}"
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        proto = onnx.ModelProto()
        try:
            proto.ParseFromString(data)
        except Exception as e:  # google.protobuf.message.DecodeError
            raise IreeBackendError(
                "prepare", f"not a valid ONNX protobuf: {e}", model=f"<{len(data)} bytes>"
            ) from None
        return proto, data, None, f"model {proto.graph.name or '<unnamed>'}"
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise IreeBackendError(
                "prepare", f"cannot read it: {e.strerror or e}", model=str(path)
            ) from None
        proto = onnx.ModelProto()
        try:
            proto.ParseFromString(data)
        except Exception as e:
            raise IreeBackendError(
                "prepare", f"not a valid ONNX protobuf: {e}", model=str(path)
            ) from None
        return proto, data, str(path.resolve()), str(path)
    raise TypeError(
        f"prepare takes an onnx.ModelProto, serialized bytes or a path, not {type(model).__name__}"
    )


def _static_shape(vi: onnx.ValueInfoProto) -> list[int] | None:
    """The input's shape when every dim is a number, else None."""
    tensor = vi.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    dims = list(tensor.shape.dim)
    if not all(d.HasField("dim_value") and d.dim_value >= 0 for d in dims):
        return None
    return [d.dim_value for d in dims]


def _unsupported_value(model: onnx.ModelProto) -> str | None:
    """The first graph input or output that is not a tensor, as a reason."""
    for role, infos in (("input", graph_inputs(model)), ("output", list(model.graph.output))):
        for vi in infos:
            kind = value_kind(vi.type)
            if kind not in ("tensor", "unknown"):
                return f"{kind} {role} {vi.name!r} cannot be passed to or from IREE's runtime"
    return None


def _declared_dtype(vi: onnx.ValueInfoProto) -> np.dtype | None:
    elem = vi.type.tensor_type.elem_type
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem)) if elem else None
    except (KeyError, TypeError, ValueError):
        return None


# -- the backend ---------------------------------------------------------------
@dataclasses.dataclass
class _Prepared:
    proto: onnx.ModelProto
    source: bytes
    path: str | None
    label: str
    target: Target
    flags: tuple[str, ...]
    store: ArtifactStore


class IreeBackendRep(BackendRep):
    """A prepared model: ``run(inputs)`` runs it on the target. ``compiles`` counts the
    modules this handle compiled (0 when the store had them); ``cache_hits`` is the last
    compile's."""

    def __init__(self, prepared: _Prepared):
        self._p = prepared
        self.inputs = graph_inputs(prepared.proto)
        self.output_names = [o.name for o in prepared.proto.graph.output]
        shapes = [_static_shape(vi) for vi in self.inputs]
        self.static = all(s is not None for s in shapes)
        self.compiles = 0
        self.cache_hits: dict[str, bool] = {}
        self._digest = hashlib.sha256(prepared.source).hexdigest()[:16]

    @property
    def target(self) -> Target:
        return self._p.target

    def _program(self, shapes: Mapping[str, list[int]] | None) -> Program:
        options = {STATIC_OPTION: dict(shapes)} if shapes else {}
        return Program(
            f"onnx-backend/{self._digest}", "onnx", self._p.path, self._p.source, options
        )

    def _job(self, program: Program, input_sets: tuple = (), **extra: Any) -> CaseJob:
        t = self._p.target
        return CaseJob(
            program=program,
            compile_flags=self._p.flags,
            target=t.name,
            driver=t.driver,
            device=t.device,
            host_specific=t.host_specific,
            input_sets=input_sets,
            stage_timeouts=dict(t.stage_timeouts),
            **extra,
        )

    def _execute(self, job: CaseJob) -> CaseResult:
        result = _execute_in_worker(self._p.store.root, job)
        if result.status != Status.PASS and "batch" in result.info and not job.compile_only:
            # It ran in the module of a batch that compiled it (the onnx_ops suite's): a
            # failure there is only a hint; its own module decides, as in pipeline.run_case.
            result = _execute_in_worker(self._p.store.root, dataclasses.replace(job, alone=True))
        hits = result.info.get("cache_hits")
        if isinstance(hits, dict):
            self.cache_hits = dict(hits)
            if not hits.get("compile", True):  # not answered from the store
                self.compiles += 1
        if result.status != Status.PASS:
            raise IreeBackendError(
                result.stage,
                "\n".join(result.diagnostics) or "(IREE gave no message)",
                result.status,
                self._p.label,
            )
        return result

    def compile(self) -> None:
        """Compiles the model as declared (prepare does, for a model without symbolic
        dims), unless the store holds its module or the batch module that holds it."""
        job = self._job(self._program(None), compile_only=True)
        compile_key = ModuleCache.keys(job.program, self._p.source, self._p.flags, job_host(job))[1]
        if ModuleCache(self._p.store).member(compile_key) is not None:
            self.cache_hits = {"import": True, "compile": True}
            return
        self._execute(job)

    def _arrange(self, inputs: Any) -> list[np.ndarray]:
        names = [vi.name for vi in self.inputs]
        if isinstance(inputs, Mapping):
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ValueError(
                    f"{self._p.label}: no value for input(s) {missing}; it takes {names}"
                )
            values = [inputs[n] for n in names]
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(names):
                raise ValueError(
                    f"{self._p.label}: {len(inputs)} inputs given, the model takes {len(names)} ({names})"
                )
            values = list(inputs)
        else:
            if len(names) != 1:
                raise ValueError(
                    f"{self._p.label}: one array given, the model takes {len(names)} inputs ({names})"
                )
            values = [inputs]
        arrays = []
        for name, value in zip(names, values):
            if value is None or isinstance(value, (list, dict)):
                raise UnsupportedModelError(
                    "prepare",
                    f"input {name!r} is a {type(value).__name__}: only tensors reach IREE's runtime",
                    model=self._p.label,
                )
            arrays.append(np.asarray(value))
        return arrays

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Runs the model on one set of inputs (a list in graph-input order, a dict by
        name, or one array); the outputs in the declared dtypes, by index or name."""
        arrays = self._arrange(inputs)
        shapes = (
            None if self.static else {vi.name: list(a.shape) for vi, a in zip(self.inputs, arrays)}
        )
        result = self._execute(self._job(self._program(shapes), input_sets=(arrays,)))
        outputs = list((result.outputs or [[]])[0])
        declared = [_declared_dtype(o) for o in self._p.proto.graph.output]
        # The runtime returns integers signless (as the signed numpy type of their width):
        # view them as the declared unsigned type, the onnx_ops suite's rule (model.compare).
        outputs = [
            as_declared_unsigned(np.asarray(a), np.empty((), d)) if d is not None else np.asarray(a)
            for a, d in zip(outputs, declared + [None] * len(outputs))
        ]
        names = (
            self.output_names
            if len(self.output_names) == len(outputs)
            else [f"output_{i}" for i in range(len(outputs))]
        )
        return namedtupledict("Outputs", names)(*outputs)


class IreeBackend(Backend):
    """IREE through this project's pipeline. Options (keyword arguments of ``prepare``,
    ``run_model``, ``run_node``): ``target`` (a targets.toml name; overrides the device),
    ``targets_file``, ``store_dir`` (the artifact store; default as ``pytest conformance``).
    A subclass may set ``target``: the target its "CPU" device means (onnx's runner only
    knows CPU and CUDA)."""

    target: str | None = None

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return _unsupported_value(model) is None

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Whether the device's target can compile and run here."""
        try:
            target = resolve_target(cls.target if cls.target and device == "CPU" else device)
        except ConfigurationError:
            return False
        return unavailable_reason(target) is None and uncompilable_reason(target) is None

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> IreeBackendRep:
        """Checks the model and, when its input shapes are all numbers, compiles it (or
        finds it in the store); a model with symbolic dims compiles at its first run,
        with the dims of the inputs given."""
        options = {k: v for k, v in kwargs.items() if k in _OPTIONS}
        named = options.get("target") or (cls.target if cls.target and device == "CPU" else device)
        target = resolve_target(named, options.get("targets_file"))
        reason = unavailable_reason(target) or uncompilable_reason(target)
        if reason:
            raise TargetError(f"device {device!r}: {reason}")
        proto, source, path, label = _load(model)
        unsupported = _unsupported_value(proto)
        if unsupported:
            raise UnsupportedModelError("prepare", unsupported, model=label)
        case = _BackendCase(case_id="onnx-backend", suite="onnx_backend", kind="onnx")
        store_dir = options.get("store_dir")
        prepared = _Prepared(
            proto,
            source,
            path,
            label,
            target,
            target.case_flags(case),
            ArtifactStore(Path(store_dir) if store_dir else default_store_dir()),
        )
        rep = IreeBackendRep(prepared)
        if rep.static:
            rep.compile()
        return rep

    @classmethod
    def run_model(
        cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[Any, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Builds a one-node model around ``node`` (input types from the arrays given,
        output types from ``outputs_info`` or shape inference) and runs it."""
        arrays = [
            np.asarray(a) for a in (inputs.values() if isinstance(inputs, Mapping) else inputs)
        ]
        model = node_model(node, arrays, outputs_info, kwargs.pop("opset_version", None))
        return cls.run_model(model, arrays, device, **kwargs)


def node_model(
    node: onnx.NodeProto,
    inputs: Sequence[np.ndarray],
    outputs_info: Sequence[tuple[Any, tuple[int, ...]]] | None = None,
    opset_version: int | None = None,
) -> onnx.ModelProto:
    """A model whose graph is ``node``: its named inputs typed from ``inputs``, its outputs
    from ``outputs_info`` or inferred."""
    names = [n for n in node.input if n]
    if len(names) != len(inputs):
        raise ValueError(f"node {node.op_type} takes {len(names)} inputs; {len(inputs)} given")
    graph_in = [
        onnx.helper.make_tensor_value_info(
            n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape
        )
        for n, a in zip(names, inputs)
    ]
    outs = [n for n in node.output if n]
    if outputs_info is not None:
        graph_out = [
            onnx.helper.make_tensor_value_info(
                n, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape
            )
            for n, (dtype, shape) in zip(outs, outputs_info)
        ]
    else:
        graph_out = [onnx.ValueInfoProto(name=n) for n in outs]
    domain = node.domain or ""
    version = opset_version if domain in ("", "ai.onnx") and opset_version else None
    if version is None:
        version = (
            onnx.defs.onnx_opset_version()
            if domain in ("", "ai.onnx")
            else onnx.defs.get_schema(node.op_type, domain=domain).since_version
        )
    opsets = [onnx.helper.make_opsetid(domain, version)]
    if domain not in ("", "ai.onnx"):
        opsets.append(onnx.helper.make_opsetid("", onnx.defs.onnx_opset_version()))
    graph = onnx.helper.make_graph([node], f"{node.op_type}_node", graph_in, graph_out)
    model = onnx.helper.make_model(graph, opset_imports=opsets)
    if outputs_info is None:
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        except Exception as e:  # noqa: BLE001 - onnx's InferenceError and friends
            raise IreeBackendError(
                "prepare",
                f"onnx shape inference rejects the node: {e}",
                model=f"node {node.op_type}",
            ) from None
        types = {vi.name: vi.type for vi in [*inferred.graph.value_info, *inferred.graph.output]}
        for out in model.graph.output:
            if out.name in types and types[out.name].WhichOneof("value"):
                out.type.CopyFrom(types[out.name])
    return model


is_compatible = IreeBackend.is_compatible
prepare = IreeBackend.prepare
run_model = IreeBackend.run_model
run = IreeBackend.run_model
run_node = IreeBackend.run_node
supports_device = IreeBackend.supports_device
