"""Collect and combine the expectation manifests that `--update-expectations` rewrote.

Nightly runs each shard with --update-expectations, which rewrites
conformance/expectations/<target>.toml (Linux: the base manifest) or
<target>.<os>.toml (macOS, Windows: the per-OS overlay) for the cases that shard ran.

  collect   In a shard job, after the run: copy every changed, added or deleted file
            under conformance/expectations into --out (with a manifest.json and the
            shard's own patch). Outputs changed=true|false.
  combine   In the final job: three-way merge each file's shard versions against the
            checked-out commit, entry by entry (the manifests hold one `"case" = {...}`
            per line): an entry one shard added, changed or removed is taken from it;
            two shards changing one entry differently is a conflict. Files not written
            that way fall back to `git merge-file`. The merged files go into the work
            tree and into one ready-to-apply patch (`git apply expectations.patch`).
            Files that cannot be merged are listed and left out of the patch; their
            shard copies stay in the shards' artifacts. Outputs changed, conflicts,
            patch.

Needs git on PATH and a checkout of the commit the shards ran on.

Examples:
  python -m ci expectations-patch collect --out expectations-out --label linux-1of4
  python -m ci expectations-patch combine shards/ --output expectations.patch --summary
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from ci._common import REPO_ROOT, CIError, append_summary, load_json, notice, set_outputs

# The manifest format has one reader: the library's manifest module (standard library
# only for reading and merging, so it imports before the full install).
from iree_conformance.common.fsutil import atomic_write_text
from iree_conformance.common.tomlio import TomlError, loads_toml
from iree_conformance.expectations.manifest import entry_tables, merge_tables, rebuild

DEFAULT_DIR = "conformance/expectations"
MANIFEST = "manifest.json"


def git(
    *args: str, cwd: Path, check: bool = True, input_text: str | None = None
) -> subprocess.CompletedProcess:
    try:
        result = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            input=input_text,
            text=True,
            encoding="utf-8",
        )
    except FileNotFoundError:
        raise CIError("git is not on PATH") from None
    if check and result.returncode != 0:
        raise CIError(f"git {' '.join(args)}: {result.stderr.strip() or result.stdout.strip()}")
    return result


def changed_files(repo: Path, folder: str) -> list[tuple[str, str]]:
    """[(posix path, 'modified'|'added'|'deleted')] under folder, from git status."""
    out = git(
        "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", folder, cwd=repo
    ).stdout
    entries = []
    items = out.split("\0")
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if len(item) < 4:
            continue
        xy, path = item[:2], item[3:]
        if xy[0] in "RC":  # a rename carries the old path next; record the new one as added
            i += 1
            entries.append((path, "added"))
        elif xy == "??" or "A" in xy:
            entries.append((path, "added"))
        elif "D" in xy:
            entries.append((path, "deleted"))
        else:
            entries.append((path, "modified"))
    return sorted(set(entries))


def intent_to_add(repo: Path, paths: list[str]) -> None:
    if paths:
        git("add", "--intent-to-add", "--", *paths, cwd=repo)


def patch_of(repo: Path, paths: list[str]) -> str:
    if not paths:
        return ""
    return git("diff", "--binary", "HEAD", "--", *paths, cwd=repo).stdout


def cmd_collect(args: argparse.Namespace) -> int:
    repo = Path(args.repo).resolve()
    out = Path(args.out).resolve()
    changes = changed_files(repo, args.dir)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for path, change in changes:
        files.append({"path": path, "change": change})
        if change != "deleted":
            target = out / "files" / Path(*PurePosixPath(path).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(repo / path, target)
    head = git("rev-parse", "HEAD", cwd=repo).stdout.strip()
    manifest = {"label": args.label, "base_commit": head, "files": files}
    (out / MANIFEST).write_text(
        json.dumps(manifest, indent=1) + "\n", encoding="utf-8", newline="\n"
    )
    intent_to_add(repo, [p for p, c in changes if c == "added"])
    (out / f"{args.label}.patch").write_text(
        patch_of(repo, [p for p, _ in changes]), encoding="utf-8", newline="\n"
    )
    set_outputs({"changed": bool(changes), "count": len(changes)})
    print(
        f"{len(changes)} changed expectation file(s)"
        + "".join(f"\n  {c:8} {p}" for p, c in changes)
    )
    return 0


def valid_toml(text: str) -> bool:
    try:
        loads_toml(text)
    except TomlError:
        return False
    return True


def merge3(ours: str, base: str | None, theirs: str, repo: Path) -> tuple[str | None, list[str]]:
    """(merged text, conflicts): by key for line-per-entry manifests, else git merge-file."""
    parsed = [entry_tables(t) for t in (base or "", ours, theirs)]
    if all(p is not None for p in parsed):
        tables, conflicts = merge_tables(*parsed)  # type: ignore[arg-type]
        if conflicts:
            return None, conflicts
        text = rebuild(ours, tables)
        return (text, []) if valid_toml(text) else (None, ["the merged file is not valid TOML"])
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, text in (("ours", ours), ("base", base or ""), ("theirs", theirs)):
            paths[name] = Path(tmp) / name
            paths[name].write_text(text, encoding="utf-8", newline="\n")
        result = git(
            "merge-file",
            "-p",
            str(paths["ours"]),
            str(paths["base"]),
            str(paths["theirs"]),
            cwd=repo,
            check=False,
        )
    if result.returncode < 0 or result.returncode > 127:
        raise CIError(f"git merge-file failed: {result.stderr.strip()}")
    if result.returncode == 0 and valid_toml(result.stdout):
        return result.stdout, []
    return None, ["overlapping text changes"]


def find_manifests(inputs: list[str]) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for raw in inputs:
        root = Path(raw)
        candidates = [root] if root.is_file() else sorted(root.rglob(MANIFEST))
        for path in candidates:
            data = load_json(path)
            if not isinstance(data, dict) or "files" not in data:
                raise CIError(f"{path}: not a manifest written by `collect`")
            found.append((path.parent, data))
    return sorted(found, key=lambda item: str(item[1].get("label", "")))


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n")


def cmd_combine(args: argparse.Namespace) -> int:
    repo = Path(args.repo).resolve()
    head = git("rev-parse", "HEAD", cwd=repo).stdout.strip()
    manifests = find_manifests(args.inputs)
    versions: dict[str, list[tuple[str, str | None]]] = {}
    for folder, manifest in manifests:
        if manifest.get("base_commit") and manifest["base_commit"] != head:
            notice(
                f"{manifest.get('label')}: ran on {manifest['base_commit'][:12]}, combining onto {head[:12]}",
                "warning",
            )
        for entry in manifest["files"]:
            path, change = entry["path"], entry["change"]
            text = None
            if change != "deleted":
                text = normalize_newlines(
                    (folder / "files" / Path(*PurePosixPath(path).parts)).read_text(
                        encoding="utf-8"
                    )
                )
            versions.setdefault(path, []).append((str(manifest.get("label")), text))
    merged_paths, conflicts = [], []
    for path, shard_versions in sorted(versions.items()):
        shown = git("show", f"HEAD:{path}", cwd=repo, check=False)
        base = normalize_newlines(shown.stdout) if shown.returncode == 0 else None
        texts = [t for _, t in shard_versions if t is not None]
        if not texts:
            (repo / path).unlink(missing_ok=True)
            merged_paths.append(path)
            continue
        if len(texts) < len(shard_versions):
            conflicts.append(f"{path} (deleted by one shard, changed by another)")
            continue
        result: str | None = texts[0]
        problems: list[str] = []
        for text in texts[1:]:
            result, problems = merge3(texts[0] if result is None else result, base, text, repo)
            if result is None:
                break
        if result is None:
            labels = ", ".join(label for label, _ in shard_versions)
            conflicts.append(f"{path} (shards {labels}: {'; '.join(problems[:5])})")
            continue
        target = repo / Path(*PurePosixPath(path).parts)
        atomic_write_text(target, result)
        merged_paths.append(path)
        if base is None:
            intent_to_add(repo, [path])
    patch = patch_of(repo, merged_paths)
    output = Path(args.output)
    atomic_write_text(output, patch)
    if args.files_out:
        for path in merged_paths:
            src = repo / Path(*PurePosixPath(path).parts)
            if src.exists():
                dst = Path(args.files_out) / Path(*PurePosixPath(path).parts)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
    changed = bool(patch.strip())
    set_outputs({"changed": changed, "conflicts": len(conflicts), "patch": str(output)})
    markdown = render_summary(patch, merged_paths, conflicts, output.name, len(manifests))
    if args.summary:
        append_summary(markdown)
    sys.stdout.write(markdown)
    return 0


def render_summary(
    patch: str, paths: list[str], conflicts: list[str], patch_name: str, shards: int
) -> str:
    added = sum(
        1 for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")
    )
    removed = sum(
        1 for line in patch.splitlines() if line.startswith("-") and not line.startswith("---")
    )
    lines = ["## Expectation updates", ""]
    if not patch.strip() and not conflicts:
        lines.append(f"The expectation manifests are up to date ({shards} shard(s) reported).")
        return "\n".join(lines) + "\n"
    if patch.strip():
        lines.append(
            f"{len(paths)} file(s) changed, {added} line(s) added, {removed} removed. "
            f"Download the artifact and run `git apply {patch_name}` on this commit."
        )
        lines += [""] + [f"- `{p}`" for p in paths]
    if conflicts:
        lines += ["", "Not merged (apply the shard copies from the artifact by hand):", ""]
        lines += [f"- {c}" for c in conflicts]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo", default=str(REPO_ROOT), help="repository root (default: this checkout)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="save this shard's changed manifests")
    c.add_argument("--out", required=True, help="folder to write (upload it as an artifact)")
    c.add_argument("--label", default="shard", help="name of this shard, e.g. linux-2of4")
    c.add_argument("--dir", default=DEFAULT_DIR, help=f"manifest folder (default {DEFAULT_DIR})")
    c.set_defaults(func=cmd_collect)
    m = sub.add_parser("combine", help="merge the shards' manifests into one patch")
    m.add_argument(
        "inputs", nargs="+", help="folders holding collect's output (searched recursively)"
    )
    m.add_argument("--output", default="expectations.patch", help="patch file to write")
    m.add_argument("--files-out", metavar="DIR", help="also copy the merged manifests here")
    m.add_argument("--summary", action="store_true", help="append a report to $GITHUB_STEP_SUMMARY")
    m.set_defaults(func=cmd_combine)


def run(args: argparse.Namespace) -> int:
    return args.func(args)
