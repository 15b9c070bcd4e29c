"""Per-version environments under faults (issues 46 and 47, docs/reliability.md): damaged,
half-made, foreign and killed environments, two runs sharing the cache, a wheels folder
rebuilt with the same version, a venv's scripts after the build, folder modes.

The environments are real venvs (``python -m venv --without-pip``) holding stand-in IREE
wheels (a few files each, installed by the running pip with ``--no-index``): each is made
in about two seconds, so every fault is tried on the code that makes and checks them."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from iree_conformance.common import env_check, iree_index, version_envs
from iree_conformance.common.errors import EXIT_ENVIRONMENT, EnvironmentBuildError
from iree_conformance.report import version_compare as vc
from tests.support.installer import install_command

VERSION = "3.12.0"
REVISION = "2b05c5dbb2f2ecb27c0d3941e80ee8d2f16e890d"
REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX process groups and modes")

# The stand-in compiler loads its "native library" as the real one does: a missing file is
# the ImportError a damaged IREE gives.
API = """
import pathlib
_LIB = pathlib.Path(__file__).parent.parent / "_mlir_libs" / "libIREECompiler.so"
class Session:
    def __init__(self):
        if not _LIB.is_file():
            raise ImportError("libIREECompiler.so: cannot open shared object file: No such file or directory")
"""
MAIN = """
def main():
    from iree.compiler.version import VERSION
    print("IREE (stand-in)", VERSION)
"""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(folder: Path, dist: str, version: str, files: dict[str, str], scripts: str = "") -> Path:
    name = dist.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    contents = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    if scripts:
        contents[f"{info}/entry_points.txt"] = f"[console_scripts]\n{scripts}\n"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        record = []
        for member, text in contents.items():
            zf.writestr(member, text)
            record.append(_record_line(member, text.encode()))
        zf.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return path


def wheels_folder(folder: Path, build: str = "1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    version_py = f'VERSION = "{VERSION}"\nREVISIONS = {{"IREE": "{REVISION}"}}\nBUILD = "{build}"\n'
    compiler = {
        "iree/compiler/__init__.py": "",
        "iree/compiler/version.py": version_py,
        "iree/compiler/api/__init__.py": API,
        "iree/compiler/_mlir_libs/libIREECompiler.so": "not really a library " * 50,
        "iree/compiler/tool.py": MAIN,
    }
    wheel(folder, "iree-base-compiler", VERSION, compiler, "iree-compile = iree.compiler.tool:main")
    wheel(folder, "iree-base-runtime", VERSION, {"iree/runtime/__init__.py": ""})
    return folder


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """ensure() makes venvs without pip and installs the stand-in wheels with this pip
    (or uv, where this environment has no pip);
    returns (spec, envs folder, wheels folder)."""
    links = wheels_folder(tmp_path / "wheels")

    def venv_command(target):
        return [sys.executable, "-m", "venv", "--without-pip", str(target)], "python -m venv"

    def install_commands(spec, python, pins, root):
        return [
            [*install_command(python), "--no-index", "--find-links", str(links),
             *[f"{name}=={spec.version}" for name in iree_index.IREE_PACKAGES]]
        ]  # fmt: skip

    monkeypatch.setattr(version_envs, "_venv_command", venv_command)
    monkeypatch.setattr(version_envs, "_install_commands", install_commands)
    monkeypatch.setattr(version_envs, "dependency_pins", lambda: [])
    spec = iree_index.VersionSpec(VERSION, "index", VERSION)
    return spec, tmp_path / "envs", links


def the_lib(env: version_envs.VersionEnv) -> Path:
    assert env.path is not None
    (lib,) = env.path.glob("lib/python*/site-packages/iree/compiler/_mlir_libs/libIREECompiler.so")
    return lib


def test_a_made_environment_is_checked_and_reused(stand_in):
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    assert made.created and made.revision == REVISION and made.remade is None
    ready = json.loads((made.path / version_envs.READY).read_text())
    assert ready["format"] == env_check.FORMAT and ready["contents"]
    again = version_envs.ensure(spec, envs)
    assert not again.created and again.path == made.path and again.info["revision"] == REVISION


def test_a_deleted_library_is_made_again_never_used(stand_in):
    """The finding of issue 46: libIREECompiler.so deleted in a cached environment."""
    spec, envs, _ = stand_in
    lib = the_lib(version_envs.ensure(spec, envs))
    lib.unlink()
    said: list[str] = []
    again = version_envs.ensure(spec, envs, say=said.append)
    assert again.created and "libIREECompiler.so is missing" in (again.remade or "")
    assert lib.is_file() and any("making it again" in line for line in said)


def test_a_truncated_file_is_made_again(stand_in):
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    (version_py,) = made.path.glob("lib/python*/site-packages/iree/compiler/version.py")
    version_py.write_text("VERSION =")
    again = version_envs.ensure(spec, envs)
    assert again.created and "bytes, its RECORD says" in (again.remade or "")


def test_a_truncated_ready_json_is_made_again_without_a_traceback(stand_in):
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    ready = made.path / version_envs.READY
    ready.write_text(ready.read_text()[:40])
    again = version_envs.ensure(spec, envs)
    assert again.created and "its ready.json cannot be read" in (again.remade or "")
    json.loads(ready.read_text())  # whole again


def test_a_half_made_environment_is_made_again(stand_in):
    """A build killed before ready.json (the folder is the final one: built in place)."""
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    (made.path / version_envs.READY).unlink()
    again = version_envs.ensure(spec, envs)
    assert again.created and "did not finish" in (again.remade or "")


def test_a_foreign_environment_is_made_again(stand_in):
    """Another distribution put in place of IREE's (its RECORD differs)."""
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    (record,) = made.path.glob("lib/python*/site-packages/iree_base_runtime-*.dist-info/RECORD")
    record.write_text(record.read_text() + "iree/runtime/other.py,,\n")
    again = version_envs.ensure(spec, envs)
    assert again.created and "was replaced" in (again.remade or "")


