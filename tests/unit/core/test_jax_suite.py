"""The jax suite: cases from Python files, cached exports, and the errors a user can meet."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from iree_conformance.common.store import ArtifactStore
from iree_conformance.frontends import case_folder
from iree_conformance.frontends.jax_export import folder
from iree_conformance.model.cases import Case, CaseInvalid
from iree_conformance.suites import case_folder as folder_suite
from iree_conformance.suites import jax as jax_suite
from iree_conformance.suites import registry
from iree_conformance.suites.base import SuiteContext
from iree_conformance.suites.run_options import RunOptions

pytest.importorskip("jax", reason="the jax suite's tests need JAX: pip install -e '.[jax]'")

ROOT = Path(__file__).resolve().parents[3]
GOOD = '''
import numpy as np
from iree_conformance.frontends.jax_export import case


@case(np.arange(4, dtype=np.float32), rtol=0.0, atol=0.0)
def double(x):
    """Twice x."""
    return 2 * x


@case(np.int64(3))
def narrowed(n):
    return n + 1
'''


def _options(store: Path) -> RunOptions:
    return RunOptions(store_dir=store)


def _problem(case: Case) -> str:
    with pytest.raises(CaseInvalid) as info:
        case.input_sets()
    return str(info.value)


def test_user_cases_are_listed_then_exported_when_they_run_and_cached(tmp_path, monkeypatch):
    cases_dir = tmp_path / "mine"
    (cases_dir / "sub").mkdir(parents=True)
    (cases_dir / "sub" / "arith.py").write_text(GOOD, encoding="utf-8")
    (cases_dir / "_helper.py").write_text("X = 1\n", encoding="utf-8")  # not a case file
    store = ArtifactStore(tmp_path / "store")
    listed = jax_suite.user_listed(cases_dir, store)
    assert [r.case_id for r in listed] == ["jax/ext/sub/arith/double", "jax/ext/sub/arith/narrowed"]
    assert listed[0].file == "sub/arith/double.mlir" and listed[0].description == "Twice x."
    assert not list((tmp_path / "store").glob("jax-export/*/*.bin"))  # listed, not exported
    double, narrowed = (jax_suite.to_case(r, tmp_path / "store") for r in listed)
    assert double.suite == "jax" and double.entry_function == "check_xla" and double.batchable
    assert double.input_sets() == [[]]
    text = double.program().source_bytes.decode()
    assert "func.func @check_xla()" in text and "atol 0.000000e+00, rtol 0.000000e+00" in text
    assert "tensor<i32>" in narrowed.program().source_bytes.decode()  # x64 off: int64 -> int32

    # A warm run reads the store: it neither imports the file nor exports again.
    def fail(*args, **kwargs):
        raise AssertionError("imported or exported again although cached")

    monkeypatch.setattr(case_folder, "_list_file", fail)
    monkeypatch.setattr(case_folder, "_export", fail)
    again = jax_suite.user_listed(cases_dir, store)
    assert again == listed
    assert jax_suite.to_case(again[0], tmp_path / "store").program().source_bytes.decode() == text
    # The key follows the case file's source: an edit lists (and exports) again.
    (cases_dir / "sub" / "arith.py").write_text(GOOD + "\n# edited\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="again although cached"):
        jax_suite.user_listed(cases_dir, store)


def test_a_users_jax_case_names_the_harness_lowering_as_its_step(tmp_path):
    """One mechanism with ONNX's and torch's (model/preparation.py, issue 55 item 1)."""
    from iree_conformance.model.preparation import preparation_steps

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "arith.py").write_text(GOOD, encoding="utf-8")
    listed = jax_suite.user_listed(tmp_path / "mine", ArtifactStore(tmp_path / "store"))
    mine = jax_suite.to_case(listed[0], tmp_path / "store")
    assert mine.users_program()
    assert not dataclasses.replace(mine, case_id="jax/double").users_program()  # bundled
    (step,) = preparation_steps(mine.outcome_info())
    assert step.startswith("lowered by jax.jit(function, keep_unused=True).lower(*inputs)")


DATA_CASES = """
from pathlib import Path
import numpy as np
from iree_conformance.frontends.jax_export import case

V = np.load(Path(__file__).with_name("v.npy"))  # read at import

