"""The Suite contract: what a suite of cases gives the conformance run.

A suite is an object with a name (the registry key, ``Case.suite`` and the pytest marker),
a description (the marker's help and the docs' suite list), the prefix of its case ids,
a floor (the fewest cases a full collection may give; fewer is a ``CorpusError``), its
own command-line options, and ``collect``. Suites are registered through the
``pytest_conformance_suites`` hook (``hookspecs.py``); ``registry.py`` checks and
collects them. ``docs/adding-a-suite.md`` walks through writing one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from iree_conformance.model.cases import Case
    from iree_conformance.suites.run_options import RunOptions


@dataclasses.dataclass(frozen=True)
class SuiteOption:
    """One command-line option a suite owns."""

    flag: str  # "--jax-dir"
    help: str
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # argparse keywords
    env: str | None = None  # environment variable read when the option is not given

    @property
    def name(self) -> str:
        """The flag (as the options table and the tests name an option)."""
        return self.flag

    @property
    def dest(self) -> str:
        """The argparse destination: the key of the value in ``SuiteContext.values``."""
        return str(self.kwargs.get("dest") or self.flag.lstrip("-").replace("-", "_"))

    @property
    def usage(self) -> str:
        """The option as docs/suites.md's table shows it: flag and metavar or choices."""
        kw = self.kwargs
        if kw.get("action") == "store_true":
            return self.flag
        if "choices" in kw:
            values = "|".join(kw["choices"])
            return f"{self.flag} [{values}]" if kw.get("nargs") == "?" else f"{self.flag} {values}"
        return f"{self.flag} {kw.get('metavar', 'VALUE')}"


@dataclasses.dataclass(frozen=True)
class SuiteContext:
    """What ``Suite.collect`` is given."""

    conformance_dir: Path  # the conformance/ folder (bundled corpora)
    options: RunOptions  # the run's core options
    values: Mapping[str, Any]  # this suite's own option values, by argparse dest


@runtime_checkable
class Suite(Protocol):
    """A suite of cases; see the module docstring. (Members are read-only properties
    here so that plain class attributes of narrower types satisfy the protocol.)"""

    @property
    def name(self) -> str:
        """Registry key, ``Case.suite`` and the pytest marker: "jax"."""

    @property
    def description(self) -> str:
        """The marker's help text and the docs' suite list."""

    @property
    def case_prefix(self) -> str | tuple[str, ...]:
        """Every case id of the suite starts with it ("jax/"), or with one of a tuple."""

    @property
    def floor(self) -> int:
        """The fewest cases a full collection gives (fewer: CorpusError); 0 = none."""

    @property
    def options(self) -> Sequence[SuiteOption]:
        """The command-line options this suite owns."""

    def collect(self, context: SuiteContext) -> list[Case]: ...
