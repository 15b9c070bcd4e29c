"""The large-model path on a small model (issue 47 item 2): iree-import-onnx
--large-model --externalize-params, the parameter file kept in the store, and the
runtime's io_parameters module binding it. A model over 2 GiB takes the same path
(test_onnx_large_models.py runs one end to end, marked slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iree_conformance.common.store import ArtifactStore
from iree_conformance.engine.worker.compiler import Compiler
from iree_conformance.engine.worker.errors import StageError
from iree_conformance.engine.worker.params import ParameterFiles
from iree_conformance.engine.worker.runtime import Runtime
from iree_conformance.engine.worker.store import ModuleCache
from iree_conformance.frontends.onnx import large_import
from iree_conformance.model.jobs import Program
from tests.support.onnx_testlib import external_data_model, marked_expected

FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=generic",
)
X = np.array([10.0, -20.0], np.float32)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small")
    path = external_data_model(folder, 4 * 2**20, marked=True)
    done = large_import.import_large_model(path, folder / "work")
    return path, done


def test_the_tool_keeps_the_weights_out_of_the_mlir(imported):
    _, done = imported
    text = done.mlir.decode()
    assert '#stream.parameter.named<"model"::"w">' in text
    assert len(done.mlir) < 64 * 1024  # 4 MiB of weights are not inline
    assert done.params.stat().st_size > 4 * 2**20
    assert done.command[:4] == [
        "iree-import-onnx",
        "big.onnx",
        "--large-model",
        "--externalize-params",
    ]


def test_the_module_runs_on_its_parameters_and_needs_them(imported):
    _, done = imported
    vmfb = Compiler(lambda: "").compile(done.mlir, FLAGS)
    runtime = Runtime(lambda: "")
    module, context = runtime.load(vmfb, "local-task", None, None, ("model", done.params))
    got = runtime.run(module, context, "big", [X])
    # The Gather reads the marked weights past the sum: a shifted or zero binding differs.
    np.testing.assert_array_equal(got[0], marked_expected(X))
    with pytest.raises(StageError):  # without the parameters module it cannot load
        module, context = runtime.load(vmfb, "local-task", None)
        runtime.run(module, context, "big", [X])


def test_a_failing_import_says_what_the_tool_said(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Add", ["x", "nope"], ["y"])], "g", [x], [x])
    path = tmp_path / "undefined.onnx"  # "nope" is defined nowhere
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    with pytest.raises(large_import.LargeImportError, match="failed \\(exit [1-9]"):
        large_import.import_large_model(path, tmp_path / "work")
    assert not list((tmp_path / "work").iterdir())  # its folder is removed


def _written(folder: Path, size: int) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "params.irpa"
    file.write_bytes(b"\0" * size)
    return {"opset_to": 17, "parameters_file": str(file)}


def test_the_store_keeps_the_file_once_and_imports_again_when_it_is_gone(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    cache = ModuleCache(store)
    calls = []

    def do_import():
        calls.append(1)
        work = cache.params.work_dir()
        assert work is not None and work.is_relative_to(store.root)  # a rename, not a copy
        return b"module {}", _written(work / f"import-{len(calls)}", 1000)

    program = Program("big", "onnx", source_bytes=b"model")
    for _ in range(2):
        mlir, meta = cache.imported(program, b"model", "ab" * 32, do_import, {}, False)
    assert len(calls) == 1, "a warm import reads the store"
    file = cache.params.path(meta)
    assert (
        file == store.root / "params" / "ab" / f"{'ab' * 32}.irpa" and file.stat().st_size == 1000
    )
    assert "parameters_file" not in meta and meta["parameters"]["scope"] == "model"
    assert not list((store.root / "params" / "tmp").iterdir())  # nothing left behind
    file.unlink()  # pruned: the import is a miss
    cache.imported(program, b"model", "ab" * 32, do_import, {}, False)
    assert len(calls) == 2 and file.is_file()
    file.write_bytes(b"\0" * 10)  # cut short: a miss too
    assert not cache.params.present(meta)


@pytest.mark.parametrize("named", ["/etc/passwd", "../../outside.irpa", "mlir/ab/x.irpa"])
def test_a_store_entry_naming_a_file_outside_params_names_none(tmp_path, named):
    store = ArtifactStore(tmp_path / "store")
    (tmp_path / "outside.irpa").write_bytes(b"x" * 10)
    params = ParameterFiles(store)
    meta = {"parameters": {"file": named, "bytes": 10, "scope": "model"}}
    assert params.path(meta) is None and params.runtime_parameters(meta) is None
    assert not params.present(meta)  # not a hit: the import is made again


def test_without_a_store_the_file_stays_where_it_was_written(tmp_path):
    params = ParameterFiles(ArtifactStore(None))
    assert params.work_dir() is None
    meta = params.keep("cd" * 32, _written(tmp_path / "t", 10))
    assert params.path(meta) == tmp_path / "t" / "params.irpa" and params.present(meta)
    assert params.runtime_parameters(meta) == ("model", tmp_path / "t" / "params.irpa")
    assert params.runtime_parameters({"opset_to": 17}) is None


def test_a_large_model_is_left_out_of_batches(tmp_path):
    from iree_conformance.engine.worker.batches import Batches
    from iree_conformance.model.jobs import LARGE_MODEL_OPTION, BatchJob

    def never(*_args):
        raise AssertionError("a large model's source is not read for a batch")

    cache = ModuleCache(ArtifactStore(tmp_path / "store"))
    batches = Batches(cache, Compiler(lambda: ""), Runtime(lambda: ""), never, never)
    big = Program("big", "onnx", "big.onnx", import_options={LARGE_MODEL_OPTION: [["b", 1, 2]]})
    result = batches.compile(BatchJob((big,), FLAGS), lambda _stage: None)
    assert "over 2 GiB" in result.left_out["big"]


def test_check_model_says_how_a_large_model_was_imported():
    from iree_conformance.cli.check_model import large_model_lines

    info = {
        "large_model": {
            "bytes": 2.1 * 2**30,
            "import_peak_rss_bytes": 2**31,
            "import_line": ["iree-import-onnx", "m.onnx"],
        },
        "parameters": {"file": "params/ab/x.irpa", "bytes": 2**31, "scope": "model"},
    }
    lines = large_model_lines(info)
    assert (
        "2.10 GiB" in lines[0] and "iree-import-onnx m.onnx" in lines[0] and "2048 MiB" in lines[0]
    )
    assert "params/ab/x.irpa (2.00 GiB)" in lines[1] and "--parameters=model=FILE" in lines[1]
    assert large_model_lines({"opset_to": 17}) == []


def test_a_killed_imports_folder_is_swept_and_a_live_ones_kept(tmp_path):
    import os

    params = ParameterFiles(ArtifactStore(tmp_path / "store"))
    work = params.work_dir()
    assert work is not None
    old, live = work / "onnx-large-old", work / "onnx-large-live"
    for folder in (old, live):
        folder.mkdir(parents=True)
        (folder / "params.irpa").write_bytes(b"\0" * 10)
    os.utime(old, (0, 0))  # decades ago: its process is gone
    assert params.work_dir() == work
    assert not old.exists() and (live / "params.irpa").is_file()
