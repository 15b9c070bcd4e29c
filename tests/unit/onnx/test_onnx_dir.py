"""--onnx-dir collection and the zoo's chosen-input cases, without IREE."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from iree_conformance.common.errors import CorpusError
from iree_conformance.frontends.onnx.static_shapes import STATIC_OPTION
from iree_conformance.model.cases import CaseInvalid, CaseReferenceError
from iree_conformance.suites import onnx_dir, onnx_models
from iree_conformance.suites.base import SuiteContext
from iree_conformance.suites.run_options import RunOptions
from tests.support import symbolic_models as sm
from tests.support.onnx_testlib import sha256


def _save(model: onnx.ModelProto, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def test_cases_ids_twins_and_static_shapes(tmp_path: Path):
    _save(sm.image_model(), tmp_path / "vision" / "image.onnx")
    _save(sm.reshape_model(), tmp_path / "reshape.onnx")
    (tmp_path / ".hidden").mkdir()
    _save(sm.image_model(), tmp_path / ".hidden" / "skip.onnx")
    cases = {c.case_id: c for c in onnx_dir.dir_cases(tmp_path, RunOptions(dims=(("W", 64),)))}
    assert sorted(cases) == [
        "onnx-dir/reshape.onnx",
        "onnx-dir/vision/image.onnx",
        "onnx-dir/vision/image.onnx:dynamic",
    ]
    static, dynamic = (
        cases["onnx-dir/vision/image.onnx"],
        cases["onnx-dir/vision/image.onnx:dynamic"],
    )
    (x,) = static.input_sets()[0]
    assert x.shape == (1, 3, 224, 64)  # --dim W=64 wins over the rule
    assert static.import_options[STATIC_OPTION] == {"x": [1, 3, 224, 64]}
    dynamic.input_sets()
    assert STATIC_OPTION not in dynamic.import_options
    assert dynamic.outcome_info()["inputs"]["compiled"] == "dynamic"
    assert static.outcome_info()["inputs"]["dims"]["W"] == {"size": 64, "rule": "spec"}
    # The reshape target: no usable reference, an error at the reference stage.
    with pytest.raises(CaseReferenceError, match="value = ..."):
        cases["onnx-dir/reshape.onnx"].input_sets()


def test_spec_files_reach_the_case_and_bad_ones_are_its_error(tmp_path: Path):
    _save(sm.image_model(), tmp_path / "a" / "image.onnx")
    (tmp_path / "models.toml").write_text('[models."a/image.onnx".dims]\nH = 48\n')
    _save(sm.image_model(), tmp_path / "b" / "image.onnx")
    (tmp_path / "b" / "image.inputs.toml").write_text("[dims]\nH = 1\nDEPTH = 2\n")
    _save(sm.image_model(), tmp_path / "c" / "image.onnx")
    (tmp_path / "c" / "image.inputs.toml").write_text("[dims\n")
    cases = {c.case_id: c for c in onnx_dir.dir_cases(tmp_path)}
    assert cases["onnx-dir/a/image.onnx"].input_sets()[0][0].shape == (1, 3, 48, 224)
    with pytest.raises(CaseInvalid, match=r"image.inputs.toml:3: .*dim 'DEPTH'"):
        cases["onnx-dir/b/image.onnx"].input_sets()
    with pytest.raises(CaseInvalid, match="malformed TOML"):
        cases["onnx-dir/c/image.onnx"].input_sets()


def test_folder_without_models_is_a_corpus_error(tmp_path: Path):
    with pytest.raises(CorpusError, match="holds no .onnx file"):
        onnx_dir.dir_cases(tmp_path)
    with pytest.raises(CorpusError, match="not a directory"):
        onnx_dir.dir_cases(tmp_path / "nope")
    suite = onnx_dir.OnnxDirSuite()
    assert suite.collect(SuiteContext(tmp_path, RunOptions(), {"onnx_dir": []})) == []
    with pytest.raises(CorpusError, match="holds no .onnx file"):
        suite.collect(SuiteContext(tmp_path, RunOptions(), {"onnx_dir": [tmp_path]}))


def test_zoo_models_without_data_get_chosen_inputs_an_overlay_and_a_dynamic_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    model = sm.image_model().SerializeToString()
    folder = tmp_path / "mirror"
    (folder / "m").mkdir(parents=True)
    (folder / "m" / "image-17.onnx").write_bytes(model)
    manifest = folder / "ONNX_HUB_MANIFEST.json"
    ports = {"inputs": [{"name": "x", "shape": ["N", 3, "H", "W"], "type": "tensor(float)"}]}
    manifest.write_text(
        json.dumps(
            [
                {
                    "model": "Image",
                    "model_path": "m/image-17.onnx",
                    "onnx_version": "1.14",
                    "opset_version": 17,
                    "metadata": {
                        "model_sha": sha256(model),
                        "model_bytes": len(model),
                        "tags": ["t"],
                        "io_ports": ports,
                    },
                }
            ]
        )
    )
    overlay = tmp_path / "overlay.toml"
    overlay.write_text('[models."image-17".dims]\nH = 32\n')
    values = {
        "zoo_manifest": str(manifest),
        "zoo_mirror": str(folder) + "/{model_path}",
        "input_specs": overlay,
    }
    monkeypatch.setenv("IREE_CONFORMANCE_ZOO_CACHE", str(tmp_path / "cache"))
    cases = {c.case_id: c for c in onnx_models.zoo_model_cases(values, RunOptions())}
    assert sorted(cases) == ["onnx-zoo/image-17", "onnx-zoo/image-17:dynamic"]
    static = cases["onnx-zoo/image-17"]
    (x,) = static.input_sets()[0]
    assert x.shape == (1, 3, 32, 224) and static.import_options[STATIC_OPTION]["x"] == [
        1,
        3,
        32,
        224,
    ]
    expected = static.expected_sets(static.input_sets())
    assert expected[0][0].shape == (1, 4, 1, 1) and np.isfinite(expected[0][0]).all()
    assert static.outcome_info()["inputs"]["spec"]["dims"] == {"H": 32}


def test_two_roots_with_the_same_relative_path_keep_both_cases(tmp_path: Path):
    """--onnx-dir A --onnx-dir B, each with good.onnx: two cases with two ids (one
    outcome each in the results), the later root's named after its folder."""
    for name in ("A", "B", "C/B"):
        _save(sm.reshape_model(), tmp_path / name / "good.onnx")
    context = SuiteContext(
        tmp_path, RunOptions(), {"onnx_dir": [tmp_path / "A", tmp_path / "B", tmp_path / "C" / "B"]}
    )
    cases = onnx_dir.OnnxDirSuite().collect(context)
    ids = [c.case_id for c in cases]
    assert len(ids) == len(set(ids)) == 3, ids
    assert ids == ["onnx-dir/good.onnx", "onnx-dir/B/good.onnx", "onnx-dir/B-2/good.onnx"]
    assert [c.source_path for c in cases] == [
        tmp_path / "A" / "good.onnx",
        tmp_path / "B" / "good.onnx",
        tmp_path / "C" / "B" / "good.onnx",
    ]


