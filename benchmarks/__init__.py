"""The project's measurements (benchmarks/README.md); each script runs on its own."""
