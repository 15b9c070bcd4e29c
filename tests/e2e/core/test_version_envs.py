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
    stand_in_wheel(folder, "iree-base-compiler", NIGHTLY, {"iree/compiler/version.py": version_py})
    stand_in_wheel(folder, "iree-base-runtime", NIGHTLY, {"iree/runtime/stand_in.py": ""})
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
    assert not again.created and again.python == made.python and again.seconds < 1
    assert [p.name for p in envs.iterdir() if p.name.startswith(".")] == []  # no temp left


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
    assert list(envs.iterdir()) == []


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
