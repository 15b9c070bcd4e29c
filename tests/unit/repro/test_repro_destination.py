"""Where ``repro -o`` may write: --force replaces only a reproducer folder, never the
working folder, one above it, the home folder or a root; a place that cannot be written
is said before the case runs (issue 58, items 2 and 12)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from iree_conformance.common.errors import ConfigurationError
from iree_conformance.repro import writer


def _mine(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "thesis.tex").write_text("mine")
    return folder


@pytest.mark.parametrize("given", [".", "..", "./", "sub/..", "../work"])
def test_force_never_replaces_the_working_folder_or_one_above_it(tmp_path, monkeypatch, given):
    work = _mine(tmp_path / "work")
    (work / "repro.json").write_text("{}")  # even one that looks like a reproducer
    (work / "sub").mkdir()
    monkeypatch.chdir(work)
    with pytest.raises(ConfigurationError, match="working folder; a reproducer needs"):
        writer.check_destination(Path(given), force=True)
    assert (work / "thesis.tex").read_text() == "mine"


def test_force_never_replaces_the_home_folder_or_a_root(tmp_path, monkeypatch):
    home = _mine(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(_mine(tmp_path / "elsewhere"))
    with pytest.raises(ConfigurationError, match="is the home folder"):
        writer.check_destination(home, force=True)
    with pytest.raises(ConfigurationError, match="is a root folder"):
        writer.check_destination(Path("/"), force=True)


def test_force_replaces_only_a_reproducer_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    other = _mine(tmp_path / "results")
    with pytest.raises(ConfigurationError, match="not a reproducer folder .*no repro.json"):
        writer.check_destination(Path("results"), force=True)
    assert (other / "thesis.tex").read_text() == "mine"
    (other / "repro.json").write_text("{}")
    writer.check_destination(Path("results"), force=True)  # one repro wrote: replaced
    (tmp_path / "empty").mkdir()
    writer.check_destination(Path("empty"), force=True)  # nothing to lose


def test_a_link_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = _mine(tmp_path / "real")
    (target / "repro.json").write_text("{}")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(ConfigurationError, match="is a link"):
        writer.check_destination(Path("link"), force=True)


def test_a_place_that_cannot_be_written_is_said_before_any_work(tmp_path, monkeypatch):
    """A read-only mount, simulated where the folder is made (root writes past 0o555)."""
    monkeypatch.chdir(tmp_path)

    def read_only(prefix, parent):
        raise OSError(errno.EROFS, "Read-only file system", str(parent))

    monkeypatch.setattr(writer, "make_temp_dir", read_only)
    with pytest.raises(ConfigurationError, match=r"cannot write the reproducer under .*Read-only"):
        writer.check_destination(Path("new/deeper/out"), force=False)
    assert not (tmp_path / "new").exists()
