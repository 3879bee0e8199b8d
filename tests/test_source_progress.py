"""The source pass's progress line: shown on a terminal, not with -q, once the run has
taken SOURCE_DELAY; drawn by a timer when a step runs long; blanked at the end. The
clock and the timer are fakes: no test waits."""

from __future__ import annotations

import io

import pytest

from snlint.report.progress import SOURCE_DELAY, ProgressLine, wants_source_progress


@pytest.mark.parametrize(("terminal", "quiet", "elapsed", "shown"), [
    (True, False, 1.5, True), (True, False, 0.5, False), (False, False, 30.0, False),
    (True, True, 30.0, False)])
def test_source_progress_on_a_terminal_without_quiet_after_a_second(terminal, quiet, elapsed, shown):
    assert wants_source_progress(terminal, quiet, elapsed) is shown


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def line_for(terminal: bool = True, quiet: bool = False):
    stream, clock, scheduled = io.StringIO(), Clock(), []
    line = ProgressLine(stream, terminal, clock=clock, width=lambda: 80, quiet=quiet,
                        schedule=lambda seconds, callback: scheduled.append((seconds, callback)))
    return line, stream, clock, scheduled


def test_a_long_step_is_drawn_by_the_timer_and_blanked_at_the_end():
    line, stream, clock, scheduled = line_for()
    line.phase("source pass: reading 812 files...")
    assert stream.getvalue() == ""  # t=0: too early
    [(seconds, callback)] = scheduled
    assert seconds == SOURCE_DELAY
    clock.now = SOURCE_DELAY
    callback()
    text = "source pass: reading 812 files..."
    assert stream.getvalue() == "\r" + text
    line.finish()
    assert stream.getvalue() == "\r" + text + "\r" + " " * len(text) + "\r"


def test_a_later_step_replaces_the_line_in_place():
    line, stream, clock, _ = line_for()
    line.phase("source pass: reading 812 files...")
    clock.now = 2.0
    line.phase("source pass: linking 3 files...")  # after the delay: drawn at once
    assert stream.getvalue() == "\rsource pass: linking 3 files..."


def test_a_run_that_ends_before_the_delay_leaves_no_trace():
    line, stream, clock, scheduled = line_for()
    line.phase("source pass: reading 2 files...")
    clock.now = 0.3
    line.phase("")
    line.finish()
    clock.now = 5.0
    scheduled[0][1]()  # the timer fires after the run: nothing
    assert stream.getvalue() == ""


@pytest.mark.parametrize(("terminal", "quiet"), [(False, False), (True, True)])
def test_no_source_progress_off_a_terminal_or_with_quiet(terminal, quiet):
    line, stream, clock, scheduled = line_for(terminal, quiet)
    line.phase("source pass: reading 812 files...")
    clock.now = 10.0
    line.tick()
    line.finish()
    assert (stream.getvalue(), scheduled) == ("", [])


def test_the_source_pass_names_its_steps(tmp_path):
    from snlint.config import Config
    from snlint.engine import lint_sources

    steps: list[str] = []
    lint_sources({"a.py": "x = 1\n", "b.py": "import torch.nn as nn\n"},
                 Config(root=tmp_path, graph=False, cache=False), steps=steps.append)
    # The link step sees the files the prefilter kept (a.py names nothing of torch).
    assert steps == ["source pass: reading 2 files...", "source pass: linking 1 file...", ""]