@case(np.ones(3, np.float32), rtol=0.0, atol=0.0)
def at_import(x):
    return x * V

@case(np.ones(3, np.float32), rtol=0.0, atol=0.0)
def at_export(x):
    return x * np.load(Path(__file__).with_name("w.npy"))
"""


def test_a_data_file_the_case_reads_is_part_of_its_stored_export(tmp_path):
    import numpy as np

    cases, store = tmp_path / "mine", ArtifactStore(tmp_path / "store")
    cases.mkdir()
    (cases / "scaled.py").write_text(DATA_CASES, encoding="utf-8")
    for name in ("v.npy", "w.npy"):
        np.save(cases / name, np.array([1, 2, 3], np.float32))

    def texts() -> list[str]:
        case_folder._loaded.cache_clear()  # a new process imports the case file again
        return [folder.export_listed(r, store) for r in jax_suite.user_listed(cases, store)]

    before = texts()
    assert texts() == before  # warm
    for name in ("v.npy", "w.npy"):  # other values, the same size
        np.save(cases / name, np.array([4, 5, 6], np.float32))
    after = texts()
    # Was: both answered from the store with the old values.
    new = "dense<[4.000000e+00, 5.000000e+00, 6.000000e+00]>"
    assert [new in text for text in before] == [False, False]
    assert [new in text for text in after] == [True, True]


def test_broken_files_and_cases_are_error_cases_that_say_why(tmp_path):
    cases_dir = tmp_path / "mine"
    cases_dir.mkdir()
    (cases_dir / "raises.py").write_text("import numpy\n\nraise RuntimeError('boom')\n")
    (cases_dir / "empty.py").write_text("X = 1\n")
    (cases_dir / "bad_case.py").write_text(
        "import numpy as np\nfrom iree_conformance.frontends.jax_export import case\n\n"
        "@case(np.ones(3, np.float32))\ndef mismatch(x):\n    return x @ np.ones((4, 4), np.float32)\n"
    )
    store = ArtifactStore(None)
    by_id = {r.case_id: jax_suite.to_case(r, None) for r in jax_suite.user_listed(cases_dir, store)}
    assert set(by_id) == {"jax/ext/raises", "jax/ext/empty", "jax/ext/bad_case/mismatch"}
    assert (
        f"{cases_dir / 'raises.py'}:3: cannot load the case file: RuntimeError: boom"
        in _problem(by_id["jax/ext/raises"])
    )
    assert "defines no case" in _problem(by_id["jax/ext/empty"])
    mismatch = by_id["jax/ext/bad_case/mismatch"]
    assert "case mismatch: export failed: TypeError" in _problem(mismatch)
    assert mismatch.program().source_bytes == b""  # a batch leaves it out; alone it is the error
    with pytest.raises(jax_suite.CorpusError, match="not a directory"):
        jax_suite.user_listed(tmp_path / "absent", store)
    (tmp_path / "nothing").mkdir()
    [folder] = [
        jax_suite.to_case(r, None) for r in jax_suite.user_listed(tmp_path / "nothing", store)
    ]
    assert "holds no case file" in _problem(folder)


def test_a_file_that_needs_a_missing_optional_package_is_skipped_with_the_install_command(
    tmp_path,
):
    kind = dataclasses.replace(folder.KIND, optional=("jax", "jaxlib", "flax", "not_installed_pkg"))
    suite = dataclasses.replace(jax_suite.FOLDER, kind=kind)
    (tmp_path / "needs.py").write_text("import not_installed_pkg\n")
    [record] = folder_suite.user_listed(suite, tmp_path, ArtifactStore(tmp_path / "store"))
    assert record.skip and "needs not_installed_pkg" in record.skip and "[jax]" in record.skip
    assert not list((tmp_path / "store").rglob("*.bin"))  # a skip is not cached
    assert "not installed" in jax_suite.to_case(record, None).skip_reason_for(None)


def test_without_jax_the_suite_is_one_skip_with_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setattr(
        case_folder, "missing_reason", lambda kind: "jax not installed: pip install x"
    )
    [case] = folder_suite.collect(jax_suite.FOLDER, ROOT / "conformance", _options(tmp_path))
    assert case.case_id == "jax/jax-not-installed"
    assert case.skip_reason == "the jax suite needs JAX: jax not installed: pip install x"


def test_without_jax_the_registry_collects_the_skip_without_a_floor_error(tmp_path, monkeypatch):
    monkeypatch.setattr(
        case_folder, "missing_reason", lambda kind: "jax not installed: pip install x"
    )
    [case] = registry.collect("jax", ROOT / "conformance", _options(tmp_path))
    assert case.case_id == "jax/jax-not-installed" and case.skip_reason


def test_jax_dir_comes_from_the_suite_option_value(tmp_path, monkeypatch):
    (tmp_path / "conformance" / "jax").mkdir(parents=True)
    (tmp_path / "conformance" / "jax" / "few.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "arith.py").write_text(GOOD, encoding="utf-8")
    monkeypatch.setattr(
        jax_suite.JaxSuite, "folder", dataclasses.replace(jax_suite.FOLDER, floor=2)
    )
    suite = jax_suite.JaxSuite()
    assert [o.dest for o in suite.options] == ["jax_dir"]
    values = registry.option_values(suite, {"jax_dir": [tmp_path / "mine"]})
    context = SuiteContext(tmp_path / "conformance", _options(tmp_path / "store"), values)
    assert [c.case_id for c in suite.collect(context)] == [
        "jax/few/double",
        "jax/few/narrowed",
        "jax/ext/arith/double",
        "jax/ext/arith/narrowed",
    ]
    empty = SuiteContext(tmp_path / "conformance", _options(tmp_path / "store"), {"jax_dir": []})
    assert len(suite.collect(empty)) == 2


def test_a_bundled_folder_under_the_floor_is_a_corpus_error(tmp_path):
    (tmp_path / "jax").mkdir()
    (tmp_path / "jax" / "few.py").write_text(GOOD)
    with pytest.raises(
        jax_suite.CorpusError, match="2 bundled JAX cases, fewer than the floor of 30"
    ):
        folder_suite.collect(jax_suite.FOLDER, tmp_path, _options(tmp_path / "store"))
    with pytest.raises(jax_suite.CorpusError, match="restore conformance/jax"):
        folder_suite.collect(jax_suite.FOLDER, tmp_path / "absent", _options(tmp_path / "store"))


def _declared_cases(path: Path) -> list[str]:
    """The case names a bundled file declares (read statically: importing the flax models
    means compiling their initialization, minutes on a loaded machine)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and any(
            isinstance(d, ast.Call) and getattr(d.func, "id", "") == "case"
            for d in node.decorator_list
        ):
            names.append(node.name)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "flax_case":
            names.append(node.args[0].value)  # type: ignore[attr-defined]
    return names


