"""common/read_files: the files of a folder that code reads, for a stored export's key."""

from __future__ import annotations

import importlib
import sys

from iree_conformance.common import read_files


def test_opened_imported_and_looked_for_files_of_the_folder_are_recorded(tmp_path, monkeypatch):
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "data.bin").write_bytes(b"1234")
    (folder / "sibling_mod_rf.py").write_text("X = 1\n")
    (tmp_path / "outside.bin").write_bytes(b"x")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "sibling_mod_rf", raising=False)
    with read_files.recording(folder) as reads:
        (folder / "data.bin").read_bytes()
        (tmp_path / "outside.bin").read_bytes()
        try:
            open(folder / "later.bin", "rb")
        except FileNotFoundError:
            pass
    assert {p.name for p in reads} == {"data.bin", "later.bin"}
    importlib.import_module("sibling_mod_rf")
    # Imported before (in sys.modules, not opened again): it still counts.
    with read_files.recording(folder) as again:
        importlib.import_module("sibling_mod_rf")
    assert "sibling_mod_rf.py" in {p.name for p in again}
    meta = read_files.entry_meta(reads, folder)
    assert meta["reads"]["later.bin"] is None and read_files.unchanged(meta, folder)
    (folder / "data.bin").write_bytes(b"5678")  # the same size
    assert not read_files.unchanged(meta, folder)
    (folder / "data.bin").write_bytes(b"1234")
    (folder / "later.bin").write_bytes(b"")  # the file it looked for appears
    assert not read_files.unchanged(meta, folder)


def test_nested_recordings_end_cleanly_when_their_sets_are_equal(tmp_path):
    """Two nested recordings start with equal (empty) sets: ending the inner one removed
    the outer's from the active list (list.remove compares), and the outer's end then
    raised ValueError."""
    from iree_conformance.common import read_files

    (tmp_path / "a.txt").write_text("a")
    with read_files.recording(tmp_path) as outer:
        with read_files.recording(tmp_path) as inner:
            pass
        (tmp_path / "a.txt").read_text()
    assert inner == set()
    assert outer == {(tmp_path / "a.txt").resolve()}
