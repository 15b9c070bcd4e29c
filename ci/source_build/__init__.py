"""The source-build lane's commands (build-from-source.yml): ``python -m ci pins``,
``build-wheels``, ``llvm-build`` and the others of ci/cli.py's table."""
