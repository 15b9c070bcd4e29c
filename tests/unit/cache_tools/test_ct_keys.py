from __future__ import annotations

import json
from pathlib import Path

import pytest

from cache_tools.cache_version import cache_version
from cache_tools.errors import KeyRuleError
from cache_tools.hashing import hash_files, short_digest
from cache_tools.keys import KeyParts, build_key, check_key, check_keys, lineage, parse_key
from cache_tools.output import format_outputs

FILES_HASH = "ab" * 32


def test_key_and_restore_keys_most_to_least_specific() -> None:
    built = build_key(KeyParts("llvm-mlir", "Linux", "X64", 2, "0123456789abcdef", FILES_HASH))
    assert built.key == f"llvm-mlir-v2-Linux-X64-c0123456789abcdef-f{FILES_HASH}"
    assert built.restore_keys == (
        "llvm-mlir-v2-Linux-X64-c0123456789abcdef-",
        "llvm-mlir-v2-Linux-X64-",
    )
    for rk in built.restore_keys:
        assert built.key.startswith(rk)


def test_shard_keys_keep_the_shard_index_in_every_restore_key() -> None:
    built = build_key(
        KeyParts("zoo-models", "Linux", "X64", 1, content_hash="deadbeefdeadbeef", shard=3)
    )
    assert built.key == "zoo-models-v1-Linux-X64-s003-fdeadbeefdeadbeef"
    assert built.restore_keys == ("zoo-models-v1-Linux-X64-s003-",)


def test_parse_key_round_trips() -> None:
    parts = KeyParts("zoo-models", "macOS", "ARM64", 4, "00ff", "aa11", shard=12)
    assert parse_key(build_key(parts).key, "zoo-models") == parts
    assert parse_key("something-else-entirely", "zoo-models") is None


def test_github_key_rules() -> None:
    check_key("k" * 512)
    with pytest.raises(KeyRuleError, match="at most 512"):
        check_key("k" * 513)
    with pytest.raises(KeyRuleError, match="comma"):
        check_key("a,b")
    with pytest.raises(KeyRuleError, match="empty"):
        check_key("")
    check_keys("k", [f"r{i}" for i in range(9)])
    with pytest.raises(KeyRuleError, match="at most 10"):
        check_keys("k", [f"r{i}" for i in range(10)])
    with pytest.raises(KeyRuleError, match="restore key #2"):
        check_keys("k", ["ok", "not,ok"])


def test_key_parts_are_validated() -> None:
    with pytest.raises(KeyRuleError, match="--os 'ubuntu-22.04'"):
        build_key(KeyParts("llvm-mlir", "ubuntu-22.04", "X64"))
    with pytest.raises(KeyRuleError, match="class"):
        build_key(KeyParts("-bad", "Linux", "X64"))
    with pytest.raises(KeyRuleError, match="hex"):
        build_key(KeyParts("c", "Linux", "X64", content_hash="not-hex"))
    with pytest.raises(KeyRuleError, match="512"):
        build_key(KeyParts("c" * 600, "Linux", "X64"))


def test_lineage_ignores_hashes_and_schema_but_not_platform_or_shard() -> None:
    classes = ["llvm-mlir", "zoo-models", "llvm"]
    a = build_key(KeyParts("llvm-mlir", "Linux", "X64", 1, "aa", "bb")).key
    b = build_key(KeyParts("llvm-mlir", "Linux", "X64", 2, "cc", "dd")).key
    c = build_key(KeyParts("llvm-mlir", "Linux", "ARM64", 1, "aa", "bb")).key
    s1 = build_key(KeyParts("zoo-models", "Linux", "X64", content_hash="aa", shard=1)).key
    s2 = build_key(KeyParts("zoo-models", "Linux", "X64", content_hash="aa", shard=2)).key
    assert lineage(a, classes) == lineage(b, classes) != lineage(c, classes)
    assert lineage(s1, classes) != lineage(s2, classes)
    assert lineage("pip-Linux-0a1b2c", classes) == "pip-Linux"  # foreign key: minus last part


def test_lineage_keeps_the_config_hash_of_variant_classes() -> None:
    classes = ["pip", "llvm-mlir"]
    py310 = build_key(KeyParts("pip", "Linux", "X64", 1, "a310", "bb")).key
    py312 = build_key(KeyParts("pip", "Linux", "X64", 1, "a312", "bb")).key
    py312b = build_key(KeyParts("pip", "Linux", "X64", 1, "a312", "cc")).key
    assert lineage(py310, classes) == lineage(py312, classes)  # not a variant class
    assert lineage(py310, classes, {"pip"}) != lineage(py312, classes, {"pip"})
    assert lineage(py312, classes, {"pip"}) == lineage(py312b, classes, {"pip"})
    assert lineage(py312, classes, {"pip"}) == "pip-*-Linux-X64-ca312"
    llvm = build_key(KeyParts("llvm-mlir", "Linux", "X64", 1, "aa", "bb")).key
    assert lineage(llvm, classes, {"pip"}) == "llvm-mlir-*-Linux-X64"


