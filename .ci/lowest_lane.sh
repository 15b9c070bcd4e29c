#!/usr/bin/env bash
# The lowest-versions lane: the lowest release of every direct dependency that
# pyproject.toml admits (uv's --resolution lowest-direct: iree-base-* 3.11.0, onnx 1.17,
# numpy 1.26, onnxruntime 1.20, pytest 8.0, tomlkit 0.12, jax 0.4.30, ...), in a fresh
# venv, then the README's test command on a documented sample (docs/ci.md, "Lanes"): the
# whole of tests/unit, and the e2e tests that drive the pytest plugin and the manifests.
# A floor that fails here is raised in pyproject.toml with its reason beside it.
#
# Usage: .ci/lowest_lane.sh   (from an activated environment that has uv: the dev extra)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/.ci-lowest"
rm -rf "$venv"
uv venv -q --python "$(command -v python3)" "$venv"
VIRTUAL_ENV="$venv" uv pip install -q --resolution lowest-direct -e ".[dev,stablehlo-ref]" -e ./cache_tools
echo "lowest-versions lane installed:"
VIRTUAL_ENV="$venv" uv pip list 2>/dev/null | grep -iE '^(iree-base|onnx|numpy|pytest|tomlkit|jinja2|ml-dtypes|jax|requests|platformdirs|tqdm|filecheck) ' | sed 's/^/  /'
# Its own store and data: the lowest onnx materializes its own operator tests.
IREE_CONFORMANCE_STORE="$PWD/.ci-cache/lowest/store" IREE_CONFORMANCE_DATA="$PWD/.ci-cache/lowest/data" \
  "$venv/bin/pytest" tests/unit tests/e2e/core/test_plugin.py tests/e2e/core/test_flaky.py -n 2 -p no:cacheprovider
