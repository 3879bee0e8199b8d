"""The progress line on standard error: the source pass's steps and the graph pass's builds.

Shown only on a terminal, never with -q, and only once the run has taken a while: one
line, rewritten in place with a carriage return, and blanked when the run ends. A step
that runs long with no other call is drawn by a timer once SOURCE_DELAY has passed.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, TextIO

if TYPE_CHECKING:
    from snlint.graph.facts import GraphTarget

PROGRESS_DELAY = 2.0  # seconds of graph pass before the line appears
SOURCE_DELAY = 1.0  # seconds of run before the source pass's step is shown

# schedule(seconds, callback): runs `callback` once, later, on another thread.
Schedule = Callable[[float, Callable[[], None]], Any]


def wants_progress(stream_is_terminal: bool, elapsed: float) -> bool:
    """Whether to show progress: on a terminal, once the pass has taken PROGRESS_DELAY."""
    return stream_is_terminal and elapsed >= PROGRESS_DELAY


def progress_text(started: int, total: int, target: "GraphTarget", width: int) -> str:
    """`graph pass: building 5/12 Discriminator (models/d.py)...`, cut to `width`."""
    return _cut(f"graph pass: building {started}/{total} {target.class_name} "
                f"({target.display})...", width)


def _cut(text: str, width: int) -> str:
    # A wrapped line cannot be rewritten in place.
    return text if len(text) <= width else text[: max(width - 3, 0)] + "..."


def wants_source_progress(stream_is_terminal: bool, quiet: bool, elapsed: float) -> bool:
    """Whether to show the source pass's step: on a terminal, not with -q, once the run
    has taken SOURCE_DELAY."""
    return stream_is_terminal and not quiet and elapsed >= SOURCE_DELAY


def _timer(seconds: float, callback: Callable[[], None]) -> threading.Timer:
    timer = threading.Timer(seconds, callback)
    timer.daemon = True  # a run that ends never waits for its progress line
    timer.start()
    return timer


class ProgressLine:
    """The `progress` callback of `snlint.graph.run_graph`, drawing on `stream`. It is
    called as each target starts and every half second while one runs."""

    def __init__(self, stream: TextIO, is_terminal: bool,
                 clock: Callable[[], float] = time.monotonic,
                 width: Callable[[], int] | None = None, *, quiet: bool = False,
                 schedule: Schedule = _timer) -> None:
        self.stream = stream
        self.is_terminal = is_terminal
        self.quiet = quiet
        self.clock = clock
        self.width = width or _terminal_width
        self.schedule = schedule
        self.start: float | None = None
        self.shown = 0  # characters of the line on screen now
        self.text = ""
        self.step = ""  # the source pass's step now ("" when none runs)
        self.run_start: float | None = None  # the first step's start
        self._lock = threading.Lock()  # the timer's thread draws too
        self._timer: Any = None
        self._done = False

    def phase(self, text: str) -> None:
        """The source pass starts step `text`, or ends its steps (""); drawn now if the run
        has taken long enough, else by a timer once it has."""
        with self._lock:
            self.step = text
            if self.run_start is None:
                self.run_start = self.clock()
        if not text:
            return
        if self._timer is None and self.is_terminal and not self.quiet:
            delay = max(self.run_start + SOURCE_DELAY - self.clock(), 0.0)
            self._timer = self.schedule(delay, self.tick)
        self.tick()

    def tick(self) -> None:
        """Draw the source pass's step, if one runs and the run has taken long enough."""
        with self._lock:
            if self._done or not self.step or self.run_start is None or not wants_source_progress(
                    self.is_terminal, self.quiet, self.clock() - self.run_start):
                return
            self._show(_cut(self.step, self.width() - 1))

    def finish(self) -> None:
        """The run is over: no more drawing, and the line blanked."""
        with self._lock:
            self._done = True
            self.step = ""
        timer, self._timer = self._timer, None
        if timer is not None and hasattr(timer, "cancel"):
            timer.cancel()
        self.clear()

    def __call__(self, started: int, total: int, target: "GraphTarget | None") -> None:
        now = self.clock()
        if self.start is None:
            self.start = now
        if target is None:
            self.clear()
        elif wants_progress(self.is_terminal, now - self.start):
            text = progress_text(started, total, target, self.width() - 1)
            with self._lock:
                self._show(text)

    def _show(self, text: str) -> None:
        if text != self.text:  # the same target again: the runner's clock ticked
            self._write("\r" + text.ljust(self.shown))
            self.shown, self.text = len(text), text

    def clear(self) -> None:
        with self._lock:
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
