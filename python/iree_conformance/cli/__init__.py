"""Command lines: iree-conformance, check-model, the generated options table."""
