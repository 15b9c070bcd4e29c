"""Reproducers: a failing case as a folder that IREE's own tools reproduce (docs/reproducers.md)."""
