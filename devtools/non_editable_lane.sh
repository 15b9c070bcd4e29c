#!/usr/bin/env bash
# The non-editable lane: `pip install .` (not -e) into a fresh virtual environment, then
# a few cases of every suite run from a folder outside the checkout, so the suite imports
# the installed package, as a user of the wheel does. An editable install reads the
# source tree and would hide a module missing from the wheel.
#
# Usage: devtools/non_editable_lane.sh [PYTHON]   (default python3; needs PyPI or a pip cache)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${1:-python3}"
work="$(mktemp -d)"
trap 'echo "[${SECONDS}s] removing $work"; rm -rf "$work"; echo "[${SECONDS}s] removed"' EXIT

# Build from a copy of the package sources, so a stale build/ folder of the checkout
# cannot put files into the wheel that the tree no longer has.
mkdir "$work/src"
tar -C "$repo" --exclude=__pycache__ --exclude='*.egg-info' --exclude=build -cf - pyproject.toml README.md python cache_tools \
  | tar -C "$work/src" -xf -

echo "[${SECONDS}s] fresh venv, pip install (not -e)"
"$python" -m venv "$work/venv"
venv_python="$work/venv/bin/python"
"$venv_python" -m pip install -q --upgrade pip
"$venv_python" -m pip install -q --no-compile "$work/src" "$work/src/cache_tools"  # two distributions
rm -rf "$work/src"  # nothing can be imported from the sources now

cd "$work"
echo "[${SECONDS}s] imports and entry points, from $work"
"$venv_python" - <<'EOF'
import sysconfig
from pathlib import Path

import cache_tools.commands
import iree_conformance.frontends.onnx
import iree_conformance.suites

site = Path(sysconfig.get_paths()["purelib"]).resolve()
for module in (iree_conformance.suites, iree_conformance.frontends.onnx, cache_tools.commands):
    path = Path(module.__file__).resolve()
    assert path.is_relative_to(site), f"{module.__name__} imported from {path}, not from {site}"
print(f"installed package imports from {site}")
EOF
"$work/venv/bin/iree-conformance" --help >/dev/null
"$work/venv/bin/cache-tools" --help >/dev/null

cat >"$work/cases.txt" <<'EOF'
stablehlo/add_f32
stablehlo/scatter_add_f32
onnx-ops/test_relu
onnx-ops/test_add_bcast
EOF
echo "[${SECONDS}s] a few cases of each suite"
export IREE_CONFORMANCE_STORE="$work/store"
export IREE_CONFORMANCE_DATA="${IREE_CONFORMANCE_DATA:-$work/data}"
"$venv_python" -m pytest "$repo/conformance" -p no:cacheprovider --offline -m "stablehlo or onnx_ops" \
  --cases-file "$work/cases.txt" --report-json "$work/results.json"

# Every listed case ran and passed: an empty selection must not look green.
"$venv_python" - "$work/results.json" "$work/cases.txt" <<'EOF'
import json
import sys

outcomes = json.load(open(sys.argv[1]))["outcomes"]
wanted = {line.strip() for line in open(sys.argv[2]) if line.strip()}
passed = {o["case_id"] for o in outcomes if o["verdict"] == "pass"}
assert passed == wanted, f"expected {sorted(wanted)} to pass, got {[(o['case_id'], o['verdict']) for o in outcomes]}"
print(f"non-editable lane: {len(passed)} cases passed")
EOF
echo "[${SECONDS}s] done"
