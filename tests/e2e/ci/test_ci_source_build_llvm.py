"""The LLVM/MLIR build through ccache (ci/source_build/llvm_build.py and its helpers):
ccache's settings, hits after a move, the seal, the faults (a damaged restore, an
unreachable remote store, a full disk, a failed build) and a real redis remote store.

The builds compile the small C/C++ project tests/fixtures/ci/ccache_project through
ccache (the real LLVM build is llvm_cache_proof.py's, in .ci/run)."""

from __future__ import annotations

import json
import lzma
import shutil
import socket
import tarfile
from pathlib import Path

import pytest
import yaml

from ci.source_build import _cache_seal as seal
from ci.source_build import _ccache_env as ccache_env
from ci.source_build import llvm_source
from devtools import act_local
from devtools import llvm_cache_proof as proof
from tests.support.ci_helpers import FIXTURES, REPO, clean_env, run_ci

PROJECT = FIXTURES / "ccache_project"
TOOLS = ("ccache", "cmake", "ninja")
needs_tools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS),
    reason="needs ccache, cmake and ninja (.ci/run installs ccache)",
)


# -- seal -------------------------------------------------------------------------------


def make_folder(root: Path) -> Path:
    for i in range(6):
        (root / f"{i % 3}").mkdir(parents=True, exist_ok=True)
        (root / f"{i % 3}" / f"entry{i}").write_bytes(bytes([i]) * (100 + i))
    return root


def test_seal_tells_intact_truncated_and_corrupt(tmp_path):
    folder = make_folder(tmp_path / "cc")
    assert seal.check_seal(tmp_path / "none").state == "empty"
    assert seal.check_seal(folder).state == "damaged"  # files, no seal
    seal.write_seal(folder)
    assert seal.check_seal(folder).state == "intact"
    (folder / "1" / "entry4").write_bytes(b"\0" * 104)  # same size, other bytes
    corrupt = seal.check_seal(folder)
    assert corrupt.state == "damaged" and "corrupt" in corrupt.reason
    seal.write_seal(folder)
    (folder / "2" / "entry5").unlink()
    truncated = seal.check_seal(folder)
    assert truncated.state == "damaged" and "truncated" in truncated.reason
    (folder / seal.SEAL_NAME).write_text("{not json", encoding="utf-8")
    assert "unreadable" in seal.check_seal(folder).reason


# -- ccache settings and the remote store URL -----------------------------------------------


def test_settings_survive_a_new_checkout(tmp_path):
    s = ccache_env.Settings(tmp_path / "cc", tmp_path, "1000M", 5)
    env = s.env()
    assert env["CCACHE_BASEDIR"] == str(tmp_path)
    assert env["CCACHE_NOHASHDIR"] == "1"
    assert env["CCACHE_COMPILERCHECK"] == "content"
    assert "time_macros" in env["CCACHE_SLOPPINESS"]
    assert env["CCACHE_COMPRESSLEVEL"] == "5" and env["CCACHE_MAXSIZE"] == "1000M"
    assert not env["CCACHE_TEMPDIR"].startswith(env["CCACHE_DIR"] + "/")  # never saved
    assert (
        ccache_env.base_dir_for(tmp_path / "a" / "src", tmp_path / "a" / "build")
        == (tmp_path / "a").resolve()
    )


def test_remote_url_takes_no_password_and_never_shows_it():
    remote = ccache_env.Remote("redis://127.0.0.1:6380", "s3cr/t")
    remote.check()
    assert remote.with_credentials() == "redis://s3cr%2Ft@127.0.0.1:6380"
    assert "s3cr" not in remote.redacted() and "***@" in remote.redacted()
    with pytest.raises(ValueError, match="secret"):
        ccache_env.Remote("redis://user:pw@host:1").check()
    with pytest.raises(ValueError, match="redis://"):
        ccache_env.Remote("ftp://host/x").check()
    http = ccache_env.Remote("http://ci@cache.example:8080/ccache", "pw")
    assert http.with_credentials() == "http://ci:pw@cache.example:8080/ccache"


def test_unreachable_remote_is_reported():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nobody listens
    why = ccache_env.reachable(ccache_env.Remote(f"redis://127.0.0.1:{port}"), timeout=1)
    assert why and "Refused" in why


