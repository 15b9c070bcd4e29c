"""One package per input format: ONNX, StableHLO, JAX exports."""
