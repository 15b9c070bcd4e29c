#!/usr/bin/env bash
# The torch lane (docs/torch.md): a venv of its own with torch 2.13.0's CPU build (on
# GitHub's runners from PyTorch's CPU index; here `pip install torch==2.13.0` takes the
# file on this machine's disk) and the torch extra, then the torch unit tests and the
# bundled torch suite through IREE against torch eager. Its own venv keeps torch out of
# the main one, whose runs (the smoke run, the act lanes) show the suite's one skip line.
#
# Usage: .ci/torch_lane.sh [install|run]   (from the repository; python3 on PATH)
#   install: the venv only; run: the tests only (in the venv install made); neither: both.
# .ci/run installs in the background while other lanes run, then runs.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-all}"
case "$mode" in install|run|all) ;; *) echo "usage: .ci/torch_lane.sh [install|run]" >&2; exit 2 ;; esac
venv="$PWD/.ci-torch"
if [ "$mode" != run ]; then
  python3 -m venv --clear "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q torch==2.13.0
  "$venv/bin/python" -m pip install -q -e ".[dev,torch]" -e ./cache_tools "transformers>=4.50"
  "$venv/bin/python" -c "import torch, iree.turbine, transformers; print('torch lane:', torch.__version__, 'transformers', transformers.__version__)"
fi
[ "$mode" != install ] || exit 0
export PATH="$venv/bin:$PATH"
IREE_CONFORMANCE_STORE="$PWD/.ci-cache/torch/store" \
  "$venv/bin/pytest" tests/unit/core/test_torch_suite.py tests/unit/speed/test_bench.py -k torch tests/e2e/repro/test_torch_repro.py -q -p no:cacheprovider
# Language models (docs/generation.md): a save_pretrained folder through check-model, then
# the -m llm suite's six architectures, each generating 32 tokens against transformers.
IREE_CONFORMANCE_STORE="$PWD/.ci-cache/torch/store" \
  "$venv/bin/pytest" tests/e2e/generation -q -p no:cacheprovider
IREE_CONFORMANCE_STORE="$PWD/.ci-cache/torch/store" \
  "$venv/bin/pytest" conformance -m llm -n 2 -p no:cacheprovider --report-json .ci-cache/llm-results.json
IREE_CONFORMANCE_STORE="$PWD/.ci-cache/torch/store" \
  "$venv/bin/pytest" conformance -m torch -n 2 -p no:cacheprovider --report-json .ci-cache/torch-results.json
