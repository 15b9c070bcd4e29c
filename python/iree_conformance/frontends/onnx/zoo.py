"""The real ONNX Model Zoo: selected manifest entries, fetched into a verified cache.

Where files come from is a setting: a URL template (``--zoo-mirror`` or the
``IREE_CONFORMANCE_ZOO_MIRROR`` environment variable) in which ``{model_path}`` is
replaced by the manifest's path of the file (``model_path`` or
``model_with_data_path``); ``{file_name}`` (its last part) and ``{sha256}`` are also
available. The onnx/models repository stopped serving Git LFS downloads in July 2025
and its models moved to Hugging Face under the ``onnxmodelzoo`` organisation; the
default template points at ``onnxmodelzoo/legacy_models``, which keeps the
repository's tree. A template may also be a local folder (``/mirror/{model_path}``).
Whatever the source, every file must match the manifest's sha256 and size.

Cache layout under ``<cache_dir>/onnx-zoo``: ``files/<sha256[:16]>-<file name>`` for
verified downloads, ``unpacked/<sha256[:16]>-<name>/`` for unpacked tarballs.
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from iree_conformance.frontends.onnx.archive import ModelData, find_model_data, safe_extract
from iree_conformance.frontends.onnx.download import (
    Downloader,
    DownloadError,
    DownloadSkipped,
    sweep_partials,
)
from iree_conformance.frontends.onnx.zoo_manifest import ZooEntry, load_manifest, select_entries

__all__ = [
    "DEFAULT_MIRROR",
    "MIRROR_ENV",
    "DownloadError",
    "DownloadSkipped",
    "ZooCase",
    "ZooError",
    "ZooStore",
    "file_url",
    "mirror_template",
    "unsupported_reason",
    "zoo_cases",
]

DEFAULT_MIRROR = "https://huggingface.co/onnxmodelzoo/legacy_models/resolve/main/{model_path}"
MIRROR_ENV = "IREE_CONFORMANCE_ZOO_MIRROR"
_PLACEHOLDERS = {"model_path", "file_name", "sha256"}


class ZooError(Exception):
    """A bad mirror template or an unusable downloaded archive."""


def mirror_template(option: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The URL template in force: the command-line option, then the environment, then
    ``DEFAULT_MIRROR``."""
    environ = os.environ if environ is None else environ
    template = option or environ.get(MIRROR_ENV) or DEFAULT_MIRROR
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    unknown = fields - _PLACEHOLDERS
    if unknown or not fields & {"model_path", "file_name"}:
        raise ZooError(
            f"zoo mirror template {template!r} must contain {{model_path}} or {{file_name}} "
            f"and only placeholders from {sorted(_PLACEHOLDERS)}"
            + (f" (unknown: {sorted(unknown)})" if unknown else "")
        )
    return template


def file_url(template: str, path: str, sha256: str) -> str:
    """The URL of one manifest file under ``template``."""
    return template.format(model_path=path, file_name=PurePosixPath(path).name, sha256=sha256)


def unsupported_reason(entry: ZooEntry) -> str | None:
    """Why the runtime path cannot feed this model, from its manifest io_ports."""
    ports = (entry.io_ports or {}).get("inputs", [])
    for port in ports:
        kind = str(port.get("type", ""))
        if kind.startswith("seq("):
            return f"sequence input '{port.get('name')}' is unsupported by the runtime path"
        if kind.startswith("map("):
            return f"map input '{port.get('name')}' is unsupported by the runtime path"
        if kind.startswith("optional("):
            return f"optional input '{port.get('name')}' is unsupported by the runtime path"
        if kind == "tensor(string)":
            return f"string input '{port.get('name')}' is unsupported by the runtime path"
    return None


@dataclass(frozen=True)
class ZooCase:
    """One selected model; ``zoo_entry`` holds everything the manifest says about it."""

    zoo_entry: ZooEntry

    @property
    def case_id(self) -> str:
        return self.zoo_entry.case_id

    @property
    def name(self) -> str:
        return self.zoo_entry.name

    @property
    def unsupported_reason(self) -> str | None:
        return unsupported_reason(self.zoo_entry)


def zoo_cases(
    manifest: str | Path,
    *,
    names: str | Iterable[str] | None = None,
    tags: str | Iterable[str] | None = None,
    max_bytes: int | None = None,
    with_data: bool = True,
) -> list[ZooCase]:
    """Read a manifest (path or URL) and select cases; see ``select_entries``."""
    entries = select_entries(
        load_manifest(manifest), names=names, tags=tags, max_bytes=max_bytes, with_data=with_data
    )
    return [ZooCase(e) for e in entries]


class ZooStore:
    """Fetches zoo files into ``<cache_dir>/onnx-zoo`` and unpacks data tarballs."""

    def __init__(
        self,
        cache_dir: Path,
        *,
        mirror: str | None = None,
        downloader: Downloader | None = None,
        keep_archives: bool = False,
    ):
        """``mirror`` is a URL template (``mirror_template()`` when None).
        ``keep_archives`` keeps tarballs after unpacking (off: the unpacked folder is
        enough and the zoo is large)."""
        self.root = Path(cache_dir) / "onnx-zoo"
        sweep_partials(self.root)  # downloads killed over an hour ago, of any file
        self.template = mirror_template(mirror)
        self.downloader = downloader or Downloader()
        self.keep_archives = keep_archives

    def _fetch(self, path: str, sha256: str, size: int) -> Path:
        dest = self.root / "files" / f"{sha256[:16]}-{PurePosixPath(path).name}"
        return self.downloader.fetch(
            file_url(self.template, path, sha256), dest, sha256=sha256, size=size
        )

    def fetch_model(self, entry: ZooEntry) -> Path:
        """The verified ``model_path`` file (downloaded on first use)."""
        return self._fetch(entry.model_path, entry.model_sha, entry.model_bytes)

    def fetch_model_data(self, entry: ZooEntry) -> ModelData:
        """The unpacked ``model_with_data_path`` tarball: its model and data sets."""
        if entry.data_path is None or entry.data_sha is None or entry.data_bytes is None:
            raise ZooError(f"{entry.case_id}: the manifest lists no model_with_data tarball")
        unpacked = self.root / "unpacked" / f"{entry.data_sha[:16]}-{entry.name}"
        if not unpacked.is_dir():
            archive = self._fetch(entry.data_path, entry.data_sha, entry.data_bytes)
            safe_extract(archive, unpacked)
            if not self.keep_archives:
                archive.unlink(missing_ok=True)
        return find_model_data(unpacked, preferred_stem=entry.name)

    def fetch(self, entry: ZooEntry, *, with_data: bool = True) -> ModelData:
        """The model with its data sets when ``with_data`` and the entry has a tarball,
        else the bare model (whose inputs the caller generates)."""
        if with_data and entry.has_data:
            return self.fetch_model_data(entry)
        return ModelData(self.fetch_model(entry), ())
