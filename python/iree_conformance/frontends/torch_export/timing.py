"""torch eager, as the reference a timing runs beside IREE (``--benchmark`` on torch
cases): the case's module on its example inputs, on the CPU, under ``torch.no_grad``.
Here because only this package imports torch (ARCHITECTURE.md, layering)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iree_conformance.frontends.base import TimingReference

#: Separates the case file from the case's name in a job's ``timed_reference``.
SEPARATOR = "::"


def case_reference(reference: str, inputs: list[Any]) -> TimingReference:
    """torch eager's call of the case ``FILE::NAME`` (or of the ExportedProgram in a
    ``.pt2`` file) on the case's inputs. Raises ValueError for a reference that names no
    case."""
    import torch

    from iree_conformance.frontends.torch_export.export import build
    from iree_conformance.frontends.torch_export.folder import find_case

    path, sep, name = reference.rpartition(SEPARATOR)
    if not sep:
        from iree_conformance.frontends.torch_export.pt2 import load

        module = load(Path(reference)).module()
        tensors = tuple(torch.from_numpy(_plain(a)) for a in inputs)
        args: tuple[Any, ...] = tensors
    else:
        if not path or not name:
            raise ValueError(f"not a torch case reference (FILE{SEPARATOR}NAME): {reference!r}")
        module, args, _ = build(find_case(Path(path), name))  # eval() as the case asks

    def call() -> object:
        with torch.no_grad():
            return module(*args)

    info = {
        "version": str(torch.__version__),  # a TorchVersion, which execnet cannot send
        "settings": {"device": "cpu", "threads": torch.get_num_threads(), "mode": "eager, no_grad"},
    }
    return TimingReference("torch", info, call)


def _plain(array: Any) -> Any:
    import numpy as np

    a = np.asarray(array)
    return a if a.dtype.name != "bfloat16" else a.astype(np.float32)


def torch_softmax() -> tuple[Any, Any] | None:
    """(the seed's softmax in torch eager on the CPU, put-as-tensor), or None without torch:
    ``bench``'s torch row, as a torch user calls it."""
    try:
        import torch
    except Exception:  # noqa: BLE001 - not installed, or a broken install: no torch row
        return None

    def softmax(x: Any) -> Any:
        with torch.no_grad():
            e = torch.exp(x)
            return e / torch.sum(e, dim=-1, keepdim=True)

    return softmax, torch.from_numpy
