"""The runtime inside a worker: one runtime Config (instance and device) per device,
modules loaded into fresh contexts, and calls of their functions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from iree_conformance.engine.worker.errors import StageError
from iree_conformance.model.readback import call_staged, needs_staging


def entry_functions(vm_module) -> list[str]:
    """Exported functions, without internal (``__``) ones and ``$async`` variants."""
    return [
        n for n in vm_module.function_names if not n.startswith("__") and not n.endswith("$async")
    ]


def resolve_entry(entry: str | None, names: list[str]) -> str:
    """The function a case runs: its own, else ``main``, else the module's only one."""
    if entry is None:
        entry = "main" if "main" in names or len(names) != 1 else names[0]
    return entry


def parameters_module(instance, scope: str, file: Path):
    """IREE's io_parameters module serving the parameters of ``file`` under ``scope``."""
    import iree.runtime as rt

    index = rt.ParameterIndex()
    index.load(str(file))
    return rt.create_io_parameters_module(instance, index.create_provider(scope=scope))


class Runtime:
    """Loads and runs modules; a Config per (driver, device) lives as long as the worker."""

    def __init__(self, read_diagnostics: Callable[[], str]):
        self.read_diagnostics = read_diagnostics
        self._configs: dict[tuple[str, str], Any] = {}

    def config(self, driver: str, device: str | None):
        import iree.runtime as rt

        key = (driver, device or "")
        config = self._configs.get(key)
        if config is None:
            try:
                config = rt.Config(device=rt.get_device(device)) if device else rt.Config(driver)
            except Exception as e:  # noqa: BLE001
                raise StageError(
                    "load", f"cannot open HAL driver/device {device or driver}: {e}"
                ) from None
            self._configs[key] = config
        return config

    def load(
        self,
        vmfb: bytes,
        driver: str,
        device: str | None,
        check_sites: list[dict[str, Any]] | None = None,
        parameters: tuple[str, Path] | None = None,
    ):
        """The module in a fresh context; with check_sites, beside a check recorder
        (``context.check_recorder``) that implements its check imports; with parameters
        (scope, .irpa file), beside the io_parameters module that serves them (the file
        is mapped, not read)."""
        import iree.runtime as rt

        config = self.config(driver, device)
        try:
            vm_module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
            recorder = None
            modules = [vm_module]
            if check_sites is not None:
                from iree_conformance.frontends.stablehlo.check_module import CheckRecorder

                recorder = CheckRecorder(check_sites, config.device, needs_staging(driver))
                modules.insert(0, recorder.module)
            if parameters is not None:
                modules.insert(0, parameters_module(config.vm_instance, *parameters))
            context = rt.SystemContext(vm_modules=modules, config=config)
            context.check_recorder = recorder
            # Where to_host cannot read results (model/readback.py): the device to
            # read them through staging copies; None keeps IREE's FunctionInvoker.
            context.staged_device = config.device if needs_staging(driver) else None
        except Exception as e:  # noqa: BLE001
            raise StageError("load", f"{type(e).__name__}: {e}") from None
        return vm_module, context

    def run(
        self, vm_module, context, entry: str | None, inputs: list[np.ndarray]
    ) -> list[np.ndarray]:
        names = entry_functions(vm_module)
        entry = resolve_entry(entry, names)
        if entry not in names:
            raise StageError(
                "run", f"function '{entry}' not found in the module; it exports {names}"
            )
        function = context.modules[vm_module.name][entry]
        if context.staged_device is not None:
            return self._run_staged(context, function.vm_function, inputs)
        try:
            result = function(*inputs)
        except Exception as e:  # noqa: BLE001
            raise StageError("run", f"{type(e).__name__}: {e}\n{self.read_diagnostics()}") from None
        if result is None:
            return []
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        try:
            return [np.array(r.to_host() if hasattr(r, "to_host") else r) for r in results]
        except Exception as e:  # noqa: BLE001
            raise StageError(
                "run", f"cannot read results back to the host: {type(e).__name__}: {e}"
            ) from None

    def _run_staged(self, context, function, inputs: list[np.ndarray]) -> list[np.ndarray]:
        try:
            return call_staged(context, function, context.staged_device, inputs)
        except Exception as e:  # noqa: BLE001
            raise StageError("run", f"{type(e).__name__}: {e}\n{self.read_diagnostics()}") from None
