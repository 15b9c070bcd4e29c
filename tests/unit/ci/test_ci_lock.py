"""The pull-request workflows' hashed lock (ci/lock/, ci/lock.py) and `install --locked`."""

from __future__ import annotations

import argparse
import shutil

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.version import Version

from ci import install, lock
from ci._common import CIError
from tests.support.ci_helpers import REPO

yaml = pytest.importorskip("yaml", reason="pyyaml is in the dev extra")

LOCK_TEXT = (REPO / "ci/lock/requirements.txt").read_text(encoding="utf-8")
ENTRIES = lock.parse_lock(LOCK_TEXT)
PLATFORMS = {
    "linux": {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
              "platform_machine": "x86_64"},
    "macos": {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix",
              "platform_machine": "arm64"},
    "windows": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt",
                "platform_machine": "AMD64"},
}  # fmt: skip


def workflow_pythons() -> set[str]:
    """Every Python a workflow's setup-python step asks for, as X.Y (matrix rows included)."""
    found = set()
    for path in (REPO / ".github/workflows").glob("*.yml"):
        wf = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job in (wf.get("jobs") or {}).values():
            matrix = (job.get("strategy") or {}).get("matrix") or {}
            rows = list(matrix.get("include") or []) + [
                {"python": p} for p in matrix.get("python") or []
            ]
            for step in job.get("steps") or []:
                version = str((step.get("with") or {}).get("python-version", ""))
                if "matrix.python" in version:
                    found |= {str(r["python"]) for r in rows if "python" in r}
                elif version and "${{" not in version:
                    found.add(version)
    return found


PYTHONS = sorted({lock.python_floor(), *workflow_pythons()}, key=Version)


def environments():
    for python in PYTHONS:
        for os_name, env in PLATFORMS.items():
            yield (
                f"py{python}-{os_name}",
                {
                    **env,
                    "python_version": python,
                    "python_full_version": f"{python}.1",
                    "implementation_name": "cpython",
                    "platform_python_implementation": "CPython",
                    "extra": "",
                },
            )


ENVIRONMENTS = dict(environments())


def applies(marker: str | None, env: dict[str, str]) -> bool:
    return marker is None or Marker(marker).evaluate(env)


def pins(env: dict[str, str], entries=ENTRIES) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in entries:
        if applies(e.marker, env):
            out.setdefault(e.name, []).append(e.version)
    return out


def test_the_workflows_pythons_are_the_ones_checked_and_admitted():
    assert {"3.11", "3.12"} <= set(PYTHONS)  # ci.yml's matrix and its lint job
    assert all(Version(p) >= Version(lock.python_floor()) for p in PYTHONS)


def test_the_in_file_and_the_header_are_current():
    assert lock.check() == []
    assert lock.recorded_command(LOCK_TEXT) == "uv pip compile " + " ".join(lock.uv_arguments())


def test_every_locked_line_has_hashes():
    assert len(ENTRIES) > 50
    assert all(e.hashes for e in ENTRIES), [e.name for e in ENTRIES if not e.hashes]
    # every pin line was parsed (none is taken for a comment)
    assert len(ENTRIES) == sum(
        1
        for line in LOCK_TEXT.splitlines()
        if "==" in line[:80] and not line.startswith((" ", "#"))
    )


@pytest.mark.parametrize("env_id", ENVIRONMENTS)
def test_every_declared_requirement_is_locked_at_an_admitted_version(env_id):
    env = ENVIRONMENTS[env_id]
    locked = pins(env)
    for section, requirements in lock.declared().items():
        for text in requirements:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            versions = locked.get(lock.canonical(req.name), [])
            assert len(versions) == 1, (env_id, section, text, versions)
            assert req.specifier.contains(versions[0], prereleases=True), (
                env_id,
                section,
                text,
                versions[0],
            )


@pytest.mark.parametrize("env_id", ENVIRONMENTS)
def test_each_distribution_has_one_pin_per_environment(env_id):
    several = {n: v for n, v in pins(ENVIRONMENTS[env_id]).items() if len(v) > 1}
    assert several == {}


def test_a_drifted_pyproject_is_reported(tmp_path):
    (tmp_path / "cache_tools").mkdir()
    (tmp_path / "ci/lock").mkdir(parents=True)
    for rel in ("pyproject.toml", "cache_tools/pyproject.toml", "ci/lock/requirements.in",
                "ci/lock/requirements.txt"):  # fmt: skip
        shutil.copy(REPO / rel, tmp_path / rel)
    assert lock.check(tmp_path) == []
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace(
            '"tomlkit>=0.12"', '"tomlkit>=0.12",\n    "rich>=13"'
        ),
        encoding="utf-8",
    )
    problems = lock.check(tmp_path)
    assert len(problems) == 1 and problems[0].endswith(
        "requirements.in differs from pyproject.toml's requirements"
    )
    assert "rich>=13\n" in lock.render_in(tmp_path)


