"""Per-version environments for torch cases (issue 44, docs/versions.md "torch cases"):
the running environment's torch, iree-turbine and transformers, and what they need, go into
an environment by hard links, never through a resolver; IREE's own distributions are never
taken; the key and the check cover them; a selection without torch cases pays nothing.

The "running environment" is a folder of stand-in installed distributions (dist-info,
RECORD, a few files), the environments real venvs with stand-in IREE wheels
(test_version_env_faults.py's fixture): nothing is downloaded or resolved."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest

from iree_conformance.cli import versions as versions_command
from iree_conformance.common import env_check, iree_index, torch_envs, version_envs
from iree_conformance.common.errors import EnvironmentBuildError
from tests.support.installer import install_command
from tests.unit.core.test_version_env_faults import REPO, VERSION, stand_in

__all__ = ["stand_in"]  # the fixture, shared with the fault tests

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout")


def installed(
    site: Path,
    name: str,
    version: str,
    files: dict[str, str],
    requires: tuple[str, ...] = (),
    script: bool = False,
) -> None:
    """A distribution as an installer leaves it in site-packages: its files, its
    dist-info, a RECORD with each file's digest and size (and a script outside)."""
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    contents = {**files, f"{info}/METADATA": meta, f"{info}/INSTALLER": "pip\n"}
    rows = []
    for rel, text in contents.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        rows.append(f"{rel},sha256={digest.decode()},{len(text.encode())}")
    if script:  # what pip records for a console script: outside site-packages
        rows.append("../../../bin/torchrun,sha256=AAAA,120")
    (site / info / "RECORD").write_text("\n".join([*rows, f"{info}/RECORD,,"]) + "\n")


def running_env(root: Path, torch_version: str = "2.13.0+cpu") -> Path:
    """A stand-in running environment: torch (needing sympy, which needs mpmath; a CUDA-only
    requirement its marker rules out), iree-turbine (needing IREE, unpinned, and torch),
    transformers, an IREE of its own, and an unrelated distribution."""
    site = root / "site-packages"
    installed(
        site,
        "torch",
        torch_version,
        {
            "torch/__init__.py": f"__version__ = {torch_version!r}\n",
            "torch/lib/libtorch.so": "x" * 999,
        },
        ("sympy>=1.13", "nvidia-cublas; sys_platform == 'never'"),
        script=True,
    )
    installed(site, "sympy", "1.14.0", {"sympy/__init__.py": ""}, ("mpmath<1.4",))
    installed(site, "mpmath", "1.3.0", {"mpmath/__init__.py": ""})
    installed(
        site,
        "iree-turbine",
        "3.9.0",
        {"iree/turbine/__init__.py": ""},
        ("iree-base-compiler", "iree-base-runtime", "torch>=2.5", "numpy"),
    )
    installed(site, "transformers", "5.25.0", {"transformers/__init__.py": ""}, ("numpy",))
    installed(site, "iree-base-compiler", "9.9.9", {"iree/compiler/__init__.py": "# not this one"})
    installed(site, "unrelated", "1.0", {"unrelated/__init__.py": ""})
    return site


def names(torch: torch_envs.TorchSet) -> list[str]:
    return [d.metadata["Name"] for d in torch.distributions]


def test_the_torch_set_is_torch_turbine_transformers_and_what_they_need_never_iree(tmp_path):
    site = running_env(tmp_path)
    torch = torch_envs.running([str(site)])
    assert torch is not None
    # numpy is not installed in the stand-in: a requirement not installed is left out
    assert names(torch) == ["iree-turbine", "mpmath", "sympy", "torch", "transformers"]
    assert torch.version("torch") == "2.13.0+cpu"


def test_without_turbine_there_is_no_torch_set(tmp_path):
    site = tmp_path / "site-packages"
    installed(site, "torch", "2.13.0", {"torch/__init__.py": ""})
    assert torch_envs.running([str(site)]) is None


def test_the_key_changes_with_the_torch_build_and_only_for_torch_runs(tmp_path):
    spec = iree_index.VersionSpec(VERSION, "index", VERSION)
    cpu = torch_envs.running([str(running_env(tmp_path / "a"))])
    cuda = torch_envs.running([str(running_env(tmp_path / "b", "2.13.0+cu128"))])
    plain = version_envs.key_data(spec, [], REPO)
    assert "torch" not in plain  # a run without torch cases keeps its environment
    with_cpu = version_envs.key_data(spec, [], REPO, cpu)
    assert with_cpu["torch"]["torch"].startswith("2.13.0+cpu ")
    keys = {version_envs.env_key(d) for d in (plain, with_cpu)}
    keys.add(version_envs.env_key(version_envs.key_data(spec, [], REPO, cuda)))
    assert len(keys) == 3
    # the same version, other files (a rebuilt torch): its RECORD differs, so the key does
    lib = tmp_path / "a" / "site-packages" / "torch" / "lib" / "libtorch.so"
    lib.write_text("y" * 5)
    installed(
        tmp_path / "a" / "site-packages", "torch", "2.13.0+cpu", {"torch/lib/libtorch.so": "y" * 5}
    )
    rebuilt = torch_envs.running([str(tmp_path / "a" / "site-packages")])
    assert version_envs.key_data(spec, [], REPO, rebuilt) != with_cpu


