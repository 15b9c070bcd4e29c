"""Case providers, one module per suite."""
