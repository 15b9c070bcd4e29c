"""Expectations manifests: the format, the lookup, flakes, upstream comparison."""