def test_an_environment_that_cannot_be_removed_is_refused_with_its_path(stand_in):
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    path = made.path
    the_lib(made).unlink()
    os.chmod(path, 0o555)  # its entries cannot be renamed away ...
    os.chmod(envs, 0o555)  # ... nor the folder itself
    try:
        if os.access(envs, os.W_OK):
            pytest.skip("running as a user whom modes do not stop (root)")
        with pytest.raises(EnvironmentBuildError) as info:
            version_envs.ensure(spec, envs)
    finally:
        os.chmod(envs, 0o755)
        os.chmod(path, 0o755)
    assert info.value.return_code == EXIT_ENVIRONMENT
    assert f"delete {path}" in str(info.value)


def test_a_stray_file_in_place_of_the_environment_is_refused(stand_in):
    spec, envs, _ = stand_in
    path = version_envs.ensure(spec, envs).path
    import shutil

    shutil.rmtree(path)
    path.write_text("not an environment")
    with pytest.raises(EnvironmentBuildError, match=f"delete {path}") as info:
        version_envs.ensure(spec, envs)
    assert info.value.return_code == EXIT_ENVIRONMENT


def test_the_scripts_of_an_environment_run(stand_in):
    """Without uv, an environment built in a temporary folder and renamed kept shebangs
    naming the deleted folder: bin/iree-compile failed "required file not found"."""
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    proc = subprocess.run(
        [str(made.path / "bin" / "iree-compile"), "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert f"IREE (stand-in) {VERSION}" in proc.stdout


def test_environment_folders_get_the_umask_mode(stand_in):
    spec, envs, _ = stand_in
    old = os.umask(0o022)
    try:
        made = version_envs.ensure(spec, envs)
    finally:
        os.umask(old)
    assert made.path.stat().st_mode & 0o777 == 0o755
    assert (made.path / version_envs.READY).stat().st_mode & 0o777 == 0o644


def test_a_rebuilt_wheels_folder_is_another_environment(tmp_path):
    """A folder rebuilt with the same version: the old environment is not "cached"."""
    links = wheels_folder(tmp_path / "wheels", build="1")
    spec = iree_index.VersionSpec(str(links), "wheels", VERSION, (str(links),), True)
    before = version_envs.env_key(version_envs.key_data(spec, [], REPO))
    wheels_folder(links, build="2")  # the same names, other bytes
    after = version_envs.env_key(version_envs.key_data(spec, [], REPO))
    assert before != after
    index = iree_index.VersionSpec(VERSION, "index", VERSION)
    assert "wheels" not in version_envs.key_data(index, [], REPO)  # index keys unchanged


def test_leftovers_of_killed_builds_are_swept_unless_a_live_run_holds_them(stand_in):
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    old_temp = envs / f".{made.path.name}-k3j2h1"  # what the harness before this one left
    trash = envs / f".trash-{made.path.name}-123"
    other = envs / ".3.13.0-0123456789ab-zz"  # another environment's, being built now
    for folder in (old_temp, trash, other):
        (folder / "lib").mkdir(parents=True)
    holder = version_envs._Lock(envs / ".3.13.0-0123456789ab.lock")
    assert holder.acquire(blocking=False)
    try:
        said: list[str] = []
        version_envs.ensure(spec, envs, say=said.append)
    finally:
        holder.close()
    assert not old_temp.exists() and not trash.exists() and other.exists()
    assert sum("left by a build that was killed" in line for line in said) == 2


DRIVER = textwrap.dedent(
    """
    import os, sys, time
    sys.path[:0] = [{python!r}, {tests!r}]
    from iree_conformance.common import iree_index, version_envs
    marker = {marker!r}
    def venv_command(target):
        return [sys.executable, "-m", "venv", "--without-pip", str(target)], "venv"
    def install(spec, python, pins, root):
        # a slow installer that records its pid and keeps writing while it lives
        return [[sys.executable, "-c",
                 "import os, time, sys; open(sys.argv[1], 'a').write(str(os.getpid()) + chr(10));"
                 "[time.sleep(0.1) for _ in range(int(sys.argv[2]))]", marker, "{ticks}"]]
    version_envs._venv_command = venv_command
    version_envs._install_commands = install
    version_envs.dependency_pins = lambda: []
    from iree_conformance.common import env_check
    env_check.probe = lambda python: ({{"iree_compiler": "3.12.0", "iree_runtime": "3.12.0",
                                       "revision": "r", "build": "b"}}, "")
    env_check.damage = lambda env, ready: None
    spec = iree_index.VersionSpec("3.12.0", "index", "3.12.0")
    env = version_envs.ensure(spec, __import__("pathlib").Path({envs!r}), say=print)
    print("ENV", env.path, env.created, flush=True)
    """
)


def driver(tmp_path: Path, ticks: int, name: str = "driver") -> tuple[Path, Path]:
    marker = tmp_path / f"{name}.pids"
    script = tmp_path / f"{name}.py"
    script.write_text(
        DRIVER.format(
            python=str(REPO / "python"),
            tests=str(REPO),
            marker=str(marker),
            envs=str(tmp_path / "envs"),
            ticks=ticks,
        )  # fmt: skip
    )
    return script, marker


def _wait_for(path: Path, timeout: float = 60) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def _gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie of init's counts as gone
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["sigterm-parent", "sigkill-group"])
def test_a_killed_build_stops_its_installer_and_leaves_nothing_used(tmp_path, how):
    script, marker = driver(tmp_path, ticks=600)
    proc = subprocess.Popen([sys.executable, str(script)], start_new_session=True, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    (child,) = _wait_for(marker)
    if how == "sigterm-parent":
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert _gone(child), "the installer outlived the build"
    envs = tmp_path / "envs"
    left = [p.name for p in envs.iterdir() if not p.name.endswith(".lock")]
    if how == "sigterm-parent":
        assert left == []  # the build removed what it made
    # the next run sweeps or makes again whatever is left, and says so
    marker.unlink()
    script2, marker2 = driver(tmp_path, ticks=1, name="again")
    out = subprocess.run([sys.executable, str(script2)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert " True" in out.stdout.splitlines()[-1]
    if left:
        assert "did not finish" in out.stdout
    assert [p.name for p in envs.iterdir() if p.name.startswith(".") and p.is_dir()] == []


def test_two_runs_sharing_the_cache_build_once(tmp_path):
    """One builds under the lock; the other waits, then checks and reuses it."""
    script, marker = driver(tmp_path, ticks=20)
    first = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    _wait_for(marker)
    second = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    out1, _ = first.communicate(timeout=60)
    out2, _ = second.communicate(timeout=60)
    assert first.returncode == 0 and second.returncode == 0
    assert len(marker.read_text().split()) == 1  # one installer ran
    assert out1.splitlines()[-1].endswith(" True")  # made
    assert out2.splitlines()[-1].endswith(" False")  # reused
    assert "waiting for it" in out2
    assert out1.split()[-2] == out2.split()[-2]


# -- the installed version and the comparison ------------------------------------------


def test_a_damaged_installed_iree_is_refused(stand_in):
    """The `installed` version is checked too: its IREE files, then an import."""
    spec, envs, _ = stand_in
    made = version_envs.ensure(spec, envs)
    the_lib(made).unlink()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); sys.path.append(sys.argv[2]);"
        "from iree_conformance.common import iree_index, version_envs as v;"
        "from iree_conformance.common.errors import EnvironmentBuildError\n"
        "try:\n v.check_installed(iree_index.VersionSpec('installed', 'installed', '3.12.0'))\n"
        "except EnvironmentBuildError as e:\n print(e.return_code, e)"
    )
    proc = subprocess.run([str(made.python), "-c", code, str(REPO / "python"), PACKAGING],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.stdout.startswith(f"{EXIT_ENVIRONMENT} the installed IREE"), proc.stderr
    assert "libIREECompiler.so is missing" in proc.stdout and "reinstall" in proc.stdout


# the folder holding `packaging` (iree_index needs it), appended after the environment's own
PACKAGING = str(Path(__import__("packaging").__file__).parent.parent)


def damaged(case: str) -> dict:
    """An outcome as a damaged environment's worker reported it (issue 46's run)."""
    return {
        "case_id": case, "suite": "stablehlo", "target": "llvm-cpu", "status": "error",
        "stage": "compile", "verdict": "fail", "duration": 0.1,
        "diagnostics": ["ImportError: libIREECompiler.so: cannot open shared object file: No such file or directory"],
    }  # fmt: skip


def passed(case: str) -> dict:
    return {"case_id": case, "suite": "stablehlo", "target": "llvm-cpu", "status": "pass",
            "stage": "compare", "verdict": "pass", "duration": 0.1}  # fmt: skip


@pytest.mark.parametrize("damaged_side", ["older", "newer"])
def test_a_harness_error_is_never_a_change_of_verdict(damaged_side):
    old, new = (damaged, passed) if damaged_side == "older" else (passed, damaged)
    cols = [
        vc.Column("3.12.0", {"revision": "a"}, [old("x")]),
        vc.Column("3.13.0", {"revision": "b"}, [new("x")]),
    ]
    (row,) = vc.compare(cols)
    assert row.change == vc.HARNESS_ERROR and not row.worse
    assert "newly-passing" not in vc.markdown(cols, [row])


def test_a_harness_error_between_versions_does_not_hide_a_regression():
    cols = [
        vc.Column("3.11.0", {}, [passed("x")]),
        vc.Column("3.12.0", {}, [damaged("x")]),
        vc.Column("3.13.0", {}, [{**damaged("x"), "diagnostics": ["error: a real one"]}]),
    ]
    (row,) = vc.compare(cols)
    assert row.worse and row.change == vc.NEWLY_FAILING


def test_a_run_whose_environment_cannot_load_iree_is_refused(tmp_path):
    from iree_conformance.cli import versions as versions_command

    env = version_envs.VersionEnv(
        iree_index.VersionSpec(VERSION, "index", VERSION), Path("/x/bin/python"), {}, False, 0.0,
        Path("/x"),
    )  # fmt: skip
    with pytest.raises(EnvironmentBuildError) as info:
        versions_command.refuse_harness_errors(env, [damaged("a"), passed("b")], tmp_path / "l")
    assert info.value.return_code == EXIT_ENVIRONMENT
    assert "1 of 2 case(s) could not load IREE" in str(info.value) and "delete /x" in str(
        info.value
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ImportError("libIREECompiler.so: cannot open shared object file"), True),
        (ValueError("Could not find libIREECompiler.so in ['/e/iree/compiler/_mlir_libs']"), True),
        (ModuleNotFoundError("No module named 'iree.runtime'", name="iree.runtime"), True),
        (ModuleNotFoundError("No module named 'onnx'", name="onnx"), False),
        (ModuleNotFoundError("x", name="iree_conformance.x"), False),
        (ValueError("bad compile flags"), False),
    ],
)
def test_which_errors_are_the_environments(error, expected):
    assert env_check.is_iree_import_failure(error) is expected


def test_a_wheel_whose_name_lies_is_exit_10_with_pips_cause(stand_in):
    """A compiler wheel named 3.12.0 whose metadata says 3.11.0: pip refuses it; the error
    keeps exit 10 and shows pip's reason, not only "no matching distribution"."""
    spec, envs, links = stand_in
    (liar,) = links.glob("iree_base_compiler-*.whl")
    liar.unlink()
    made = wheel(links, "iree-base-compiler", "3.11.0", {"iree/compiler/version.py": ""})
    made.rename(liar)  # the 3.12.0 name, 3.11.0 inside
    with pytest.raises(EnvironmentBuildError) as info:
        version_envs.ensure(spec, envs)
    assert info.value.return_code == EXIT_ENVIRONMENT
    message = str(info.value)
    # pip: "inconsistent version"; uv (no pip here): "Wheel version does not match filename"
    why = "inconsistent version" in message or "does not match filename" in message
    assert why and "3.11.0" in message, message
    assert [p.name for p in envs.iterdir() if not p.name.endswith(".lock")] == []


def test_the_html_page_names_a_harness_error():
    from iree_conformance.report.html.render import render_versions

    cols = [vc.Column("3.12.0", {}, [damaged("x")]), vc.Column("3.13.0", {}, [passed("x")])]
    page = render_versions(cols, vc.compare(cols))
    assert "harness error: IREE not loaded" in page and "fail-compile at" not in page


def test_an_installer_without_pip_is_said_not_blamed_on_the_network(stand_in, monkeypatch):
    """In an environment made by ``uv venv`` ``python -m pip`` fails with "No module named
    pip", which was reported as "check the network"."""
    spec, envs, _ = stand_in
    no_pip = [
        sys.executable,
        "-c",
        "import sys; sys.exit(sys.executable + ': No module named pip')",
    ]
    monkeypatch.setattr(version_envs, "_install_commands", lambda *a: [no_pip])
    with pytest.raises(EnvironmentBuildError) as info:
        version_envs.ensure(spec, envs)
    message = str(info.value)
    assert "has no pip" in message and "uv" in message and "network" not in message, message
