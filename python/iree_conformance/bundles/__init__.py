"""Compile here, run there."""
