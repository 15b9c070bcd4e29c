"""Code the tests of both levels share (docs/testing.md): helpers and fixtures, imported
as ``tests.support.X``; a folder's conftest.py imports the fixtures its tests use."""
