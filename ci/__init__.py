"""The CI scripts, a package: each runs as ``python -m ci.<script>`` from the repository
root (docs/ci.md). Nothing in ci/ edits ``sys.path`` (tests/ci/test_ci_package.py)."""
