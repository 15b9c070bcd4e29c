"""Names this folder a conformance folder.

The iree_conformance pytest plugin (a ``pytest11`` entry point of the package) runs the
suites when a run's initial conftests name a conformance folder, as this one does, and
stays inert otherwise.
"""

from pathlib import Path


def pytest_conformance_folder() -> Path:
    return Path(__file__).resolve().parent
