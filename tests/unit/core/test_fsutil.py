"""fsutil: atomic replacement and its retry on Windows' transient PermissionError.

Windows' sharing violations are simulated by an ``os.replace``/``os.rename`` that
raises PermissionError a given number of times; these tests run on every OS and do not
claim to have run on Windows.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iree_conformance.common import fsutil


class Flaky:
    """Stands in for os.replace / os.rename: PermissionError ``fails`` times, then real."""

    def __init__(self, real, fails: int):
        self.real, self.fails, self.calls = real, fails, 0

    def __call__(self, src, dst):
        self.calls += 1
        if self.calls <= self.fails:
            raise PermissionError(13, "The process cannot access the file", str(dst))
        return self.real(src, dst)


def no_sleep(_: float) -> None:
    pass


def test_write_is_retried_until_the_sharing_violation_clears(tmp_path, monkeypatch):
    flaky = Flaky(os.replace, fails=3)
    monkeypatch.setattr(fsutil.os, "replace", flaky)
    fsutil.atomic_write_bytes(tmp_path / "a.bin", b"new", sleep=no_sleep)
    assert (tmp_path / "a.bin").read_bytes() == b"new"
    assert flaky.calls == 4
    assert [p.name for p in tmp_path.iterdir()] == ["a.bin"]  # no temp file left


def test_write_gives_up_after_the_retry_window_and_cleans_up(tmp_path, monkeypatch):
    monkeypatch.setattr(fsutil.os, "replace", Flaky(os.replace, fails=10**6))
    slept: list[float] = []
    with pytest.raises(PermissionError):
        fsutil.atomic_write_bytes(tmp_path / "a.bin", b"x", retry_for=1.0, sleep=slept.append)
    assert 1.0 <= sum(slept) < 1.6
    assert list(tmp_path.iterdir()) == []


def test_existing_content_addressed_target_is_success(tmp_path, monkeypatch):
    target = tmp_path / "ab" / "abcd.bin"
    target.parent.mkdir()
    target.write_bytes(b"same")
    flaky = Flaky(os.replace, fails=10**6)  # a reader holds the target open for good
    monkeypatch.setattr(fsutil.os, "replace", flaky)
    fsutil.atomic_write_bytes(target, b"same", exists_ok=True, retry_for=0.0, sleep=no_sleep)
    assert flaky.calls == 1
    assert [p.name for p in target.parent.iterdir()] == ["abcd.bin"]


def test_without_exists_ok_an_existing_target_is_not_success(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("old")
    monkeypatch.setattr(fsutil.os, "replace", Flaky(os.replace, fails=10**6))
    with pytest.raises(PermissionError):
        fsutil.atomic_write_text(tmp_path / "a.txt", "new", retry_for=0.0, sleep=no_sleep)
    assert (tmp_path / "a.txt").read_text() == "old"


def test_text_has_lf_line_ends_on_every_os(tmp_path):
    fsutil.atomic_write_text(tmp_path / "t.json", "a\nb\n")
    assert (tmp_path / "t.json").read_bytes() == b"a\nb\n"


def test_chunks_are_written_in_order(tmp_path):
    fsutil.atomic_write_bytes(tmp_path / "c", (b"ab", b"", b"cd"))
    assert (tmp_path / "c").read_bytes() == b"abcd"


def test_rename_dir_retries_then_moves(tmp_path, monkeypatch):
    src, dst = tmp_path / "tmp-tree", tmp_path / "tree"
    src.mkdir()
    (src / "f").write_text("x")
    flaky = Flaky(os.rename, fails=2)
    monkeypatch.setattr(fsutil.os, "rename", flaky)
    assert fsutil.rename_dir(src, dst, sleep=no_sleep) is True
    assert (dst / "f").read_text() == "x" and not src.exists()


def test_rename_dir_loses_to_an_existing_folder(tmp_path):
    src, dst = tmp_path / "mine", tmp_path / "tree"
    src.mkdir()
    dst.mkdir()
    (dst / "winner").touch()
    assert fsutil.rename_dir(src, dst) is False
    assert src.is_dir() and [p.name for p in dst.iterdir()] == ["winner"]


def test_rename_dir_loses_when_a_rival_appears_during_the_retries(tmp_path, monkeypatch):
    src, dst = tmp_path / "mine", tmp_path / "tree"
    src.mkdir()

    def rival_then_deny(a, b):
        Path(b).mkdir(exist_ok=True)
        raise PermissionError(13, "denied", str(b))

    monkeypatch.setattr(fsutil.os, "rename", rival_then_deny)
    assert fsutil.rename_dir(src, dst, sleep=no_sleep) is False
    assert src.is_dir()


def test_rename_dir_reports_other_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        fsutil.rename_dir(tmp_path / "missing", tmp_path / "tree")


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_written_files_get_the_umask_mode(tmp_path, umask):
    """mkstemp alone makes 0600; a new file gets 0o666 less the umask, as open() does."""
    old = os.umask(umask)
    try:
        assert fsutil.current_umask() == umask
        written = fsutil.atomic_write_bytes(tmp_path / "new.bin", b"x")
    finally:
        os.umask(old)
    assert written.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "llvm-cpu.toml"
    target.write_text("old")
    target.chmod(0o644)
    old = os.umask(0o077)
    try:
        fsutil.atomic_write_text(target, "new")
    finally:
        os.umask(old)
    assert target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o644


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_temporary_folder_renamed_into_a_cache_gets_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        made = fsutil.make_temp_dir(".x.tmp-", tmp_path)
    finally:
        os.umask(old)
    assert made.parent == tmp_path and made.stat().st_mode & 0o777 == 0o755
