"""IREE conformance suite: cases, stages, targets, artifact store, expectations, reports."""

__version__ = "0.1.0"
