"""Reading a bundle without trusting it: the manifest's digest, its records' fields, and
every path it names kept inside the bundle folder.

A bundle is a folder someone copied here. Before ``run-bundle`` opens anything a manifest
names, this module checks that

- ``manifest.json`` matches ``manifest.json.sha256`` beside it (written by
  ``--compile-only --bundle``): an edit made after the bundle was written (expectations
  removed, tolerances widened) is refused. This is integrity, not authenticity: it catches
  accidental damage and a hand edit, not someone who edits the manifest and writes the new
  digest too. Sign the folder (or copy it over a channel you trust) for that.
- every record has the fields run-bundle reads, of the right types;
- every path a record names (``module``, ``data``) is relative, has no ``..`` and, with
  symlinks resolved, stays inside the bundle folder; the file is then read once and
  checked against its sha256 before anything uses its bytes.

Each problem is a ``BundleError`` (exit 5) naming the file and the record.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from iree_conformance.common.errors import BundleError
from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.model.compare import Tolerance
from iree_conformance.model.quantization import QuantGrid

__all__ = [
    "DIGEST_NAME",
    "MANIFEST_NAME",
    "bundle_file",
    "check_digest",
    "check_manifest",
    "check_record",
    "portable_path",
    "parse_manifest",
    "read_manifest_bytes",
    "read_verified",
    "write_digest",
]

MANIFEST_NAME = "manifest.json"
DIGEST_NAME = "manifest.json.sha256"  # sha256sum's format: "<hex>  manifest.json"

_HEX = frozenset("0123456789abcdef")

# Field: (types accepted, required). bool is excluded from int below.
_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "case_id": ((str,), True),
    "suite": ((str,), True),
    "target": ((str,), True),
    "module": ((str,), True),
    "module_sha256": ((str,), True),
    "data": ((str,), True),
    "data_sha256": ((str,), True),
    "input_sets": ((int,), True),
    "tolerances": ((list,), True),
    "entry_function": ((str, type(None)), False),
    "info": ((dict,), False),
    "source": ((dict, type(None)), False),
    "checks": ((list,), False),
    "unjudged": ((str,), False),
    "expected": ((dict,), False),
    "bf16": ((list,), False),  # the .npz keys holding bfloat16 as its uint16 bits
}
_TOLERANCE_KEYS = frozenset(f.name for f in dataclasses.fields(Tolerance))


def _grids_ok(grids: Any) -> bool:
    """A tolerance's quantization grids as ``dataclasses.asdict`` wrote them: a list of
    None or grids with a finite positive step and known element-wise ops."""
    if not isinstance(grids, list):
        return False
    for grid in grids:
        if grid is None:
            continue
        try:
            parsed = QuantGrid.from_plain(grid)
        except (KeyError, TypeError, ValueError, AttributeError):
            return False
        if not math.isfinite(parsed.step) or parsed.step <= 0:
            return False
    return True


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_digest(root: Path, manifest_bytes: bytes) -> Path:
    """Writes ``manifest.json.sha256`` for the manifest bytes just written."""
    return atomic_write_text(
        Path(root) / DIGEST_NAME, f"{_sha256(manifest_bytes)}  {MANIFEST_NAME}\n"
    )


def read_manifest_bytes(root: Path) -> bytes:
    """The manifest's bytes, refused unless they match the digest written beside them."""
    root = Path(root)
    path = root / MANIFEST_NAME
    return _read_bytes(
        path,
        missing=f"{path} not found: is {root} a bundle made by --compile-only --bundle?",
        unreadable=f"{path}: cannot be read",
    )


