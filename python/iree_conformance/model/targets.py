"""Named targets from targets.toml: compile flags, runtime driver, platforms."""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path
from typing import TYPE_CHECKING

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.platform_info import host_os
from iree_conformance.common.tomlio import TomlError, load_toml

if TYPE_CHECKING:
    from iree_conformance.model.cases import Case

#: The stages a time limit can be set for (``--stage-timeout``, a target's ``stage_timeouts``).
# Each stage's limit in seconds when neither the target (targets.toml) nor an option sets one.
DEFAULT_STAGE_TIMEOUTS = {
    "prepare": 120.0,
    "import": 120.0,
    "compile": 300.0,
    "load": 60.0,
    "run": 120.0,
}
STAGES_WITH_LIMITS = tuple(DEFAULT_STAGE_TIMEOUTS)


class TargetError(ConfigurationError):
    """An unknown target name or a malformed targets file."""


@dataclasses.dataclass(frozen=True)
class Target:
    name: str
    compile_flags: tuple[str, ...]
    driver: str
    device: str | None = None
    platforms: tuple[str, ...] = ("linux", "macos", "windows")
    description: str = ""
    host_specific: bool = False
    # Extra flags for one kind of source only ("mlir" or "onnx"), after compile_flags.
    kind_flags: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Per-stage time limits of this target (seconds), over the defaults; --stage-timeout
    # overrides both. vmvx interprets, so its runs of the light models need more.
    stage_timeouts: tuple[tuple[str, float], ...] = ()

    def flags_for(self, kind: str) -> tuple[str, ...]:
        """The compile flags for a source of this kind: compile_flags plus its kind's flags."""
        return self.compile_flags + dict(self.kind_flags).get(kind, ())

    def case_flags(self, case: Case) -> tuple[str, ...]:
        """Every compile flag of one case on this target: the target's, its kind's, then
        the case's own (input type, the ONNX operator tests' f64 flag). The one place
        that puts a case's flags together: suites, batches, bundles and the benchmark."""
        return tuple(case.compile_flags(self.flags_for(case.kind)))

    @property
    def device_uri(self) -> str:
        return self.device or self.driver


def load_targets(path: Path) -> dict[str, Target]:
    try:
        data = load_toml(path)
    except TomlError as e:
        raise TargetError(str(e)) from e
    table = data.get("targets")
    if not isinstance(table, dict) or not table:
        raise TargetError(f"{path}: no [targets.NAME] tables found")
    targets: dict[str, Target] = {}
    for name, spec in table.items():
        where = f"{path}: [targets.{name}]"
        if not isinstance(spec, dict):
            raise TargetError(f"{where} must be a table")
        flags, driver = spec.get("compile_flags"), spec.get("driver")
        if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
            raise TargetError(f"{where}: compile_flags must be a list of strings")
        if not isinstance(driver, str) or not driver:
            raise TargetError(f"{where}: driver must be a non-empty string")
        platforms = spec.get("platforms", ["linux", "macos", "windows"])
        if not isinstance(platforms, list) or not all(isinstance(p, str) for p in platforms):
            raise TargetError(
                f'{where}: platforms must be a list of strings, e.g. ["linux", "macos"]'
            )
        kind_flags = spec.get("kind_flags", {})
        if not isinstance(kind_flags, dict) or not all(
            k in ("mlir", "onnx") and isinstance(v, list) and all(isinstance(f, str) for f in v)
            for k, v in kind_flags.items()
        ):
            raise TargetError(
                f'{where}: kind_flags must map mlir or onnx to a list of strings, e.g. {{ mlir = ["--iree-opt-const-eval=false"] }}'
            )
        stage_timeouts = spec.get("stage_timeouts", {})
        if not isinstance(stage_timeouts, dict) or not all(
            stage in STAGES_WITH_LIMITS
            and isinstance(seconds, (int, float))
            and not isinstance(seconds, bool)
            and math.isfinite(seconds)
            and seconds > 0
            for stage, seconds in stage_timeouts.items()
        ):
            raise TargetError(
                f"{where}: stage_timeouts must map stages ({', '.join(STAGES_WITH_LIMITS)}) "
                "to seconds above 0, e.g. { run = 900 }"
            )
        unknown = set(spec) - {
            "compile_flags",
            "driver",
            "device",
            "platforms",
            "description",
            "host_specific",
            "kind_flags",
            "stage_timeouts",
        }
        if unknown:
            raise TargetError(f"{where}: unknown keys {sorted(unknown)}")
        targets[name] = Target(
            name=name,
            compile_flags=tuple(flags),
            driver=driver,
            device=spec.get("device"),
            platforms=tuple(platforms),
            description=spec.get("description", ""),
            host_specific=bool(spec.get("host_specific", False)),
            kind_flags=tuple((k, tuple(v)) for k, v in sorted(kind_flags.items())),
            stage_timeouts=tuple((k, float(v)) for k, v in stage_timeouts.items()),
        )
    return targets


