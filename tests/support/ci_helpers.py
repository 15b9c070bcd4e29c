"""Helpers for the tests of the CI layer (ci/, .github/); the ci conftests expose `gh`.

The commands of ci/ are run the way the workflows run them (`python -m ci COMMAND ...` in
a subprocess, from the repository root) and, for finer checks, imported as modules of the
`ci` package (pyproject's pytest `pythonpath` puts the repository root on sys.path).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CI = REPO / "ci"
FIXTURES = REPO / "tests" / "fixtures" / "ci"
RESULTS = FIXTURES / "results"
LINUX = RESULTS / "linux-py3.11.json"  # verdicts with the manifest: pass / xfail / skip


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def derive(
    tmp: Path,
    name: str,
    source: Path = LINUX,
    *,
    os_name: str | None = None,
    arch: str | None = None,
    python: str | None = None,
    edits: dict[str, dict] | None = None,
    crlf: bool = False,
) -> Path:
    """A copy of a real results file on another platform and/or with some outcomes edited."""
    data = copy.deepcopy(load(source))
    meta = data["metadata"]
    meta.update({k: v for k, v in (("os", os_name), ("arch", arch), ("python", python)) if v})
    for outcome in data["outcomes"]:
        key = f"{outcome['target']}:{outcome['case_id']}"
        if edits and key in edits:
            outcome.update(edits[key])
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1)
    path.write_bytes(text.replace("\n", "\r\n").encode() if crlf else text.encode())
    return path


def ci_argv(command: str) -> list[str]:
    """'pins' (a command of ci/cli.py's table) -> ['-m', 'ci', 'pins'];
    'devtools/act_local.py' (a developer tool) -> ['-m', 'devtools.act_local']."""
    if command.startswith("devtools/"):
        return ["-m", command.removesuffix(".py").replace("/", ".")]
    from ci.cli import COMMANDS

    assert command in COMMANDS, f"{command!r} is not a command of ci/cli.py"
    return ["-m", "ci", command]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment minus GitHub Actions' file commands, CIBW_* settings and the
    overrides of a local (act) run, which would change what the scripts print."""
    drop = (
        "GITHUB_OUTPUT",
        "GITHUB_ENV",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_ACTIONS",
        "CI_CACHE_BASE",
        "CI_RUN_SHARD_ARGS",
        "CI_UNIT_TESTS",
    )
    overrides = (
        "IREE_CONFORMANCE_ZOO_MANIFEST",
        "IREE_CONFORMANCE_ZOO_MIRROR",
        "IREE_CONFORMANCE_STABLEHLO_",
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in drop and not k.startswith("CIBW_") and not k.startswith(overrides)
    }
    env["PYTHONUTF8"] = "1"
    env.update(extra)
    return env


def run_ci(
    command: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess:
    """Runs a ci/ command (e.g. 'pins') as `python -m ci pins`; 'devtools/X.py' as
    `python -m devtools.X`.
    From another folder than the repository root (cwd), the root goes on PYTHONPATH, as a
    workflow step in another working directory would need."""
    env = dict(env or clean_env())
    if cwd is not None and Path(cwd).resolve() != REPO:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, *ci_argv(command), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env=env,
        timeout=300,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"{command} {' '.join(map(str, args))} exited {result.returncode}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
    return result


def parse_github_file(path: Path) -> dict[str, str]:
    """Reads a GITHUB_OUTPUT / GITHUB_ENV file (name=value and name<<DELIM blocks)."""
    values: dict[str, str] = {}
    if not path.exists():
        return values
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            while lines[i] != delimiter:
                block.append(lines[i])
                i += 1
            i += 1
            values[name] = "\n".join(block)
        else:
            name, _, value = line.partition("=")
            values[name] = value
    return values


class GitHubFiles:
    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.output = root / "github_output"
        self.env_file = root / "github_env"
        self.summary = root / "step_summary"
        for p in (self.output, self.env_file, self.summary):
            p.write_text("", encoding="utf-8")

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(
            GITHUB_OUTPUT=str(self.output),
            GITHUB_ENV=str(self.env_file),
            GITHUB_STEP_SUMMARY=str(self.summary),
            **extra,
        )

    def outputs(self) -> dict[str, str]:
        return parse_github_file(self.output)

    def exported(self) -> dict[str, str]:
        return parse_github_file(self.env_file)

    def summary_text(self) -> str:
        return self.summary.read_text(encoding="utf-8")


@pytest.fixture
def gh(tmp_path: Path) -> GitHubFiles:
    """Files standing in for $GITHUB_OUTPUT, $GITHUB_ENV and $GITHUB_STEP_SUMMARY."""
    return GitHubFiles(tmp_path / "gh files")
