"""The registered suites: checked once, then asked for their cases.

``SuiteRegistry`` holds the suites that the ``pytest_conformance_suites`` hook returned
(``from_hook``), or the built-in ones outside pytest (``builtin``). It refuses two suites
of one name or overlapping case-id prefixes, and checks every collection: each case id
starts with its suite's ``case_prefix``, each ``Case.suite`` is the suite's name, and a
full collection holds at least ``floor`` cases (a ``CorpusError`` otherwise) unless every
case of it is a skip (the suite cannot run here: a dependency is missing). A suite
that narrows a collection on request (``--onnx-ops-sample``) does so in an optional
``select(cases, context)`` method, after the floor is checked on the full collection.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iree_conformance.common.errors import CorpusError
from iree_conformance.model.cases import Case
from iree_conformance.suites.base import Suite, SuiteContext, SuiteOption

if TYPE_CHECKING:
    from iree_conformance.suites.run_options import RunOptions


class SuiteError(ValueError):
    """A suite that breaks the contract (suites/base.py); the message names the suite."""


def prefixes(suite: Suite) -> tuple[str, ...]:
    """The suite's case-id prefixes (``case_prefix`` is one string, or a tuple of them)."""
    prefix = suite.case_prefix
    return (prefix,) if isinstance(prefix, str) else tuple(prefix)


def builtin_suites() -> list[Suite]:
    """The suites this package ships: StableHLO programs, ONNX operator tests, ONNX models,
    ONNX models from --onnx-dir folders, JAX programs, torch programs, language models."""
    from iree_conformance.suites.jax import JaxSuite
    from iree_conformance.suites.llm import LlmSuite
    from iree_conformance.suites.onnx_dir import OnnxDirSuite
    from iree_conformance.suites.onnx_models import OnnxModelsSuite
    from iree_conformance.suites.onnx_ops import OnnxOpsSuite
    from iree_conformance.suites.stablehlo import StablehloSuite
    from iree_conformance.suites.torch import TorchSuite

    return [
        StablehloSuite(),
        OnnxOpsSuite(),
        OnnxModelsSuite(),
        OnnxDirSuite(),
        JaxSuite(),
        TorchSuite(),
        LlmSuite(),
    ]


class SuiteRegistry:
    """The suites of a run by name, in registration order."""

    def __init__(self, suites: Iterable[Suite]):
        from iree_conformance.suites.run_options import OPTIONS

        self._suites: dict[str, Suite] = {}
        owners: dict[str, str] = {}
        # Flags and dests already taken: pytest would refuse a second one with a bare
        # "option names already added".
        flags = {key: "the core options" for o in OPTIONS for key in (o.flag, o.dest)}
        for suite in suites:
            name = getattr(suite, "name", None)
            if not isinstance(name, str) or not name.isidentifier():
                raise SuiteError(
                    f"suite {suite!r}: name {name!r} must be an identifier (it is the pytest marker)"
                )
            missing = [
                a
                for a in ("description", "case_prefix", "floor", "options", "collect")
                if not hasattr(suite, a)
            ]
            if missing:
                raise SuiteError(
                    f"suite {name}: lacks {', '.join(missing)} (see iree_conformance/suites/base.py)"
                )
            if name in self._suites:
                raise SuiteError(
                    f"suite {name}: registered twice ({self._suites[name]!r} and {suite!r}); suite names must be unique"
                )
            for prefix in prefixes(suite):
                if not prefix:
                    raise SuiteError(f"suite {name}: case_prefix must not be empty")
                for other, owner in owners.items():
                    if prefix.startswith(other) or other.startswith(prefix):
                        raise SuiteError(
                            f"suite {name}: case_prefix {prefix!r} overlaps {other!r} of suite {owner}"
                        )
                owners[prefix] = name
            for option in suite.options:
                if not isinstance(option, SuiteOption) or not option.flag.startswith("--"):
                    raise SuiteError(f"suite {name}: option {option!r} is not a SuiteOption")
                taken = flags.get(option.flag) or flags.get(option.dest)
                if taken:
                    raise SuiteError(
                        f"suite {name}: option {option.flag} is already declared by {taken}; "
                        "an option several suites read is a core RunOptions field "
                        "(see docs/adding-a-suite.md)"
                    )
                flags[option.flag] = flags[option.dest] = f"suite {name}"
            self._suites[name] = suite

    @classmethod
    def builtin(cls) -> SuiteRegistry:
        return cls(builtin_suites())

    @classmethod
    def from_hook(cls, hook: Any) -> SuiteRegistry:
        """The suites of every ``pytest_conformance_suites`` implementation."""
        return cls(suite for found in hook.pytest_conformance_suites() for suite in found or ())

    def __iter__(self) -> Iterator[Suite]:
        return iter(self._suites.values())

    def __contains__(self, name: object) -> bool:
        return name in self._suites

    @property
    def names(self) -> list[str]:
        return list(self._suites)

    def get(self, name: str) -> Suite:
        if name not in self._suites:
            raise KeyError(f"unknown suite {name!r}; known: {', '.join(self._suites)}")
        return self._suites[name]

    def options(self) -> list[tuple[Suite, SuiteOption]]:
        return [(suite, option) for suite in self for option in suite.options]

    def suite_of(self, case_id: str) -> str | None:
        """The suite whose case-id prefix case_id starts with, if any."""
        for suite in self:
            if case_id.startswith(prefixes(suite)):
                return suite.name
        return None

    def collect(self, name: str, context: SuiteContext) -> list[Case]:
        """The suite's cases, checked against the contract and the floor."""
        suite = self.get(name)
        cases = list(suite.collect(context))
        wanted = prefixes(suite)
        for case in cases:
            if case.suite != name:
                raise SuiteError(
                    f"suite {name}: case {case.case_id!r} says Case.suite = {case.suite!r}; it must be {name!r}"
                )
            if not case.case_id.startswith(wanted):
                raise SuiteError(
                    f"suite {name}: case id {case.case_id!r} does not start with its case_prefix {' or '.join(map(repr, wanted))}"
                )
        # A suite that cannot run here (an optional dependency is missing) gives skip cases
        # that say why; such a collection is not held to the floor.
        unavailable = bool(cases) and all(case.skip_reason for case in cases)
        if len(cases) < suite.floor and not unavailable:
            raise CorpusError(
                f"suite {name}: {len(cases)} cases, fewer than the floor of {suite.floor}; "
                "its corpus is incomplete (reinstall or regenerate it)"
            )
        select = getattr(suite, "select", None)
        return list(select(cases, context)) if callable(select) else cases


def option_values(suite: Suite, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The suite's option values by dest: given, else the option's environment variable,
    else its default."""
    given = given or {}
    values: dict[str, Any] = {}
    for option in suite.options:
        value = given.get(option.dest)
        if value is None and option.env and os.environ.get(option.env):
            convert = option.kwargs.get("type")
            value = convert(os.environ[option.env]) if callable(convert) else os.environ[option.env]
        if value is None:
            value = option.kwargs.get("default")
        values[option.dest] = value
    return values


def collect(
    suite: str,
    conformance_dir: Path,
    options: RunOptions,
    values: Mapping[str, Any] | None = None,
) -> list[Case]:
    """A built-in suite's cases outside pytest (the benchmark), options at their defaults
    unless values gives them."""
    registry = SuiteRegistry.builtin()
    found = registry.get(suite)
    context = SuiteContext(conformance_dir, options, option_values(found, values))
    return registry.collect(suite, context)
