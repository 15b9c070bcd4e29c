from __future__ import annotations

import os
import tarfile
import tracemalloc
from pathlib import Path

import pytest
import zstandard

from cache_tools import tarstream
from cache_tools.errors import MeasureError
from cache_tools.measure import measure_paths
from cache_tools.reference_pipe import missing_tools, run_pipeline


def _walk_totals(root: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            p = Path(dirpath) / n
            if p.is_file() and not p.is_symlink():
                files += 1
                size += p.stat().st_size
    return files, size


def test_counts_files_and_raw_bytes(mixed_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(mixed_tree.parent)
    result = measure_paths(["data"], "zstd")
    assert (result.files, result.raw_bytes) == _walk_totals(mixed_tree)
    assert 0 < result.compressed_bytes < result.tar_bytes


@pytest.mark.skipif(
    bool(missing_tools("zstd")), reason="needs the tar and zstd binaries (apt-get install zstd)"
)
@pytest.mark.parametrize("compressor", ["zstd-cli", "zstandard"])
def test_zstd_size_matches_tar_zstd_pipeline_within_1pct(
    mixed_tree: Path, monkeypatch: pytest.MonkeyPatch, compressor: str
) -> None:
    monkeypatch.chdir(mixed_tree.parent)
    ours = measure_paths(["data"], "zstd", compressor=compressor)
    assert ours.compressor == compressor
    ref = run_pipeline(["data"], "zstd", cwd=str(mixed_tree.parent))
    assert abs(ours.compressed_bytes - ref.compressed_bytes) / ref.compressed_bytes < 0.01, (
        ours.compressed_bytes,
        ref.compressed_bytes,
    )


@pytest.mark.skipif(bool(missing_tools("gzip")), reason="needs the tar and gzip binaries")
def test_gzip_size_matches_tar_gzip_pipeline_within_1pct(
    mixed_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(mixed_tree.parent)
    ours = measure_paths(["data/group0"], "gzip")
    ref = run_pipeline(["data/group0"], "gzip", cwd=str(mixed_tree.parent))
    assert abs(ours.compressed_bytes - ref.compressed_bytes) / ref.compressed_bytes < 0.01


@pytest.mark.skipif(bool(missing_tools("zstd")), reason="needs the tar binary")
def test_uncompressed_stream_is_as_long_as_gnu_tar_posix(
    mixed_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    monkeypatch.chdir(mixed_tree.parent)
    gnu = subprocess.run(
        ["tar", "--posix", "-cf", "-", "data"], capture_output=True, check=True
    ).stdout
    assert measure_paths(["data"], "zstd").tar_bytes == len(gnu)


@pytest.mark.parametrize("compressor", ["auto", "zstandard"])
def test_kept_archive_is_a_valid_tar_with_all_members(
    mixed_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressor: str
) -> None:
    monkeypatch.chdir(mixed_tree.parent)
    archive = tmp_path / "cache.tzst"
    # A tiny attribution interval flushes at every folder: with the zstd CLI that
    # makes a multi-frame archive, which must still be one valid tar stream.
    result = measure_paths(
        ["data"], "zstd", keep_archive=str(archive), attribution_interval=0, compressor=compressor
    )
    assert archive.stat().st_size == result.compressed_bytes
    with (
        open(archive, "rb") as fh,
        zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True) as raw,
        tarfile.open(fileobj=raw, mode="r|") as tar,
    ):
        seen = {}
        for member in tar:
            if member.isfile():
                seen[member.name] = tar.extractfile(member).read()
            elif member.issym():
                assert member.name == "data/link-to-top" and member.linkname == "top-level.txt"
    assert len(seen) == result.files
    sample = "data/top-level.txt"
    assert seen[sample] == (mixed_tree / "top-level.txt").read_bytes()


def test_streams_without_holding_the_archive_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for i in range(4):
        (big / f"r{i}.bin").write_bytes(os.urandom(8 << 20))  # 32 MiB, incompressible
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path))
    tracemalloc.start()
    try:
        result = measure_paths(["big"], "zstd")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.compressed_bytes > 32 << 20  # random data does not shrink
    assert peak < 12 << 20, f"Python heap peaked at {peak} bytes for a 32 MiB archive"
    assert set(os.listdir(tmp_path)) == before  # nothing written to disk


def test_top_folders_attribute_all_compressed_bytes(
    mixed_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(mixed_tree.parent)
    result = measure_paths(["data"], "zstd", top=3)
    names = {g.name for g in result.groups}
    assert {
        "data/group0",
        "data/group1",
        "data/group2",
        "data/group3",
        "data/top-level.txt",
    } <= names
    attributed = sum(g.compressed_bytes or 0 for g in result.groups)
    assert attributed == result.compressed_bytes  # every output byte goes to some folder
    assert sum(g.raw_bytes for g in result.groups) == result.raw_bytes
    data = result.to_dict(top=3)
    assert len(data["top_folders"]) == 3 and len(data["largest_files"]) == 3
    sizes = [f["bytes"] for f in data["largest_files"]]
    assert sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize("compressor", ["auto", "zstandard"])
def test_attribution_tells_incompressible_from_compressible(
    tmp_path: Path, compressor: str
) -> None:
    (tmp_path / "random").mkdir()
    (tmp_path / "text").mkdir()
    for i in range(4):
        (tmp_path / "random" / f"{i}.bin").write_bytes(os.urandom(4 << 20))
        (tmp_path / "text" / f"{i}.txt").write_bytes(b"the same line again\n" * (200_000 + i))
    result = measure_paths(
        ["random", "text"], "zstd", cwd=str(tmp_path), attribution_interval=0, compressor=compressor
    )
    by_name = {g.name: g.compressed_bytes for g in result.groups if g.files}
    random_total = sum(v for k, v in by_name.items() if k.startswith("random/"))
    text_total = sum(v for k, v in by_name.items() if k.startswith("text/"))
    assert abs(random_total - (16 << 20)) < 0.01 * (16 << 20)
    assert text_total < 0.05 * (16 << 20)
    # With a coarser interval small folders share one segment's output...
    coarse = measure_paths(
        ["random", "text"], "zstd", cwd=str(tmp_path), attribution_interval=64 << 20
    )
    assert sum(g.compressed_bytes for g in coarse.groups) == coarse.compressed_bytes
    shares = {g.name: g.compressed_bytes for g in coarse.groups if g.files}
    assert shares["random/0.bin"] < 0.7 * (4 << 20)  # diluted by the text that shares its segment
    # ...but a folder at least the interval's size is measured exactly.
    mid = measure_paths(["random", "text"], "zstd", cwd=str(tmp_path), attribution_interval=4 << 20)
    exact = {g.name: g.compressed_bytes for g in mid.groups if g.files}
    assert all(abs(exact[f"random/{i}.bin"] - (4 << 20)) < 0.01 * (4 << 20) for i in range(4))


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(MeasureError, match=r"path 'nope/here' does not exist"):
        measure_paths(["nope/here"], "zstd", cwd=str(tmp_path))


def test_glob_matching_nothing_and_exclusions_are_errors(tmp_path: Path) -> None:
    with pytest.raises(MeasureError, match="matches nothing"):
        measure_paths(["*.onnx"], "zstd", cwd=str(tmp_path))
    with pytest.raises(MeasureError, match="exclusion patterns"):
        measure_paths(["!build"], "zstd", cwd=str(tmp_path))


def test_unreadable_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d").mkdir()
    secret = tmp_path / "d" / "locked.bin"
    secret.write_bytes(b"x" * 100)

    def deny(path: str):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(tarstream, "_open_for_read", deny)
    with pytest.raises(MeasureError, match=r"locked\.bin' is not readable \(permission denied\)"):
        measure_paths(["d"], "zstd", cwd=str(tmp_path))


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="needs POSIX permissions (not Windows) and a user that is not root",
)
def test_unreadable_file_by_permissions(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    locked = tmp_path / "d" / "locked.bin"
    locked.write_bytes(b"x")
    locked.chmod(0)
    with pytest.raises(MeasureError, match="not readable"):
        measure_paths(["d"], "zstd", cwd=str(tmp_path))


def _tar_of(tmp_path: Path) -> list[tarfile.TarInfo]:
    """Members of the tar stream TarStreamWriter makes of tmp_path/d (one file)."""
    import io

    from cache_tools.walk import collect_members

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_bytes(b"hello\n")
    buf = io.BytesIO()
    writer = tarstream.TarStreamWriter(buf)
    for member in collect_members(["d"], str(tmp_path)):
        writer.add(member)
    writer.close()
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        return tar.getmembers()


def test_owner_names_without_pwd_and_grp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows has no pwd/grp modules: the lookups are None and the names stay empty."""
    monkeypatch.setattr(tarstream, "_getpwuid", None)
    monkeypatch.setattr(tarstream, "_getgrgid", None)
    members = _tar_of(tmp_path)
    assert [m.name for m in members] == ["d", "d/f.txt"]
    assert all(m.uname == "" and m.gname == "" for m in members)
    assert members[1].size == 6


def test_unknown_owner_ids_give_empty_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unknown(ident: int):
        raise KeyError(ident)

    monkeypatch.setattr(tarstream, "_getpwuid", unknown)
    monkeypatch.setattr(tarstream, "_getgrgid", unknown)
    assert all(m.uname == "" and m.gname == "" for m in _tar_of(tmp_path))


def test_tarstream_imports_and_measures_without_pwd_and_grp(tmp_path: Path) -> None:
    """Importing with the modules missing (as on Windows) falls back instead of failing."""
    import subprocess
    import sys
    import textwrap

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_bytes(b"x" * 1000)
    code = textwrap.dedent(
        """
        import sys
        sys.modules["pwd"] = None  # `import pwd` now raises ImportError
        sys.modules["grp"] = None
        from cache_tools import tarstream
        from cache_tools.measure import measure_paths
        assert tarstream._getpwuid is None and tarstream._getgrgid is None
        print(measure_paths(["d"], "gzip").raw_bytes)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1000"


def test_file_that_shrinks_while_read_is_padded_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    (tmp_path / "f.bin").write_bytes(b"y" * 5000)
    monkeypatch.setattr(tarstream, "_open_for_read", lambda path: io.BytesIO(b"y" * 1000))
    result = measure_paths(["f.bin"], "zstd", cwd=str(tmp_path))
    assert result.raw_bytes == 5000 and result.tar_bytes % 10240 == 0
    assert any("shrank by 4000 bytes" in w for w in result.warnings)


def test_measure_cli_json_and_outputs(
    mixed_tree: Path, tmp_path: Path, run_cli, monkeypatch
) -> None:
    import json

    monkeypatch.chdir(mixed_tree.parent)
    outputs = tmp_path / "out.txt"
    res = run_cli(
        "measure",
        "data/group1",
        "--compression",
        "zstd",
        "--json",
        env={"GITHUB_OUTPUT": str(outputs)},
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["compression"] == "zstd" and data["files"] > 0
    assert f"compressed-bytes={data['compressed_bytes']}" in outputs.read_text()
    table = run_cli("measure", "data/group1", "--compression", "zstd")
    assert "top folders:" in table.out and "compressed:" in table.out
    missing = run_cli("measure", "does-not-exist")
    assert missing.code == 2 and "does not exist" in missing.err


@pytest.mark.skipif(
    bool(missing_tools("zstd")), reason="needs the tar and zstd binaries (apt-get install zstd)"
)
def test_measure_cli_system_engine_agrees(mixed_tree: Path, run_cli, monkeypatch) -> None:
    import json

    monkeypatch.chdir(mixed_tree.parent)
    system = json.loads(
        run_cli("measure", "data", "--engine", "system", "--compression", "zstd", "--json").out
    )
    ours = json.loads(run_cli("measure", "data", "--compression", "zstd", "--json").out)
    assert system["engine"] == "system"
    assert (
        abs(system["compressed_bytes"] - ours["compressed_bytes"])
        < 0.01 * system["compressed_bytes"]
    )
