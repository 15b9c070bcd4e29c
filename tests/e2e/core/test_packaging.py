"""The wheel holds the whole source tree, and a non-editable install works.

Editable installs read the source tree directly, so a package missing from the wheel
shows only after ``pip install .``; these tests build the wheel and install it. cache_tools
is its own distribution (tests/e2e/cache_tools/test_ct_distribution.py): this wheel must not
carry it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.support.core_helpers import ROOT
from tests.support.installer import install_command

# Installed package name -> its folder in the source tree.
PACKAGES = {
    "iree_conformance": ROOT / "python" / "iree_conformance",
}
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")


def source_files() -> set[str]:
    """Every file of the packages' trees (modules and data), as wheel member names."""
    found = set()
    for name, folder in PACKAGES.items():
        for path in folder.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                found.add(f"{name}/{path.relative_to(folder).as_posix()}")
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built, without build isolation, from a copy of the tree (so no stale
    ``build/`` folder of an earlier build can add files that are gone from the tree)."""
    tree = tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "python", tree / "python", ignore=_SKIP)
    # A cache_tools folder beside it, as in the checkout: the build must leave it out.
    shutil.copytree(ROOT / "cache_tools", tree / "cache_tools", ignore=_SKIP)
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
    assert proc.returncode == 0, (
        "building the wheel failed (the dev extra has build, setuptools and wheel):\n"
        + proc.stdout[-3000:]
        + proc.stderr[-3000:]
    )
    (built,) = out.glob("*.whl")
    return built


def test_wheel_holds_every_module_and_data_file(wheel: Path) -> None:
    members = set(zipfile.ZipFile(wheel).namelist())
    expected = source_files()
    assert {
        "iree_conformance/suites/onnx_models.py",
        "iree_conformance/frontends/onnx/zoo.py",
        "iree_conformance/plugin/markers.toml",
        "iree_conformance/py.typed",
    } <= expected
    missing = sorted(expected - members)
    assert not missing, f"files of the source tree missing from {wheel.name}: {missing}"
    assert not [m for m in members if m.startswith("cache_tools/")], "the wheel carries cache_tools"
    (entry_points_file,) = [m for m in members if m.endswith(".dist-info/entry_points.txt")]
    entry_points = zipfile.ZipFile(wheel).read(entry_points_file).decode()
    assert "iree-conformance = iree_conformance.cli.main:main" in entry_points
    assert "cache-tools" not in entry_points
    assert (
        "[pytest11]\niree_conformance.plugin.pytest_plugin = iree_conformance.plugin.pytest_plugin"
        in entry_points
    )


def test_non_editable_install_imports_and_runs(wheel: Path, tmp_path: Path) -> None:
    """The wheel in a fresh venv. Its dependencies come from this environment's
    site-packages through a plain path in a .pth file, which (unlike
    ``--system-site-packages`` of a venv) also sees what this venv installed, but does
    not run this venv's .pth files, so the editable install here stays out of it."""
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
    (purelib / "outer-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    proc = subprocess.run(
        [
            *install_command(python),
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outside = (
        tmp_path / "elsewhere"
    )  # not the checkout, whose folders could be imported from the cwd
    outside.mkdir()
    probe = (
        "import iree_conformance, iree_conformance.suites, iree_conformance.frontends.onnx, iree_conformance.suites.onnx_models; "
        "print(iree_conformance.__file__)"
    )
    proc = subprocess.run(
        [str(python), "-c", probe], cwd=outside, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for line in proc.stdout.split():
        assert Path(line).resolve().is_relative_to(purelib.resolve()), (
            f"imported from {line}, not the installed wheel"
        )
    exe = ".exe" if os.name == "nt" else ""
    assert not (bindir / f"cache-tools{'.exe' if os.name == 'nt' else ''}").exists()
    for tool in ("iree-conformance",):
        proc = subprocess.run(
            [str(bindir / f"{tool}{exe}"), "--help"],
            cwd=outside,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0 and "usage:" in proc.stdout, proc.stdout + proc.stderr
    # Outside a checkout there is no conformance/targets.toml beside the package.
    proc = subprocess.run(
        [str(bindir / f"iree-conformance{exe}"), "devices"],
        cwd=outside,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "pass --targets PATH" in proc.stderr, proc.stdout + proc.stderr
    targets = ROOT / "conformance" / "targets.toml"
    proc = subprocess.run(
        [str(bindir / f"iree-conformance{exe}"), "devices", "--json", "--targets", str(targets)],
        cwd=outside,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and '"llvm-cpu"' in proc.stdout, proc.stdout + proc.stderr
