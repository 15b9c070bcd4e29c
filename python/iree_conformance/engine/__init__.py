"""One case on one target, run and judged: the pipeline, batching, the worker, verdicts."""
