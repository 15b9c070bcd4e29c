"""The bundled StableHLO corpus generator (conformance/stablehlo/generate.py)."""

import importlib.util
import shutil
import sys

import numpy as np
import pytest

from tests.support.core_helpers import ROOT

CORPUS = ROOT / "conformance" / "stablehlo"


@pytest.fixture(scope="module")
def generate():
    """generate.py as a module; it imports references.py from beside itself."""
    sys.path.insert(0, str(CORPUS))
    try:
        spec = importlib.util.spec_from_file_location(
            "stablehlo_corpus_generate", CORPUS / "generate.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(CORPUS))
        sys.modules.pop("stablehlo_corpus_generate", None)


def test_sources_agree(generate):
    cases = generate.load_cases()
    names = {c.name for c in cases}
    assert names == set(generate.load_toml(CORPUS / "corpus.toml")["cases"])
    assert names == {p.stem for p in (CORPUS / "cases").glob("*.mlir")}
    assert len(cases) >= 40


def test_regenerated_npz_match_the_committed_ones(generate, tmp_path):
    assert generate.main(["--output-dir", str(tmp_path)]) == 0
    committed = sorted(p.name for p in (CORPUS / "cases").glob("*.npz"))
    assert sorted(p.name for p in tmp_path.glob("*.npz")) == committed
    for name in committed:
        with np.load(CORPUS / "cases" / name) as old, np.load(tmp_path / name) as new:
            assert sorted(old.files) == sorted(new.files), name
            for key in old.files:
                assert old[key].dtype == new[key].dtype, (name, key)
                np.testing.assert_array_equal(old[key], new[key], err_msg=f"{name} {key}")


def test_a_program_without_a_corpus_entry_is_an_error(generate, tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    for path in (CORPUS / "cases").glob("*.mlir"):
        shutil.copy(path, cases)
    (cases / "stray.mlir").write_text("module {}\n", encoding="utf-8")
    corpus = tmp_path / "corpus.toml"
    text = (CORPUS / "corpus.toml").read_text(encoding="utf-8")
    corpus.write_text(text.replace("[cases.add_f32]", "[cases.add_f32_renamed]"), encoding="utf-8")
    with pytest.raises(generate.CorpusError) as e:
        generate.load_cases(cases, corpus)
    message = str(e.value)
    assert "stray: cases/stray.mlir has no [cases.stray] in corpus.toml" in message
    assert "add_f32_renamed: in corpus.toml but has no cases/add_f32_renamed.mlir" in message
    assert "add_f32: in references.py but not in corpus.toml" in message


def test_outputs_take_the_declared_result_types(generate):
    (case,) = [c for c in generate.load_cases() if c.name == "multiply_i32_wraparound"]
    (product,) = generate.compute_expected(case)
    assert product.dtype == np.int32
    assert product[0] == 0  # 65536 * 65536 wraps to 0 in i32


def test_a_wrong_signature_is_caught(generate):
    (case,) = [c for c in generate.load_cases() if c.name == "add_f32"]
    case.expected = [np.zeros((3, 4), np.float64)]
    with pytest.raises(
        ValueError, match="add_f32 expected_0: tensor<3x4xf32> but the array is float64"
    ):
        generate.check_signature(case)


def test_verify_iree_runs_through_the_suite_pipeline(generate, capsys):
    assert generate.main(["--only", "add_f32", "--no-write", "--verify-iree"]) == 0
    assert "ok           add_f32" in capsys.readouterr().out
