"""What the workflows call, one CLI: ``python -m ci COMMAND`` from the repository root
(ci/cli.py holds the command table; docs/ci-commands.md). Nothing in ci/ edits ``sys.path``
(tests/unit/ci/test_ci_package.py)."""
