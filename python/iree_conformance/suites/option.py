"""One command-line option, as a suite or the core declares it (``SuiteOption``).

Its own module so that the core options (``run_options``) and the Suite contract (``base``)
both read it without importing each other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


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
