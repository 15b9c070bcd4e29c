#!/usr/bin/env bash
# The lowest-versions lane: the lowest release of every direct dependency that
# pyproject.toml admits (uv's --resolution lowest-direct: iree-base-* 3.11.0, onnx 1.17,
# numpy 1.26, onnxruntime 1.20, pytest 8.0, tomlkit 0.12, jax 0.4.30, ...), in a fresh
# venv, then the README's test command on a documented sample (docs/ci.md, "Lanes"): the
# whole of tests/unit, and the e2e tests that drive the pytest plugin and the manifests.
# A floor that fails here is raised in pyproject.toml with its reason beside it.
# IREE itself is the exception: it stays at the version the expectations manifests were
# recorded for (iree_index.MANIFESTS_RECORDED_FOR), since the suite's verdicts are IREE's
# and the tests run the suite; IREE's own floor is proven by `versions` on it
# (tests/e2e/core/test_version_envs.py, test_the_minimum_version_runs_a_selection).
#
# Usage: .ci/lowest_lane.sh   (from an activated environment that has uv: the dev extra)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/.ci-lowest"
rm -rf "$venv"
uv venv -q --seed --python "$(command -v python3)" "$venv"  # --seed: pip, which tests call
iree=$(PYTHONPATH=python python3 -c "from iree_conformance.common.iree_index import MANIFESTS_RECORDED_FOR as v; print(v)")
printf 'iree-base-compiler==%s\niree-base-runtime==%s\n' "$iree" "$iree" > "$venv/iree-constraints.txt"
VIRTUAL_ENV="$venv" uv pip install -q --resolution lowest-direct --constraint "$venv/iree-constraints.txt" \
  -e ".[dev,stablehlo-ref]" -e ./cache_tools
echo "lowest-versions lane installed:"
VIRTUAL_ENV="$venv" uv pip list 2>/dev/null | grep -iE '^(iree-base|onnx|numpy|pytest|tomlkit|jinja2|ml-dtypes|jax|requests|platformdirs|tqdm|filecheck) ' | sed 's/^/  /'
# Its own store and data: the lowest onnx materializes its own operator tests.
PATH="$venv/bin:$PATH" IREE_CONFORMANCE_STORE="$PWD/.ci-cache/lowest/store" IREE_CONFORMANCE_DATA="$PWD/.ci-cache/lowest/data" \
  "$venv/bin/pytest" tests/unit tests/e2e/core/test_plugin.py tests/e2e/core/test_flaky.py -n 2 -p no:cacheprovider
