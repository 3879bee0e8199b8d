"""The parent side of the graph pass: runs targets in a child process, never imports torch.

The child (`python -m snlint.graph.worker`, same interpreter and environment) runs in its
own process group. Each target has a time limit; past it the whole group is killed (the
user's code may have started processes of its own), the target is recorded as "timeout",
and a fresh worker takes the remaining targets. Targets are grouped by file so each file is
imported once per worker; when the import itself hung, the file's other targets are not
retried (they would hang the same way).
"""

from __future__ import annotations

import functools
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict
from typing import Callable

from snlint.graph.facts import GraphTarget, TargetFacts

_SNLINT_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Starting a worker imports torch (about 1 s, much more on a loaded machine or a network
# file system); that time does not count against the first target's limit.
STARTUP_LIMIT = 120.0
TICK = 0.5  # seconds between progress calls while one target runs


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # snlint must be importable in the child even when the parent found it through its cwd.
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if _SNLINT_PARENT not in paths:
        paths.append(_SNLINT_PARENT)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    # A linter does not write __pycache__ folders into the user's project.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


class _Worker:
    def __init__(self) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "snlint.graph.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            env=_child_env(), start_new_session=True,
        )
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""
        self.imported: set[str] = set()
        self.eof = False

    def send(self, target: GraphTarget) -> bool:
        try:
            self.proc.stdin.write((json.dumps({"target": target.to_dict()}) + "\n").encode("utf-8"))
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def wait_ready(self, deadline: float, tick: Callable[[], None] | None = None) -> bool:
        while True:
            line = self.read_line(deadline, tick)
            if line is None:
                return False
            try:
                if json.loads(line).get("event") == "ready":
                    return True
            except ValueError:
                continue

    def read_line(self, deadline: float, tick: Callable[[], None] | None = None) -> bytes | None:
        """The next protocol line; None at the deadline or when the child is gone.
        `tick()` runs about every TICK seconds of waiting (the progress line's clock)."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            if self.eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if not self.selector.select(min(remaining, TICK) if tick else remaining):
                if tick:
                    tick()
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                self.eof = True
                continue
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def stderr_tail(self) -> str:
        try:
            self.stderr.seek(0)
            lines = [ln for ln in self.stderr.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        except OSError:
            return ""
        return lines[-1].strip() if lines else ""

    def kill(self) -> int | None:
        try:
            if hasattr(os, "killpg"):
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:  # pragma: no cover - no process groups
                self.proc.kill()
        except (ProcessLookupError, PermissionError):
            pass
        return self.close(wait=5.0)

    def close(self, wait: float = 5.0) -> int | None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            code = None
        # Whatever the user's code left running in the group goes too.
        try:
            if hasattr(os, "killpg"):
                os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if code is None:
            code = self.proc.wait()
        self.selector.close()
        self.proc.stdout.close()
        self.stderr.close()
        return code


def _ordered_by_file(targets: list[GraphTarget]) -> list[tuple[int, GraphTarget]]:
    groups: OrderedDict[str, list[tuple[int, GraphTarget]]] = OrderedDict()
    for index, target in enumerate(targets):
        groups.setdefault(os.path.abspath(target.file), []).append((index, target))
    return [item for group in groups.values() for item in group]


def run_graph(targets: list[GraphTarget], timeout: float = 20.0,
              progress: Callable[[int, int, GraphTarget | None], None] | None = None,
              ) -> list[TargetFacts]:
    """Build and inspect each target in a child process; results in the order given.

    `progress(started, total, target)` is called as each target starts (before the worker
    that builds it, whose torch import is part of the wait), again every TICK seconds
    while it runs, and once with None at the end.
    """
    results: dict[int, TargetFacts] = {}
    pending = _ordered_by_file(targets)
    worker: _Worker | None = None
    try:
        while pending:
            index, target = pending.pop(0)
            tick = None
            if progress is not None:
                tick = functools.partial(progress, len(results) + 1, len(targets), target)
                tick()
            file = os.path.abspath(target.file)
            if worker is None:
                worker = _Worker()
                if not worker.wait_ready(time.monotonic() + max(STARTUP_LIMIT, timeout), tick):
                    tail = worker.stderr_tail()
                    worker.kill()
                    worker = None
                    message = "the graph-pass worker could not start" + (f": {tail}" if tail else "")
                    for other_index, other in [(index, target)] + pending:
                        results[other_index] = TargetFacts(other, status="import_error",
                                                           message=message)
                    break
            start = time.monotonic()
            deadline = start + timeout
            facts = None
            if worker.send(target):
                while facts is None:
                    line = worker.read_line(deadline, tick)
                    if line is None:
                        break
                    try:
                        message = json.loads(line)
                    except ValueError:
                        continue  # not ours (cannot happen: the worker guards fd 1)
                    if message.get("event") == "imported":
                        worker.imported.add(os.path.abspath(message["file"]))
                    elif message.get("event") == "error":
                        facts = TargetFacts(target, status="build_error",
                                            message="snlint worker error: "
                                            + message.get("message", "").strip().splitlines()[-1])
                    elif "target" in message:
                        facts = TargetFacts.from_dict(message)
            if facts is not None:
                results[index] = facts
                continue

            # No answer: the deadline passed, or the child died.
            timed_out = not worker.eof and time.monotonic() >= deadline
            import_hung = file not in worker.imported
            tail = worker.stderr_tail()
            code = worker.kill()
            worker = None
            phase = "importing" if import_hung else "building"
            if timed_out:
                status = "timeout"
                message = (f"{phase} {target.display} exceeded the {timeout:g} s limit; "
                           "the worker process was killed")
            else:
                status = "import_error" if import_hung else "build_error"
                message = f"the worker process exited (code {code}) while {phase} {target.display}"
                if tail:
                    message += f": {tail}"
            results[index] = TargetFacts(target, status=status, message=message,
                                         seconds=round(time.monotonic() - start, 4))
            if import_hung:
                # The same import would fail the same way for the file's other targets.
                for other_index, other in [p for p in pending if os.path.abspath(p[1].file) == file]:
                    results[other_index] = TargetFacts(other, status=status, message=message)
                pending = [p for p in pending if os.path.abspath(p[1].file) != file]
    finally:
        if worker is not None:
            worker.close()
        if progress is not None:
            progress(len(targets), len(targets), None)
    return [results[i] for i in range(len(targets))]
