"""onnx's own test runner (``onnx.backend.test.BackendTest``) over ``IreeBackend``, with
this project's expectations manifests applied where that runner allows, and the
comparison of its verdicts with the ``onnx_ops`` suite's.

What the runner allows: per-test keyword arguments (the manifest's ``[tolerance]``
entries become ``rtol``/``atol``), ``xfail`` patterns (an ``[xfail]`` entry with one
expected kind: the runner cannot tell a compile failure from a numerics one, so any
failure satisfies it) and ``exclude`` patterns (a flaky entry, whose verdict may be a
pass or a failure; and the ``Real`` models, which the runner downloads). Patterns are
anchored (``^test_abs_(cpu|cuda)$``): the runner's ``re.search`` would otherwise let
``test_abs`` match ``test_abs_grad``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.common.platform_info import host_os
from iree_conformance.common.vocabulary import Status
from iree_conformance.expectations.lookup import Expectations, load_expectations
from iree_conformance.onnx_backend.backend import IreeBackend

__all__ = [
    "KNOWN_DIFFERENCES",
    "SUITE_PREFIX",
    "Agreement",
    "backend_class",
    "build_backend_test",
    "compare_verdicts",
    "name_pattern",
    "runner_verdicts",
    "suite_sample",
    "suite_verdicts",
]

SUITE_PREFIX = "onnx-ops/"
_DEVICE_SUFFIX = re.compile(r"_(cpu|cuda)$")

#: Cases where onnx's runner and the onnx_ops suite judge the same IREE result
#: differently, and why (docs/onnx-backend.md, "Where the verdicts differ").
KNOWN_DIFFERENCES: dict[str, str] = {}


def name_pattern(names: Iterable[str]) -> str:
    """One anchored regex matching the runner's device tests of these test names."""
    alternatives = "|".join(re.escape(n) for n in sorted(set(names)))
    return f"^(?:{alternatives})_(?:cpu|cuda)$"


def backend_class(target: str | None) -> type[IreeBackend]:
    """IreeBackend, or a subclass whose "CPU" device means ``target``."""
    if target in (None, "llvm-cpu"):
        return IreeBackend
    suffix = re.sub(r"\W", "_", target)
    return type(f"IreeBackend_{suffix}", (IreeBackend,), {"target": target})


def suite_sample(count: int, data_dir: str | None = None) -> list[str]:
    """The test names of ``--onnx-ops-sample count`` (the suite's fixed sample)."""
    from iree_conformance.frontends.onnx import node_tests
    from iree_conformance.suites.onnx_ops import data_dir as resolve_data_dir
    from iree_conformance.suites.onnx_ops import sample

    root = node_tests.materialize(resolve_data_dir(data_dir))
    ids = [c.case_id for c in node_tests.load_cases(root)]
    return sorted(case_id.removeprefix(SUITE_PREFIX) for case_id in sample(ids, count))


def _real_model_names() -> list[str]:
    from onnx.backend.test.loader import load_model_tests

    return [t.name for t in load_model_tests(kind="real")]


def build_backend_test(
    parent_module: str,
    *,
    target: str | None = None,
    expectations: Expectations | None = None,
    names: Iterable[str] | None = None,
) -> Any:
    """``onnx.backend.test.BackendTest`` over IreeBackend on ``target``: the manifests'
    tolerances, xfails and flaky cases applied, the Real models excluded (the runner
    downloads them). ``names`` is only used to apply the manifests faster: select the
    tests with ``selected_test_cases``."""
    import onnx.backend.test

    kwargs: dict[str, dict[str, float]] = {}
    xfail: list[str] = []
    flaky: list[str] = []
    if expectations is not None:
        for case_id, tol in expectations.tolerance.items():
            if case_id.startswith(SUITE_PREFIX):
                given = {"rtol": tol.rtol, "atol": tol.atol}
                kwargs[case_id.removeprefix(SUITE_PREFIX)] = {
                    k: v for k, v in given.items() if v is not None
                }
        for case_id, entry in expectations.xfail.items():
            if case_id.startswith(SUITE_PREFIX):
                name = case_id.removeprefix(SUITE_PREFIX)
                (flaky if entry.flaky else xfail).append(name)
    runner = onnx.backend.test.BackendTest(backend_class(target), parent_module, kwargs)
    runner.exclude(name_pattern(_real_model_names()))
    if flaky:
        runner.exclude(name_pattern(flaky))
    if names is not None:
        wanted = set(names)
        xfail = [n for n in xfail if n in wanted]
    if xfail:
        runner.xfail(name_pattern(xfail))
    return runner


def selected_test_cases(runner: Any, names: Iterable[str] | None = None) -> dict[str, type]:
    """The runner's unittest classes; with ``names``, holding only those tests (the
    others are left out, not skipped: the runner's ``include`` would report each as a
    skip, which the scoreboard counts)."""
    cases = runner.test_cases
    if names is None:
        return cases
    pattern = re.compile(name_pattern(names))
    selected = {}
    for class_name, cls in cases.items():
        tests = [a for a in vars(cls) if a.startswith("test_")]
        for attr in tests:
            if not pattern.search(attr):
                delattr(cls, attr)
        if len(tests) > sum(1 for a in tests if not pattern.search(a)):
            selected[class_name] = cls
    return selected


def load_target_expectations(directory: Path, target: str) -> Expectations:
    if not directory.is_dir():
        raise ConfigurationError(f"{directory}: no expectations folder (conformance/expectations)")
    return load_expectations(directory, target, host_os())


