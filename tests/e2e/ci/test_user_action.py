"""The GitHub Action for other repositories (action.yml, ci/user_action.py): its inputs'
errors (one line, the documented exit status), its counts, and its wiring.

The action itself under act, in a consumer repository (green, warm, red with the
annotation at the model), is devtools/consumer_repo_proof.py, run by .ci/run."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ci import user_action
from ci.cli import command_parser
from devtools.consumer_repo_proof import make_models, manifest
from iree_conformance.common.tomlio import tomllib

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def consumer(tmp_path: Path) -> Path:
    make_models(tmp_path / "models")
    (tmp_path / "expectations").mkdir()
    (tmp_path / "expectations" / "llvm-cpu.toml").write_text(manifest(True), encoding="utf-8")
    (tmp_path / "empty").mkdir()
    return tmp_path


def check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"GITHUB_WORKSPACE": str(root), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "ci", "user-action", "check", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


def test_good_inputs_pass(consumer: Path) -> None:
    result = check(consumer, "--onnx-dir", "models", "--expectations-dir", "expectations")
    assert result.returncode == 0, result.stderr
    assert "inputs ok" in result.stdout


@pytest.mark.parametrize(
    ("args", "status", "words"),
    [
        (["--onnx-dir", "nope"], 4, "onnx-dir 'nope': no such folder"),
        (["--onnx-dir", "empty"], 4, "onnx-dir 'empty': holds no ONNX models"),
        (["--onnx-dir", ".."], 2, "outside the repository"),
        ([], 2, "nothing to run"),
        (["--onnx-dir", "models", "--targets", "llvm-cpu vulcan"], 2, "unknown target 'vulcan'"),
        (["--onnx-dir", "models", "--iree-version", "3.13.x"], 2, "iree-version '3.13.x'"),
        (
            ["--onnx-dir", "models", "--expectations-dir", "missing"],
            2,
            "expectations-dir 'missing'",
        ),
    ],
)
def test_bad_input_is_one_line_and_its_status(
    consumer: Path, args: list[str], status: int, words: str
) -> None:
    result = check(consumer, *args)
    assert result.returncode == status
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], lines


def test_malformed_manifest_names_file_and_line(consumer: Path) -> None:
    path = consumer / "expectations" / "llvm-cpu.toml"
    path.write_text('[xfail]\n"onnx-dir/x.onnx" = { expect = "fail-compile" }\n', encoding="utf-8")
    result = check(consumer, "--onnx-dir", "models", "--expectations-dir", "expectations")
    assert result.returncode == 3
    assert result.stderr.strip().startswith("error: expectations/llvm-cpu.toml:2: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_version_list_and_latest() -> None:
    assert user_action.iree_versions("") == []
    assert user_action.iree_versions("latest") == []
    assert user_action.iree_versions("3.12.0, 3.13.0") == ["3.12.0", "3.13.0"]


def test_counts_put_xpass_with_the_failures() -> None:
    outcomes = [{"verdict": v} for v in ("pass", "pass", "fail", "xpass", "xfail", "flaky")]
    assert user_action.counts(outcomes) == {"pass": 2, "fail": 2, "xfail": 1, "flaky": 1, "skip": 0}


def test_action_wiring() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    inputs = set(action["inputs"])
    assert {
        "onnx-dir",
        "stablehlo-dir",
        "jax-dir",
        "torch-dir",
        "pytest-args",
        "expectations-dir",
        "targets",
        "iree-version",
        "python-version",
        "cache",
    } <= inputs
    assert {"results", "pass", "fail", "xfail", "flaky"} <= set(action["outputs"])
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    # The user's later steps must not change: nothing written to their environment.
    assert "GITHUB_ENV" not in text and "GITHUB_PATH" not in text
    assert "github.action_path" in text
    # torch-dir reaches every step jax-dir reaches, and the install step's extras
    for step in action["runs"]["steps"]:
        run_text = str(step.get("run", ""))
        if "--jax-dir" in run_text:
            assert '--torch-dir "$TORCH_DIR"' in run_text, step["name"]
        if "JAX_DIR" in step.get("env", {}):
            assert step["env"].get("TORCH_DIR") == "${{ inputs.torch-dir }}", step["name"]
    (install,) = [s for s in action["runs"]["steps"] if "user-action install" in str(s.get("run"))]
    assert '--extras "${JAX_DIR:+jax} ${TORCH_DIR:+torch}"' in install["run"]
    reusable = yaml.safe_load(
        (REPO / ".github" / "workflows" / "conformance.yml").read_text(encoding="utf-8")
    )
    assert "workflow_call" in reusable[True]
    assert "torch-dir" in reusable[True]["workflow_call"]["inputs"]
    (call,) = [
        s
        for s in reusable["jobs"]["conformance"]["steps"]
        if "with" in s and "onnx-dir" in s["with"]
    ]
    assert call["with"]["torch-dir"] == "${{ inputs.torch-dir }}"
    matrix = reusable["jobs"]["conformance"]["strategy"]["matrix"]["os"]
    assert "fromJSON(inputs.os)" in matrix
    default_os = reusable[True]["workflow_call"]["inputs"]["os"]["default"]
    assert all(name in default_os for name in ("ubuntu", "macos", "windows"))


def test_selection_plugin_keeps_only_the_users_cases(tmp_path: Path, monkeypatch) -> None:
    from ci import action_select

    monkeypatch.setenv(action_select.ENV, str(tmp_path / "mine"))
    roots = action_select._roots()
    assert action_select._inside(tmp_path / "mine" / "a.mlir", roots)
    assert not action_select._inside(tmp_path / "bundled" / "a.mlir", roots)
    assert not action_select._inside(None, roots)


def test_selection_plugin_keeps_a_users_torch_case(tmp_path: Path, monkeypatch) -> None:
    """A torch case has no source_path: its file is where it is written."""
    from ci import action_select
    from iree_conformance.frontends.case_folder import Listed
    from iree_conformance.suites.torch import to_case

    monkeypatch.setenv(action_select.ENV, str(tmp_path / "mine"))
    roots = action_select._roots()
    mine = Listed(
        "torch/ext/a/relu",
        str(tmp_path / "mine" / "a.py"),
        str(tmp_path / "mine"),
        "torch/ext/",
        "relu",
    )
    bundled = Listed(
        "torch/relu",
        str(tmp_path / "bundled" / "a.py"),
        str(tmp_path / "bundled"),
        "torch/",
        "relu",
    )
    assert action_select._inside(action_select._source(to_case(mine, None)), roots)
    assert not action_select._inside(action_select._source(to_case(bundled, None)), roots)
    broken = Listed(
        "torch/ext/b",
        str(tmp_path / "mine" / "b.py"),
        str(tmp_path / "mine"),
        "torch/ext/",
        error="b.py: SyntaxError",
    )
    assert action_select._inside(action_select._source(to_case(broken, None)), roots)


def test_selection_plugin_keeps_a_users_jax_case(tmp_path: Path, monkeypatch) -> None:
    """A JAX case has neither source_path nor source_location: its file is the case file
    it was listed from; a broken file's error is kept too."""
    from ci import action_select
    from iree_conformance.frontends.case_folder import Listed
    from iree_conformance.suites.jax import to_case

    monkeypatch.setenv(action_select.ENV, str(tmp_path / "mine"))
    roots = action_select._roots()
    mine = Listed(
        "jax/ext/a/add", str(tmp_path / "mine" / "a.py"), str(tmp_path / "mine"), "jax/ext/",
        "add", file="a/add.mlir",
    )  # fmt: skip
    bundled = Listed(
        "jax/a/add", str(tmp_path / "bundled" / "a.py"), str(tmp_path / "bundled"), "jax/",
        "add", file="a/add.mlir",
    )  # fmt: skip
    broken = Listed(
        "jax/ext/b", str(tmp_path / "mine" / "b.py"), str(tmp_path / "mine"), "jax/ext/",
        error="b.py: SyntaxError",
    )  # fmt: skip
    assert action_select._inside(action_select._source(to_case(mine, None)), roots)
    assert not action_select._inside(action_select._source(to_case(bundled, None)), roots)
    assert action_select._inside(action_select._source(to_case(broken, None)), roots)


