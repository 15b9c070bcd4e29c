"""prepare_model (load, check, upgrade) and import_to_mlir (IREE's ONNX importer)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from iree_conformance.frontends.onnx import prepare
from iree_conformance.frontends.onnx.light_models import light_data_dir
from iree_conformance.frontends.onnx.prepare import (
    MIN_IREE_OPSET,
    OnnxImportError,
    PrepareError,
    import_to_mlir,
    prepare_model,
)
from tests.support.onnx_testlib import add_model


def test_recent_model_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(add_model(opset=18), str(path))
    for source in (path, str(path), path.read_bytes(), add_model(opset=18)):
        prepared = prepare_model(source)
        assert (prepared.original_opset, prepared.opset, prepared.upgraded) == (18, 18, False)


def test_old_opset_is_upgraded() -> None:
    prepared = prepare_model(light_data_dir() / "light" / "light_resnet50.onnx")
    assert prepared.upgraded and prepared.original_opset == 9
    assert prepared.opset == MIN_IREE_OPSET == 17
    assert prepared.info() == {"opset_from": 9, "opset_to": 17}
    assert prepare.default_opset(prepared.model) == 17


def test_truncated_protobuf(tmp_path: Path) -> None:
    data = add_model().SerializeToString()
    big = add_model()
    big.graph.initializer.append(numpy_helper.from_array(np.zeros(4096, np.float32), "pad"))
    for blob in (data[: len(data) // 2], big.SerializeToString()[:5000]):
        with pytest.raises(
            PrepareError,
            match=r"bytes of model>: (not a valid ONNX protobuf|the model has no graph|onnx.checker rejects)",
        ):
            prepare_model(blob)
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[:37])
    with pytest.raises(PrepareError, match=str(path)):
        prepare_model(path)


def test_missing_file() -> None:
    with pytest.raises(PrepareError, match="model file does not exist"):
        prepare_model(Path("/nonexistent/model.onnx"))


def test_wrong_opset_domain() -> None:
    model = add_model()
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(PrepareError, match="(?i)domain"):
        prepare_model(model)
    # Without the checker, the opset check itself names the problem.
    with pytest.raises(PrepareError, match="add an opset_import for domain ''"):
        prepare_model(model, check=False)


def test_missing_initializer() -> None:
    model = add_model()
    del model.graph.initializer[:]
    with pytest.raises(PrepareError, match="onnx.checker rejects the model.*'b'"):
        prepare_model(model)


def test_failed_upgrade_is_a_prepare_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(model: onnx.ModelProto, version: int) -> onnx.ModelProto:
        raise RuntimeError("No adapter for Frobnicate")

    monkeypatch.setattr(onnx.version_converter, "convert_version", fail)
    with pytest.raises(PrepareError, match="from 13 to 17 .*No adapter for Frobnicate"):
        prepare_model(add_model(opset=13))


def test_import_tiny_model() -> None:
    mlir = import_to_mlir(prepare_model(add_model()).model)
    assert "func.func @add" in mlir and 'torch.operator "onnx.Add"' in mlir
    assert "!torch.vtensor<[2,3],f32>" in mlir


def test_import_runs_shape_inference() -> None:
    model = add_model()
    relu = helper.make_node("Relu", ["y"], ["z"])
    model.graph.node.append(relu)
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3]))
    mlir = import_to_mlir(model)  # "y" has no value_info until shape inference adds it
    assert 'torch.operator "onnx.Relu"' in mlir


def test_import_error_is_clear() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT4E2M1, [2])
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT4E2M1)], "cast4", [x], [y]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    with pytest.raises(OnnxImportError, match="graph 'cast4' failed.*element type: 23"):
        import_to_mlir(model)


def test_bytes_with_external_data_load_from_the_model_folder(tmp_path):
    from tests.support import symbolic_models as sm

    path = tmp_path / "model.onnx"
    onnx.save(
        sm.batch_model(),
        str(path),
        save_as_external_data=True,
        location="model.onnx.data",
        size_threshold=0,
    )
    prepared = prepare.prepare_model(path.read_bytes(), base_dir=tmp_path)
    assert prepared.model.graph.initializer[0].raw_data  # the weights were read in
    (tmp_path / "model.onnx.data").unlink()
    with pytest.raises(prepare.PrepareError, match=r"external data file 'model.onnx.data'.*beside"):
        prepare.prepare_model(path.read_bytes(), base_dir=tmp_path)
