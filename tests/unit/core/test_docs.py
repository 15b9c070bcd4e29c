"""The docs' shape (issue 33): the README, ARCHITECTURE and each page under docs/ stay
small, and every relative Markdown link between them resolves, anchor included."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.core_helpers import ROOT

# Page -> its size limit in bytes (issue 54).
LIMITS = {"README.md": 10_000, "ARCHITECTURE.md": 15_000}
# A hand-written page under docs/: its bytes outside the generated blocks, which tests keep
# current. benchmarks/ and the conformance READMEs are records of measurements: 25 KB.
DOCS_PAGE_LIMIT = 15_000
PAGE_LIMIT = 25_000
# Every file under docs/, generated blocks included: issue 54's 280 KB (378 KB before it;
# repetition between pages, history and figures said outside benchmarks/ cut).
DOCS_TOTAL_LIMIT = 280_000
_GENERATED = re.compile(r"<!-- ([\w-]+):start .*?-->.*?<!-- \1:end -->", re.S)

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    """The Markdown the project writes: README, ARCHITECTURE, docs/, benchmarks/ and the
    README of each conformance folder."""
    found = [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
    found += sorted((ROOT / "docs").glob("*.md"))
    found += sorted((ROOT / "benchmarks").glob("*.md"))
    found += sorted((ROOT / "conformance").rglob("README.md"))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, code and link marks dropped, punctuation
    other than '-' and '_' removed, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown text's headings (a repeated one gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for line in _FENCE.sub("", text).splitlines():
        match = re.match(r"#{1,6} (.*)", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Every relative link of page whose file is missing, or whose #anchor names no
    heading of its Markdown target."""
    text = page.read_text(encoding="utf-8")
    prose = _CODE.sub("", _FENCE.sub("", text))
    out = []
    for target in _LINK.findall(prose):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            out.append(f"{page.relative_to(root)}: {target}: no such file")
        elif anchor and resolved.suffix == ".md":
            if anchor not in anchors(resolved.read_text(encoding="utf-8")):
                out.append(f"{page.relative_to(root)}: {target}: no such heading")
    return out


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_check_finds_a_broken_file_and_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Top\n\n## The `x` part (y)\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#the-x-part-y) [self](#b) [web](https://example.com/x)\n"
        "[gone](missing.md) [no anchor](a.md#nowhere) `[code](skipped.md)`\n\n# B\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "b.md: missing.md: no such file",
        "b.md: a.md#nowhere: no such heading",
    ]


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_pages_stay_small(page: Path) -> None:
    name = page.relative_to(ROOT).as_posix()
    if name.startswith("docs/"):
        limit = DOCS_PAGE_LIMIT
        size = len(hand_written(page.read_text(encoding="utf-8")).encode())
    else:
        limit = LIMITS.get(name, PAGE_LIMIT)
        size = len(page.read_bytes())
    assert size <= limit, f"{name} is {size} bytes, over its {limit}: split it by topic"


def hand_written(text: str) -> str:
    """text without its generated blocks (``<!-- NAME:start ... -->`` to ``<!-- NAME:end -->``)."""
    return _GENERATED.sub("", text)


def test_a_generated_block_is_not_counted():
    text = "a\n<!-- t:start (generated) -->\n| x |\n<!-- t:end -->\nb\n"
    assert hand_written(text) == "a\n\nb\n"


def test_docs_stay_small_in_all():
    size = sum(f.stat().st_size for f in (ROOT / "docs").rglob("*") if f.is_file())
    assert size <= DOCS_TOTAL_LIMIT, (
        f"docs/ holds {size} bytes, over {DOCS_TOTAL_LIMIT}: cut repetition, or move measured "
        "figures to benchmarks/"
    )


def setup_commands(readme: str) -> list[str]:
    """The command lines of the README's "Set-up" code block (comments left out)."""
    section = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the README's Set-up section lost its ```sh block"
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def test_the_two_setup_commands_install_what_exists() -> None:
    """Two commands; each extra they name is one of pyproject.toml's, and each folder they
    install is a project (cache_tools, its own distribution, among them)."""
    from iree_conformance.common.tomlio import load_toml

    commands = setup_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2, commands
    extras = set(load_toml(ROOT / "pyproject.toml")["project"]["optional-dependencies"])
    installed = []
    for command in commands:
        for target in re.findall(r"-e \"?([^\s\"]+)\"?", command):
            path, _, names = target.partition("[")
            installed.append(path)
            assert (ROOT / path / "pyproject.toml").exists(), f"{target}: no project there"
            assert set(filter(None, names.rstrip("]").split(","))) <= extras, target
    assert installed == [".", ".", "./cache_tools"], installed
    assert "pytest conformance" in commands[0] and "pytest tests" in commands[1]
