"""The parent side of the graph pass: runs targets in child processes, never imports torch.

A child (`python -m snlint.graph.worker`, same interpreter and environment, or forked as
that by snlint.graph.forkserver, which imported torch once) runs in its own process group
and builds target after target. A target's
import, its build and its forwards each have the time limit (the worker's "imported" and
"built" events start the next one's clock); past it the whole group is killed (the user's code may have started
processes of its own), the target is recorded as "timeout", and a fresh worker takes the
remaining targets. Targets are grouped by file so each file is imported once per worker;
when the import itself hung, the file's other targets are not retried (they would hang
the same way). The child runs in a scratch folder of its own, its standard error is a pipe
drained while its answer is awaited (only the last STDERR_KEPT bytes are kept, so no
amount of output delays the kill), and it holds the read end of a pipe whose write end
only this process has: when this process dies, however, the child does too.

With enough targets and two cores, two workers build them side by side, each its own
share of the files (a lane): a worker that hangs or dies costs only its own lane a
restart. A `GraphSession` keeps the workers for the command's next graph pass (the report
after --fix), and the facts of a target whose files did not change since it was built.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from typing import Callable

from snlint.graph import forkserver
from snlint.graph.facts import GraphTarget, TargetFacts

_SNLINT_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Starting a worker imports torch (about 1 s, much more on a loaded machine or a network
# file system); that time does not count against the first target's limit.
STARTUP_LIMIT = 120.0
TICK = 0.5  # seconds between progress calls while one target runs
# A second worker costs its memory (and a torch import where workers are not forked):
# worth it from this many targets on, on a machine with two cores or more. More workers
# than two would compete with the parent and each other for the cores.
LANE_TARGETS = 4
MAX_LANES = 2
# How much of a worker's standard error is kept (its end): enough for a traceback's last
# lines, whatever the project's code prints.
STDERR_KEPT = 8192
# Written by the worker (snlint.graph.worker), read here.
LIFELINE_ENV = "SNLINT_LIFELINE_FD"
PDEATHSIG_ENV = "SNLINT_PDEATHSIG"


def torch_importable() -> bool:
    """Whether the workers (this interpreter, this environment) can import torch: found,
    not imported (an import costs a second, and the parent stays torch-free)."""
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a finder that refuses it, a half-imported module
        return False


class ProtocolError(Exception):
    """A line on the worker's protocol stream that is not one of its messages."""


def _child_env(scratch: str) -> dict[str, str]:
    env = dict(os.environ)
    # snlint must be importable in the child even when the parent found it through its cwd.
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if _SNLINT_PARENT not in paths:
        paths.append(_SNLINT_PARENT)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    # A linter does not write __pycache__ folders into the user's project.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # What the project's code (or a library) writes to a temporary file lands in the
    # worker's scratch folder, which goes with the worker.
    for name in ("TMPDIR", "TEMP", "TMP"):
        env[name] = scratch
    return env


_SCRATCH_PREFIX = "snlint-graph-"
_swept = False


def _sweep_scratch() -> None:
    """Remove the scratch folders of snlint runs that were killed before they could (named
    after their process: `snlint-graph-PID-...`, removed only when that process is gone).
    Once per process."""
    global _swept
    if _swept:
        return
    _swept = True
    folder = tempfile.gettempdir()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        pid = name[len(_SCRATCH_PREFIX):].partition("-")[0]
        if not name.startswith(_SCRATCH_PREFIX) or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
        except OSError:
            continue  # alive, another user's


def _forked(env: dict[str, str], scratch: str, lifeline: int) -> forkserver.Forked | None:
    """A worker forked by this process's fork server; None where there is none."""
    if not forkserver.supported():
        return None
    server = forkserver.SERVERS.get(env, f"{_SCRATCH_PREFIX}{os.getpid()}-", STARTUP_LIMIT)
    if server is None:
        return None
    try:
        return server.fork(env, scratch, lifeline)
    except OSError:
        return None