def select_targets(known: dict[str, Target], names: list[str]) -> list[Target]:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise TargetError(
            f"unknown target {', '.join(repr(n) for n in unknown)}; known targets: {', '.join(sorted(known))} "
            "(defined in conformance/targets.toml)"
        )
    return [known[n] for n in dict.fromkeys(names)]


def named_target(path: Path, name: str) -> Target:
    """The target ``name`` of the targets file at ``path`` (a command's ``--target``)."""
    targets = load_targets(path)
    if name not in targets:
        raise TargetError(f"unknown target {name!r}; known: {', '.join(targets)}")
    return targets[name]


def check_runnable(target: Target) -> None:
    """Refuses a target that cannot compile or run on this host, saying why."""
    reason = unavailable_reason(target) or uncompilable_reason(target)
    if reason:
        raise TargetError(f"target {target.name} cannot run here: {reason}")


@functools.cache
def available_drivers() -> tuple[str, ...]:
    import iree.runtime as rt

    return tuple(rt.query_available_drivers())


@functools.cache
def driver_devices(driver: str) -> tuple[dict, ...]:
    """Devices the driver reports here; empty when the driver cannot start."""
    import iree.runtime as rt

    try:
        return tuple(rt.get_driver(driver).query_available_devices())
    except Exception:  # noqa: BLE001 - a driver with no device raises various errors
        return ()


#: The compiler backend a ``--iree-hal-target-device`` needs (local devices name theirs).
_DEVICE_BACKENDS = {"cuda": "cuda", "hip": "rocm", "vulkan": "vulkan-spirv", "metal": "metal-spirv"}


def required_backend(target: Target) -> str | None:
    """The compiler target backend a non-local target needs; None for local devices."""
    for flag in target.compile_flags:
        if flag.startswith("--iree-hal-target-device="):
            device = flag.split("=", 1)[1].split("[", 1)[0]
            return _DEVICE_BACKENDS.get(device, device) if device != "local" else None
    return None


@functools.cache
def compiler_backends() -> tuple[str, ...]:
    """Target backends of the installed compiler (``iree-compile --iree-hal-list-target-backends``)."""
    from iree.compiler.tools.core import query_available_targets

    return tuple(query_available_targets())


def uncompilable_reason(target: Target, backends: tuple[str, ...] | None = None) -> str | None:
    """Why the installed compiler cannot compile for the target, or None when it can.

    The macOS iree-base-compiler wheel is built without the cuda and rocm backends (the
    Linux and Windows ones have them), so ``--compile-only --target cuda`` cannot work there.
    """
    backend = required_backend(target)
    if backend is None:
        return None
    have = compiler_backends() if backends is None else backends
    if backend in have:
        return None
    return (
        f"target {target.name} needs the compiler's '{backend}' backend, which this "
        f"iree-base-compiler build on {host_os()} lacks (it has {', '.join(have) or 'none'}); "
        f"compile on a host whose wheel has it (the Linux and Windows wheels have cuda and rocm)"
    )


def unavailable_reason(target: Target) -> str | None:
    """Why the target cannot run on this host, or None when it can."""
    os_name = host_os()
    if os_name not in target.platforms:
        return f"target {target.name} runs on {', '.join(target.platforms)}, not {os_name}"
    if target.driver not in available_drivers():
        return f"HAL driver '{target.driver}' for target {target.name} is not in this iree-base-runtime build"
    if target.driver.startswith("local"):
        return None
    if not driver_devices(target.driver):
        return (
            f"HAL driver '{target.driver}' for target {target.name} found no device on this machine"
        )
    return None
