"""A hostile ``.pt2`` runs nothing (issue 58, item 1): ``torch.export.load`` unpickles
sample inputs, weights and constants with ``weights_only=False``, loads AOTInductor
libraries and evaluates shape expressions with ``sympy.sympify``; each file here would
create a marker file when loaded by torch alone, and ``check-model`` refuses it, exit 2,
with the marker never made."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

torch = pytest.importorskip(
    "torch", reason="the torch suite's tests need torch: pip install torch==2.13.0"
)

from iree_conformance.cli.main import main  # noqa: E402
from iree_conformance.frontends.torch_export import pt2  # noqa: E402


class _Marker:
    """Unpickled, it creates the file at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _pickle(marker: Path) -> bytes:
    buf = io.BytesIO()
    torch.save(_Marker(marker), buf)
    return buf.getvalue()


def _program(path: Path) -> Path:
    """A real program with a parameter, saved inputs and a dynamic dimension (so its
    graph holds shape expressions)."""
    torch.manual_seed(0)
    module = torch.nn.Linear(3, 2)
    batch = torch.export.Dim("batch")
    program = torch.export.export(module, (torch.randn(4, 3),), dynamic_shapes=({0: batch},))
    torch.export.save(program, str(path))
    return path


def _rewrite(src: Path, dst: Path, change: Callable[[str, bytes], bytes], extra=()) -> Path:
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as out:
        for info in z.infolist():
            out.writestr(info.filename, change(info.filename, z.read(info.filename)))
        prefix = z.namelist()[0].split("/")[0]
        for name, data in extra:
            out.writestr(f"{prefix}/{name}", data)
    return dst


def _sample_inputs(marker: Path) -> Callable[[str, bytes], bytes]:
    return lambda name, data: _pickle(marker) if name.endswith("sample_inputs/model.pt") else data


def _pickled_weight(marker: Path) -> Callable[[str, bytes], bytes]:
    def change(name: str, data: bytes) -> bytes:
        if name.endswith("model_weights_config.json"):
            config = json.loads(data)
            config["config"]["weight"]["use_pickle"] = True
            return json.dumps(config).encode()
        return _pickle(marker) if name.endswith("data/weights/weight_0") else data

    return change


def _shape_expression(marker: Path) -> Callable[[str, bytes], bytes]:
    code = f"Symbol.__new__.__globals__['__builtins__']['open']({str(marker)!r}, 'w')"

    def change(name: str, data: bytes) -> bytes:
        if not name.endswith("models/model.json"):
            return data
        text = data.decode()
        found = text.index('"expr_str": "') + len('"expr_str": "')
        end = text.index('"', found)
        return (text[:found] + code.replace("'", "\\u0027") + text[end:]).encode()

    return change


HOSTILE = {
    "sample_inputs": (_sample_inputs, (), "holds a pickle of more than tensors"),
    "use_pickle_weight": (_pickled_weight, (), "holds a pickle of more than tensors"),
    "shape_expression": (_shape_expression, (), "is not one torch writes"),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_pt2_runs_nothing_and_is_exit_2(tmp_path, capsys, kind):
    make, extra, expected = HOSTILE[kind]
    marker = tmp_path / "ran"
    good = _program(tmp_path / "good.pt2")
    path = _rewrite(good, tmp_path / f"{kind}.pt2", make(marker), extra)
    status = main(
        ["check-model", str(path), "--store-dir", str(tmp_path / "store"), "--no-benchmark"]
    )
    err = capsys.readouterr().err
    assert status == 2 and expected in err and str(path) in err and "Traceback" not in err
    assert not marker.exists()


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        ("data/aotinductor/model/model.so", "holds compiled code"),
        ("data/constants/opaque_obj_0", "holds a pickled object"),
        ("data/constants/custom_obj_0", "holds a pickled object"),
    ],
)
def test_compiled_code_and_pickled_objects_are_refused_before_torch_reads(
    tmp_path, member, expected
):
    good = _program(tmp_path / "good.pt2")
    path = _rewrite(good, tmp_path / "x.pt2", lambda n, d: d, [(member, b"\x80\x04N.")])
    with pytest.raises(pt2.Pt2Error, match=expected):
        pt2.load(path)


def test_a_program_as_torch_saves_it_still_loads(tmp_path):
    program = pt2.load(_program(tmp_path / "good.pt2"))
    assert isinstance(program, torch.export.ExportedProgram)
    assert program.example_inputs is not None  # the saved inputs, loaded weights-only
