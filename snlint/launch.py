"""The `snlint` command and `python -m snlint`: the recorded report of the same run when
everything it read is as it was (snlint.engine.replay), else the command line interface.
Apart from snlint.cli, so that a replayed run imports neither click nor the rest."""

from __future__ import annotations

import os
import sys
import time

EXIT_FINDINGS = 1  # snlint.cli's, when the reader of standard output left early
EXIT_INTERRUPTED = 130  # snlint.cli's for Ctrl-C: 128 + SIGINT


def entry() -> None:
    try:
        _entry()
    except KeyboardInterrupt:
        # Ctrl-C before the command took over (start-up, a replay): as snlint.cli says it.
        try:
            sys.stderr.write("snlint: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(EXIT_INTERRUPTED)


def _entry() -> None:
    started = time.time_ns()  # before anything is read: what changes after it is racy
    from snlint.engine.replay import Recorder, replay

    argv = sys.argv[1:]
    answer = replay(argv)
    if answer is not None:
        _replayed(*answer)
    from snlint.cli import run_own_process

    run_own_process(Recorder(argv, started))


def _replayed(output: str, code: int, notes: str) -> None:
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except BrokenPipeError:
        # `snlint | head`: the reader left; as snlint.cli does, stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_FINDINGS
    try:
        sys.stderr.write(notes)
        sys.stderr.flush()
    except OSError:
        pass
    if sys.getprofile() is None and sys.gettrace() is None:
        os._exit(code)
    sys.exit(code)
