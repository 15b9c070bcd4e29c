"""Materializing the ONNX backend operator tests; index, cases, data sets, races."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.backend.test.case.test_case import TestCase

from iree_conformance.frontends.onnx import node_tests
from iree_conformance.frontends.onnx.backend_data import wheel_data_dir
from iree_conformance.frontends.onnx.node_tests import (
    INDEX_NAME,
    NodeTestsError,
    UnsupportedValue,
    load_cases,
    load_data_set,
    materialize,
)

# -- the full tree, built once -------------------------------------------------------


@pytest.fixture(scope="module")
def full_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return materialize(tmp_path_factory.mktemp("cache"))


def test_full_tree_has_every_case(full_tree: Path) -> None:
    from onnx.backend.test.case.node import collect_testcases

    generated = {c.name for c in collect_testcases(None)}
    wheel = wheel_data_dir()
    shipped = {
        p.parent.name
        for folder in node_tests.WHEEL_FOLDERS
        for p in (wheel / folder).glob("*/model.onnx")
    }
    cases = load_cases(full_tree)
    assert full_tree.name == f"onnx-node-tests-{onnx.__version__}"
    assert {c.name for c in cases} == generated | shipped
    assert len(cases) == len(generated) + len(shipped)
    assert [c.name for c in cases] == sorted(c.name for c in cases)
    assert not list(full_tree.parent.glob(".onnx-node-tests-*"))  # no temp folders left


def test_add_bcast_case(full_tree: Path) -> None:
    case = {c.name: c for c in load_cases(full_tree)}["test_add_bcast"]
    assert case.case_id == "onnx-ops/test_add_bcast"
    assert case.source == "node" and case.unsupported_reason is None
    assert (case.rtol, case.atol) == (1e-3, 1e-7)
    model = onnx.load(str(case.model_path))
    ((inputs, outputs),) = [load_data_set(d, model) for d in case.data_set_dirs]
    np.testing.assert_array_equal(inputs[0] + inputs[1], outputs[0])


def test_sequence_and_optional_cases_are_flagged(full_tree: Path) -> None:
    cases = {c.name: c for c in load_cases(full_tree)}
    seq = cases["test_sequence_insert_at_back"]
    assert seq.unsupported_reason == "sequence input 'sequence' is unsupported by the runtime path"
    opt = cases["test_optional_has_element_empty_optional_input"]
    assert opt.unsupported_reason is not None and opt.unsupported_reason.startswith(
        "optional input"
    )
    with pytest.raises(UnsupportedValue, match="'sequence' is a sequence value"):
        load_data_set(seq.data_set_dirs[0], onnx.load(str(seq.model_path)))
    index = json.loads((full_tree / INDEX_NAME).read_text())
    by_name = {e["name"]: e for e in index["cases"]}
    assert by_name["test_sequence_insert_at_back"]["flags"]["has_sequence"] is True
    assert by_name["test_add_bcast"]["flags"] == {
        "has_sequence": False,
        "has_map": False,
        "has_optional": False,
        "has_sparse": False,
    }


def test_wheel_cases_are_copied(full_tree: Path) -> None:
    cases = {c.name: c for c in load_cases(full_tree)}
    conv = cases["test_AvgPool1d"]
    assert conv.source == "pytorch-converted"
    assert conv.model_path.is_relative_to(full_tree)
    model = onnx.load(str(conv.model_path))
    inputs, outputs = load_data_set(conv.data_set_dirs[0], model)
    assert inputs and outputs


def test_fast_path_reads_only_the_index(full_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> None:
        raise AssertionError("generators must not run when index.json exists")

    monkeypatch.setattr(node_tests, "_collect_generated", boom)
    assert materialize(full_tree.parent) == full_tree


# -- small trees: layout, races, broken indexes ----------------------------------------


def fake_case(name: str, op: str = "Relu") -> TestCase:
    x = np.array([-1.0, 2.0], dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return TestCase(name, name, None, None, model, [([x], [np.maximum(x, 0)])], "node", 2e-3, 1e-6)


@pytest.fixture
def empty_wheel(tmp_path: Path) -> Path:
    (tmp_path / "wheel").mkdir()
    return tmp_path / "wheel"


def test_small_tree_layout(tmp_path: Path, empty_wheel: Path) -> None:
    root = materialize(
        tmp_path / "c", generated=[fake_case("test_b"), fake_case("test_a")], wheel_data=empty_wheel
    )
    assert sorted(p.name for p in root.iterdir()) == [INDEX_NAME, "test_a", "test_b"]
    assert sorted(p.name for p in (root / "test_a" / "test_data_set_0").iterdir()) == [
        "input_0.pb",
        "output_0.pb",
    ]
    case = load_cases(root)[0]
    assert (case.name, case.rtol, case.atol) == ("test_a", 2e-3, 1e-6)
    inputs, outputs = load_data_set(case.data_set_dirs[0])
    np.testing.assert_array_equal(outputs[0], [0.0, 2.0])


def test_full_tree_folders_are_unique_when_case_is_folded(full_tree: Path) -> None:
    folded = [p.name.casefold() for p in full_tree.iterdir()]
    assert len(folded) == len(set(folded))
    cases = {c.name: c for c in load_cases(full_tree)}
    # onnx 1.23.2 ships both spellings: generated test_elu, pytorch-converted test_ELU.
    elu, ELU = cases["test_elu"], cases["test_ELU"]
    assert (elu.case_id, ELU.case_id) == ("onnx-ops/test_elu", "onnx-ops/test_ELU")
    assert (elu.source, ELU.source) == ("node", "pytorch-converted")
    assert elu.model_path.parent.name.casefold() != ELU.model_path.parent.name.casefold()


def test_folder_names_suffix_only_names_that_fold_together() -> None:
    folders = node_tests.folder_names(["test_elu", "test_ELU", "test_add"])
    assert folders["test_add"] == "test_add"
    assert folders["test_elu"].startswith("test_elu-") and folders["test_ELU"].startswith(
        "test_ELU-"
    )
    assert folders["test_elu"][-8:] != folders["test_ELU"][-8:]
    # Derived from the exact name: the same on every machine, whatever the order.
    assert node_tests.folder_names(["test_ELU", "test_elu"]) == {
        k: v for k, v in folders.items() if k != "test_add"
    }


def test_case_folded_names_keep_their_case_and_data(tmp_path: Path) -> None:
    wheel = tmp_path / "wheel"
    shipped = materialize(
        tmp_path / "src",
        generated=[fake_case("test_ReLU", op="Relu")],
        wheel_data=tmp_path / "none",
    )
    (wheel / "pytorch-converted").mkdir(parents=True)
    shipped_case = load_cases(shipped)[0]
    shutil.copytree(shipped_case.model_path.parent, wheel / "pytorch-converted" / "test_ReLU")
    root = materialize(
        tmp_path / "c", generated=[fake_case("test_relu", op="Abs")], wheel_data=wheel
    )
    cases = {c.name: c for c in load_cases(root)}
    assert sorted(cases) == ["test_ReLU", "test_relu"]
    assert cases["test_ReLU"].source == "pytorch-converted"
    ops = {n: onnx.load(str(c.model_path)).graph.node[0].op_type for n, c in cases.items()}
    assert ops == {"test_ReLU": "Relu", "test_relu": "Abs"}


def test_duplicate_names_are_refused(tmp_path: Path, empty_wheel: Path) -> None:
    with pytest.raises(NodeTestsError, match="'test_a' appears in both"):
        materialize(
            tmp_path / "c",
            generated=[fake_case("test_a"), fake_case("test_a")],
            wheel_data=empty_wheel,
        )
    assert list((tmp_path / "c").iterdir()) == []


def test_losing_a_race_keeps_the_winner(
    tmp_path: Path, empty_wheel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "c"
    real_build = node_tests._build

    def build_after_a_rival(tmp: Path, generated: object, wheel: Path) -> None:
        monkeypatch.setattr(node_tests, "_build", real_build)
        # A rival process finishes its own tree while this one is building.
        materialize(cache, generated=[fake_case("test_winner")], wheel_data=empty_wheel)
        real_build(tmp, [fake_case("test_loser")], wheel)

    monkeypatch.setattr(node_tests, "_build", build_after_a_rival)
    root = materialize(cache, generated=[], wheel_data=empty_wheel)
    assert [c.name for c in load_cases(root)] == ["test_winner"]
    assert [p.name for p in cache.iterdir()] == [root.name]


def test_concurrent_materializers(tmp_path: Path, empty_wheel: Path) -> None:
    cache = tmp_path / "c"
    results: list[Path] = []
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            cases = [fake_case(f"test_{j}") for j in range(20)]
            results.append(materialize(cache, generated=cases, wheel_data=empty_wheel))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(results)) == 1
    assert len(load_cases(results[0])) == 20
    assert [p.name for p in cache.iterdir()] == [results[0].name]


def test_folder_without_index_is_replaced(tmp_path: Path, empty_wheel: Path) -> None:
    cache = tmp_path / "c"
    (cache / node_tests.tree_name() / "junk").mkdir(parents=True)
    root = materialize(cache, generated=[fake_case("test_a")], wheel_data=empty_wheel)
    assert [c.name for c in load_cases(root)] == ["test_a"]
    assert not (root / "junk").exists()


def test_broken_index_is_reported(tmp_path: Path) -> None:
    with pytest.raises(NodeTestsError, match="does not exist; build the tree"):
        load_cases(tmp_path)
    (tmp_path / INDEX_NAME).write_text("{")
    with pytest.raises(NodeTestsError, match="not valid JSON"):
        load_cases(tmp_path)
    (tmp_path / INDEX_NAME).write_text(json.dumps({"schema": 1, "cases": [{"name": "x"}]}))
    with pytest.raises(
        NodeTestsError, match=r"case #0 \('x'\) is malformed \(KeyError\('model'\)\)"
    ):
        load_cases(tmp_path)
    (tmp_path / INDEX_NAME).write_text(json.dumps({"schema": 99, "cases": []}))
    with pytest.raises(NodeTestsError, match="schema 99, expected 1"):
        load_cases(tmp_path)


@pytest.mark.parametrize("where", ["../outside.onnx", "/etc/passwd", "link/m.onnx"])
def test_an_index_naming_a_path_outside_the_tree_is_refused(
    tmp_path: Path, empty_wheel: Path, where: str
) -> None:
    root = materialize(tmp_path / "c", generated=[fake_case("test_a")], wheel_data=empty_wheel)
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    index = json.loads((root / INDEX_NAME).read_text())
    index["cases"][0]["model"] = where
    (root / INDEX_NAME).write_text(json.dumps(index))
    with pytest.raises(NodeTestsError, match="outside the tree|not inside the tree"):
        load_cases(root)
