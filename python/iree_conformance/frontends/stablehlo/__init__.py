"""StableHLO programs: check ops, the runtime check recorder, the interpreter, lit RUN lines."""