def _read_bytes(path: Path, missing: str, unreadable: str) -> bytes:
    """path's bytes; a BundleError saying ``missing``, or ``unreadable`` and the reason."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise BundleError(missing) from None
    except OSError as e:
        raise BundleError(f"{unreadable} ({e.strerror})") from None


def check_digest(root: Path, data: bytes) -> None:
    """Refuses manifest bytes that do not match ``manifest.json.sha256``."""
    digest_path = Path(root) / DIGEST_NAME
    try:
        recorded = digest_path.read_text(encoding="ascii", errors="replace").split()
    except FileNotFoundError:
        raise BundleError(
            f"{digest_path} is missing: the bundle's manifest cannot be checked; "
            "copy the bundle whole or rebuild it (--compile-only --bundle)"
        ) from None
    except OSError as e:
        raise BundleError(f"{digest_path}: cannot be read ({e.strerror})") from None
    if not recorded or recorded[0].lower() != _sha256(data):
        raise BundleError(
            f"{Path(root) / MANIFEST_NAME} does not match its digest in {DIGEST_NAME} "
            "(edited or damaged after the bundle was written); rebuild the bundle"
        )


def _type_name(types: tuple[type, ...]) -> str:
    return " or ".join("null" if t is type(None) else t.__name__ for t in types)


def check_record(record: Any, index: int, where: Path) -> None:
    """Refuses a case record with a missing or wrong-typed field run-bundle reads."""
    label = f"{where}: case {index + 1}"
    if not isinstance(record, dict):
        raise BundleError(f"{label} is not an object; rebuild the bundle")
    if isinstance(record.get("case_id"), str):
        label += f" ({record['case_id']!r})"  # repr: no control character reaches a terminal
    for name, (types, required) in _FIELDS.items():
        if name not in record:
            if required:
                raise BundleError(f"{label} has no {name!r}; rebuild the bundle")
            continue
        value = record[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise BundleError(
                f"{label}: {name!r} is {type(value).__name__}, not {_type_name(types)}; "
                "rebuild the bundle"
            )
    for name in ("case_id", "suite", "target"):  # printed and rendered: no control characters
        if not record[name] or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in record[name]):
            raise BundleError(
                f"{label}: {name!r} is empty or holds control characters; rebuild the bundle"
            )
    for name in ("module_sha256", "data_sha256"):
        if len(record[name]) != 64 or not set(record[name]) <= _HEX:
            raise BundleError(f"{label}: {name!r} is not a sha256 digest; rebuild the bundle")
    if record["input_sets"] < 0:
        raise BundleError(f"{label}: 'input_sets' is negative; rebuild the bundle")
    tolerances = record["tolerances"]
    if len(tolerances) < record["input_sets"] or not all(
        isinstance(t, dict)
        and set(t) <= _TOLERANCE_KEYS
        and all(
            v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
            for k, v in t.items()
            if k != "grids"
        )
        and _grids_ok(t.get("grids", []))
        for t in tolerances
    ):
        raise BundleError(
            f"{label}: 'tolerances' must hold one tolerance object (rtol, atol, max_ulp) per input set; "
            "rebuild the bundle"
        )
    expected = record.get("expected")
    if expected is not None:
        stage = expected.get("stage")
        stage_ok = isinstance(stage, str) or (
            isinstance(stage, list) and bool(stage) and all(isinstance(s, str) for s in stage)
        )
        if (
            not stage_ok
            or not isinstance(expected.get("reason"), str)
            or not isinstance(expected.get("path"), (str, type(None)))
            or not isinstance(expected.get("line"), (int, type(None)))
        ):
            raise BundleError(
                f"{label}: 'expected' needs a 'stage' and a 'reason' (and a text 'path', "
                "a whole 'line' if any); rebuild the bundle"
            )


def parse_manifest(root: Path, data: bytes) -> dict[str, Any]:
    """The manifest's JSON object, refused when it is not one with a list of cases."""
    path = Path(root) / MANIFEST_NAME
    try:
        manifest = json.loads(data)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        raise BundleError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("cases"), list):
        raise BundleError(f"{path}: not a bundle manifest (no list of cases)")
    return manifest


def check_manifest(root: Path, data: bytes, manifest: dict[str, Any]) -> None:
    """Checks the manifest's digest, then each case record and the targets table."""
    path = Path(root) / MANIFEST_NAME
    check_digest(root, data)
    for index, record in enumerate(manifest["cases"]):
        check_record(record, index, path)
    if not isinstance(manifest.get("targets", {}), dict):
        raise BundleError(f"{path}: 'targets' is not an object; rebuild the bundle")


def bundle_file(root: Path, relative: str) -> Path:
    """The file ``relative`` names inside the bundle, refused (before anything opens it)
    when it is absolute, climbs with ``..`` or resolves, through a symlink, outside."""
    root = Path(root)
    posix, windows = PurePosixPath(relative), PureWindowsPath(relative)
    if (
        not relative
        or "\x00" in relative
        or posix.is_absolute()
        or windows.is_absolute()
        or windows.drive
        or ".." in posix.parts
        or ".." in windows.parts
    ):
        raise BundleError(
            f"{root / MANIFEST_NAME} names {relative!r}, which is not a path inside the bundle; "
            "refusing to read it (rebuild the bundle)"
        )
    path = root / posix
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        raise BundleError(
            f"bundle file {path} is missing; rebuild the bundle or copy it whole"
        ) from None
    except (OSError, RuntimeError) as e:  # a symlink loop
        raise BundleError(f"bundle file {path} cannot be resolved ({e})") from None
    if not resolved.is_relative_to(root.resolve()):
        raise BundleError(
            f"bundle file {path} is a link to {resolved}, outside the bundle; refusing to read "
            "it (copy the bundle with its files, not links to them)"
        )
    if not resolved.is_file():
        raise BundleError(f"bundle file {path} is not a regular file; rebuild the bundle")
    return path


def read_verified(root: Path, relative: str, digest: str) -> bytes:
    """The bytes of a bundle file, after the containment check, checked against ``digest``."""
    path = bundle_file(root, relative)
    data = _read_bytes(
        path,
        missing=f"bundle file {path} is missing; rebuild the bundle or copy it whole",
        unreadable=f"bundle file {path} cannot be read",
    )
    if _sha256(data) != digest:
        raise BundleError(
            f"bundle file {path} does not match its sha256 in manifest.json (tampered or truncated)"
        )
    return data


def portable_path(path: str | os.PathLike[str], roots: list[Path]) -> str | None:
    """``path`` as a bundle records it: relative ("/" separated) to the first of ``roots``
    (the checkout) that holds it; None outside them, so that a bundle names no folder of
    the machine that made it (nor a relative path that would point at the wrong file)."""
    p = Path(os.path.abspath(path))
    for root in roots:
        try:
            return p.relative_to(os.path.abspath(root)).as_posix()
        except ValueError:
            continue
    return None