# -- agreement with the onnx_ops suite ----------------------------------------------
def suite_verdicts(results_json: Path) -> dict[str, str]:
    """Test name -> pass, fail or skip: the raw status of each onnx_ops outcome of a
    ``--report-json`` file (an error, crash or timeout at any stage is a fail)."""
    try:
        data = json.loads(Path(results_json).read_text(encoding="utf-8"))
        outcomes = data["outcomes"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        raise ConfigurationError(
            f"{results_json}: not a --report-json results file ({e})"
        ) from None
    verdicts = {}
    for o in outcomes:
        if o.get("suite") != "onnx_ops":
            continue
        status = o.get("status")
        name = str(o["case_id"]).removeprefix(SUITE_PREFIX)
        verdicts[name] = status if status in (Status.PASS, Status.SKIP) else Status.FAIL
    return verdicts


def runner_verdicts(report: dict[str, Any]) -> dict[str, str]:
    """Test name -> pass, fail or skip from a scoreboard ``report.json`` (CPU tests)."""
    verdicts = {}
    for key, verdict in (("passed", "pass"), ("failed", "fail"), ("skipped", "skip")):
        for node_id in report.get(key, []):
            test = str(node_id).rsplit("::", 1)[-1]
            if test.endswith("_cpu"):
                verdicts[_DEVICE_SUFFIX.sub("", test)] = verdict
    return verdicts


@dataclasses.dataclass
class Agreement:
    agreed: list[str]
    explained: dict[str, str]  # name -> "suite X, runner Y: why"
    unexplained: dict[str, str]  # name -> "suite X, runner Y"
    missing: list[str]  # in the suite's results, not in the runner's

    @property
    def compared(self) -> int:
        return len(self.agreed) + len(self.explained) + len(self.unexplained)

    def render(self) -> str:
        lines = [
            f"{self.compared} cases compared: {len(self.agreed)} agree, "
            f"{len(self.explained)} differ as explained, {len(self.unexplained)} differ unexplained"
            + (f"; {len(self.missing)} not run by the runner" if self.missing else "")
        ]
        lines += [f"  explained   {n}: {w}" for n, w in sorted(self.explained.items())]
        lines += [f"  UNEXPLAINED {n}: {w}" for n, w in sorted(self.unexplained.items())]
        return "\n".join(lines)


def compare_verdicts(
    suite: dict[str, str], runner: dict[str, str], known: dict[str, str] | None = None
) -> Agreement:
    """Case by case: the suite's verdict against the runner's."""
    known = KNOWN_DIFFERENCES if known is None else known
    result = Agreement([], {}, {}, [])
    for name, verdict in sorted(suite.items()):
        if name not in runner:
            result.missing.append(name)
        elif runner[name] == verdict:
            result.agreed.append(name)
        elif name in known:
            result.explained[name] = f"suite {verdict}, runner {runner[name]}: {known[name]}"
        else:
            result.unexplained[name] = f"suite {verdict}, runner {runner[name]}"
    return result


# -- configuration of the pytest file (backend_tests.py) -----------------------------
TARGET_ENV = "IREE_ONNX_BACKEND_TARGET"
SAMPLE_ENV = "IREE_ONNX_BACKEND_SAMPLE"
CASES_ENV = "IREE_ONNX_BACKEND_CASES"
EXPECTATIONS_ENV = "IREE_ONNX_BACKEND_EXPECTATIONS"
_CHECKOUT_EXPECTATIONS = Path(__file__).resolve().parents[3] / "conformance" / "expectations"


def default_expectations_dir() -> Path | None:
    """./conformance/expectations, else the checkout's, else None (no manifests)."""
    for candidate in (Path.cwd() / "conformance" / "expectations", _CHECKOUT_EXPECTATIONS):
        if candidate.is_dir():
            return candidate
    return None


def backend_tests_from_environment(
    parent_module: str, environ: dict[str, str] | None = None
) -> dict[str, type]:
    """The unittest classes of the BackendTest the environment asks for: $IREE_ONNX_BACKEND_TARGET (default
    llvm-cpu), $IREE_ONNX_BACKEND_SAMPLE (the suite's fixed sample of N) or
    $IREE_ONNX_BACKEND_CASES (comma-separated test names), and
    $IREE_ONNX_BACKEND_EXPECTATIONS (a manifest folder, or "none"; default
    ./conformance/expectations or the checkout's)."""
    import os

    env = os.environ if environ is None else environ
    target = env.get(TARGET_ENV) or "llvm-cpu"
    names: list[str] | None = None
    if env.get(SAMPLE_ENV):
        try:
            count = int(env[SAMPLE_ENV])
        except ValueError:
            raise ConfigurationError(
                f"${SAMPLE_ENV}={env[SAMPLE_ENV]!r}: not a number of cases"
            ) from None
        names = suite_sample(count)
    if env.get(CASES_ENV):
        names = [*(names or []), *(n.strip() for n in env[CASES_ENV].split(",") if n.strip())]
    where = env.get(EXPECTATIONS_ENV)
    directory = None if where == "none" else Path(where) if where else default_expectations_dir()
    expectations = load_target_expectations(directory, target) if directory else None
    runner = build_backend_test(
        parent_module, target=target, expectations=expectations, names=names
    )
    return selected_test_cases(runner, names)