# Values pinned by actions/toolkit packages/cache/__tests__/cacheUtils.test.ts.
@pytest.mark.parametrize(
    ("paths", "compression", "expected"),
    [
        (
            ["node_modules"],
            None,
            "b3e0c6cb5ecf32614eeb2997d905b9c297046d7cbf69062698f25b14b4cb0985",
        ),
        (
            ["node_modules", "dist"],
            None,
            "165c3053bc646bf0d4fac17b1f5731caca6fe38e0e464715c0c3c6b6318bf436",
        ),
        (
            ["node_modules"],
            "zstd",
            "273877e14fd65d270b87a198edbfa2db5a43de567c9a548d2a2505b408befe24",
        ),
        (
            ["node_modules"],
            "gzip",
            "470e252814dbffc9524891b17cf4e5749b26c1b5026e63dd3f00972db2393117",
        ),
    ],
)
def test_cache_version_matches_actions_toolkit(paths, compression, expected) -> None:
    assert (
        cache_version(paths, compression, enable_cross_os_archive=True, platform="linux")
        == expected
    )
    assert cache_version(paths, compression, platform="linux") == expected


def test_cache_version_windows_only_unless_cross_os() -> None:
    import hashlib

    win = cache_version(["node_modules"], "zstd", platform="win32")
    assert win == hashlib.sha256(b"node_modules|zstd|windows-only|1.0").hexdigest()
    assert cache_version(["node_modules"], "zstd", True, platform="Windows") == cache_version(
        ["node_modules"], "zstd", platform="linux"
    )


def test_cache_version_uses_trimmed_path_lines_in_order() -> None:
    assert cache_version(["  a\n\nb  "], "gzip", platform="linux") == cache_version(
        ["a", "b"], "gzip", platform="linux"
    )
    assert cache_version(["a", "b"], "gzip", platform="linux") != cache_version(
        ["b", "a"], "gzip", platform="linux"
    )
    with pytest.raises(Exception, match="compression"):
        cache_version(["a"], "lz4")


def test_hash_files_like_the_runner(tmp_path: Path) -> None:
    import hashlib

    (tmp_path / "b.txt").write_bytes(b"bee")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_bytes(b"ay")
    expected = hashlib.sha256(
        hashlib.sha256(b"bee").digest() + hashlib.sha256(b"ay").digest()
    ).hexdigest()
    assert hash_files(["**/*.txt"], str(tmp_path)) == expected  # sorted: b.txt < sub/a.txt
    os_stat = (tmp_path / "b.txt").stat()
    import os

    os.utime(tmp_path / "b.txt", (os_stat.st_atime + 100, os_stat.st_mtime + 100))
    assert hash_files(["**/*.txt"], str(tmp_path)) == expected  # content only
    (tmp_path / "b.txt").write_bytes(b"bee!")
    assert hash_files(["**/*.txt"], str(tmp_path)) != expected
    assert hash_files(["*.none"], str(tmp_path)) == ""
    assert hash_files(["sub"], str(tmp_path)) == ""  # directories are skipped


def test_short_digest_keeps_hex_and_hashes_text() -> None:
    assert short_digest("0123456789abcdef0123") == "0123456789abcdef"
    assert len(short_digest("Release;-DLLVM_ENABLE_ASSERTIONS=ON")) == 16


