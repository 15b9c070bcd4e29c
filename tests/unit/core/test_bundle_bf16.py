"""A bundled case's bfloat16 arrays (torch cases in bf16) come back as bfloat16: a .npz
alone reads them back as void, which no comparison can judge."""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 needs ml_dtypes")

from iree_conformance.bundles import bundle  # noqa: E402
from iree_conformance.bundles.manifest_check import check_record  # noqa: E402
from iree_conformance.expectations.lookup import Expectations  # noqa: E402
from iree_conformance.model.cases import Case  # noqa: E402
from iree_conformance.model.jobs import CaseResult  # noqa: E402
from iree_conformance.model.targets import Target  # noqa: E402

TARGET = Target("llvm-cpu", ("--iree-hal-target-device=local",), "local-task")
BF16 = np.array([[1.5, -2.0], [0.25, 3.0]], dtype=ml_dtypes.bfloat16)
F32 = np.array([1.0, 2.0], dtype=np.float32)


@dataclasses.dataclass
class Bf16Case(Case):
    def input_sets(self):
        return [[BF16, F32]]

    def expected_sets(self, input_sets):
        return [[BF16 * 2]]


def test_bf16_arrays_round_trip_through_a_bundle(tmp_path):
    writer = bundle.BundleWriter(tmp_path)
    case = Bf16Case("torch/x", "torch", "mlir")
    writer.add(case, TARGET, CaseResult(vmfb=b"module"), Expectations("llvm-cpu"))
    (fragment,) = (tmp_path / "cases").glob("*.json")
    record = json.loads(fragment.read_text())
    check_record(record, 0, tmp_path)  # the manifest's check takes the new field
    assert record["bf16"] == ["expected_0_0", "input_0_0"]
    data = (tmp_path / record["data"]).read_bytes()
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = bundle.BundleArrays(npz, record["bf16"])
        for key, want in (("input_0_0", BF16), ("expected_0_0", BF16 * 2), ("input_0_1", F32)):
            got = arrays[key]
            assert got.dtype == want.dtype, key
            assert got.astype(np.float32).tolist() == want.astype(np.float32).tolist()


def test_a_bf16_bundle_without_ml_dtypes_is_refused_before_anything_runs(tmp_path, monkeypatch):
    writer = bundle.BundleWriter(tmp_path)
    writer.add(
        Bf16Case("torch/x", "torch", "mlir"),
        TARGET,
        CaseResult(vmfb=b"m"),
        Expectations("llvm-cpu"),
    )
    outcome = {"case_id": "torch/x", "target": "llvm-cpu", "status": "pass", "stage": "compile"}
    writer.finish([outcome], [TARGET])
    pytest.importorskip("iree.runtime")
    monkeypatch.setattr(bundle, "numpy_dtype", lambda name: None)
    with pytest.raises(bundle.BundleError, match="pip install ml_dtypes"):
        bundle.run_bundle(tmp_path, "local-task", tmp_path / "out.json", force=True)
    assert not (tmp_path / "out.json").exists()
