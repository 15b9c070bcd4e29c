"""Progress reporting: bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import io

from iree_conformance.frontends.onnx.progress import BarProgress, LineProgress, make_progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_make_progress_picks_by_terminal() -> None:
    assert isinstance(make_progress(Tty()), BarProgress)
    assert isinstance(make_progress(io.StringIO()), LineProgress)


def test_bar_redraws_in_place() -> None:
    stream = Tty()
    bar = BarProgress(stream)
    bar.start("m.onnx", 2_000_000, done=500_000)
    bar.update(1_000_000)
    bar.update(2_000_000)
    bar.finish(True)
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.rstrip("\n").endswith("done]"), repr(text)
    assert "\rm.onnx:" in text and "2.00M/2.00M" in text and "100%" in text
    assert "m.onnx:  25%" in text  # resumed at a quarter


def test_bar_says_failed() -> None:
    stream = Tty()
    bar = BarProgress(stream)
    bar.start("m.onnx", 4_000_000)
    bar.update(1_000_000)
    bar.finish(False)
    assert stream.getvalue().rstrip("\n").endswith("failed]")


def test_lines_are_periodic() -> None:
    times = iter([0.0, 5.0, 11.0, 12.0])
    stream = io.StringIO()
    lines = LineProgress(stream, interval=10.0, clock=times.__next__)
    lines.start("m.onnx", 4_000_000, done=1_000_000)
    lines.update(2_000_000)  # 5 s: too soon
    lines.update(3_000_000)  # 11 s: a line
    lines.update(3_500_000)  # 12 s: too soon
    lines.finish(False)
    assert stream.getvalue().splitlines() == [
        "downloading m.onnx: 4.0 MB (resuming at 1.0 MB)",
        "  m.onnx: 3.0 MB/4.0 MB (75%)",
        "  m.onnx: failed at 3.5 MB",
    ]


def test_finish_without_start_is_silent() -> None:
    for make in (LineProgress, BarProgress):
        stream = io.StringIO()
        make(stream).finish(False)
        assert stream.getvalue() == ""