def test_a_compile_failure_is_tried_with_every_named_dim_fixed_beside_it(tmp_path):
    from iree_conformance.frontends.onnx.static_shapes import EVERY_DIM_OPTION, fix_every_named_dim
    from tests.support.symbolic_models import symbolic_channels_model

    onnx.save(symbolic_channels_model(), str(tmp_path / "vision.onnx"))
    cases = {c.case_id: c for c in onnx_dir.dir_cases(tmp_path)}
    for case_id, used in (
        ("onnx-dir/vision.onnx", "the inputs' dims fixed"),
        ("onnx-dir/vision.onnx:dynamic", "the dims as exported"),
    ):
        case = cases[case_id]
        case.input_sets()
        other = case.other_preparation("compile")
        assert (
            other is not None and other.used == used and "make_dynamic_shape_fixed" in other.other
        )
        options = other.program.import_options
        assert options[EVERY_DIM_OPTION] == {
            "batch": 1,
            "num_channels": 3,
            "height": 224,
            "width": 224,
        }
        assert options[STATIC_OPTION] == {"x": [1, 3, 224, 224]}
    # Fixed wherever the graph names it: outputs and value_info too, not cleared.
    model = symbolic_channels_model()
    model.graph.value_info.append(
        onnx.helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, ["batch", 4, "h2", "w2"])
    )
    fixed = fix_every_named_dim(model, {"x": [1, 3, 8, 8]}, {"batch": 1, "h2": 4})
    (vi,) = fixed.graph.value_info
    dims = vi.type.tensor_type.shape.dim
    assert [d.dim_value for d in dims[:3]] == [1, 4, 4] and dims[3].dim_param == "w2"
    assert fixed.graph.output[0].type.tensor_type.shape.dim[0].dim_value == 1
