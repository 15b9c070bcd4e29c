"""Input specs: the format, its four sources, and errors that name the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from iree_conformance.common.errors import ManifestError
from iree_conformance.frontends.onnx.specs import (
    SpecError,
    beside_path,
    from_command_line,
    load_model_spec,
    load_overlay,
    parse_dim,
    parse_input_shape,
    spec_for_file,
)

GOOD = """\
seed = 7
[dims]
height = 48
[inputs.x]
shape = "1x3x48x320"
range = [0.0, 1.0]
reason = "a normalized text line"
[inputs.sr]
value = 16000
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_spec_file_beside_the_model(tmp_path: Path):
    model = tmp_path / "rec.onnx"
    assert beside_path(model) == tmp_path / "rec.inputs.toml"
    spec = load_model_spec(write(beside_path(model), GOOD))
    assert spec.seed == 7 and spec.dims == {"height": 48}
    x = spec.inputs["x"]
    assert (x.shape, x.low, x.high, x.reason) == (
        (1, 3, 48, 320),
        0.0,
        1.0,
        "a normalized text line",
    )
    assert spec.inputs["sr"].value == 16000
    assert x.where == f"{beside_path(model)}:4"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[dims]\nheight = -1\n", 2, "must be a size"),
        ('seed = 1\n[inputs.x]\nshape = "1by3"\n', 2, "not like 1x3x224x224"),
        ("[inputs.x]\nrange = [1, 0]\n", 1, "low < high"),
        ('[inputs.x]\ndistribution = "poisson"\n', 1, "is not one of"),
        ("[inputs.x]\ncolour = 3\n", 1, "unknown key 'colour'"),
        ("\n\nbatch = 3\n", 3, "unknown key 'batch'"),
        ('[inputs.x]\ndistribution = "constant"\n', 1, "needs a value"),
        ("[dims\n", 1, "malformed TOML"),
    ],
)
def test_malformed_specs_name_the_file_and_line(tmp_path: Path, text: str, line: int, words: str):
    path = write(tmp_path / "m.inputs.toml", text)
    with pytest.raises(SpecError, match=words) as info:
        load_model_spec(path)
    assert str(info.value).startswith(f"{path}:{line}") or (
        words == "malformed TOML" and str(path) in str(info.value)
    ), info.value
    assert isinstance(info.value, ManifestError)  # exit status 3 on the command line


def test_a_name_the_model_lacks_is_an_error_with_its_line(tmp_path: Path):
    path = write(tmp_path / "m.inputs.toml", "[dims]\nH = 3\n[inputs.image]\nshape = [1]\n")
    spec = load_model_spec(path)
    with pytest.raises(SpecError, match=rf"{path}:3: .*input 'image', which m.onnx does not have"):
        spec.check_against(["x"], ["H"], "m.onnx")
    with pytest.raises(SpecError, match=rf"{path}:2: .*dim 'H', which no input of m.onnx has"):
        spec.check_against(["image"], ["height"], "m.onnx")
    # Command-line specs go to every model: each takes its part, silently.
    cli = from_command_line([("H", 3)], [("image", (1,))])
    assert cli.check_against(["x"], ["W"], "m.onnx", strict=False).empty


def test_folder_specs_and_the_file_beside_merge_in_order(tmp_path: Path):
    write(
        tmp_path / "models.toml",
        '[models."ocr/rec.onnx"]\nseed = 1\ndims = { height = 32, width = 100 }\n',
    )
    write(tmp_path / "ocr" / "models.toml", '[models."rec.onnx".dims]\nheight = 40\n')
    model = tmp_path / "ocr" / "rec.onnx"
    write(beside_path(model), "[dims]\nwidth = 320\n")
    spec = spec_for_file(model, tmp_path)
    assert spec.dims == {"height": 40, "width": 320} and spec.seed == 1
    assert len(spec.sources) == 3
    # Command line wins over files.
    merged = spec.merged(from_command_line([("height", 48)]))
    assert merged.dims["height"] == 48 and merged.sources[-1] == "command line"


def test_overlay_by_zoo_name(tmp_path: Path):
    path = write(tmp_path / "overlay.toml", '[models."gpt2-10".dims]\nsequence = 64\n')
    assert load_overlay(path)["gpt2-10"].dims == {"sequence": 64}
    bad = write(tmp_path / "bad.toml", '[model."gpt2-10"]\n')
    with pytest.raises(SpecError, match=rf"{bad}:1: unknown key 'model'"):
        load_overlay(bad)
    with pytest.raises(SpecError, match="file not found"):
        load_overlay(tmp_path / "missing.toml")


def test_command_line_forms():
    assert parse_dim("height=320") == ("height", 320)
    assert parse_input_shape("x=1x3x224x224") == ("x", (1, 3, 224, 224))
    assert parse_input_shape("sr=") == ("sr", ())
    for bad in ("height", "height=abc", "=3"):
        with pytest.raises(SpecError, match="NAME=SIZE"):
            parse_dim(bad)
    with pytest.raises(SpecError, match="like 1x3x224x224"):
        parse_input_shape("x=1,3")
