"""Download progress: tqdm's bar on a terminal, periodic plain lines in CI logs (a log
read after the fact wants whole lines, not a bar's carriage returns)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Protocol, TextIO

__all__ = ["BarProgress", "LineProgress", "NullProgress", "Progress", "make_progress"]


class Progress(Protocol):
    def start(self, label: str, total: int, done: int = 0) -> None: ...
    def update(self, done: int) -> None: ...
    def finish(self, ok: bool) -> None: ...


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


class NullProgress:
    """Reports nothing."""

    def start(self, label: str, total: int, done: int = 0) -> None:
        pass

    def update(self, done: int) -> None:
        pass

    def finish(self, ok: bool) -> None:
        pass


class BarProgress:
    """tqdm's bar on a terminal (bytes, redrawn at most ten times a second), ending with
    ``done`` or ``failed``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._bar: Any = None

    def start(self, label: str, total: int, done: int = 0) -> None:
        from tqdm import tqdm

        self._bar = tqdm(
            total=total or None,
            initial=done,
            desc=label,
            file=self.stream,
            unit="B",
            unit_scale=True,
            unit_divisor=1000,
            mininterval=0.1,
            dynamic_ncols=True,
            leave=True,
        )

    def update(self, done: int) -> None:
        if self._bar is not None:
            self._bar.update(done - self._bar.n)

    def finish(self, ok: bool) -> None:
        if self._bar is None:
            return  # never started: no response came
        self._bar.set_postfix_str("done" if ok else "failed", refresh=False)
        self._bar.close()
        self._bar = None


class LineProgress:
    """Plain lines for logs: one at the start, one every ``interval`` seconds, one at the end."""

    def __init__(
        self, stream: TextIO, interval: float = 10.0, clock: Callable[[], float] = time.monotonic
    ):
        self.stream, self.interval, self.clock = stream, interval, clock
        self.label, self.total, self.done, self._last = "", 0, 0, 0.0

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def start(self, label: str, total: int, done: int = 0) -> None:
        self.label, self.total, self.done, self._last = label, total, done, self.clock()
        resumed = f" (resuming at {_mb(done)})" if done else ""
        self._line(f"downloading {label}: {_mb(total)}{resumed}")

    def update(self, done: int) -> None:
        self.done = done
        now = self.clock()
        if now - self._last >= self.interval:
            self._last = now
            pct = 100.0 * done / self.total if self.total else 0.0
            self._line(f"  {self.label}: {_mb(done)}/{_mb(self.total)} ({pct:.0f}%)")

    def finish(self, ok: bool) -> None:
        if not self.label:
            return  # never started: no response came
        self._line(f"  {self.label}: {'done' if ok else 'failed'} at {_mb(self.done)}")


def make_progress(stream: TextIO | None = None) -> Progress:
    """A bar when ``stream`` (default stderr) is a terminal, plain lines otherwise."""
    stream = sys.stderr if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return BarProgress(stream) if tty else LineProgress(stream)