def test_key_cli_writes_github_outputs(tmp_path: Path, run_cli, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deps.lock").write_text("x==1\n")
    out_file = tmp_path / "gh_output"
    res = run_cli(
        "key",
        "--class",
        "llvm-mlir",
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--hash-files",
        "*.lock",
        "--config-hash",
        "abcdef0123456789",
        "--path",
        "build/llvm",
        "--compression",
        "zstd-without-long",
        env={"GITHUB_OUTPUT": str(out_file), "RUNNER_OS": "Linux"},
    )
    assert res.code == 0, res.err
    text = out_file.read_text()
    files = hash_files(["*.lock"], str(tmp_path))
    key = f"llvm-mlir-v1-Linux-X64-cabcdef0123456789-f{files}"
    assert f"key={key}\n" in text
    assert (
        f"version={cache_version(['build/llvm'], 'zstd-without-long', platform='linux')}\n" in text
    )
    head, _, rest = text.partition("restore-keys<<")
    delimiter, _, body = rest.partition("\n")
    assert delimiter.startswith("ghadelimiter_")
    assert body.split(f"\n{delimiter}\n")[0].splitlines() == [
        "llvm-mlir-v1-Linux-X64-cabcdef0123456789-",
        "llvm-mlir-v1-Linux-X64-",
    ]
    js = run_cli("key", "--class", "llvm-mlir", "--os", "Linux", "--arch", "X64", "--json")
    assert json.loads(js.out)["key"] == "llvm-mlir-v1-Linux-X64"


def test_key_cli_rejects_bad_input(tmp_path: Path, run_cli, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = run_cli(
        "key", "--class", "x", "--os", "Linux", "--arch", "X64", "--hash-files", "*.nothing"
    )
    assert res.code == 2 and "matched no files" in res.err
    res = run_cli("key", "--class", "x,y", "--os", "Linux", "--arch", "X64")
    assert res.code == 2 and "not a valid key part" in res.err


def test_single_line_outputs_stay_single_line() -> None:
    text = format_outputs({"save": True, "reason": "fits", "n": 3})
    assert text == "save=true\nreason=fits\nn=3\n"


def test_every_subcommand_has_help_and_json() -> None:
    import subprocess
    import sys

    for command in ("measure", "key", "plan", "audit", "prune"):
        out = subprocess.run(
            [sys.executable, "-m", "cache_tools", command, "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "--json" in out, command


def _outputs(path: Path) -> dict[str, str]:
    """Parse a $GITHUB_OUTPUT file (single-line and heredoc values)."""
    lines = path.read_text().splitlines()
    values: dict[str, str] = {}
    i = 0
    while i < len(lines):
        name, sep, value = lines[i].partition("=")
        if sep and "<<" not in name:
            values[name] = value
            i += 1
            continue
        name, _, delimiter = lines[i].partition("<<")
        end = lines.index(delimiter, i + 1)
        values[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return values


def test_key_cli_shard_builds_the_restore_prefix_of_one_shard(
    tmp_path: Path, run_cli, config_file: Path
) -> None:
    out_file = tmp_path / "gh_output"
    res = run_cli(
        "key",
        "--config",
        str(config_file),
        "--class",
        "zoo-models",
        "--shard",
        "3",
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--config-hash",
        "abcdef0123456789",
        "--compression",
        "zstd-without-long",
        "--json",
        env={"GITHUB_OUTPUT": str(out_file), "RUNNER_OS": "Linux"},
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["key"] == "zoo-models-v1-Linux-X64-s003-cabcdef0123456789"
    assert data["restore_keys"] == [
        "zoo-models-v1-Linux-X64-s003-cabcdef0123456789-",
        "zoo-models-v1-Linux-X64-s003-",
    ]
    # The version is the one of the shard's staged folder (the plan's stage_path).
    stage = ".cache-shards/zoo-models/s003"
    assert data["stage_path"] == stage and data["paths"] == [stage]
    assert data["version"] == cache_version([stage], "zstd-without-long", platform="linux")
    assert data["shard_count"] == 8
    outputs = _outputs(out_file)
    assert outputs["key"] == data["key"] and outputs["stage-path"] == stage
    assert outputs["shard-count"] == "8"
    assert outputs["restore-keys"].splitlines() == data["restore_keys"]


def test_key_cli_shard_with_content_hash_is_a_full_shard_key(run_cli, config_file: Path) -> None:
    res = run_cli(
        "key",
        "--config",
        str(config_file),
        "--class",
        "zoo-models",
        "--shard",
        "0",
        "--os",
        "Linux",
        "--arch",
        "X64",
        "--content-hash",
        "0123abcd",
        "--json",
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["key"] == "zoo-models-v1-Linux-X64-s000-f0123abcd"
    assert data["restore_keys"] == ["zoo-models-v1-Linux-X64-s000-"]
    parts = parse_key(data["key"], "zoo-models")
    assert parts is not None and parts.shard == 0 and parts.content_hash == "0123abcd"


def test_key_cli_without_shard_reports_the_shard_count(run_cli, config_file: Path) -> None:
    def key_json(cls: str) -> dict:
        res = run_cli(
            "key",
            "--config",
            str(config_file),
            "--class",
            cls,
            "--os",
            "L",
            "--arch",
            "X",
            "--json",
        )
        assert res.code == 0, res.err
        return json.loads(res.out)

    assert key_json("zoo-models")["shard_count"] == 8
    assert key_json("llvm-mlir")["shard_count"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--class", "llvm-mlir", "--shard", "0"], "class 'llvm-mlir' is not sharded"),
        (["--class", "zoo-models", "--shard", "8"], "at most 8 shards"),
        (["--class", "zoo-models", "--shard", "-1"], "between 0 and 999"),
        (["--class", "zoo-models", "--content-hash", "XYZ"], "must be lowercase hex"),
        (
            ["--class", "zoo-models", "--content-hash", "ab", "--hash-files", "*.lock"],
            "either --hash-files or --content-hash",
        ),
    ],
)
def test_key_cli_shard_errors(run_cli, config_file: Path, args: list[str], message: str) -> None:
    res = run_cli("key", "--config", str(config_file), "--os", "Linux", "--arch", "X64", *args)
    assert res.code == 2 and message in res.err, res.err
