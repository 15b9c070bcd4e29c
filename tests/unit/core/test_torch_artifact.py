"""The torch suite's parts that need no torch: the stored export, the rule that flags a
reference that says nothing, and the one skip line without torch."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from iree_conformance.frontends import case_folder
from iree_conformance.frontends.torch_export import folder
from iree_conformance.frontends.torch_export.artifact import Exported
from iree_conformance.frontends.torch_export.export import says_nothing
from iree_conformance.suites import case_folder as folder_suite
from iree_conformance.suites import torch as torch_suite
from iree_conformance.suites.run_options import RunOptions

ROOT = Path(__file__).resolve().parents[3]


def test_an_export_round_trips_scalars_bools_and_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.array([[1.5, -2.0]], dtype=ml_dtypes.bfloat16)
    exported = Exported(
        "module {}",
        [np.float32(3.0).reshape(()), np.array([True, False]), bf16],
        [np.array(7, dtype=np.int64)],
        {"preparation": "iree-turbine"},
    )
    back = Exported.from_bytes(exported.to_bytes())
    assert back.text == "module {}" and back.info == {"preparation": "iree-turbine"}
    assert [a.shape for a in back.inputs] == [(), (2,), (1, 2)]  # a scalar stays 0-d
    assert back.inputs[2].dtype == bf16.dtype and back.inputs[2].tolist() == bf16.tolist()
    assert back.expected[0].shape == () and back.expected[0] == 7


@pytest.mark.parametrize(
    ("outputs", "flagged"),
    [
        ([np.zeros((3, 4), np.float32)], True),
        ([np.full((2, 2), 5.0, np.float32), np.ones(3, np.int64)], True),
        ([np.array([True, True, True])], True),
        ([np.zeros(1, np.float32)], True),  # a zero scalar says nothing either
        ([np.array(4.0, np.float32)], False),  # one nonzero value: a sum, say
        ([np.full((2, 2), 5.0, np.float32), np.arange(3)], False),
        ([np.array([True, False])], False),
    ],
)
def test_a_reference_that_is_all_zero_or_constant_is_flagged(outputs, flagged):
    assert says_nothing(outputs) is flagged


def test_a_folder_named_torch_on_the_path_is_not_torch(tmp_path, monkeypatch):
    (tmp_path / "torch").mkdir()  # conformance/torch is one, in a pytest run
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    if importlib.util.find_spec("torch").origin is not None:
        pytest.skip("torch is installed here")
    assert (
        folder.missing_reason() is not None and "torch and iree-turbine" in folder.missing_reason()
    )


def test_without_torch_the_suite_is_one_skip_that_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setattr(
        case_folder, "missing_reason", lambda kind: "torch not installed: " + folder.INSTALL_HINT
    )
    cases = folder_suite.collect(
        torch_suite.FOLDER, ROOT / "conformance", RunOptions(store_dir=tmp_path)
    )
    assert [c.case_id for c in cases] == ["torch/torch-not-installed"]
    reason = cases[0].skip_reason
    assert reason is not None and "\n" not in reason
    assert "pip install torch==2.13.0" in reason
    assert "--index-url https://download.pytorch.org/whl/cpu" in reason
