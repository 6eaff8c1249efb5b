"""A one-line progress bar on stderr for scans long enough to wonder about.

Nothing is drawn during the first second (most scans finish before it, and a
flash of bar is noise), nor when stderr is not a terminal (hooks, pipes, CI
logs) or the caller asked for quiet (`--json`). Updates rewrite the line with
a carriage return at most ten times a second; `close()` erases it.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

DELAY_SECONDS = 1.0
REFRESH_SECONDS = 0.1
BAR_WIDTH = 30


class Progress:
    """Counts work items; draws `label [#####     ] done/total` once DELAY_SECONDS have passed."""

    def __init__(self, total: int, label: str = "health", *, enabled: bool = True,
                 stream: TextIO | None = None, clock=time.monotonic) -> None:
        self.total = max(0, total)
        self.label = label
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._clock = clock
        self._start = clock()
        self._last_draw = 0.0
        self._drawn_width = 0
        self.enabled = enabled and _is_terminal(self._stream)

    def advance(self, count: int = 1) -> None:
        """Record *count* finished items and redraw if it is time to."""
        self.done += count
        if not self.enabled:
            return
        now = self._clock()
        if now - self._start < DELAY_SECONDS or now - self._last_draw < REFRESH_SECONDS:
            return
        self._last_draw = now
        self._draw()

    def _draw(self) -> None:
        total = self.total or 1
        filled = min(BAR_WIDTH, BAR_WIDTH * self.done // total)
        line = f"{self.label} [{'#' * filled}{' ' * (BAR_WIDTH - filled)}] {self.done}/{self.total} files"
        pad = " " * max(0, self._drawn_width - len(line))
        try:
            self._stream.write("\r" + line + pad)
            self._stream.flush()
        except (OSError, ValueError):  # closed terminal: stop drawing, keep scanning
            self.enabled = False
            return
        self._drawn_width = len(line)

    def close(self) -> None:
        """Erase the bar if one was drawn."""
        if self._drawn_width:
            try:
                self._stream.write("\r" + " " * self._drawn_width + "\r")
                self._stream.flush()
            except (OSError, ValueError):
                pass
            self._drawn_width = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