def test_the_bundled_cases_cover_the_issue_list():
    cases = {
        f"{path.stem}/{name}"
        for path in (ROOT / "conformance" / "jax").glob("*.py")
        for name in _declared_cases(path)
    }
    assert len(cases) >= jax_suite.BUNDLED_FLOOR
    for wanted in (
        "models/flax_cnn",
        "models/mlp_layernorm_gelu",
        "models/transformer_block",
        "models/lstm_scan",
        "models/resnet_block_batchnorm",
        "models/embeddings",
        "control_flow/fori_loop",
        "control_flow/switch",
        "ops/scatter_add",
        "ops/dynamic_update_slice",
        "ops/sort",
        "ops/argsort",
        "ops/top_k",
        "ops/cumsum",
        "ops/einsum",
        "ops/conv_transpose",
        "dtypes/threefry_bits",
        "dtypes/int8_matmul_int32",
        "dtypes/float16_matmul_tanh",
        "dtypes/rfft",
        "transforms/grad_mlp",
        "transforms/vmap_model",
        "linalg/solve",
    ):
        assert wanted in cases, wanted


def test_case_names_and_tolerances_are_checked():
    from iree_conformance.frontends.jax_export import JaxCase

    with pytest.raises(ValueError, match="names a file"):
        JaxCase("a/b", abs, ())
    with pytest.raises(ValueError, match="rtol must be 0 or more"):
        JaxCase("ok", abs, (), rtol=-1.0)
    assert dataclasses.replace(JaxCase("ok", abs, ()), atol=0.0).atol == 0.0