def test_a_version_list_runs_versions_on_the_actions_conformance_folder(
    consumer: Path, monkeypatch
) -> None:
    """The command `run` builds for several versions, parsed by `versions` itself from the
    user's checkout (the run's working directory): the action's conformance folder, and
    a selection without the folder or a results file (each version gets its own)."""
    from iree_conformance.cli import main, versions

    monkeypatch.setenv("GITHUB_WORKSPACE", str(consumer))
    monkeypatch.chdir(consumer)
    monkeypatch.setattr(user_action, "require_versions_command", lambda _: sys.executable)
    args = command_parser("user-action", user_action).parse_args(
        ["run", "--onnx-dir", "models", "--iree-version", "3.12.0 3.13.0"]
        + ["--pytest-args", "-k affine", "--results", "r.json"]
    )
    inputs = user_action.Inputs(args)
    results = consumer / "out" / "r.json"
    command = user_action.versions_command(inputs, results, consumer / "expectations")
    seen: list[argparse.Namespace] = []
    monkeypatch.setattr(versions, "cmd_versions", lambda a: seen.append(a) or 0)
    assert main.main(command[command.index("versions") :]) == 0
    parsed = seen[0]
    assert parsed.versions == ["3.12.0", "3.13.0"]
    assert versions.conformance_dir(parsed.conformance_dir) == REPO / "conformance"
    selection = versions.selection_of(parsed)
    assert "--report-json" not in selection
    assert str(REPO / "conformance") not in selection
    assert selection[selection.index("--onnx-dir") + 1] == str(consumer / "models")
    assert selection[-2:] == ["-k", "affine"]
    assert Path(parsed.out) == user_action.versions_out(results)


