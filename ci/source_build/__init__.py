"""The source-build lane's scripts (build-from-source.yml): ``python -m
ci.source_build.<script>`` from the repository root."""