def test_an_environment_for_torch_cases_links_the_running_torch(stand_in, tmp_path):
    spec, envs, _ = stand_in
    site = running_env(tmp_path / "running")
    torch = torch_envs.running([str(site)])
    made = version_envs.ensure(spec, envs, torch=torch)
    assert made.created
    assert made.info["torch"] == "2.13.0+cpu" and made.info["iree_turbine"] == "3.9.0"
    assert made.info["iree_compiler"] == VERSION  # its own IREE, not the running 9.9.9
    (env_site,) = made.path.glob("lib/python*/site-packages")
    lib = env_site / "torch" / "lib" / "libtorch.so"
    assert lib.stat().st_ino == (site / "torch" / "lib" / "libtorch.so").stat().st_ino
    assert "not this one" not in (env_site / "iree" / "compiler" / "__init__.py").read_text()
    assert not (env_site / "unrelated").exists()
    record = (env_site / "torch-2.13.0+cpu.dist-info" / "RECORD").read_text()
    assert "torchrun" not in record and "torch/lib/libtorch.so" in record
    ready = json.loads((made.path / version_envs.READY).read_text())
    assert any("torch-2.13.0+cpu.dist-info/RECORD" in k for k in ready["contents"])
    again = version_envs.ensure(spec, envs, torch=torch)
    assert not again.created and again.path == made.path
    plain = version_envs.ensure(spec, envs)  # no torch cases: another environment, no torch
    assert plain.path != made.path and "torch" not in plain.info
    assert not list(plain.path.glob("lib/python*/site-packages/torch"))


def test_a_damaged_torch_is_seen_and_made_again(stand_in, tmp_path):
    spec, envs, _ = stand_in
    site = running_env(tmp_path / "running")
    torch = torch_envs.running([str(site)])
    made = version_envs.ensure(spec, envs, torch=torch)
    (lib,) = made.path.glob("lib/python*/site-packages/torch/lib/libtorch.so")
    lib.unlink()  # the running environment's file stays: a link, not the file, is gone
    assert (site / "torch" / "lib" / "libtorch.so").is_file()
    said: list[str] = []
    again = version_envs.ensure(spec, envs, say=said.append, torch=torch)
    assert again.created and again.remade and "libtorch.so is missing" in again.remade


def test_the_check_imports_torch_and_turbine(stand_in, tmp_path):
    spec, envs, _ = stand_in
    torch = torch_envs.running([str(running_env(tmp_path / "running"))])
    made = version_envs.ensure(spec, envs, torch=torch)
    found, _ = env_check.probe(made.python, torch=True)
    assert found is not None and found["torch"] == "2.13.0+cpu" and found["iree_turbine"] == "3.9.0"
    plain = version_envs.ensure(spec, envs)
    found, why = env_check.probe(plain.python, torch=True)
    assert found is None and "No module named 'torch'" in why


def test_an_install_that_replaces_the_iree_pin_is_refused(stand_in, monkeypatch):
    """An installer that leaves another IREE than the version's (what iree-turbine's
    unpinned requirement could do in a resolver) is exit 10, nothing kept."""
    _, envs, links = stand_in
    wrong = [
        [*install_command("{python}"), "--no-index", "--find-links", str(links),
         *[f"{name}=={VERSION}" for name in iree_index.IREE_PACKAGES]]
    ]  # fmt: skip

    def install_commands(spec, python, pins, root):
        return [[a.replace("{python}", str(python)) for a in c] for c in wrong]

    monkeypatch.setattr(version_envs, "_install_commands", install_commands)
    other = iree_index.VersionSpec("3.13.0", "index", "3.13.0")
    with pytest.raises(
        EnvironmentBuildError, match=r"3\.12\.0, not 3\.13\.0 \(an install replaced the pin\)"
    ):
        version_envs.ensure(other, envs)
    assert not [p for p in envs.iterdir() if not p.name.startswith(".")]  # nothing kept


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (["-m", "torch", "-k", "relu"], True),
        (["-mtorch"], True),
        (["-m", "stablehlo or torch"], True),
        ([], True),  # the default selection runs every suite
        (["-m", "stablehlo or onnx_ops", "--onnx-ops-sample", "300"], False),
        (["-m", "not torch"], False),
        (["-m", "torch", "-m", "jax"], False),  # the last -m wins, as in pytest
    ],
)
def test_only_a_selection_with_torch_cases_gets_torch(selection, expected):
    assert versions_command.selects_torch(selection) is expected


def test_torch_cases_without_torch_here_are_said(monkeypatch):
    monkeypatch.setattr(torch_envs, "running", lambda path=None: None)
    said: list[str] = []
    assert versions_command.torch_for(True, said.append) is None
    assert len(said) == 1 and "no torch or iree-turbine" in said[0] and "docs/torch.md" in said[0]
    assert versions_command.torch_for(False, said.append) is None and len(said) == 1
