"""IreeBackend: onnx's Backend interface over the pipeline (compiles in a private store)."""

from __future__ import annotations

import unittest

import numpy as np
import onnx
import onnx.helper as oh
import pytest

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.onnx_backend.backend import (
    IreeBackend,
    IreeBackendError,
    UnsupportedModelError,
    _BackendCase,
    node_model,
    resolve_target,
)

F32 = onnx.TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = oh.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])


def _add(shape=(2, 3), elem=F32):
    return _model(
        [oh.make_node("Add", ["x", "y"], ["z"])],
        [oh.make_tensor_value_info("x", elem, shape), oh.make_tensor_value_info("y", elem, shape)],
        [oh.make_tensor_value_info("z", elem, shape)],
    )


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "store")


def test_a_second_prepare_compiles_nothing(store):
    model = _add()
    first = IreeBackend.prepare(model, "CPU", store_dir=store)
    assert first.compiles == 1 and first.cache_hits == {"import": False, "compile": False}
    second = IreeBackend.prepare(model, "CPU", store_dir=store)
    assert second.compiles == 0 and second.cache_hits["compile"] is True
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = second.run([x, x])
    np.testing.assert_array_equal(out[0], x + x)
    np.testing.assert_array_equal(out["z"], x + x)  # by name, as namedtupledict allows
    assert second.compiles == 0  # the run found the module too


def test_symbolic_dims_compile_at_run_with_the_shapes_given(store):
    model = _add(shape=("N", 4))
    rep = IreeBackend.prepare(model, "CPU", store_dir=store)
    assert not rep.static and rep.compiles == 0
    for rows in (3, 3, 5):
        x = np.ones((rows, 4), np.float32)
        np.testing.assert_array_equal(rep.run({"x": x, "y": x})[0], 2 * x)
    assert rep.compiles == 2  # one per shape: 3x4, then 5x4


def test_unsigned_outputs_keep_the_declared_dtype(store):
    model = _add(elem=onnx.TensorProto.UINT8)
    x = np.array([[250, 1, 2], [3, 4, 5]], np.uint8)
    (z,) = IreeBackend.run_model(model, [x, np.ones_like(x)], store_dir=store)
    assert z.dtype == np.uint8
    np.testing.assert_array_equal(z, x + np.uint8(1))


def test_a_compile_error_names_its_stage_and_keeps_irees_message(store):
    theta = oh.make_tensor_value_info("theta", F32, [2, 2, 3])
    size = oh.make_tensor("size", onnx.TensorProto.INT64, [4], [2, 3, 5, 6])
    model = _model(
        [oh.make_node("AffineGrid", ["theta", "size"], ["grid"])],
        [theta],
        [oh.make_tensor_value_info("grid", F32, [2, 5, 6, 2])],
        [size],
        opset=20,
    )
    with pytest.raises(IreeBackendError) as caught:
        IreeBackend.prepare(model, "CPU", store_dir=store)
    error = caught.value
    assert error.stage == "compile" and error.status == "error"
    assert "failed to legalize operation 'torch.operator'" in error.iree_message
    assert "onnx.AffineGrid" in str(error) and "compile stage" in str(error)


def test_a_malformed_model_fails_at_prepare(store):
    with pytest.raises(IreeBackendError) as caught:
        IreeBackend.prepare(b"not a model", "CPU", store_dir=store)
    assert caught.value.stage == "prepare"


def test_run_node_builds_a_one_node_model(store):
    x = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    node = oh.make_node("Relu", ["x"], ["y"])
    (y,) = IreeBackend.run_node(node, [x], store_dir=store)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    typed = node_model(node, [x], outputs_info=[(np.float32, (2, 2))])
    inferred = node_model(node, [x])
    assert typed.graph.output[0].type == inferred.graph.output[0].type


def test_a_sequence_input_is_unsupported_and_a_skip(store):
    seq = oh.make_tensor_sequence_value_info("s", F32, None)
    model = _model(
        [oh.make_node("SequenceLength", ["s"], ["n"])],
        [seq],
        [oh.make_tensor_value_info("n", onnx.TensorProto.INT64, [])],
    )
    assert not IreeBackend.is_compatible(model)
    with pytest.raises(UnsupportedModelError) as caught:
        IreeBackend.prepare(model, "CPU", store_dir=store)
    assert isinstance(caught.value, unittest.SkipTest) and caught.value.stage == "prepare"


def test_devices_and_targets():
    assert IreeBackend.supports_device("CPU")
    assert not IreeBackend.supports_device("no-such-target")
    assert resolve_target("CPU:0").name == "llvm-cpu"
    assert resolve_target("llvm-cpu-sync").driver == "local-sync"
    with pytest.raises(ConfigurationError, match="known: .*llvm-cpu"):
        IreeBackend.prepare(_add(), "no-such-target")


def test_the_flags_are_the_onnx_ops_suites(tmp_path):
    """The same flags mean the same store keys: what the suite compiled, prepare finds."""
    from iree_conformance.suites.onnx_ops import OnnxNodeCase

    target = resolve_target("CPU")
    suite_case = OnnxNodeCase(case_id="onnx-ops/x", suite="onnx_ops", kind="onnx")
    ours = _BackendCase(case_id="onnx-backend", suite="onnx_backend", kind="onnx")
    assert target.case_flags(ours) == target.case_flags(suite_case)


def test_the_builtin_cpu_target_is_the_checkouts(tmp_path, monkeypatch):
    """An install without a checkout (the scoreboard's container) uses BUILTIN_CPU_TARGET."""
    from iree_conformance.onnx_backend import backend

    assert resolve_target("CPU") == backend.BUILTIN_CPU_TARGET
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(backend, "_CHECKOUT_TARGETS", tmp_path / "none.toml")
    monkeypatch.delenv(backend.TARGETS_ENV, raising=False)
    assert backend.find_targets_file() is None
    assert resolve_target("CPU") is backend.BUILTIN_CPU_TARGET
    with pytest.raises(ConfigurationError, match="no targets file names target 'vmvx'"):
        resolve_target("vmvx")


def test_threads_may_share_a_prepared_model(store):
    from concurrent.futures import ThreadPoolExecutor

    rep = IreeBackend.prepare(_add(), "CPU", store_dir=store)
    xs = [np.full((2, 3), i, np.float32) for i in range(6)]
    with ThreadPoolExecutor(3) as pool:
        outs = list(pool.map(lambda x: rep.run([x, x])[0], xs))
    for x, out in zip(xs, outs):
        np.testing.assert_array_equal(out, 2 * x)