def test_hit_counts():
    c = ccache_env.hit_counts(
        {
            "direct_cache_hit": 90,
            "preprocessed_cache_hit": 5,
            "cache_miss": 5,
            "remote_storage_hit": 40,
        }
    )
    assert (c.objects, c.hits, c.hit_rate, c.remote_hit_rate) == (100, 95, 0.95, 0.4)


# -- builds through ccache --------------------------------------------------------------------


def layout(root: Path) -> Path:
    """A copy of the fixture project at root/src (the build folder goes to root/build)."""
    shutil.copytree(PROJECT, root / "src")
    return root / "src"


def build(
    src: Path, cc: Path, tmp_path: Path, *extra: str, env: dict[str, str] | None = None, check=True
) -> tuple[dict, object]:
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.json"
    result = run_ci(
        "llvm-build",
        "build",
        "--preset",
        "none",
        "--cmake-dir",
        ".",
        "--source-dir",
        src,
        "--build-dir",
        src.parent / "build",
        "--ccache-dir",
        cc,
        "--target",
        "all",
        "--min-free",
        "1MB",
        "--save-min-free",
        "1MB",
        "--report",
        report,
        *extra,
        env=env or clean_env(),
        check=check,
    )
    return json.loads(report.read_text(encoding="utf-8")), result


@needs_tools
def test_cold_then_warm_from_a_moved_checkout(tmp_path):
    cc = tmp_path / "cc"
    cold, _ = build(layout(tmp_path / "one"), cc, tmp_path)
    assert (cold["objects"], cold["hits"], cold["save_ok"]) == (4, 0, True)
    assert (cc / seal.SEAL_NAME).is_file()
    assert cold["graph_objects"] == 4
    assert cold["repeated_compiles"] == 0
    warm, _ = build(layout(tmp_path / "elsewhere" / "deeper"), cc, tmp_path)
    assert warm["restored"]["state"] == "intact"
    assert (warm["hits"], warm["misses"]) == (4, 0), warm
    assert warm["save_ok"] is False and "nothing new" in warm["save_note"]  # no re-save


@needs_tools
def test_a_source_compiled_twice_hits_in_a_cold_build(tmp_path):
    """As LLVM 15's IndentedOstream.cpp in mlir-tblgen + MLIRIR: the second identical
    compile of one build hits the first; the report counts it, so the proof can tell such
    a hit from a warm one."""
    src = layout(tmp_path / "ws")
    cmake = src / "CMakeLists.txt"
    cmake.write_text(
        cmake.read_text(encoding="utf-8")
        + "add_library(again STATIC alpha.c)\ntarget_include_directories(again PUBLIC include)\n",
        encoding="utf-8",
    )
    cold, _ = build(src, tmp_path / "cc", tmp_path)
    assert (cold["objects"], cold["hits"], cold["repeated_compiles"]) == (5, 1, 1), cold


@needs_tools
def test_one_file_change_misses_that_file_only(tmp_path):
    cc = tmp_path / "cc"
    src = layout(tmp_path / "ws")
    build(src, cc, tmp_path)
    (src / "beta.c").write_text((src / "beta.c").read_text() + "int beta2(int x) { return x; }\n")
    again, _ = build(src, cc, tmp_path)
    assert (again["hits"], again["misses"]) == (3, 1)
    assert again["save_ok"] is True  # a new object: worth a new snapshot


