"""The graph pass's progress line on standard error.

Standard output carries findings, JSON, SARIF or diffs; progress never goes there. It is
shown only on a terminal, and only once the graph pass has run for a couple of seconds (a
run that ends sooner leaves no trace): one line, rewritten in place with a carriage
return, and blanked when the pass ends.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, TextIO

if TYPE_CHECKING:
    from snlint.graph.facts import GraphTarget

PROGRESS_DELAY = 2.0  # seconds of graph pass before the line appears


def wants_progress(stream_is_terminal: bool, elapsed: float) -> bool:
    """Whether to show progress: on a terminal, once the pass has taken PROGRESS_DELAY."""
    return stream_is_terminal and elapsed >= PROGRESS_DELAY


def progress_text(started: int, total: int, target: "GraphTarget", width: int) -> str:
    """`graph pass: building 5/12 Discriminator (models/d.py)...`, cut to `width` so the
    line never wraps (a wrapped line cannot be rewritten in place)."""
    text = f"graph pass: building {started}/{total} {target.class_name} ({target.display})..."
    return text if len(text) <= width else text[: max(width - 3, 0)] + "..."


class ProgressLine:
    """The `progress` callback of `snlint.graph.run_graph`, drawing on `stream`. It is
    called as each target starts and every half second while one runs."""

    def __init__(self, stream: TextIO, is_terminal: bool,
                 clock: Callable[[], float] = time.monotonic,
                 width: Callable[[], int] | None = None) -> None:
        self.stream = stream
        self.is_terminal = is_terminal
        self.clock = clock
        self.width = width or _terminal_width
        self.start: float | None = None
        self.shown = 0  # characters of the line on screen now
        self.text = ""

    def __call__(self, started: int, total: int, target: "GraphTarget | None") -> None:
        now = self.clock()
        if self.start is None:
            self.start = now
        if target is None:
            self.clear()
        elif wants_progress(self.is_terminal, now - self.start):
            text = progress_text(started, total, target, self.width() - 1)
            if text != self.text:  # the same target again: the runner's clock ticked
                self._write("\r" + text.ljust(self.shown))
                self.shown, self.text = len(text), text

    def clear(self) -> None:
        if self.shown:
            self._write("\r" + " " * self.shown + "\r")
            self.shown, self.text = 0, ""

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not end the run
            self.is_terminal = False


def _terminal_width() -> int:
    import shutil  # only once a line is drawn: most runs draw none

    return shutil.get_terminal_size().columns
