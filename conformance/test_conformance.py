"""Every registered suite's cases on every selected target (one suite: ``-m <suite>``).

The parameters come from the suites registered through the ``pytest_conformance_suites``
hook (iree_conformance.plugin.pytest_plugin); a new suite needs no test module of its own.
"""


def test_conformance(conformance, conformance_case, conformance_target):
    conformance(conformance_case, conformance_target)
