"""Code the tests of both levels share (docs/ci-local.md, "Two levels"): helpers and
fixtures, imported as ``tests.support.X``; a folder's conftest.py imports the fixtures its
tests use."""
