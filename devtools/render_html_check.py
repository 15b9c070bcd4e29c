"""Render an HTML report in headless Chromium and check that the page really shows.

Runs `chromium --headless --no-sandbox --screenshot` and `--dump-dom` on the page (it
installs nothing: `.ci/run` installs Debian's chromium), then checks that the
screenshot is not blank (enough distinct colours, enough pixels off the background)
and that the dumped DOM holds the verdict matrix (the table with id "matrix") with at
least one row. The PNG is read with zlib and numpy (a small reader for 8-bit RGB/RGBA,
non-interlaced, which is what Chromium writes).

Exit status: 0 when the checks pass, 1 when one fails, 2 when Chromium or the page is
missing.

Example:
  iree-conformance report results.json --html report.html
  python -m devtools.render_html_check report.html --screenshot report.png
"""

from __future__ import annotations

import argparse
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

from ci._common import CIError, run_main

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MATRIX_ID = "matrix"
MIN_COLORS = 8
MIN_INK = 0.01  # share of pixels that differ from the most common (background) colour


def find_browser(explicit: str | None = None) -> str:
    for name in [explicit] if explicit else BROWSERS:
        path = shutil.which(name) if name else None
        if path:
            return path
    raise CIError(
        "no Chromium found (Debian: apt-get install -y chromium); tried "
        + ", ".join([explicit] if explicit else BROWSERS)
    )


def chromium_flags(size: str) -> list[str]:
    return [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        f"--window-size={size}",
    ]


def screenshot(browser: str, page: Path, out: Path, size: str, timeout: float = 120) -> None:
    out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser,
            *chromium_flags(size),
            f"--user-data-dir={profile}",
            f"--screenshot={out}",
            page.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if not out.is_file():
        raise CIError(
            f"chromium wrote no screenshot (exit {proc.returncode}): {proc.stderr.strip()[-400:]}"
        )


def dump_dom(browser: str, page: Path, timeout: float = 120) -> str:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser,
            *chromium_flags("1280,800"),
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return proc.stdout


def _unfilter_sequential(kind: int, line: list[int], prior: list[int], bpp: int) -> list[int]:
    """One row of PNG filter 3 (Average) or 4 (Paeth)."""
    out = [0] * len(line)
    for i, value in enumerate(line):
        a = out[i - bpp] if i >= bpp else 0
        b = prior[i]
        if kind == 3:
            out[i] = (value + ((a + b) >> 1)) & 255
            continue
        c = prior[i - bpp] if i >= bpp else 0
        pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
        out[i] = (value + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return out


def read_png(data: bytes):
    """An (height, width, channels) uint8 array from an 8-bit, non-interlaced RGB(A)/grey PNG."""
    import numpy as np

    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, color_type, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(color_type)
    if depth != 8 or channels is None or interlace:
        raise ValueError(
            f"unsupported PNG (bit depth {depth}, colour type {color_type}, interlace {interlace})"
        )
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(
        height, 1 + width * channels
    )
    out = np.zeros((height, width * channels), dtype=np.int32)
    prior = np.zeros(width * channels, dtype=np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 0:
            row = line
        elif kind == 1:  # Sub: a running sum per channel
            row = np.cumsum(line.reshape(width, channels), axis=0).reshape(-1) % 256
        elif kind == 2:  # Up
            row = (line + prior) % 256
        elif kind in (3, 4):  # Average, Paeth: byte by byte (plain lists beat numpy here)
            row = np.array(
                _unfilter_sequential(kind, line.tolist(), prior.tolist(), channels), dtype=np.int32
            )
        else:
            raise ValueError(f"bad PNG filter type {kind} in row {y}")
        out[y], prior = row, row
    return out.astype(np.uint8).reshape(height, width, channels)


def blank_report(pixels) -> tuple[int, float]:
    """(distinct colours, share of pixels unlike the most common colour)."""
    import numpy as np

    flat = pixels.reshape(-1, pixels.shape[-1])
    colors, counts = np.unique(flat, axis=0, return_counts=True)
    return len(colors), 1.0 - counts.max() / counts.sum()


def matrix_rows(dom: str) -> int:
    """Rows of the table with id="matrix" in the DOM (0 when it is absent)."""
    m = re.search(rf"<table[^>]*\bid=\"{MATRIX_ID}\"[^>]*>(.*?)</table>", dom, re.S)
    return len(re.findall(r"<tr\b", m.group(1))) if m else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="render_html_check.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("page", help="the HTML report")
    parser.add_argument(
        "--screenshot",
        default="report.png",
        help="where to write the screenshot (default report.png)",
    )
    parser.add_argument(
        "--window-size", default="1280,1600", help="WIDTH,HEIGHT (default 1280,1600)"
    )
    parser.add_argument("--browser", help="the browser executable (default: chromium on the PATH)")
    return parser


def verdict(problems: list[str], ok: str) -> int:
    """Prints each problem as FAIL (stderr), or OK with what was shown; exit 1 or 0."""
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    if not problems:
        print(f"OK: {ok}")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    page = Path(args.page)
    if not page.is_file():
        raise CIError(f"{page}: no such file")
    browser = find_browser(args.browser)
    shot = Path(args.screenshot)
    screenshot(browser, page, shot, args.window_size)
    colors, ink = blank_report(read_png(shot.read_bytes()))
    rows = matrix_rows(dump_dom(browser, page))
    print(
        f"screenshot {shot}: {colors} distinct colours, {100 * ink:.1f} % of pixels off the background"
    )
    print(f"DOM: table #{MATRIX_ID} with {rows} row(s)")
    problems = []
    if colors < MIN_COLORS or ink < MIN_INK:
        problems.append(
            f"the screenshot looks blank (need >= {MIN_COLORS} colours and >= {100 * MIN_INK:.0f} % ink)"
        )
    if rows < 2:
        problems.append(
            f"the DOM has no verdict matrix (table #{MATRIX_ID} with a header and a row)"
        )
    return verdict(problems, "the report renders")


if __name__ == "__main__":
    sys.exit(run_main(main))
