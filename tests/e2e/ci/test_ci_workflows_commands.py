"""The workflow checks run as commands: python -m ci check-workflows, every called command's
--help, zizmor on what check_workflows leaves to it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.ci_helpers import REPO, run_ci

yaml = pytest.importorskip("yaml", reason="pyyaml is in the dev extra")
from ci import check_workflows as cw  # noqa: E402 - after the pyyaml skip


def test_every_called_ci_command_exists_and_has_help():
    called = cw.commands_called()
    assert {"run-shard", "merge-results", "diff-results", "install", "build-wheels"} <= set(called)
    assert set(called) <= set(cw.COMMANDS)
    assert cw.check_scripts_exist(run_help=True) == []


# A workflow zizmor (auditor persona) finds nothing in; each case below breaks one rule
# that check_workflows no longer checks itself, and zizmor must flag it with that audit.
ZIZMOR_CLEAN = """\
name: Clean
on:
  push:
    branches: [main]
concurrency:
  group: clean-${{ github.ref }}
  cancel-in-progress: true
permissions: {}
jobs:
  build:
    name: Build
    runs-on: ubuntu-latest
    timeout-minutes: 10
    permissions:
      contents: read # check out
    steps:
      - name: Check out
        uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - name: Run
        env:
          OS: ${{ runner.os }}
        run: echo "$OS"
"""


CHECKOUT = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1"


LEFT_TO_ZIZMOR = {
    "pull-request-target": (
        "dangerous-triggers",
        "  push:\n    branches: [main]\n",
        "  pull_request_target:\n",
    ),
    "expression-in-run": ("template-injection", 'run: echo "$OS"', 'run: echo "${{ runner.os }}"'),
    "tag-pin": ("unpinned-uses", CHECKOUT, "actions/checkout@v4"),
    "persisted-credentials": (
        "artipacked",
        "        with:\n          persist-credentials: false\n",
        "",
    ),
    "no-top-level-permissions": ("excessive-permissions", "permissions: {}\n", ""),
    "top-level-write": (
        "excessive-permissions",
        "permissions: {}\n",
        "permissions:\n  contents: write # x\n",
    ),
    "job-read-all": (
        "excessive-permissions",
        "    permissions:\n      contents: read # check out\n",
        "    permissions: read-all\n",
    ),
}


def test_zizmor_flags_what_check_workflows_leaves_to_it(tmp_path):
    import json
    import subprocess

    exe = cw.find_tool("zizmor")
    if exe is None:
        pytest.skip("zizmor missing: pip install zizmor (dev extra)")
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "clean.yml").write_text(ZIZMOR_CLEAN, encoding="utf-8")
    for name, (_, old, new) in LEFT_TO_ZIZMOR.items():
        assert old in ZIZMOR_CLEAN, name
        (folder / f"{name}.yml").write_text(ZIZMOR_CLEAN.replace(old, new), encoding="utf-8")
    action = tmp_path / ".github" / "actions" / "inject"
    action.mkdir(parents=True)
    (action / "action.yml").write_text(
        textwrap.dedent("""\
        name: Inject
        description: an input expanded inside run
        inputs:
          key:
            description: a key
        runs:
          using: composite
          steps:
            - name: Run
              shell: bash
              run: echo "${{ inputs.key }}"
        """),
        encoding="utf-8",
    )
    # As the lint job and .ci/run run it, with the project's configuration.
    result = subprocess.run(
        [exe, "--persona", "auditor", "--offline", "--format", "json"]
        + ["--config", str(REPO / ".github" / "zizmor.yml"), str(tmp_path / ".github")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found: dict[str, set[str]] = {}
    for finding in json.loads(result.stdout):
        path = Path(finding["locations"][0]["symbolic"]["key"]["Local"]["verbatim_path"])
        name = path.parent.name if path.name == "action.yml" else path.stem
        found.setdefault(name, set()).add(finding["ident"])
    assert "clean" not in found, found
    for name, (audit, _, _) in LEFT_TO_ZIZMOR.items():
        assert audit in found.get(name, set()), (name, found)
    assert "template-injection" in found["inject"], found
    assert result.returncode != 0  # any finding fails the lint step


def test_check_workflows_script_passes():
    # --help of each script and cibuildwheel are tested on their own above and in
    # test_ci_source_build.py; this checks the script that .ci/run and the lint job call.
    args = ["--skip-help", "--skip-cibuildwheel"]
    if cw.find_tool("actionlint") is None:
        args.append("--skip-actionlint")
    result = run_ci("check-workflows", *args)
    assert "0 failed" in result.stdout
