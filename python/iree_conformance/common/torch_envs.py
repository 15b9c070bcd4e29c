"""The running environment's torch, put into a per-version environment by hard links.

A per-version environment (common/version_envs.py) that runs torch cases needs torch,
iree-turbine and, for the bundled models, transformers. It gets the very distributions the
running environment has, and every distribution they need, by hard-linking their installed
files: no resolver and no download runs, so no index can offer a CUDA build of several GB
for a CPU one (uv does not see pip's find-links, and PyPI's default Linux torch is CUDA's),
the build is the same to the byte, and the files take no new space. Where the environments
folder is on another file system, the files are copied instead. IREE's distributions are
never taken: iree-turbine requires ``iree-base-compiler`` unpinned, and each environment
keeps its own IREE.

A linked distribution's ``RECORD`` is written anew, listing only what was linked (its
scripts, outside site-packages, are left out: they name the running environment's Python),
so that the environment check (common/env_check.py) verifies every linked file's size. A
linked file is the same inode as the running environment's: the installers replace files,
never write into them, so an install or removal in either environment leaves the other's
alone.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import importlib.metadata
import io
from collections.abc import Callable, Iterable
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from iree_conformance.common import env_check
from iree_conformance.common.fsutil import link_or_copy
from iree_conformance.common.iree_index import IREE_PACKAGES

# What the torch suite imports: torch and iree-turbine (both needed), transformers (the
# bundled models; taken when installed).
REQUIRED = ("torch", "iree-turbine")
OPTIONAL = ("transformers",)

__all__ = ["OPTIONAL", "REQUIRED", "Linked", "TorchSet", "link_into", "running"]


@dataclasses.dataclass(frozen=True)
class Linked:
    """What link_into put into an environment."""

    distributions: int
    files: int
    copied: int  # of files: copied, not linked (another file system)


@dataclasses.dataclass(frozen=True)
class TorchSet:
    """torch, iree-turbine, transformers (when installed) and every distribution they
    need, as the running environment has them; IREE's left out."""

    distributions: tuple[importlib.metadata.Distribution, ...]

    def key(self) -> dict[str, str]:
        """Each distribution's version and its RECORD's sha256: another build of the same
        version (another RECORD) is another environment."""
        return {
            canonicalize_name(d.metadata["Name"]): f"{d.version} {_record_digest(d)}"
            for d in self.distributions
        }

    def version(self, name: str) -> str | None:
        found = [d.version for d in self.distributions if _name(d) == name]
        return found[0] if found else None


def _name(dist: importlib.metadata.Distribution) -> str:
    return canonicalize_name(dist.metadata["Name"] or "")


def _record_digest(dist: importlib.metadata.Distribution) -> str:
    return hashlib.sha256((dist.read_text("RECORD") or "").encode()).hexdigest()[:16]


def running(path: list[str] | None = None) -> TorchSet | None:
    """The running environment's torch set (path: where to look, default sys.path), or
    None when torch or iree-turbine is not installed there."""
    installed: dict[str, importlib.metadata.Distribution] = {}
    found_here = (
        importlib.metadata.distributions(path=path)
        if path is not None
        else importlib.metadata.distributions()
    )
    for dist in found_here:
        installed.setdefault(_name(dist), dist)  # the first on the path, as imports find
    if any(name not in installed for name in REQUIRED):
        return None
    skip = {canonicalize_name(n) for n in IREE_PACKAGES}
    wanted = [n for n in (*REQUIRED, *OPTIONAL) if n in installed]
    found: dict[str, importlib.metadata.Distribution] = {}
    while wanted:
        name = wanted.pop()
        if name in found or name in skip or name not in installed:
            continue
        found[name] = installed[name]
        wanted += _requirements(installed[name])
    return TorchSet(tuple(found[n] for n in sorted(found)))


def _requirements(dist: importlib.metadata.Distribution) -> list[str]:
    """The names dist requires here (markers evaluated for this Python, no extra)."""
    names: list[str] = []
    for text in dist.requires or []:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            names.append(canonicalize_name(req.name))
    return names


def _record_rows(dist: importlib.metadata.Distribution) -> list[list[str]]:
    return [row for row in csv.reader(io.StringIO(dist.read_text("RECORD") or "")) if row]


def link_into(env: Path, torch: TorchSet, log: Callable[[str], None] = lambda line: None) -> Linked:
    """Puts each distribution of torch that env does not hold yet into env's
    site-packages (hard links; copies across file systems), with a RECORD of what it put."""
    folders = env_check.site_packages(env)
    if not folders:
        raise OSError(f"{env} has no site-packages folder")
    site = folders[0]
    present = {_name(d) for d in importlib.metadata.distributions(path=[str(site)])}
    count = files = copied = 0
    for dist in torch.distributions:
        if _name(dist) in present:
            continue  # installed with the project's pins, at the same version
        count += 1
        root = Path(str(dist.locate_file("")))
        kept: list[list[str]] = []
        record_name = ""
        for row in _record_rows(dist):
            rel = row[0]
            parts = Path(rel).parts
            if not parts or ".." in parts or Path(rel).is_absolute():
                continue  # scripts and data outside site-packages
            if parts[-1] == "RECORD" and parts[0].endswith(".dist-info"):
                record_name = rel
                continue
            source, target = root / rel, site / rel
            if not source.is_file() or target.exists():
                continue
            files += 1
            copied += 0 if link_or_copy(source, target) else 1
            kept.append(row)
        if record_name:
            _write_record(site / record_name, kept, record_name)
    log(
        f"linked {files} files of {count} distributions from the running environment ({copied} copied)"
    )
    return Linked(count, files, copied)


def _write_record(path: Path, rows: Iterable[list[str]], name: str) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow(row)
    writer.writerow([name, "", ""])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue(), encoding="utf-8", newline="\n")
