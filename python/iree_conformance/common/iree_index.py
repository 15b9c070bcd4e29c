"""Which IREE versions an index offers, and what a version argument of
``iree-conformance versions`` / ``bisect`` means.

A version argument is a release or pre-release on the index (``3.12.0``,
``3.13.0rc20261016`` with ``--find-links``/``--pre``), a folder of locally built wheels, or
``installed`` (the IREE of the running environment). The index is PyPI (its simple JSON
API; ``$IREE_CONFORMANCE_INDEX_URL`` names another) plus every ``--find-links`` folder or
page, read as pip reads them: the wheel file names they list.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import re
import urllib.parse
from pathlib import Path

from packaging.version import InvalidVersion, Version

from iree_conformance.common.errors import ConfigurationError, EnvironmentBuildError

# The oldest IREE release the harness supports: measured (docs/versions.md) and proved by
# tests/e2e/core/test_version_envs.py, which runs a selection on it.
MINIMUM_IREE = "3.11.0"
# The IREE version the expectations manifests were recorded with (the default install).
MANIFESTS_RECORDED_FOR = "3.13.0"
COMPILER = "iree-base-compiler"
RUNTIME = "iree-base-runtime"
IREE_PACKAGES = (COMPILER, RUNTIME)
INDEX_ENV = "IREE_CONFORMANCE_INDEX_URL"
DEFAULT_INDEX = "https://pypi.org/simple"
INSTALLED = "installed"
PREVIOUS = "previous"  # the newest version on the index older than the installed one
_WHEEL = re.compile(r"iree_base_compiler-([^-\s]+)-[^/\"'<>\s]*\.whl")


class VersionError(ConfigurationError):
    """A version argument the index does not have, or one older than the harness supports."""


@dataclasses.dataclass(frozen=True)
class VersionSpec:
    """One version to test: how to install it."""

    label: str  # as the user wrote it: "3.12.0", "installed", a wheels folder
    kind: str  # "installed" | "index" | "wheels"
    version: str | None  # the iree-base-compiler version to pin (None: installed)
    find_links: tuple[str, ...] = ()
    pre: bool = False

    @property
    def slug(self) -> str:
        """The label as a file name."""
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.label).strip("_") or "version"


def parse_version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise VersionError(
            f"{text!r} is not a version: give a release (3.12.0), a pre-release with --pre, a "
            f"folder of wheels, or {INSTALLED}"
        ) from None


def installed_version() -> str | None:
    try:
        return importlib.metadata.version(COMPILER)
    except importlib.metadata.PackageNotFoundError:
        return None


def installed_revision() -> str | None:
    """The IREE commit of the installed compiler (its version.py, read without importing
    the compiler), or None."""
    import runpy

    try:
        path = importlib.metadata.distribution(COMPILER).locate_file("iree/compiler/version.py")
        revisions = runpy.run_path(str(path)).get("REVISIONS") or {}
    except (importlib.metadata.PackageNotFoundError, OSError):
        return None
    return revisions.get("IREE") if isinstance(revisions, dict) else None


def wheels_in(folder: Path) -> str:
    """The iree-base-compiler version of a folder of wheels (one version, runtime beside it)."""
    names = [p.name for p in folder.glob("*.whl")]
    versions = sorted({m.group(1) for n in names if (m := _WHEEL.match(n))})
    runtimes = [n for n in names if n.startswith("iree_base_runtime-")]
    if len(versions) != 1 or not runtimes:
        raise VersionError(
            f"{folder} holds {len(versions)} iree_base_compiler versions and "
            f"{len(runtimes)} iree_base_runtime wheels; a wheels folder needs one version of "
            "both (what build-from-source.yml uploads)"
        )
    return versions[0]


def _links_page(url: str) -> str:
    import requests

    try:
        response = requests.get(url, timeout=60)
        response.raise_for_status()
    except requests.RequestException as e:
        raise EnvironmentBuildError(
            f"cannot read the find-links page {url}: {type(e).__name__}: {e}; check the network "
            "or give a local folder of wheels"
        ) from None
    return response.text


def find_links_versions(find_links: tuple[str, ...]) -> set[str]:
    """The iree-base-compiler versions of the wheels each find-links folder or page lists."""
    found: set[str] = set()
    for link in find_links:
        if re.match(r"https?://", link):
            text = urllib.parse.unquote(_links_page(link))
        else:
            folder = Path(link)
            if not folder.is_dir():
                raise VersionError(f"--find-links {link}: no such folder (nor an http(s) URL)")
            text = "\n".join(p.name for p in folder.iterdir())
        found |= {m.group(1) for m in _WHEEL.finditer(text)}
    return found


def index_versions(index_url: str | None = None) -> set[str]:
    """Every iree-base-compiler version on the package index (PEP 691 JSON)."""
    import requests

    base = (index_url or os.environ.get(INDEX_ENV) or DEFAULT_INDEX).rstrip("/")
    url = f"{base}/{COMPILER}/"
    try:
        response = requests.get(
            url, headers={"Accept": "application/vnd.pypi.simple.v1+json"}, timeout=60
        )
        response.raise_for_status()
        versions = response.json().get("versions")
    except (requests.RequestException, ValueError) as e:
        raise EnvironmentBuildError(
            f"cannot list the IREE versions on {url}: {type(e).__name__}: {e}; check the "
            f"network (or ${INDEX_ENV}), or give a folder of wheels"
        ) from None
    if not isinstance(versions, list):
        raise EnvironmentBuildError(f"{url} answered without a version list (not a PEP 691 index)")
    return {str(v) for v in versions}


def available(find_links: tuple[str, ...], pre: bool, use_index: bool = True) -> list[str]:
    """The versions pip could install, oldest first (pre-releases only with pre)."""
    found = find_links_versions(find_links) | (index_versions() if use_index else set())
    parsed = []
    for text in found:
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if pre or not (version.is_prerelease or version.is_devrelease):
            parsed.append(version)
    return [str(v) for v in sorted(parsed)]


def nearest(version: str, versions: list[str], count: int = 4) -> list[str]:
    """The count versions closest to version in the ordered list (for an error message)."""
    target = parse_version(version)
    ordered = sorted(versions, key=Version)
    split = sum(1 for v in ordered if Version(v) < target)  # where version would go
    start = max(0, min(split - count // 2, len(ordered) - count))
    return [v for v in ordered[start : start + count] if Version(v) != target]


def check_supported(version: str) -> None:
    if parse_version(version) < Version(MINIMUM_IREE):
        raise VersionError(
            f"IREE {version} is older than {MINIMUM_IREE}, the oldest version the harness "
            f"supports (docs/versions.md); pick {MINIMUM_IREE} or newer"
        )


def check_syntax(text: str) -> None:
    """Refuses (exit 2) an argument that can name no version, before any network:
    a path that is no folder, a text that is no version, a version under the minimum."""
    if text in (INSTALLED, PREVIOUS) or Path(text).is_dir():
        return
    if "/" in text or os.sep in text:
        raise VersionError(f"{text}: no such folder of wheels")
    check_supported(text)


def index_name(find_links: tuple[str, ...] = ()) -> str:
    """Where versions are looked for, for a message: PyPI or the index's URL (without
    its user or password), and the find-links."""
    url = os.environ.get(INDEX_ENV)
    if url and url.rstrip("/") != DEFAULT_INDEX:
        parts = urllib.parse.urlsplit(url)
        where = urllib.parse.urlunsplit((parts.scheme, parts.hostname or "", parts.path, "", ""))
    else:
        where = "PyPI"
    return where + (" and " + ", ".join(find_links) if find_links else "")


def previous_of(version: str | None, offered: list[str]) -> str:
    """The newest offered version older than version (the installed IREE)."""
    if version is None:
        raise VersionError(f"{PREVIOUS}: no IREE is installed here to be previous to")
    older = [v for v in offered if Version(v) < parse_version(version)]
    if not older:
        raise VersionError(f"{PREVIOUS}: the index offers no version older than IREE {version}")
    return max(older, key=Version)


def resolve(
    text: str, find_links: tuple[str, ...], pre: bool, offered: list[str] | None
) -> VersionSpec:
    """The VersionSpec of one argument; offered: the index's versions (None: not checked)."""
    if text == INSTALLED:
        return VersionSpec(INSTALLED, "installed", installed_version(), find_links, pre)
    if text == PREVIOUS:
        text = previous_of(installed_version(), offered or [])
    folder = Path(text)
    if folder.is_dir():
        version = wheels_in(folder)
        check_supported(version)
        return VersionSpec(text, "wheels", version, (str(folder.resolve()), *find_links), True)
    check_syntax(text)
    if offered is not None:  # 3.13 and v3.13.0 are 3.13.0 (PEP 440)
        same = [v for v in offered if Version(v) == parse_version(text)]
        text = same[0] if same else text
    if offered is not None and text not in offered:
        near = ", ".join(nearest(text, offered)) or "none"
        hint = "" if pre else " (pre-releases need --pre)"
        raise VersionError(
            f"IREE {text} is not on {index_name(find_links)}{hint}; the nearest versions "
            f"there: {near}"
        )
    return VersionSpec(text, "index", text, find_links, pre or parse_version(text).is_prerelease)
