"""The Model Zoo manifest (``ONNX_HUB_MANIFEST.json``, the format ``onnx.hub`` reads).

The manifest is a JSON list; each entry has ``model`` (a display name shared by the
opset variants, e.g. "MNIST"), ``model_path`` (e.g.
``validated/vision/classification/mnist/model/mnist-12.onnx``), ``onnx_version``,
``opset_version`` and ``metadata`` with ``model_sha`` (sha256), ``model_bytes``,
``tags``, ``io_ports`` and, for most, a ``model_with_data_path`` tarball with its own
``model_with_data_sha`` and ``model_with_data_bytes``.

A case is named by the file stem of ``model_path`` ("mnist-12", "squeezenet1.1-7"),
which is unique in the manifest where the display names are not; its id is
``onnx-zoo/<name>``.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = [
    "CASE_ID_PREFIX",
    "ManifestError",
    "ZooEntry",
    "load_manifest",
    "parse_manifest",
    "select_entries",
]

CASE_ID_PREFIX = "onnx-zoo/"


class ManifestError(Exception):
    """The manifest cannot be read, is malformed, or a selection names unknown models."""


@dataclass(frozen=True)
class ZooEntry:
    """One model of the manifest."""

    name: str
    model: str
    model_path: str
    opset: int
    model_sha: str
    model_bytes: int
    onnx_version: str = ""
    tags: tuple[str, ...] = ()
    io_ports: Mapping[str, Any] | None = field(default=None, compare=False)
    data_path: str | None = None
    data_sha: str | None = None
    data_bytes: int | None = None

    @property
    def case_id(self) -> str:
        return f"{CASE_ID_PREFIX}{self.name}"

    @property
    def has_data(self) -> bool:
        return self.data_path is not None


def _entry_name(model_path: str) -> str:
    name = PurePosixPath(model_path).name
    return name[: -len(".onnx")] if name.endswith(".onnx") else name


def _require(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise ManifestError(f"{where}: missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ManifestError(f"{where}: field {key!r} is {value!r}, not of the expected type")
    return value


def _parse_entry(raw: Any, index: int, source: str) -> ZooEntry:
    label = raw.get("model", "?") if isinstance(raw, dict) else "?"
    where = f"{source}: entry #{index} ({label!r})"
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: expected an object, found {type(raw).__name__}")
    model = _require(raw, "model", str, where)
    model_path = _require(raw, "model_path", str, where)
    opset = _require(raw, "opset_version", int, where)
    meta = _require(raw, "metadata", dict, where)
    sha = _require(meta, "model_sha", str, where + " metadata")
    size = _require(meta, "model_bytes", int, where + " metadata")
    data_path = meta.get("model_with_data_path")
    data_sha = data_bytes = None
    if data_path is not None:
        data_path = _require(meta, "model_with_data_path", str, where + " metadata")
        data_sha = _require(meta, "model_with_data_sha", str, where + " metadata")
        data_bytes = _require(meta, "model_with_data_bytes", int, where + " metadata")
    for path in (model_path, data_path):
        if path is not None and (
            path.startswith("/")
            or ".." in PurePosixPath(path).parts
            or "\\" in path  # a Windows separator: "..\\x" would climb there
            or ":" in path  # a drive ("C:x") or a URL scheme
            or "\x00" in path
        ):
            raise ManifestError(
                f"{where}: path {path!r} must be relative, '/'-separated, without '..'"
            )
    tags = meta.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ManifestError(f"{where}: metadata field 'tags' must be a list of strings")
    io_ports = meta.get("io_ports")
    if io_ports is not None and not isinstance(io_ports, dict):
        raise ManifestError(f"{where}: metadata field 'io_ports' must be an object")
    return ZooEntry(
        name=_entry_name(model_path),
        model=model,
        model_path=model_path,
        opset=opset,
        model_sha=sha.lower(),
        model_bytes=size,
        onnx_version=str(raw.get("onnx_version", "")),
        tags=tuple(tags),
        io_ports=io_ports,
        data_path=data_path,
        data_sha=data_sha.lower() if data_sha else None,
        data_bytes=data_bytes,
    )


def parse_manifest(text: str | bytes, source: str) -> list[ZooEntry]:
    """Entries of a manifest's JSON text; ``source`` names it in errors."""
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ManifestError(f"{source}: not valid JSON ({e})") from e
    if not isinstance(raw, list):
        raise ManifestError(
            f"{source}: expected a JSON list of model entries, found {type(raw).__name__}"
        )
    entries = [_parse_entry(item, i, source) for i, item in enumerate(raw)]
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if entry.name in seen:
            raise ManifestError(
                f"{source}: entries #{seen[entry.name]} and #{i} both name {entry.name!r}"
            )
        seen[entry.name] = i
    return entries


def load_manifest(source: str | Path, *, timeout: float = 60.0) -> list[ZooEntry]:
    """Read a manifest from a file path or an http(s) URL."""
    text = str(source)
    if text.startswith(("http://", "https://")):
        import requests

        try:
            response = requests.get(text, timeout=timeout)
        except requests.RequestException as e:
            raise ManifestError(f"{text}: cannot fetch the manifest ({e})") from e
        if response.status_code != 200:
            raise ManifestError(f"{text}: fetching the manifest gave HTTP {response.status_code}")
        return parse_manifest(response.content, text)
    path = Path(os.fspath(source))
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ManifestError(f"{path}: cannot read the manifest ({e.strerror or e})") from e
    return parse_manifest(data, str(path))


def _split(values: str | Iterable[str] | None) -> list[str]:
    if values is None:
        return []
    items = values.split(",") if isinstance(values, str) else list(values)
    return [v.strip() for v in items if v and v.strip()]


def select_entries(
    entries: Sequence[ZooEntry],
    *,
    names: str | Iterable[str] | None = None,
    tags: str | Iterable[str] | None = None,
    max_bytes: int | None = None,
    with_data: bool = False,
) -> list[ZooEntry]:
    """Filter entries; every given criterion must hold.

    ``names``: a comma list or iterable of names ("mnist-12") or case ids
    ("onnx-zoo/mnist-12"), case-insensitive; an unknown name raises ``ManifestError``
    with the nearest names. ``tags``: keep entries with any of these tags
    (case-insensitive). ``max_bytes``: keep entries whose download is at most this many
    bytes (the tarball's size when ``with_data`` and the entry has one, else the
    model's). The result keeps the manifest's order.
    """
    by_name = {e.name.lower(): e for e in entries}
    wanted = _split(names)
    chosen: list[ZooEntry] = list(entries)
    if wanted:
        picked = set()
        for name in wanted:
            key = name.lower().removeprefix(CASE_ID_PREFIX)
            if key not in by_name:
                near = difflib.get_close_matches(key, list(by_name), n=5, cutoff=0.5)
                hint = (
                    f"; did you mean {', '.join(by_name[n].name for n in near)}?"
                    if near
                    else "; names are model_path file stems such as 'mnist-12'"
                )
                raise ManifestError(f"unknown Model Zoo model {name!r}{hint}")
            picked.add(by_name[key].name)
        chosen = [e for e in chosen if e.name in picked]
    tag_set = {t.lower() for t in _split(tags)}
    if tag_set:
        chosen = [e for e in chosen if tag_set & {t.lower() for t in e.tags}]
    if max_bytes is not None:

        def size(e: ZooEntry) -> int:
            return e.data_bytes if with_data and e.data_bytes is not None else e.model_bytes

        chosen = [e for e in chosen if size(e) <= max_bytes]
    return chosen