@needs_tools
@pytest.mark.parametrize("damage", ["truncated", "corrupt", "no-seal"])
def test_damaged_restore_builds_cold_and_reseals(tmp_path, damage):
    cc = tmp_path / "cc"
    src = layout(tmp_path / "ws")
    build(src, cc, tmp_path)
    entries = sorted(p for p in cc.rglob("*") if p.is_file() and p.name != seal.SEAL_NAME)
    if damage == "truncated":
        for p in entries[len(entries) // 2 :]:
            p.unlink()
    elif damage == "corrupt":
        biggest = max(entries, key=lambda p: p.stat().st_size)
        biggest.write_bytes(b"\xff" * biggest.stat().st_size)
    else:
        (cc / seal.SEAL_NAME).unlink()
    report, result = build(src, cc, tmp_path)
    assert report["restored"]["state"] == "damaged"
    assert any("cleared, building cold" in f for f in report["faults"]), report["faults"]
    assert (report["hits"], report["misses"], report["save_ok"]) == (0, 4, True)
    assert seal.check_seal(cc).state == "intact"  # resealed after the cold build
    assert "fault: restored ccache folder damaged" in result.stdout


@needs_tools
def test_failed_restore_step_clears_what_it_left(tmp_path):
    cc = tmp_path / "cc"
    src = layout(tmp_path / "ws")
    build(src, cc, tmp_path)
    report, _ = build(src, cc, tmp_path, "--restore-outcome", "failure")
    assert report["restored"]["reason"] == "the restore step failed" and report["hits"] == 0


@needs_tools
def test_unreachable_remote_keeps_the_build_going(tmp_path, gh):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    src = layout(tmp_path / "ws")
    report, result = build(
        src,
        tmp_path / "cc",
        tmp_path,
        "--remote-storage",
        f"redis://127.0.0.1:{port}",
        env=gh.env(),
    )
    assert report["exit_status"] == 0 and report["objects"] == 4
    assert report["remote_storage"] == ""
    assert any("unreachable" in f for f in report["faults"])
    assert "unreachable" in gh.summary_text()
    assert gh.outputs()["save-ok"] == "true"


@needs_tools
def test_full_disk_turns_ccache_off_and_saves_nothing(tmp_path, gh):
    src = layout(tmp_path / "ws")
    cc = tmp_path / "cc"
    report, _ = build(src, cc, tmp_path, "--min-free", "1000TB", env=gh.env())
    assert report["exit_status"] == 0  # the build went on
    assert report["objects"] == 0 and report["save_ok"] is False
    assert any("disk:" in f and "nothing will be saved" in f for f in report["faults"])
    assert not (cc / seal.SEAL_NAME).exists()
    assert gh.outputs()["save-ok"] == "false"
    assert (src.parent / "build" / "fixture_main").is_file()


@needs_tools
def test_failed_build_is_not_sealed(tmp_path, gh):
    src = layout(tmp_path / "ws")
    (src / "beta.c").write_text("this is not C\n")
    report, result = build(src, tmp_path / "cc", tmp_path, env=gh.env(), check=False)
    assert result.returncode == 1
    assert report["save_ok"] is False and not (tmp_path / "cc" / seal.SEAL_NAME).exists()
    assert gh.outputs()["save-ok"] == "false"


@needs_tools
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_remote_store_alone_serves_a_fresh_folder(tmp_path, gh):
    password = "pw-" + "x" * 20
    with proof.redis_server(tmp_path / "redis", password) as port:
        url = f"redis://127.0.0.1:{port}"
        env = clean_env(LLVM_MLIR_REMOTE_PASSWORD=password)
        src = layout(tmp_path / "ws")
        first, out1 = build(src, tmp_path / "cc1", tmp_path, "--remote-storage", url, env=env)
        assert first["misses"] == 4 and proof.redis_keys(port, password) > 0
        second, out2 = build(src, tmp_path / "cc2", tmp_path, "--remote-storage", url, env=env)
    assert (second["remote_hits"], second["hits"], second["remote_hit_rate"]) == (4, 4, 1.0)
    assert password not in out1.stdout + out1.stderr + out2.stdout + out2.stderr
    assert second["remote_storage"] == f"redis://***@127.0.0.1:{port}"


def test_env_exports_settings_and_config_hash(tmp_path, gh):
    run_ci(
        "llvm-build",
        "env",
        "--source-dir",
        tmp_path / "w" / "llvm-project",
        "--build-dir",
        tmp_path / "w" / "llvm-build",
        "--ccache-dir",
        tmp_path / "cc",
        "--pin",
        "llvm-project=" + "a" * 40,
        env=gh.env(),
    )
    exported, outputs = gh.exported(), gh.outputs()
    assert exported["CCACHE_BASEDIR"] == str((tmp_path / "w").resolve())
    assert exported["CCACHE_COMPILERCHECK"] == "content"
    assert exported["CCACHE_MAXSIZE"] == outputs["max-size"] == "1127M"  # 0.35 x 10 GiB / 3 x 0.9
    assert "llvm=llvm-project=" + "a" * 40 in outputs["config-hash"]
    assert "-DLLVM_ENABLE_PROJECTS=mlir" in outputs["config-hash"]


# -- Debian's source package -------------------------------------------------------------------


def test_deb_src_entry_mirrors_the_deb_entry(tmp_path):
    (tmp_path / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n"
        "Components: main\n",
        encoding="utf-8",
    )
    entry = llvm_source.deb_src_entry(tmp_path, tmp_path / "none.list")
    assert entry.startswith("Types: deb-src\nURIs: http://deb.debian.org/debian\n")
    assert "Suites: bookworm bookworm-updates\n" in entry and "Signed-By:" in entry
    (tmp_path / "src.sources").write_text(entry, encoding="utf-8")
    assert llvm_source.deb_src_entry(tmp_path, tmp_path / "none.list") is None
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(llvm_source.CIError, match="no Debian"):
        llvm_source.deb_src_entry(empty, tmp_path / "none.list")


def test_unpack_takes_only_the_build_folders(tmp_path):
    tree = tmp_path / "tree" / "llvm-toolchain-15_15.0.6"
    for folder in ("llvm", "mlir", "cmake", "third-party", "clang", "lldb"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "CMakeLists.txt").write_text(folder, encoding="utf-8")
    tarball = tmp_path / "llvm-toolchain-15_15.0.6.orig.tar.xz"
    with lzma.open(tarball, "wb") as xz, tarfile.open(fileobj=xz, mode="w") as tar:
        tar.add(tree, arcname=tree.name)
    dest = tmp_path / "src"
    (dest / "half-unpacked").mkdir(parents=True)  # an interrupted earlier run
    root = llvm_source.unpack(tarball, dest)
    assert root == (dest / tree.name).resolve()
    assert sorted(p.name for p in root.iterdir()) == ["cmake", "llvm", "mlir", "third-party"]
    assert not (dest / "half-unpacked").exists()
    assert llvm_source.unpack(tarball, dest) == root  # the marker: not unpacked again


# -- the workflow and act_local -------------------------------------------------------------------


def test_workflow_saves_only_a_sealed_folder():
    wf = yaml.safe_load((REPO / ".github" / "workflows" / "build-from-source.yml").read_text())
    job = wf["jobs"]["llvm-mlir"]
    names = [s.get("name", "") for s in job["steps"]]
    order = [
        "Restore the ccache folder",
        "Build LLVM/MLIR through ccache",
        "ccache statistics",
        "Measure the ccache folder",
        "Save the ccache folder (the plan decides)",
    ]
    assert [n for n in names if n in order] == order
    save = job["steps"][names.index(order[-1])]
    assert "steps.build.outputs.save-ok == 'true'" in save["if"]
    assert save["uses"] == "./.github/actions/cache-save"  # which plans before it saves
    build_step = job["steps"][names.index(order[1])]
    assert (
        build_step["env"]["LLVM_MLIR_REMOTE_PASSWORD"] == "${{ secrets.LLVM_MLIR_REMOTE_PASSWORD }}"
    )
    assert "secrets." not in json.dumps(job["env"])  # the password is in the build step only


def test_act_local_secret_needs_a_set_variable(monkeypatch):
    monkeypatch.setenv("SOME_SECRET", "x")
    assert act_local.secret_names(["SOME_SECRET"]) == ["SOME_SECRET"]
    monkeypatch.delenv("SOME_SECRET")
    with pytest.raises(act_local.CIError, match="set SOME_SECRET"):
        act_local.secret_names(["SOME_SECRET"])
    with pytest.raises(act_local.CIError, match="not GITHUB_TOKEN"):
        act_local.secret_names(["GITHUB_TOKEN"])


@needs_tools
def test_auto_ccache_is_the_one_that_wrote_the_folder(tmp_path):
    wrapper = tmp_path / "bin" / "my-ccache"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("ccache")} "$@"\n')
    wrapper.chmod(0o755)
    cc = tmp_path / "cc"
    src = layout(tmp_path / "ws")
    first, _ = build(src, cc, tmp_path, "--ccache", str(wrapper))
    assert first["ccache"] == str(wrapper) and first["ccache_version"].startswith("ccache version")
    (src / "beta.c").write_text((src / "beta.c").read_text() + "int beta3(void) { return 3; }\n")
    second, _ = build(src, cc, tmp_path)  # --ccache auto
    assert second["ccache"] == str(wrapper)
    data = json.loads((cc / seal.SEAL_NAME).read_text())
    data["writer"]["version"] = "ccache version 0.1"
    (cc / seal.SEAL_NAME).write_text(json.dumps(data))
    third, _ = build(src, cc, tmp_path)
    assert any("written by ccache version 0.1" in f for f in third["faults"]), third["faults"]
