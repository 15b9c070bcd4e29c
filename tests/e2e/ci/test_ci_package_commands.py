"""ci/ as one CLI, run: python -m ci COMMAND from the root and before the install, its help,
usage errors and the exit table."""

from __future__ import annotations

import subprocess
import sys

from tests.support.ci_helpers import REPO, clean_env


def test_a_command_runs_with_dash_m_from_the_root():
    result = subprocess.run(
        [sys.executable, "-m", "ci", "pins", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=clean_env(),
        timeout=60,
    )
    assert result.returncode == 0 and "usage: python -m ci pins" in result.stdout, result.stderr


def _bare(*args: str, **extra: str) -> subprocess.CompletedProcess:
    """`python -S -m ARGS` (no site-packages: the project is not installed)."""
    env = clean_env(**extra)
    env.pop("PYTHONPATH", None) if "PYTHONPATH" not in extra else None
    return subprocess.run(
        [sys.executable, "-S", "-m", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=60,
    )


def test_before_the_install_pythonpath_python_is_enough():
    """What the workflows' jobs do before `python -m ci install` (docs/ci.md): PYTHONPATH=python."""
    ok = _bare("ci", "install", "--dry-run", "--extras", "dev", PYTHONPATH="python")
    assert ok.returncode == 0, ok.stderr
    assert "pip install" in ok.stdout and "-e" in ok.stdout
    missing = _bare("ci", "install", "--dry-run", "--extras", "dev")
    assert missing.returncode == 8
    assert "PYTHONPATH=python" in missing.stderr and "Traceback" not in missing.stderr


def test_the_locked_install_needs_nothing_but_pythonpath_python():
    """ci.yml's first install (`--locked --bootstrap`) reads the lock on the standard library."""
    ok = _bare("ci", "install", "--locked", "--bootstrap", "--dry-run", PYTHONPATH="python")
    assert ok.returncode == 0, ok.stderr
    assert "--require-hashes -r" in ok.stdout and "requests==" in ok.stdout
    assert "--no-deps --no-build-isolation -e . -e ./cache_tools" in ok.stdout
    check = _bare("ci", "lock", "--check", PYTHONPATH="python")
    assert check.returncode == 0, check.stderr


def test_help_lists_the_commands_without_importing_any():
    """`python -m ci --help` under -S without PYTHONPATH: the library is not importable,
    so importing any command (which imports ci._common, then the library) would fail."""
    from ci.cli import COMMANDS

    result = _bare("ci", "--help")
    assert result.returncode == 0, result.stderr
    for name, command in COMMANDS.items():
        assert f"  {name}" in result.stdout and command.help in result.stdout, name
    imported = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            "import sys, contextlib, io\nfrom ci.cli import main\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('ci.', 'iree_conformance'))))",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=clean_env(),
        timeout=60,
    )
    assert imported.stdout.strip() == "['ci.cli']", imported.stderr


def test_an_unknown_or_missing_command_is_a_usage_error():
    unknown = _bare("ci", "no-such-command")
    assert unknown.returncode == 2
    assert "unknown command 'no-such-command'" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    assert _bare("ci").returncode == 2


def test_a_module_run_by_itself_is_a_usage_error_not_a_silent_success():
    """`python -m ci.install` (the form before the one CLI) must not exit 0 doing nothing."""
    for args in (("ci.install", "--dry-run"), ("ci.source_build.pins", "show")):
        result = _bare(*args, PYTHONPATH="python")
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert f"python -m {args[0]} is not an entry point" in result.stderr
        assert "python -m ci COMMAND" in result.stderr and result.stdout == ""


def test_a_commands_error_keeps_the_exit_table(tmp_path):
    """A CIError inside a command: one line and EXIT_CI (8), through run_main."""
    from iree_conformance.common.errors import EXIT_CI

    result = subprocess.run(
        [sys.executable, "-m", "ci", "diff-results", "--current", str(tmp_path / "missing.json")]
        + ["--baseline", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=clean_env(),
        timeout=60,
    )
    assert (result.returncode, result.stderr.count("\n")) == (EXIT_CI, 1), result.stderr
    assert result.stderr.startswith("error: ") and "missing.json" in result.stderr
