"""expectations_patch.py with real git repositories: shards collect, the final job combines."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from iree_conformance.common.tomlio import tomllib
from tests.support.ci_helpers import FIXTURES, clean_env, run_ci

if shutil.which("git") is None:
    pytest.skip("git is not on PATH", allow_module_level=True)

MANIFEST = "conformance/expectations/llvm-cpu.toml"
OVERLAY = "conformance/expectations/llvm-cpu.macos.toml"
BASE_TEXT = (FIXTURES / "expectations" / "llvm-cpu.toml").read_text(encoding="utf-8")


def git(repo: Path, *args: str) -> str:
    env = clean_env(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env
    ).stdout


@pytest.fixture
def origin(tmp_path) -> Path:
    repo = tmp_path / "origin repo"
    (repo / "conformance" / "expectations").mkdir(parents=True)
    (repo / MANIFEST).write_text(BASE_TEXT, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "core.autocrlf", "false")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def clone(origin: Path, name: str) -> Path:
    dest = origin.parent / name
    git(origin.parent, "clone", "-q", str(origin), str(dest))
    return dest


def entry(case: str, stage: str, reason: str) -> str:
    return f'"{case}" = {{ stage = "{stage}", reason = "{reason}" }}\n'


def edit(
    repo: Path, path: str, drop: tuple[str, ...] = (), add: tuple[str, ...] = (), replace=None
) -> None:
    """Edits a manifest the way --update-expectations does: one entry per line, sorted."""
    file = repo / path
    lines = (
        file.read_text(encoding="utf-8").splitlines(keepends=True)
        if file.exists()
        else [
            "# Known IREE failures and tolerance overrides for target llvm-cpu.\n",
            "\n",
            "[xfail]\n",
            "\n",
            "[tolerance]\n",
        ]
    )
    lines = [line for line in lines if not any(line.startswith(f'"{d}"') for d in drop)]
    if replace:
        lines = [replace[1] if line.startswith(f'"{replace[0]}"') else line for line in lines]
    start = lines.index("[xfail]\n") + 1
    end = lines.index("\n", start)
    entries = sorted(lines[start:end] + list(add))
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text("".join(lines[:start] + entries + lines[end:]), encoding="utf-8")


def collect(repo: Path, out: Path, label: str, gh=None) -> None:
    run_ci(
        "expectations-patch",
        "--repo",
        repo,
        "collect",
        "--out",
        out,
        "--label",
        label,
        env=gh.env() if gh else None,
    )


def test_collect_records_changes_and_outputs(origin, tmp_path, gh):
    shard = clone(origin, "shard")
    edit(shard, MANIFEST, drop=("onnx-ops/test_cast_FLOAT_to_DOUBLE",))
    edit(shard, OVERLAY, add=(entry("stablehlo/abs_negate_f16", "fail-numerics", "macOS libm"),))
    out = tmp_path / "out dir"
    collect(shard, out, "macos-latest-shard1of4", gh)
    assert gh.outputs()["changed"] == "true"
    manifest = (out / "manifest.json").read_text(encoding="utf-8")
    assert '"change": "modified"' in manifest and '"change": "added"' in manifest
    assert (out / "files" / OVERLAY).is_file()
    patch = (out / "macos-latest-shard1of4.patch").read_text(encoding="utf-8")
    assert '-"onnx-ops/test_cast_FLOAT_to_DOUBLE"' in patch and "new file mode" in patch


def test_collect_without_changes(origin, tmp_path, gh):
    collect(clone(origin, "shard"), tmp_path / "out", "linux-1of4", gh)
    assert gh.outputs()["changed"] == "false"


def test_combine_merges_shards_into_one_patch_that_applies(origin, tmp_path, gh):
    shards = tmp_path / "downloaded"
    a = clone(origin, "a")
    edit(
        a,
        MANIFEST,
        drop=("onnx-ops/test_cast_FLOAT_to_DOUBLE",),
        add=(entry("onnx-ops/test_abs", "fail-compile", "new failure"),),
    )
    collect(a, shards / "nightly-expectations-ubuntu-latest-1of4", "ubuntu-latest-shard1of4")
    b = clone(origin, "b")
    edit(
        b,
        MANIFEST,
        replace=(
            "stablehlo/sort_key_value_stable",
            entry("stablehlo/sort_key_value_stable", "fail-run", "now fails at run"),
        ),
        add=(entry("onnx-ops/test_argmax_default_axis_example", "fail-numerics", "off by one"),),
    )
    collect(b, shards / "nightly-expectations-ubuntu-latest-2of4", "ubuntu-latest-shard2of4")
    # Two macOS shards create the same new overlay with different entries.
    c = clone(origin, "c")
    edit(c, OVERLAY, add=(entry("stablehlo/abs_negate_f16", "fail-numerics", "macOS"),))
    collect(c, shards / "nightly-expectations-macos-latest-1of4", "macos-latest-shard1of4")
    d = clone(origin, "d")
    edit(d, OVERLAY, add=(entry("onnx-ops/test_relu", "fail-run", "macOS"),))
    collect(d, shards / "nightly-expectations-macos-latest-2of4", "macos-latest-shard2of4")
    collect(
        clone(origin, "e"),
        shards / "nightly-expectations-windows-latest-1of4",
        "windows-latest-shard1of4",
    )

    final = clone(origin, "final")
    patch = tmp_path / "update" / "expectations.patch"
    run_ci(
        "expectations-patch",
        "--repo",
        final,
        "combine",
        shards,
        "--output",
        patch,
        "--files-out",
        tmp_path / "update" / "files",
        "--summary",
        env=gh.env(),
    )
    assert gh.outputs()["changed"] == "true" and gh.outputs()["conflicts"] == "0"
    assert "git apply expectations.patch" in gh.summary_text()

    target = clone(origin, "apply here")
    git(target, "apply", "--check", str(patch))
    git(target, "apply", str(patch))
    base = tomllib.loads((target / MANIFEST).read_text(encoding="utf-8"))["xfail"]
    assert "onnx-ops/test_cast_FLOAT_to_DOUBLE" not in base
    assert base["onnx-ops/test_abs"]["stage"] == "fail-compile"
    assert base["stablehlo/sort_key_value_stable"]["stage"] == "fail-run"
    assert base["onnx-ops/test_argmax_default_axis_example"]["stage"] == "fail-numerics"
    assert len(base) == 21 - 1 + 2
    overlay = tomllib.loads((target / OVERLAY).read_text(encoding="utf-8"))["xfail"]
    assert set(overlay) == {"stablehlo/abs_negate_f16", "onnx-ops/test_relu"}
    assert (tmp_path / "update" / "files" / OVERLAY).read_text(encoding="utf-8") == (
        target / OVERLAY
    ).read_text(encoding="utf-8")


def test_combine_reports_a_real_conflict(origin, tmp_path, gh):
    shards = tmp_path / "shards"
    for name, stage in (("a", "fail-run"), ("b", "fail-compile")):
        repo = clone(origin, name)
        edit(
            repo,
            MANIFEST,
            replace=(
                "stablehlo/sort_key_value_stable",
                entry("stablehlo/sort_key_value_stable", stage, "x"),
            ),
        )
        collect(repo, shards / name, f"linux-{name}")
    final = clone(origin, "final")
    run_ci(
        "expectations-patch",
        "--repo",
        final,
        "combine",
        shards,
        "--output",
        tmp_path / "p.patch",
        env=gh.env(),
    )
    assert gh.outputs()["conflicts"] == "1" and gh.outputs()["changed"] == "false"
    assert (tmp_path / "p.patch").read_text(encoding="utf-8") == ""


def test_combine_with_nothing_changed(origin, tmp_path, gh):
    collect(clone(origin, "a"), tmp_path / "shards" / "a", "linux-1of4")
    run_ci(
        "expectations-patch",
        "--repo",
        clone(origin, "final"),
        "combine",
        tmp_path / "shards",
        "--output",
        tmp_path / "p.patch",
        "--summary",
        env=gh.env(),
    )
    assert gh.outputs()["changed"] == "false"
    assert "up to date (1 shard(s) reported)" in gh.summary_text()


def test_crlf_copies_merge_like_lf(origin, tmp_path, gh):
    """A shard on Windows with autocrlf=true leaves CRLF files; the patch is LF all the same."""
    shards = tmp_path / "shards"
    a = clone(origin, "a")
    edit(a, MANIFEST, add=(entry("onnx-ops/test_abs", "fail-compile", "x"),))
    collect(a, shards / "a", "windows-1of4")
    copy = shards / "a" / "files" / MANIFEST
    copy.write_bytes(copy.read_bytes().replace(b"\n", b"\r\n"))
    b = clone(origin, "b")
    edit(b, MANIFEST, add=(entry("onnx-ops/test_relu", "fail-run", "y"),))
    collect(b, shards / "b", "windows-2of4")
    run_ci(
        "expectations-patch",
        "--repo",
        clone(origin, "final"),
        "combine",
        shards,
        "--output",
        tmp_path / "p.patch",
        env=gh.env(),
    )
    patch = (tmp_path / "p.patch").read_bytes()
    assert b"\r" not in patch and patch.count(b'\n+"onnx-ops/') == 2
