"""devtools/render_html_check.py: the PNG reader, the blank and DOM checks (the real
headless render is in tests/e2e/ci/test_render_html_check_browser.py)."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from devtools import render_html_check as check
from iree_conformance.report.html import inputs, render
from tests.support.ci_helpers import RESULTS


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def encode_png(pixels: np.ndarray, filters: list[int]) -> bytes:
    """A PNG of pixels (h, w, 3|4), row y filtered with filters[y % len(filters)]."""
    h, w, ch = pixels.shape
    rows, prior = [], [0] * (w * ch)
    for y in range(h):
        line, kind = pixels[y].reshape(-1).tolist(), filters[y % len(filters)]
        out = []
        for i, x in enumerate(line):
            a = line[i - ch] if i >= ch else 0
            b, c = prior[i], (prior[i - ch] if i >= ch else 0)
            pred = [0, a, b, (a + b) // 2, _paeth(a, b, c)][kind]
            out.append((x - pred) % 256)
        rows.append(bytes([kind, *out]))
        prior = line

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    ihdr = struct.pack(">IIBBBBB", w, h, 8, {3: 2, 4: 6}[ch], 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("channels", [3, 4])
def test_png_reader_undoes_every_filter(channels):
    pixels = np.random.default_rng(7).integers(0, 256, size=(10, 9, channels), dtype=np.uint8)
    decoded = check.read_png(encode_png(pixels, [0, 1, 2, 3, 4]))
    np.testing.assert_array_equal(decoded, pixels)


def test_blank_image_is_reported_blank():
    white = np.full((20, 30, 3), 255, dtype=np.uint8)
    colors, ink = check.blank_report(check.read_png(encode_png(white, [0, 2])))
    assert colors == 1 and ink == 0.0
    white[5:10, 5:25] = [200, 30, 30]
    colors, ink = check.blank_report(white)
    assert colors == 2 and ink == pytest.approx(100 / 600)


def test_matrix_rows_in_a_rendered_report():
    page = render.render_html(
        inputs.load([RESULTS / "linux-py3.11.json"]), render.Options(generate_ops=False)
    ).html
    assert check.matrix_rows(page) == 1 + 4 + 1  # header, suite x target rows, total
    assert check.matrix_rows(page.replace('id="matrix"', 'id="other"')) == 0