def test_a_changed_header_or_an_unhashed_entry_is_reported(tmp_path):
    (tmp_path / "cache_tools").mkdir()
    (tmp_path / "ci/lock").mkdir(parents=True)
    for rel in ("pyproject.toml", "cache_tools/pyproject.toml", "ci/lock/requirements.in"):
        shutil.copy(REPO / rel, tmp_path / rel)
    text = LOCK_TEXT.replace("--python-version 3.11", "--python-version 3.12", 1)
    text += "zzz==1.0\n    # via -r requirements.in\n"
    (tmp_path / "ci/lock/requirements.txt").write_text(text, encoding="utf-8")
    problems = lock.check(tmp_path)
    assert len(problems) == 2
    assert "its header does not record `uv pip compile requirements.in" in problems[0]
    assert problems[1].endswith("no hashes for zzz")


def test_an_unhashed_or_foreign_line_is_refused():
    with pytest.raises(CIError, match=r"x.txt:3: not a line of a hashed lock: '-e \.'"):
        lock.parse_lock("# header\nfoo==1.0 \\\n-e .\n", "x.txt")
    entries = lock.parse_lock("foo==1.0\n    # via -r requirements.in\n")
    assert entries[0].hashes == []


SAMPLE = """\
# This file was autogenerated by uv via the following command:
#    uv pip compile requirements.in --universal --generate-hashes --python-version 3.10 -o requirements.txt
a==1.0 \\
    --hash=sha256:{h}
    # via -r requirements.in
b==2.0 ; sys_platform == 'win32' \\
    --hash=sha256:{h}
    # via
    #   a
    #   c
c==3.0 \\
    --hash=sha256:{h}
    # via -r requirements.in
d==4.0 \\
    --hash=sha256:{h}
    # via b
""".format(h="0" * 64)


def test_closure_follows_the_via_lines():
    entries = lock.parse_lock(SAMPLE)
    assert [e.name for e in entries] == ["a", "b", "c", "d"]
    assert entries[1].marker == "sys_platform == 'win32'"
    assert [e.name for e in lock.closure(entries, ["a"])] == ["a", "b", "d"]
    assert [e.name for e in lock.closure(entries, ["c"])] == ["b", "c", "d"]
    with pytest.raises(CIError, match=r"no entry for e: .*python -m ci lock"):
        lock.closure(entries, ["a", "e"])
    assert (
        lock.subset_text(lock.closure(entries, ["d"]))
        == f"d==4.0 \\\n    --hash=sha256:{'0' * 64}\n"
    )


def install_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    install.add_arguments(parser)
    return parser.parse_args(["--locked", *argv])


def names(args: argparse.Namespace) -> set[str]:
    return {e.name for e in install.locked_subset(args)}


def test_locked_modes_take_what_they_need_from_the_lock():
    bootstrap = names(install_args("--bootstrap"))
    assert {"requests", "zstandard", "platformdirs", "setuptools", "wheel", "urllib3"} <= bootstrap
    assert "numpy" not in bootstrap and "pytest" not in bootstrap
    report = names(install_args("--report"))
    assert {"jinja2", "markupsafe", "onnx", "numpy", "requests"} <= report
    assert "iree-base-compiler" not in report
    dev = names(install_args("--extras", "dev"))
    assert {"iree-base-compiler", "pytest", "pluggy", "ruff", "mypy", "tomlkit"} <= dev
    assert not {"jax", "jaxlib", "flax"} & dev  # the test job does not get the jax extra
    lint = names(install_args("--extras", "dev,stablehlo-ref"))
    assert {"jax", "jaxlib", "scipy"} <= lint and "flax" not in lint


def test_locked_install_commands():
    args = install_args("--extras", "dev")
    commands = install.plan_commands(args, REPO / "subset.txt")
    assert [c[3:] for c in commands] == [
        ["install", "--disable-pip-version-check", "--require-hashes", "-r", str(REPO / "subset.txt")],
        ["install", "--disable-pip-version-check", "--no-deps", "--no-build-isolation",
         "-e", ".", "-e", "./cache_tools"],
    ]  # fmt: skip


def test_an_extra_outside_the_lock_is_refused():
    with pytest.raises(CIError, match=r"extra nope is not in the lock .*python -m ci lock"):
        install.locked_subset(install_args("--extras", "dev,nope"))
