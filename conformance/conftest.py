"""Loads the iree_conformance pytest plugin for the conformance suites."""

from pathlib import Path

from iree_conformance.pytest_plugin import (  # noqa: F401 - hooks and fixtures pytest must see
    configure,
    conformance,
    pytest_addhooks,
    pytest_addoption,
    pytest_generate_tests,
    pytest_unconfigure,
)


def pytest_configure(config):
    configure(config, Path(__file__).resolve().parent)
