"""cache-tools is its own distribution (cache_tools/pyproject.toml): its wheel holds the
package and the ``cache-tools`` command, and runs in a fresh environment that has its
own dependencies and nothing else (no IREE, no iree_conformance)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import cache_tools
from ci._common import load_toml
from tests.support.installer import install_command

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "cache_tools"
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
# The import names of cache-tools' dependencies and theirs (requests brings four).
DEPENDENCY_MODULES = (
    "platformdirs",
    "requests",
    "urllib3",
    "idna",
    "charset_normalizer",
    "certifi",
    "zstandard",
    *(("tomli",) if sys.version_info < (3, 11) else ()),
)


def test_the_version_is_the_packages():
    project = load_toml(SOURCE / "pyproject.toml")["project"]
    assert project["version"] == cache_tools.__version__
    assert project["scripts"] == {"cache-tools": "cache_tools.cli:main"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cache-tools wheel, built without build isolation from a copy of its folder."""
    tree = tmp_path_factory.mktemp("src") / "cache_tools"
    shutil.copytree(SOURCE, tree, ignore=_SKIP)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(tree),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (built,) = out.glob("*.whl")
    return built


def test_the_wheel_holds_the_package_and_nothing_else(wheel: Path) -> None:
    members = set(zipfile.ZipFile(wheel).namelist())
    modules = {
        f"cache_tools/{p.relative_to(SOURCE).as_posix()}"
        for p in SOURCE.rglob("*.py")
        if not ({"build", "__pycache__"} & set(p.relative_to(SOURCE).parts))
    }
    assert {"cache_tools/cli.py", "cache_tools/commands/audit.py"} <= modules <= members
    files = {m for m in members if ".dist-info/" not in m}
    assert files == modules, sorted(files ^ modules)
    (requires,) = [m for m in members if m.endswith(".dist-info/METADATA")]
    metadata = zipfile.ZipFile(wheel).read(requires).decode()
    assert (
        "Requires-Dist: zstandard" in metadata and "iree" not in metadata.split("Requires-Dist")[-1]
    )


def _dependencies_only(folder: Path) -> Path:
    """A folder holding copies of cache-tools' dependencies alone, for a .pth file."""
    folder.mkdir()
    for name in DEPENDENCY_MODULES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, f"{name} is not installed here"
        origin = Path(spec.origin)
        if origin.name == "__init__.py":
            shutil.copytree(origin.parent, folder / name, ignore=_SKIP)
        else:
            shutil.copy2(origin, folder / origin.name)
    return folder


def test_a_fresh_environment_without_iree_runs_cache_tools(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    deps = _dependencies_only(tmp_path / "deps")
    (purelib / "deps.pth").write_text(f"{deps}\n")
    proc = subprocess.run(
        [*install_command(python), "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outside = tmp_path / "elsewhere"  # not the checkout, whose cache_tools the cwd would import
    outside.mkdir()
    probe = (
        "import importlib.util as u, cache_tools.cli; print(cache_tools.cli.__file__); "
        "print([m for m in ('iree', 'iree_conformance', 'ci', 'onnx') if u.find_spec(m)])"
    )
    proc = subprocess.run(
        [str(python), "-c", probe], cwd=outside, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path, found = proc.stdout.splitlines()
    assert Path(path).resolve().is_relative_to(purelib.resolve()) and found == "[]"
    tool = bindir / ("cache-tools.exe" if os.name == "nt" else "cache-tools")
    run = {"cwd": outside, "capture_output": True, "text": True, "timeout": 120}
    key = subprocess.run(
        [str(tool), "key", "--config", str(ROOT / "cache_tools.toml"), "--class", "pip", "--json"],
        **run,  # type: ignore[call-overload]
    )
    assert key.returncode == 0 and '"key": "pip-v' in key.stdout, key.stdout + key.stderr
    (outside / "data").mkdir()
    (outside / "data" / "a.txt").write_text("x" * 10_000)
    measure = subprocess.run([str(tool), "measure", "data", "--json"], **run)  # type: ignore[call-overload]
    assert measure.returncode == 0 and '"compressed_bytes"' in measure.stdout, measure.stderr
    bad = subprocess.run([str(tool), "key", "--config", "missing.toml", "--class", "x"], **run)  # type: ignore[call-overload]
    assert bad.returncode == 2 and "missing.toml" in bad.stderr and "Traceback" not in bad.stderr
