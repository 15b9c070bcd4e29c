"""Per-version environments made for real (uv, or venv + pip): a local --find-links folder
of stand-in nightly wheels, reuse, atomicity under a network failure, and the documented
minimum IREE version running a selection (docs/versions.md)."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import requests

from iree_conformance.cli import main as cli
from iree_conformance.common import iree_index, version_envs
from iree_conformance.common.errors import EXIT_ENVIRONMENT, EnvironmentBuildError

REPO = Path(__file__).resolve().parents[3]
NIGHTLY = "3.13.0rc20261101"
REVISION = "0123456789abcdef0123456789abcdef01234567"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def stand_in_wheel(folder: Path, dist: str, version: str, files: dict[str, str]) -> Path:
    """A minimal, valid wheel of dist at version (a nightly's name, not its compiler)."""
    name = dist.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    contents = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        record = []
        for member, text in contents.items():
            wheel.writestr(member, text)
            record.append(_record_line(member, text.encode()))
        wheel.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return path


def nightly_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    version_py = f'VERSION = "{NIGHTLY}"\nREVISIONS = {{"IREE": "{REVISION}"}}\n'
    # what the environment's check imports: a compiler session, the runtime
    compiler = {
        "iree/compiler/version.py": version_py,
        "iree/compiler/api/__init__.py": "class Session:\n    pass\n",
    }
    stand_in_wheel(folder, "iree-base-compiler", NIGHTLY, compiler)
    stand_in_wheel(folder, "iree-base-runtime", NIGHTLY, {"iree/runtime/__init__.py": ""})
    return folder


def pypi_reachable() -> bool:
    try:
        return requests.head("https://pypi.org/simple/", timeout=10).ok
    except requests.RequestException:
        return False


def test_a_find_links_folder_of_nightlies_makes_a_cached_environment(tmp_path):
    links = (str(nightly_folder(tmp_path / "nightlies")),)
    offered = iree_index.available(links, pre=True, use_index=False)
    assert offered == [NIGHTLY]
    spec = iree_index.resolve(NIGHTLY, links, True, offered)
    envs = tmp_path / "envs"
    made = version_envs.ensure(spec, envs)
    assert made.created and made.revision == REVISION
    assert made.info["iree_compiler"] == NIGHTLY
    # this project is installed into it (editable, --no-deps): its CLI imports there
    proc = subprocess.run(
        [str(made.python), "-c", "import iree_conformance.cli.versions, sys; print(sys.prefix)"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    again = version_envs.ensure(spec, envs)
    assert not again.created and again.python == made.python and again.seconds < 5
    assert [
        p.name for p in envs.iterdir() if p.is_dir() and p.name.startswith(".")
    ] == []  # no temp


def test_a_network_failure_leaves_nothing_half_made(tmp_path, monkeypatch):
    # an index nobody answers, no cache: the install fails as offline machines do
    for var in ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "PIP_INDEX_URL"):
        monkeypatch.setenv(var, "http://127.0.0.1:9/simple")
    monkeypatch.setenv("UV_NO_CACHE", "1")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    spec = iree_index.VersionSpec("3.12.0", "index", "3.12.0")
    envs = tmp_path / "envs"
    with pytest.raises(EnvironmentBuildError, match="nothing was kept") as info:
        version_envs.ensure(spec, envs)
    assert info.value.return_code == EXIT_ENVIRONMENT
    assert [p.name for p in envs.iterdir() if not p.name.endswith(".lock")] == []


def test_an_unreachable_index_is_a_one_line_error(monkeypatch, capsys):
    monkeypatch.setenv(iree_index.INDEX_ENV, "http://127.0.0.1:9/simple")
    assert cli.main(["versions", "3.12.0", "3.13.0"]) == EXIT_ENVIRONMENT
    err = capsys.readouterr().err.strip()
    assert "cannot list the IREE versions" in err and len(err.splitlines()) == 1


@pytest.mark.skipif(not pypi_reachable(), reason="needs PyPI for IREE 3.11.0's wheels")
def test_the_minimum_version_runs_a_selection(tmp_path):
    """IREE MINIMUM_IREE (the pin's floor) runs a selection with the installed one."""
    command = [
        sys.executable, "-m", "iree_conformance.cli.main", "versions", iree_index.MINIMUM_IREE,
        "installed", "--out", str(tmp_path / "out"), "--json", str(tmp_path / "c.json"),
        "--stores-dir", str(tmp_path / "stores"), "--no-step-summary",
        "--", "-m", "stablehlo", "-k", "softmax or add", "--offline",
    ]  # fmt: skip
    proc = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["versions"][0]["iree_compiler"] == iree_index.MINIMUM_IREE
    assert data["versions"][0]["cases_run"] > 0
    assert all(c["verdicts"][iree_index.MINIMUM_IREE] == "pass" for c in data["cases"])


@pytest.mark.skipif(not pypi_reachable(), reason="needs PyPI for IREE 3.12.0's wheels")
def test_bisect_a_check_model_file(tmp_path):
    """The ONNX test model of reduce_l2 on an empty set (onnx's own generator): the compiler
    dies with SIGFPE on 3.12.0 and passes on 3.13.0 (docs/versions.md)."""
    from iree_conformance.frontends.onnx import node_tests
    from iree_conformance.suites.onnx_ops import data_dir

    model = node_tests.materialize(data_dir(None)) / "test_reduce_l2_empty_set" / "model.onnx"
    command = [
        sys.executable, "-m", "iree_conformance.cli.main", "bisect", "--good", "3.12.0",
        "--bad", "3.13.0", "--check-model", str(model), "--stores-dir", str(tmp_path / "stores"),
        "--out", str(tmp_path / "out"), "--bundle-dir", str(tmp_path / "bundle"),
        "--json", str(tmp_path / "b.json"), "--no-step-summary",
        "--conformance-dir", str(REPO / "conformance"),
    ]  # fmt: skip
    proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (found,) = json.loads((tmp_path / "b.json").read_text())["cases"]
    assert (found["last_old"], found["first_new"]) == ("3.12.0", "3.13.0")
    assert (found["old_kind"], found["new_kind"], found["direction"]) == ("crash", "pass", "fix")
    assert (tmp_path / "bundle" / "onnx-dir_model.onnx" / "repro.txt").exists()


@pytest.mark.skipif(not pypi_reachable(), reason="needs PyPI for IREE 3.12.0's wheels")
def test_a_damaged_real_environment_gives_no_verdict(tmp_path):
    """Issue 46's finding on a real IREE 3.12.0 environment (about 100 s to make, with the
    wheels in pip's or uv's cache; $IREE_CONFORMANCE_ENVS reuses one): libIREECompiler.so
    gone before a run is seen by the check; gone during a run, every case is the harness's
    error and the run is refused with exit 10 and the folder to delete, never compared."""
    from iree_conformance.cli import versions as versions_command

    spec = iree_index.VersionSpec("3.12.0", "index", "3.12.0")
    env = version_envs.ensure(spec, version_envs.envs_dir(None) if _shared() else tmp_path / "e")
    assert env.path is not None
    lib = next(env.path.rglob("libIREECompiler.so"))
    away = lib.with_name("libIREECompiler.so.away")
    lib.rename(away)
    try:
        key = json.loads((env.path / version_envs.READY).read_text())["key"]
        info, why = version_envs.problem_of(env.path, key)
        assert info is None and "libIREECompiler.so is missing" in why
        with pytest.raises(EnvironmentBuildError) as raised:
            versions_command.run_selection(
                env, REPO / "conformance", ["-m", "stablehlo", "-k", "softmax", "--offline"],
                tmp_path / "r.json", tmp_path / "store",
            )  # fmt: skip
    finally:
        away.rename(lib)
    assert raised.value.return_code == EXIT_ENVIRONMENT
    assert f"delete {env.path}" in str(raised.value)
    outcomes = json.loads((tmp_path / "r.json").read_text())["outcomes"]
    assert outcomes and all(o["info"].get("harness_error") == "environment" for o in outcomes)


def _shared() -> bool:
    import os

    return bool(os.environ.get(version_envs.ENVS_ENV))
