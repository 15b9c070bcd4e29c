"""devtools/check_newest.py: the lane that must hold today's newest releases says when it
does not (issue 43: an older tomlkit on the developer's machine hid a breakage)."""

from __future__ import annotations

import subprocess
import sys

from devtools import check_newest

PYPROJECT = {
    "project": {
        "dependencies": [
            "tomlkit>=0.12",
            "ml_dtypes>=0.5.4,<0.7",
            "tomli>=2.0; python_version < '3'",
        ],
        "optional-dependencies": {"dev": ["ruff>=0.6"]},
    }
}


def test_an_older_admitted_release_is_stale_and_a_capped_one_is_not():
    requirements = check_newest.declared(PYPROJECT, ["dev"])
    assert set(requirements) == {"tomlkit", "ml-dtypes", "ruff"}  # tomli's marker is false
    rows = [
        {"name": "tomlkit", "version": "0.13.2", "latest_version": "0.15.3"},
        {"name": "ml_dtypes", "version": "0.6.0", "latest_version": "0.7.0"},
        {"name": "six", "version": "1.0", "latest_version": "2.0"},  # not declared
    ]
    found = {f.name: f for f in check_newest.findings(requirements, rows)}
    assert set(found) == {"tomlkit", "ml-dtypes"}
    assert found["tomlkit"].admitted and not found["ml-dtypes"].admitted


def test_an_unknown_extra_is_refused():
    try:
        check_newest.declared(PYPROJECT, ["nope"])
    except ValueError as e:
        assert "nope" in str(e)
    else:
        raise AssertionError("an unknown extra was accepted")


def test_the_command_fails_on_a_stale_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(
        check_newest,
        "pip_outdated",
        lambda python: [{"name": "tomlkit", "version": "0.13.2", "latest_version": "99.0"}],
    )
    assert check_newest.main(["--extras", "dev"]) == 1
    assert "tomlkit 0.13.2 < 99.0" in capsys.readouterr().err


def test_an_environment_without_pip_is_exit_2(tmp_path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'No module named pip' >&2\nexit 1\n")
    python.chmod(0o755)
    proc = subprocess.run(
        [sys.executable, "-m", "devtools.check_newest", "--python", str(python)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "No module named pip" in proc.stderr