def test_a_version_lists_results_are_the_newest_versions(tmp_path: Path) -> None:
    """3.12.0 is newer than 3.9.0, though its file name sorts first."""
    from iree_conformance.model.results import SCHEMA

    out = tmp_path / "versions"
    out.mkdir()
    for version in ("3.9.0", "3.12.0"):
        data = {"schema": SCHEMA, "metadata": {"iree_compiler": version}, "outcomes": []}
        (out / f"{version}.json").write_text(json.dumps(data), encoding="utf-8")
    results = tmp_path / "results.json"
    user_action.newest_results(out, results)
    assert json.loads(results.read_text(encoding="utf-8"))["metadata"]["iree_compiler"] == "3.12.0"


def snippets() -> list[str]:
    """The workflow snippets of docs/use-in-your-repository.md (YAML blocks with jobs:)."""
    text = (REPO / "docs" / "use-in-your-repository.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    return [b for b in blocks if "jobs:" in b]


def test_docs_snippets_are_workflows_zizmor_finds_nothing_in(tmp_path: Path) -> None:
    found = snippets()
    assert len(found) == 2
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for n, block in enumerate(found):
        data = yaml.safe_load(block)
        assert "jobs" in data and True in data  # `on:` reads as True
        (folder / f"snippet{n}.yml").write_text(block, encoding="utf-8")
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    if not Path(zizmor).exists():
        pytest.skip("zizmor is not installed (the dev extra has it)")
    result = subprocess.run(
        [zizmor, "--persona", "auditor", "--offline", str(tmp_path / ".github")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings" in result.stdout + result.stderr


def test_a_version_list_needs_the_versions_command(consumer: Path) -> None:
    probe = subprocess.run(
        [sys.executable, "-m", "iree_conformance.cli.main", "versions", "--help"],
        capture_output=True,
    )
    result = check(consumer, "--onnx-dir", "models", "--iree-version", "3.12.0 3.13.0")
    if probe.returncode == 0:  # issue 31's command is there: the list is accepted
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 2
        assert "needs `iree-conformance versions`" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_run_annotates_the_users_model_and_manifest_line(consumer: Path, tmp_path: Path) -> None:
    """A real run of the three models: the Binarizer left undeclared fails at its model,
    a passing model declared as failing is an XPASS at its manifest line; exit 1."""
    manifest_path = consumer / "expectations" / "llvm-cpu.toml"
    manifest_path.write_text(
        '[xfail]\n"onnx-dir/affine.onnx" = { expect = "fail-compile", reason = "wrong" }\n',
        encoding="utf-8",
    )
    outputs = tmp_path / "outputs.txt"
    env = dict(os.environ)
    env.update(
        GITHUB_WORKSPACE=str(consumer),
        GITHUB_ACTIONS="true",
        GITHUB_OUTPUT=str(outputs),
        PYTHONPATH=str(REPO),
    )
    summary = tmp_path / "summary.md"
    env["GITHUB_STEP_SUMMARY"] = str(summary)
    result = subprocess.run(
        [sys.executable, "-m", "ci", "user-action", "run", "--onnx-dir", "models"]
        + ["--expectations-dir", "expectations", "--results", str(tmp_path / "r.json")]
        + ["--html", str(tmp_path / "r.html")],
        cwd=consumer,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert any(line.startswith("::error file=models/binarizer.onnx,line=1,") for line in errors)
    assert any(
        line.startswith("::error file=expectations/llvm-cpu.toml,line=2,") for line in errors
    )
    written = outputs.read_text(encoding="utf-8")
    for pair in ("pass=1", "fail=2", "xfail=0", "flaky=0"):
        assert pair in written.splitlines(), written
    assert (tmp_path / "r.html").is_file()
    assert "onnx-dir/binarizer.onnx" in summary.read_text(encoding="utf-8")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the early check reads TOML with tomllib")
def test_early_check_runs_on_the_standard_library_only(consumer: Path) -> None:
    """Before the install: -S leaves site-packages out, so numpy, onnx, IREE are absent."""
    env = {"GITHUB_WORKSPACE": str(consumer), "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'python'}"}
    base = [sys.executable, "-S", "-m", "ci", "user-action", "check", "--early"]
    good = subprocess.run(
        base + ["--onnx-dir", "models"], cwd=consumer, env=env, capture_output=True, text=True
    )
    assert good.returncode == 0, good.stderr
    bad = subprocess.run(
        base + ["--onnx-dir", "models", "--targets", "nope"],
        cwd=consumer,
        env=env,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error: targets: unknown target 'nope'")


@pytest.mark.parametrize(
    "log",
    [
        "ERROR: No matching distribution found for iree-base-compiler==3.99.0\n",
        "  cause: Because there is no version of iree-base-compiler==3.99.0 and you require "
        "iree-base-compiler==3.99.0, we can conclude that your requirements are unsatisfiable.\n",
    ],
)
def test_an_unknown_iree_release_is_recognized_in_pip_and_uv_output(log: str) -> None:
    found = user_action._NO_SUCH_VERSION.search(log)
    assert found and found["req"] == "iree-base-compiler==3.99.0"


def test_install_brings_every_package_the_action_steps_run(tmp_path: Path, monkeypatch) -> None:
    """Each `$IREE_CONFORMANCE_ACTION_PYTHON -m PKG` in action.yml needs PKG installed by
    `install` (cache_tools is its own distribution: leaving it out broke the action)."""
    calls: list[list[str]] = []

    def fake_run(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        calls.append([str(c) for c in command])
        return subprocess.CompletedProcess(command, 0, stdout="3.13.0\n", stderr="")

    monkeypatch.setattr(user_action.subprocess, "run", fake_run)
    monkeypatch.setattr(user_action.shutil, "which", lambda _name: None)
    monkeypatch.setattr(user_action, "set_outputs", lambda _outputs: None)
    args = command_parser("user-action", user_action).parse_args(
        ["install", "--venv", str(tmp_path / "venv"), "--action-path", str(REPO)]
    )
    assert user_action.cmd_install(args) == 0
    install = next(c for c in calls if "install" in c and "pip" in " ".join(c))
    installed: set[str] = set()
    for argument in install:
        pyproject = Path(argument) / "pyproject.toml"
        if pyproject.is_file():
            setuptools = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]
            listed = setuptools.get("packages")
            if isinstance(listed, list):
                installed |= {name.split(".")[0] for name in listed}
            else:  # packages.find under a folder
                for where in listed["find"]["where"]:
                    installed |= {p.name for p in (Path(argument) / where).iterdir() if p.is_dir()}
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    run = {
        m.split(".")[0]
        for m in re.findall(r'ACTION_PYTHON" -I "\$ACTION_PATH/action_run.py" ([\w.]+)', text)
    }
    # ci/ is not installed: action_run.py runs it from the action's own folder.
    assert run - {"ci"} and run - {"ci"} <= installed, (run, installed)


def test_torch_dir_installs_torchs_cpu_build_before_the_extra(tmp_path: Path, monkeypatch) -> None:
    """A plain torch from PyPI is a CUDA build of several GB on Linux: with torch-dir the
    CPU build goes in first, from PyTorch's CPU index, then the extras."""
    calls: list[list[str]] = []

    def fake_run(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        calls.append([str(c) for c in command])
        return subprocess.CompletedProcess(command, 0, stdout="3.13.0\n", stderr="")

    monkeypatch.setattr(user_action.subprocess, "run", fake_run)
    monkeypatch.setattr(user_action.shutil, "which", lambda _name: None)
    monkeypatch.setattr(user_action, "set_outputs", lambda _outputs: None)
    argv = ["install", "--venv", str(tmp_path / "venv"), "--action-path", str(REPO)]
    args = command_parser("user-action", user_action).parse_args([*argv, "--extras", "jax torch"])
    assert user_action.cmd_install(args) == 0
    installs = [c for c in calls if "install" in c]
    assert installs[0][-3:] == [
        "--index-url",
        "https://download.pytorch.org/whl/cpu",
        "torch==2.13.0",
    ]
    assert any(a.endswith("[jax,torch]") for a in installs[1])
    calls.clear()
    args = command_parser("user-action", user_action).parse_args([*argv, "--extras", " jax"])
    assert user_action.cmd_install(args) == 0
    assert not any("torch==2.13.0" in c for c in calls)  # no torch-dir: no torch


def test_torch_dir_without_torch_says_how_to_install_it(consumer: Path, monkeypatch) -> None:
    from iree_conformance.frontends.torch_export import folder

    (consumer / "torch_cases").mkdir()
    (consumer / "torch_cases" / "mine.py").write_text("", encoding="utf-8")
    result = check(consumer, "--torch-dir", "torch_cases")
    if folder.missing_reason() is None:  # torch is installed here: the input is accepted
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("error: torch-dir: ") and "download.pytorch.org/whl/cpu" in line
    monkeypatch.setattr(folder, "missing_reason", lambda: "torch not installed: pip install ...")
    with pytest.raises(user_action.ConfigurationError, match="torch-dir: torch not installed"):
        user_action.check_torch()


# -- the action runs its own code, never the user's checkout's (issue 47) ----------------

HOSTILE = "import pathlib, sys; pathlib.Path({marker!r}).write_text('ran'); sys.exit(97)\n"


def hostile_checkout(root: Path, marker: Path) -> None:
    """A consumer repository with its own `ci` package and a root `cache_tools.py`, both of
    which would mark and fail if the action ran them."""
    make_models(root / "models")
    (root / "ci").mkdir()
    (root / "ci" / "__init__.py").write_text(HOSTILE.format(marker=str(marker)), encoding="utf-8")
    (root / "ci" / "__main__.py").write_text(HOSTILE.format(marker=str(marker)), encoding="utf-8")
    (root / "cache_tools.py").write_text(HOSTILE.format(marker=str(marker)), encoding="utf-8")
    (root / "pytest.py").write_text(HOSTILE.format(marker=str(marker)), encoding="utf-8")


def action_steps() -> list[dict]:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    return action["runs"]["steps"]


def test_every_python_the_action_runs_is_isolated_from_the_checkout() -> None:
    """Each interpreter call of action.yml is `-I $ACTION_PATH/action_run.py MODULE` (never
    `-m`, which imports from the working directory: the user's checkout), ACTION_PATH is the
    action's own folder, no input is interpolated into a script, and only the save plan's
    step (cache-tools reads the cache usage) sees the token."""
    calls = 0
    for step in action_steps():
        script = step.get("run")
        if script is None:
            continue
        env = step.get("env") or {}
        assert "${{" not in script, (step["name"], "an expression in the script: use env")
        pythons = re.findall(r'"\$(\w*PYTHON)"\s+(\S+)\s+(\S+)', script)
        for _name, flag, entry in pythons:
            calls += 1
            assert (flag, entry) == ("-I", '"$ACTION_PATH/action_run.py"'), (step["name"], flag)
            assert env.get("ACTION_PATH") == "${{ github.action_path }}", step["name"]
            assert str(env.get("PYTHONSAFEPATH")) == "1", step["name"]
        assert " -m " not in script.replace(" -m ci user-action", ""), step["name"]
        holds_token = any("token" in str(v) for v in env.values())
        assert holds_token == (step.get("id") == "plan"), step["name"]
    assert calls >= 6


def test_the_launcher_runs_the_actions_code_in_a_checkout_with_its_own(tmp_path: Path) -> None:
    root = tmp_path / "consumer"
    marker = tmp_path / "marker"
    hostile_checkout(root, marker)
    env = {"GITHUB_WORKSPACE": str(root), "PATH": os.environ["PATH"], "PYTHONSAFEPATH": "1"}
    # What action.yml ran before: `python -m ci` with the checkout as working directory.
    before = subprocess.run(
        [sys.executable, "-m", "ci", "user-action", "check", "--early", "--onnx-dir", "models"],
        cwd=root,
        env={**env, "PYTHONPATH": str(REPO), "PYTHONSAFEPATH": ""},
        capture_output=True,
        text=True,
    )
    assert before.returncode == 97 and marker.is_file()  # the checkout's ci/ ran
    marker.unlink()
    for module, args, words in (
        ("ci", ["user-action", "check", "--early", "--onnx-dir", "models"], "inputs ok"),
        ("cache_tools", ["--help"], "cache-tools"),
        ("pytest", ["--version"], "pytest"),
    ):
        result = subprocess.run(
            user_action.own_module(sys.executable, module) + args,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, (module, result.stdout, result.stderr)
        assert words in result.stdout + result.stderr, module
        assert not marker.exists(), module


def test_the_run_starts_pytest_through_the_launcher(consumer: Path, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", str(consumer))
    args = command_parser("user-action", user_action).parse_args(
        ["run", "--onnx-dir", "models", "--results", "r.json"]
    )
    inputs = user_action.Inputs(args)
    command = user_action.pytest_command(inputs, consumer / "r.json", consumer)
    assert command[1:4] == ["-I", str(REPO / "action_run.py"), "pytest"]


def test_the_action_needs_python_3_11() -> None:
    with pytest.raises(user_action.ConfigurationError, match="python-version 3.10: the action"):
        user_action.check_python((3, 10, 14))
    user_action.check_python((3, 11, 0))