class _Worker:
    def __init__(self) -> None:
        _sweep_scratch()
        # The worker's current directory: a relative path the project's code writes to
        # lands here, not in the project (or wherever snlint was started).
        self.scratch = tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-")
        lifeline_read, self.lifeline = os.pipe()
        env = _child_env(self.scratch)
        env[LIFELINE_ENV] = str(lifeline_read)
        if threading.current_thread() is threading.main_thread():
            # PR_SET_PDEATHSIG fires when the starting thread ends: only the main thread
            # lives as long as the process.
            env[PDEATHSIG_ENV] = "1"
        try:
            self.proc = _forked(env, self.scratch, lifeline_read) or subprocess.Popen(
                [sys.executable, "-m", "snlint.graph.worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=env, start_new_session=True, cwd=self.scratch, pass_fds=(lifeline_read,),
            )
        except BaseException:
            os.close(self.lifeline)
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        finally:
            os.close(lifeline_read)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.selector.register(self.proc.stderr, selectors.EVENT_READ)
        self.stderr = bytearray()  # the last STDERR_KEPT bytes
        self.stderr_open = True
        self.buffer = b""
        self.imported: set[str] = set()
        self.loading: list[str] = []  # the project modules being executed, innermost last
        self.eof = False
        self.ready = False
        self.stale = False  # served an earlier graph pass: forgets its modules first

    def send(self, target: GraphTarget, hung: dict[str, str] | None = None,
             timeout: float | None = None) -> bool:
        message: dict = {"target": target.to_dict()}
        if timeout:
            message["timeout"] = timeout  # the worker plans its forwards inside it
        if hung:
            message["hung"] = hung
        if self.stale:
            # The files may have changed since (--fix wrote them): import them afresh.
            message["fresh"] = True
            self.stale = False
            self.imported = set()
        message["target"].update(_absolute(target))
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
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
                    self.ready = True
                    return True
            except (ValueError, AttributeError):
                return False  # not the worker speaking: nothing it says can be trusted

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
            events = self.selector.select(min(remaining, TICK) if tick else remaining)
            if not events:
                if tick:
                    tick()
                continue
            for key, _ in events:
                if key.fileobj is self.proc.stderr:
                    self._read_stderr()
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.eof = True
                    continue
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def _read_stderr(self) -> None:
        """Drain what the worker wrote to its standard error, keeping the end only: a
        module printing in a loop costs neither memory nor disk, and never blocks."""
        chunk = os.read(self.proc.stderr.fileno(), 65536)
        if not chunk:
            self.selector.unregister(self.proc.stderr)
            self.stderr_open = False
            return
        self.stderr += chunk
        if len(self.stderr) > STDERR_KEPT:
            del self.stderr[:-STDERR_KEPT]

    def stderr_tail(self) -> str:
        # What is waiting in the pipe, without waiting for more: a bounded number of
        # reads, since a worker printing in a loop keeps it full.
        for _ in range(16):
            if not self.stderr_open or not any(
                    key.fileobj is self.proc.stderr for key, _ in self.selector.select(0)):
                break
            self._read_stderr()
        lines = [ln for ln in self.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
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
        self.proc.stderr.close()
        try:
            os.close(self.lifeline)
        except OSError:
            pass
        shutil.rmtree(self.scratch, ignore_errors=True)
        return code


def _display(path: str, target: GraphTarget) -> str:
    """A project file as the user's paths show it: relative to the target's project root."""
    if target.root:
        relative = os.path.relpath(path, target.root)
        if not relative.startswith(os.pardir):
            return relative.replace(os.sep, "/")
    return path


def _absolute(target: GraphTarget) -> dict:
    """The target's paths made absolute here: the worker runs in its scratch folder."""
    return {"file": os.path.abspath(target.file),
            "root": os.path.abspath(target.root) if target.root else "",
            "paths": [os.path.abspath(p) for p in target.paths]}


def _ordered_by_file(targets: list[tuple[int, GraphTarget]]) -> list[list[tuple[int, GraphTarget]]]:
    """The targets grouped by file, files in the order first seen."""
    groups: OrderedDict[str, list[tuple[int, GraphTarget]]] = OrderedDict()
    for index, target in targets:
        groups.setdefault(os.path.abspath(target.file), []).append((index, target))
    return list(groups.values())


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def lanes_for(count: int) -> int:
    """How many workers build `count` targets side by side."""
    return MAX_LANES if count >= LANE_TARGETS and _cores() >= 2 else 1


def _shares(groups: list[list[tuple[int, GraphTarget]]], lanes: int) -> list[list[tuple[int, GraphTarget]]]:
    """The file groups dealt to `lanes` lanes, each file whole, the lanes about even in
    targets, each keeping the files' order. A share too small to be worth its own worker's
    torch import (whole files cannot be split) joins the others: one lane."""
    shares: list[list[tuple[int, GraphTarget]]] = [[] for _ in range(lanes)]
    for group in groups:
        min(shares, key=len).extend(group)
    if lanes > 1 and min(len(share) for share in shares) < LANE_TARGETS // MAX_LANES:
        return [[item for group in groups for item in group]] if groups else []
    return [share for share in shares if share]


def _fingerprint(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


class _Progress:
    """The caller's progress callback, shared by the lanes. `started` numbers a target by
    the results in and the targets under way; while two run, the clock ticks for the one
    that started last."""

    def __init__(self, progress: Callable[[int, int, GraphTarget | None], None] | None,
                 total: int, done: int) -> None:
        self.progress = progress
        self.total = total
        self.done = done
        self.running = 0
        self.latest: tuple[int, GraphTarget] | None = None
        self.lock = threading.Lock()

    def started(self, target: GraphTarget) -> None:
        with self.lock:
            self.running += 1
            self.latest = (self.done + self.running, target)
            self._call()

    def tick(self) -> None:
        with self.lock:
            self._call()

    def finished(self, count: int = 1, ran: bool = True) -> None:
        with self.lock:
            self.done += count
            self.running -= 1 if ran else 0

    def end(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total, None)

    def _call(self) -> None:
        if self.progress is not None and self.latest is not None:
            self.progress(self.latest[0], self.total, self.latest[1])


class GraphSession:
    """The graph pass's workers for one command, and what they built.

    Workers start when a pass first needs them and stay for the command's later passes
    (`close()` ends them), so torch is imported once per worker per command. A target
    whose facts came from a worker is not built again by a later pass while it is the
    same target (arguments included) and none of the files its build imported changed:
    after --fix, only the discriminators the fixes touched are built again."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._active: set[_Worker] = set()
        self._built: dict[str, tuple[TargetFacts, dict[str, tuple[int, int] | None]]] = {}
        self._lock = threading.Lock()
        self._stopping = False  # interrupted: the lanes start nothing more
        # Project modules whose import ran past the limit (path -> display): a fresh worker
        # refuses them at once instead of hanging again for every file that imports them
        # (torch_mimicry's package imports tensorflow, 20 s each time on a loaded machine).
        self._hung: dict[str, str] = {}
        self.started = 0  # workers started

    def run(self, targets: list[GraphTarget], timeout: float,
            progress: Callable[[int, int, GraphTarget | None], None] | None = None,
            lanes: int | None = None) -> list[TargetFacts]:
        """Build and inspect each target; results in the order given (see `run_graph`)."""
        results: dict[int, TargetFacts] = {}
        todo: list[tuple[int, GraphTarget]] = []
        for index, target in enumerate(targets):
            known = self._known(target)
            if known is not None:
                results[index] = known
            else:
                todo.append((index, target))
        clock = _Progress(progress, len(targets), len(results))
        shares = _shares(_ordered_by_file(todo), lanes or lanes_for(len(todo)))
        try:
            if len(shares) == 1:
                self._lane(shares[0], timeout, clock, results)
            elif shares:
                self._side_by_side(shares, timeout, clock, results)
        finally:
            clock.end()
        return [results[i] for i in range(len(targets))]

    def close(self) -> None:
        """End every worker (and whatever the user's code left running in its group)."""
        with self._lock:
            workers = self._idle + list(self._active)
            self._idle, self._active = [], set()
        for worker in workers:
            worker.close()

    # ---------------------------------------------------------------- workers

    def _take(self) -> _Worker:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
            if worker is not None:
                worker.stale = True
                self._active.add(worker)
                return worker
            self.started += 1
        # Outside the lock: the first worker of a process waits for torch's import.
        worker = _Worker()
        with self._lock:
            self._active.add(worker)
        return worker

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._active.discard(worker)
            if worker.ready and not worker.eof:
                self._idle.append(worker)
                return
        worker.close()

    def _not_again(self, target: GraphTarget, file: str, loading: list[str], import_hung: bool,
                   what: str) -> str:
        """Remember the project module whose import hung or crashed (the innermost one still
        being executed, else the target's file), so that no later worker imports it again;
        the words naming it, when it is not the target's own file."""
        if not import_hung:
            return ""
        hung = loading[-1] if loading else file
        shown = _display(hung, target)
        with self._lock:
            self._hung[hung] = (f"{shown} is not imported again: its import {what} "
                                "while another discriminator was built")
        return f" (still importing {shown})" if hung != file else ""

    def _killed(self, worker: _Worker) -> int | None:
        with self._lock:
            self._active.discard(worker)
        return worker.kill()

    # ---------------------------------------------------------------- what was built

    @staticmethod
    def _key(target: GraphTarget) -> str:
        return json.dumps(target.to_dict(), sort_keys=True, default=str)

    def _known(self, target: GraphTarget) -> TargetFacts | None:
        known = self._built.get(self._key(target))
        if known is None:
            return None
        facts, files = known
        if any(_fingerprint(path) != print_ for path, print_ in files.items()):
            return None
        return facts

    def _remember(self, target: GraphTarget, facts: TargetFacts, files: list[str]) -> None:
        paths = {os.path.abspath(target.file), *(os.path.abspath(f) for f in files)}
        with self._lock:
            self._built[self._key(target)] = (facts, {p: _fingerprint(p) for p in paths})

    # ---------------------------------------------------------------- lanes

    def _side_by_side(self, shares: list[list[tuple[int, GraphTarget]]], timeout: float,
                      clock: _Progress, results: dict[int, TargetFacts]) -> None:
        errors: list[BaseException] = []

        def lane(share: list[tuple[int, GraphTarget]]) -> None:
            try:
                self._lane(share, timeout, clock, results)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                errors.append(exc)

        threads = [threading.Thread(target=lane, args=(share,), daemon=True) for share in shares]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(TICK)
        except BaseException:
            # Interrupted: the lanes' workers go now; each lane then sees its worker gone
            # and starts nothing more.
            with self._lock:
                self._stopping = True
                active = list(self._active)
            for worker in active:
                worker.kill()
            for thread in threads:
                thread.join()
            raise
        if errors:
            raise errors[0]

    def _lane(self, share: list[tuple[int, GraphTarget]], timeout: float, clock: _Progress,
              results: dict[int, TargetFacts]) -> None:
        """Build one lane's targets in turn on one worker at a time; a fresh worker after
        one that hung or died."""
        pending = list(share)
        worker: _Worker | None = None
        tick = clock.tick if clock.progress is not None else None
        try:
            while pending and not self._stopping:
                index, target = pending.pop(0)
                clock.started(target)
                file = os.path.abspath(target.file)
                if worker is None:
                    worker = self._take()
                    if not worker.ready and not worker.wait_ready(
                            time.monotonic() + max(STARTUP_LIMIT, timeout), tick):
                        tail = worker.stderr_tail()
                        self._killed(worker)
                        worker = None
                        message = "the graph-pass worker could not start" + (f": {tail}" if tail else "")
                        for other_index, other in [(index, target)] + pending:
                            results[other_index] = TargetFacts(other, status="import_error",
                                                               message=message)
                        clock.finished(1 + len(pending))
                        pending = []
                        break
                start = time.monotonic()
                deadline = start + timeout
                facts = None
                files: list[str] | None = None
                garbled: str | None = None
                worker.loading = []
                built = False
                if worker.send(target, dict(self._hung), timeout):
                    while facts is None:
                        line = worker.read_line(deadline, tick)
                        if line is None:
                            break
                        try:
                            message = json.loads(line)
                            if not isinstance(message, dict):
                                raise ValueError("not an object")
                        except ValueError:
                            # Not the worker's words: the project's code wrote to the
                            # protocol stream. Nothing more from this worker is trusted.
                            garbled = line[:60].decode("utf-8", "replace")
                            break
                        if message.get("event") == "imported":
                            worker.imported.add(os.path.abspath(message["file"]))
                            deadline = time.monotonic() + timeout  # the build's own limit
                        elif message.get("event") == "built":
                            deadline = time.monotonic() + timeout  # the forwards' own limit
                            built = True
                        elif message.get("event") == "loading":
                            worker.loading.append(message["file"])
                        elif message.get("event") == "loaded":
                            if message["file"] in worker.loading:
                                worker.loading.reverse()
                                worker.loading.remove(message["file"])
                                worker.loading.reverse()
                        elif message.get("event") == "files":
                            files = list(message.get("files", ()))
                        elif message.get("event") == "error":
                            facts = TargetFacts(target, status="build_error",
                                                message="snlint worker error: "
                                                + message.get("message", "").strip().splitlines()[-1])
                        elif "target" in message:
                            facts = TargetFacts.from_dict(message)
                            facts.target = target
                if facts is not None:
                    results[index] = facts
                    if files is not None:
                        self._remember(target, facts, files)
                    clock.finished()
                    continue

                # No answer: the deadline passed, the child died, or it said something
                # that is not a message.
                timed_out = garbled is None and not worker.eof and time.monotonic() >= deadline
                import_hung = file not in worker.imported
                worker_loading = list(worker.loading)
                tail = worker.stderr_tail()
                code = self._killed(worker)
                worker = None
                phase = ("importing" if import_hung else
                         "running the forwards of" if built else "building")
                if garbled is not None:
                    status = "import_error" if import_hung else "build_error"
                    message = (f"the worker's reply while {phase} {target.display} was not a "
                               f"graph-pass message (the project's code wrote to its protocol "
                               f"stream?): {garbled!r}; the worker process was killed")
                elif timed_out:
                    status = "timeout"
                    within = self._not_again(target, file, worker_loading, import_hung,
                                             f"exceeded the {timeout:g} s limit")
                    message = (f"{phase} {target.display} exceeded the {timeout:g} s limit{within}; "
                               "the worker process was killed")
                else:
                    status = "import_error" if import_hung else "build_error"
                    within = self._not_again(target, file, worker_loading, import_hung,
                                             f"ended the worker process (code {code})")
                    message = f"the worker process exited (code {code}) while {phase} {target.display}{within}"
                    if tail:
                        message += f": {tail}"
                results[index] = TargetFacts(target, status=status, message=message,
                                             seconds=round(time.monotonic() - start, 4))
                clock.finished()
                if import_hung:
                    # The same import would fail the same way for the file's other targets.
                    same = [p for p in pending if os.path.abspath(p[1].file) == file]
                    for other_index, other in same:
                        results[other_index] = TargetFacts(other, status=status, message=message)
                    clock.finished(len(same), ran=False)
                    pending = [p for p in pending if os.path.abspath(p[1].file) != file]
        finally:
            if worker is not None:
                self._give_back(worker)


def run_graph(targets: list[GraphTarget], timeout: float = 20.0,
              progress: Callable[[int, int, GraphTarget | None], None] | None = None,
              session: GraphSession | None = None, lanes: int | None = None,
              ) -> list[TargetFacts]:
    """Build and inspect each target in a child process; results in the order given.

    `progress(started, total, target)` is called as each target starts (before the worker
    that builds it, whose torch import is part of the wait), again every TICK seconds
    while it runs, and once with None at the end. `session` keeps the workers (and what
    they built) for a later call; without one, the workers end with this call. `lanes`:
    how many workers build side by side (default: `lanes_for` the targets)."""
    own = session is None
    session = session if session is not None else GraphSession()
    try:
        return session.run(targets, timeout, progress, lanes)
    finally:
        if own:
            session.close()
