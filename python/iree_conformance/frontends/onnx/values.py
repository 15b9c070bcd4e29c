"""Reading and writing the ``input_N.pb`` / ``output_N.pb`` files of ONNX test data sets.

A data set file holds one serialized value: a TensorProto for tensors, or a
SequenceProto / MapProto / OptionalProto for the other ONNX value kinds. The file itself
does not say which, so the kind comes from the model's graph input or output type.
Only tensors reach the IREE runtime path; the other kinds raise ``UnsupportedValue``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

_DATA_FILE = re.compile(r"^(input|output)_(\d+)\.pb$")

#: The TypeProto oneof field names mapped to the kind names used in messages and flags.
VALUE_KINDS = {
    "tensor_type": "tensor",
    "sequence_type": "sequence",
    "map_type": "map",
    "optional_type": "optional",
    "sparse_tensor_type": "sparse",
}


class UnsupportedValue(Exception):
    """A data set value is not a plain tensor (sequence, map, optional, sparse)."""


class DataSetError(Exception):
    """A data set folder or file is missing or malformed."""


def value_kind(type_proto: onnx.TypeProto) -> str:
    """Return "tensor", "sequence", "map", "optional", "sparse" or "unknown"."""
    field = type_proto.WhichOneof("value")
    return VALUE_KINDS.get(field or "", "unknown")


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The graph inputs that are fed at run time (initializers excluded)."""
    initializers = {t.name for t in model.graph.initializer}
    initializers.update(t.values.name for t in model.graph.sparse_initializer)
    return [vi for vi in model.graph.input if vi.name not in initializers]


def write_value(path: Path, value: Any, type_proto: onnx.TypeProto | None, name: str = "") -> None:
    """Serialize ``value`` the way ONNX's own test data generator does."""
    kind = value_kind(type_proto) if type_proto is not None else "tensor"
    if kind == "map":
        proto: Any = numpy_helper.from_dict(value, name)
    elif kind == "sequence":
        proto = numpy_helper.from_list(value, name)
    elif kind == "optional":
        proto = numpy_helper.from_optional(value, name)
    elif isinstance(value, onnx.TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(np.asarray(value), name)
    path.write_bytes(proto.SerializeToString())


def read_tensor(path: Path) -> np.ndarray:
    """Read a serialized TensorProto file into a numpy array."""
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(path.read_bytes())
    except Exception as e:  # protobuf raises DecodeError, a plain Exception subclass
        raise DataSetError(f"{path}: not a serialized onnx.TensorProto ({e})") from e
    try:
        return numpy_helper.to_array(tensor)
    except Exception as e:
        raise DataSetError(f"{path}: cannot convert the tensor to numpy ({e})") from e


def data_files(directory: Path, prefix: str) -> list[Path]:
    """``prefix_N.pb`` files of a data set folder, in index order, without gaps."""
    found: dict[int, Path] = {}
    for entry in directory.iterdir():
        match = _DATA_FILE.match(entry.name)
        if match and match.group(1) == prefix:
            found[int(match.group(2))] = entry
    indices = sorted(found)
    if indices != list(range(len(indices))):
        raise DataSetError(
            f"{directory}: {prefix}_N.pb files are not numbered 0..{len(indices) - 1} "
            f"(found {[found[i].name for i in indices]})"
        )
    return [found[i] for i in indices]


def _read_all(
    files: Sequence[Path], infos: Sequence[onnx.ValueInfoProto], role: str
) -> list[np.ndarray]:
    values = []
    for i, path in enumerate(files):
        if i < len(infos):
            kind = value_kind(infos[i].type)
            if kind not in ("tensor", "unknown"):
                raise UnsupportedValue(
                    f"{path}: {role} '{infos[i].name}' is a {kind} value; only tensors are "
                    f"supported by the runtime path"
                )
        values.append(read_tensor(path))
    return values


def load_data_set(
    directory: Path, model: onnx.ModelProto | None = None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Read ``input_*.pb`` and ``output_*.pb`` of one ``test_data_set_N`` folder.

    With ``model``, each file's value kind is taken from the matching graph input
    (initializers excluded) or output, and non-tensor values raise ``UnsupportedValue``.
    Without it, every file is read as a TensorProto.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DataSetError(f"data set folder {directory} does not exist")
    in_infos = graph_inputs(model) if model is not None else []
    out_infos = list(model.graph.output) if model is not None else []
    inputs = _read_all(data_files(directory, "input"), in_infos, "input")
    outputs = _read_all(data_files(directory, "output"), out_infos, "output")
    return inputs, outputs
