"""Fetch a pinned llvm-project source offline, from Debian's llvm-toolchain source package.

On GitHub the LLVM/MLIR build checks out the llvm-project commit IREE pins (the
workflow's checkout step). Where github.com is out of reach (act, .ci/run) the same
monorepo layout comes from Debian: the source package named by [llvm.debian] of
ci/source_build/pins.toml (llvm-toolchain-15, LLVM 15.0.6). This script

- adds a deb-src entry for the Debian mirror the host already uses (same URIs, suites,
  components and key as its `deb` entry) when there is none, and runs apt-get update;
- runs `apt-get source --download-only PACKAGE` into DEST/download (kept: a second call
  downloads nothing);
- unpacks only the folders the build needs (llvm/ mlir/ cmake/ third-party/) of the
  .orig tarball into DEST/src, marked complete by DEST/src/.unpacked only once tar
  finished (a half-unpacked folder is removed and unpacked again).

Outputs (and prints): source-dir (the monorepo root: it holds llvm/ and mlir/),
version, pin (the package and version, for the cache key).

Example:
  python -m ci llvm-source debian --dest .ci-cache/llvm-source
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from ci._common import CIError, set_outputs
from ci.source_build.pins import PINS_FILE, load_pins

SOURCES_DIR = Path("/etc/apt/sources.list.d")
DEB_SRC_FILE = "iree-conformance-deb-src.sources"
FOLDERS = ("llvm", "mlir", "cmake", "third-party")
MARKER = ".unpacked"


def deb822_stanzas(text: str) -> list[dict[str, str]]:
    """The stanzas of a deb822 .sources file, comments dropped."""
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            if current:
                stanzas.append(current)
            current = {}
            continue
        if line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip()] = value.strip()
    if current:
        stanzas.append(current)
    return stanzas


def deb_src_entry(sources_dir: Path = SOURCES_DIR, sources_list: Path | None = None) -> str | None:
    """A deb-src entry mirroring the host's Debian `deb` entry, or None when one exists.

    Raises CIError when the host has no Debian `deb` entry to copy."""
    found: dict[str, str] | None = None
    for path in sorted(sources_dir.glob("*.sources")):
        for stanza in deb822_stanzas(path.read_text(encoding="utf-8", errors="replace")):
            types = stanza.get("Types", "").split()
            uris = stanza.get("URIs", "")
            if "/debian" not in uris or "security" in uris:
                continue
            if "deb-src" in types:
                return None
            if "deb" in types and found is None:
                found = stanza
    if found is None:
        legacy = sources_list or Path("/etc/apt/sources.list")
        lines = legacy.read_text(encoding="utf-8").splitlines() if legacy.is_file() else []
        if any(line.split()[:1] == ["deb-src"] for line in lines):
            return None
        for line in lines:
            parts = line.split()
            if parts[:1] == ["deb"] and any("/debian" in p for p in parts):
                return "deb-src" + line.strip()[3:] + "\n"
        raise CIError(
            "no Debian `deb` entry in /etc/apt to copy as deb-src: this offline mode needs a "
            "Debian host (on GitHub the workflow checks out llvm-project instead)"
        )
    fields = ["URIs", "Suites", "Components", "Signed-By"]
    body = "".join(f"{k}: {found[k]}\n" for k in fields if k in found)
    return "Types: deb-src\n" + body


def run_logged(argv: list[str], cwd: Path | None = None) -> None:
    print("+ " + " ".join(argv), flush=True)
    try:
        result = subprocess.run(argv, cwd=cwd)
    except FileNotFoundError:
        raise CIError(f"{argv[0]} is not on PATH (Debian's apt is needed here)") from None
    if result.returncode:
        raise CIError(f"{' '.join(argv)} failed with exit status {result.returncode}")


def ensure_deb_src() -> None:
    entry = deb_src_entry()
    if entry is None:
        return
    target = SOURCES_DIR / DEB_SRC_FILE
    print(f"adding {target}:\n{entry}", flush=True)
    target.write_text(entry, encoding="utf-8", newline="\n")
    run_logged(["apt-get", "update", "-qq"])


def download(package: str, folder: Path) -> Path:
    """The package's .orig tarball, downloaded with apt-get source when not there yet."""
    folder.mkdir(parents=True, exist_ok=True)
    tarballs = sorted(folder.glob(f"{package}_*.orig.tar.*"))
    if not tarballs:
        ensure_deb_src()
        run_logged(["apt-get", "source", "--download-only", "-qq", package], cwd=folder)
        tarballs = sorted(folder.glob(f"{package}_*.orig.tar.*"))
    if not tarballs:
        raise CIError(f"apt-get source {package} left no .orig tarball in {folder}")
    return tarballs[-1]


def tarball_root(tarball: Path) -> str:
    """The tarball's top folder (llvm-toolchain-15_15.0.6.orig or similar)."""
    with subprocess.Popen(["tar", "-tf", str(tarball)], stdout=subprocess.PIPE, text=True) as p:
        assert p.stdout is not None
        first = p.stdout.readline().strip()
        p.kill()
    root = first.split("/", 1)[0]
    if not root:
        raise CIError(f"{tarball}: empty or unreadable tarball")
    return root


def unpack(tarball: Path, dest: Path) -> Path:
    """llvm/ mlir/ cmake/ third-party/ of the tarball under dest; the monorepo root."""
    marker = dest / MARKER
    if marker.is_file():
        return Path(marker.read_text(encoding="utf-8").strip())
    if dest.exists():
        shutil.rmtree(dest)  # a half-unpacked folder from an interrupted run
    dest.mkdir(parents=True)
    root = tarball_root(tarball)
    run_logged(["tar", "-xf", str(tarball), "-C", str(dest), *(f"{root}/{f}" for f in FOLDERS)])
    source = (dest / root).resolve()
    if not (source / "llvm" / "CMakeLists.txt").is_file():
        raise CIError(f"{tarball}: no llvm/CMakeLists.txt under {root}/")
    marker.write_text(str(source) + "\n", encoding="utf-8", newline="\n")
    return source


def cmd_debian(args: argparse.Namespace) -> int:
    pins = load_pins(Path(args.pins))
    debian = pins.get("llvm", {}).get("debian", {})
    package = args.package or debian.get("package")
    if not package:
        raise CIError(f"{args.pins}: [llvm.debian] package is required (or pass --package)")
    dest = Path(args.dest).resolve()
    tarball = download(package, dest / "download")
    source = unpack(tarball, dest / "src")
    version = tarball.name.split("_", 1)[1].split(".orig", 1)[0]
    values = {"source-dir": str(source), "version": version, "pin": f"{package}={version}"}
    set_outputs(values)
    for key, value in values.items():
        print(f"{key}: {value}")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pins", default=str(PINS_FILE), help="pins file")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("debian", help="Debian's llvm-toolchain source package, unpacked")
    d.add_argument("--dest", required=True, help="cache folder (download/ and src/ inside)")
    d.add_argument("--package", help="source package (default [llvm.debian] package)")
    d.set_defaults(func=cmd_debian)


def run(args: argparse.Namespace) -> int:
    return int(args.func(args))
