"""Fix a model's input dims before import: the program a deployment at one shape runs.

IREE compiles the model at the concrete shapes the inputs were chosen at (``<id>``);
the model as exported, symbolic dims and all, is the ``<id>:dynamic`` case. The inputs'
dims are set, every symbolic dim of the outputs and of ``value_info`` is cleared, and
shape inference (which the importer runs) propagates the sizes through the graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

__all__ = [
    "EVERY_DIM_OPTION",
    "STATIC_OPTION",
    "StaticShapeError",
    "fix_every_named_dim",
    "fix_input_shapes",
]

#: The import option that carries the shapes: {input name: [sizes]}.
STATIC_OPTION = "static_shapes"
#: The import option of the other preparation: {dim name: size}, fixed wherever the graph
#: names it (``fix_every_named_dim``).
EVERY_DIM_OPTION = "every_named_dim"


class StaticShapeError(ValueError):
    """The shapes do not fit the model's inputs."""


def fix_input_shapes(
    model: onnx.ModelProto, shapes: Mapping[str, Sequence[int]]
) -> onnx.ModelProto:
    """A copy of ``model`` whose inputs have the given static shapes."""
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    graph = fixed.graph
    by_name = {vi.name: vi for vi in graph.input}
    missing = sorted(set(shapes) - set(by_name))
    if missing:
        raise StaticShapeError(f"no graph input named {missing[0]!r} to fix the shape of")
    for name, sizes in shapes.items():
        tensor = by_name[name].type.tensor_type
        dims = tensor.shape.dim
        if len(dims) != len(sizes):
            raise StaticShapeError(
                f"input {name!r} has rank {len(dims)}, but the static shape {list(sizes)} has "
                f"rank {len(sizes)}"
            )
        for dim, size in zip(dims, sizes):
            # A negative dim_value is how some exporters write "unknown".
            if dim.HasField("dim_value") and dim.dim_value >= 0 and dim.dim_value != size:
                raise StaticShapeError(
                    f"input {name!r}: fixed size {dim.dim_value} cannot become {size}"
                )
            dim.Clear()
            dim.dim_value = int(size)
    for out in graph.output:
        if out.type.WhichOneof("value") == "tensor_type":
            for dim in out.type.tensor_type.shape.dim:
                if dim.HasField("dim_param") or not dim.HasField("dim_value"):
                    dim.Clear()
    del graph.value_info[:]
    return fixed


def fix_every_named_dim(
    model: onnx.ModelProto, shapes: Mapping[str, Sequence[int]], sizes: Mapping[str, int]
) -> onnx.ModelProto:
    """A copy of ``model`` whose inputs have ``shapes`` and every dim named in ``sizes`` is
    that size wherever the graph names it (outputs and ``value_info`` kept, not cleared),
    as onnxruntime's ``make_dynamic_shape_fixed`` fixes a model."""
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    graph = fixed.graph
    by_name = {vi.name: vi for vi in graph.input}
    for name, want in shapes.items():
        if name not in by_name:
            raise StaticShapeError(f"no graph input named {name!r} to fix the shape of")
        dims = by_name[name].type.tensor_type.shape.dim
        if len(dims) != len(want):
            raise StaticShapeError(f"input {name!r} has rank {len(dims)}, not {len(want)}")
        for dim, size in zip(dims, want):
            dim.Clear()
            dim.dim_value = int(size)
    for vi in (*graph.input, *graph.output, *graph.value_info):
        if vi.type.WhichOneof("value") != "tensor_type":
            continue
        for dim in vi.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param in sizes:
                size = int(sizes[dim.dim_param])
                dim.Clear()
                dim.dim_value = size
    return fixed
