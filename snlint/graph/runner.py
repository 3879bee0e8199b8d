"""The parent side of the graph pass: runs targets in child processes, never imports torch.

A worker (`python -m snlint.graph.worker`, or forked as that by snlint.graph.forkserver)
runs in its own process group and scratch folder and builds target after target. A
target's import, its build and its forwards each have the time limit; past it the whole
group is killed (the user's code may have started processes), the target is a "timeout",
and a fresh worker takes the rest. Targets are grouped by file, each file imported once
per worker; a file whose import hung is not retried for its other targets. The worker's
standard error is drained while its answer is awaited, keeping its end, and it holds the
read end of a pipe only this process writes: when this process dies, so does the worker.
With enough targets and two cores, two lanes of workers build side by side; a
`GraphSession` keeps the workers and the facts of unchanged targets for the command's
next graph pass (the report after --fix).
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
from typing import Callable

from snlint.graph import forkserver
from snlint.graph.facts import GraphTarget, TargetFacts

_SNLINT_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A worker's start (torch's import, where it is not forked) is not the first target's time.
STARTUP_LIMIT = 120.0
TICK = 0.5  # seconds between progress calls while one target runs
# A second worker costs its memory (and a torch import where workers are not forked):
# worth it from this many targets on, with two cores or more; a third would compete for them.
LANE_TARGETS = 4
MAX_LANES = 2
# The end of a worker's standard error kept: a traceback's last lines, whatever is printed.
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
        self.garbled: str | None = None  # the line that was not a message
        self.ready = False
        self.deadline = 0.0  # the current target's
        self.built = False  # the current target's build returned
        self.files: list[str] | None = None  # the project files the current target imported
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

    def answer(self, target: GraphTarget, hung: dict[str, str], timeout: float,
               tick: Callable[[], None] | None) -> TargetFacts | None:
        """The worker's facts for `target`; None when it gave none (see `message`). What it
        said on the way stays: `built`, `files`, `deadline`, `loading`."""
        self.deadline = time.monotonic() + timeout
        self.built = False
        self.files = None
        self.loading = []
        if not self.send(target, hung, timeout):
            return None
        while (message := self.message(self.deadline, tick)) is not None:
            event = message.get("event")
            if event in ("imported", "built"):
                # The import, the build and the forwards each have the time limit.
                self.deadline = time.monotonic() + timeout
                if event == "imported":
                    self.imported.add(os.path.abspath(message["file"]))
                self.built = self.built or event == "built"
            elif event == "loading":
                self.loading.append(message["file"])
            elif event == "loaded" and message["file"] in self.loading:
                innermost = len(self.loading) - 1 - self.loading[::-1].index(message["file"])
                del self.loading[innermost]
            elif event == "files":
                self.files = list(message.get("files", ()))
            elif event == "error":
                return TargetFacts(target, status="build_error", message="snlint worker error: "
                                   + message.get("message", "").strip().splitlines()[-1])
            elif "target" in message:
                facts = TargetFacts.from_dict(message)
                facts.target = target
                return facts
        return None

    def wait_ready(self, deadline: float, tick: Callable[[], None] | None = None) -> bool:
        while (message := self.message(deadline, tick)) is not None:
            if message.get("event") == "ready":
                self.ready = True
                return True
        return False

    def message(self, deadline: float, tick: Callable[[], None] | None = None) -> dict | None:
        """The next protocol message; None at the deadline, when the worker is gone, or at a
        line that is not a message (`garbled`: the project's code wrote to the protocol
        stream, and nothing more from this worker is trusted). `tick()` runs about every
        TICK seconds of waiting (the progress line's clock)."""
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
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self.garbled = line[:60].decode("utf-8", "replace")
            return None
        return message

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
        self._kill_group()
        return self.close(wait=5.0)

    def _kill_group(self) -> None:
        """SIGKILL the worker and whatever the user's code started in its group."""
        try:
            if hasattr(os, "killpg"):
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:  # pragma: no cover - no process groups
                self.proc.kill()
        except (ProcessLookupError, PermissionError):
            pass

    def close(self, wait: float = 5.0) -> int | None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            code = None
        self._kill_group()  # whatever the user's code left running in the group goes too
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
    groups: dict[str, list[tuple[int, GraphTarget]]] = {}
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
    targets, in the files' order; a share too small for a worker of its own: one lane."""
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
    """The graph pass's workers for one command (`close()` ends them), and what they built:
    a later pass builds a target again only when it changed (arguments included) or a
    file its build imported did: after --fix, only the discriminators the fixes touched."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._active: set[_Worker] = set()
        self._built: dict[str, tuple[TargetFacts, dict[str, tuple[int, int] | None]]] = {}
        self._lock = threading.Lock()
        self._stopping = False  # interrupted: the lanes start nothing more
        # Project modules whose import hung or crashed (path -> why): a fresh worker refuses
        # them at once instead of hanging again for every file that imports them.
        self._hung: dict[str, str] = {}

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
            if self._idle:
                worker = self._idle.pop()
                worker.stale = True
                self._active.add(worker)
                return worker
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
                if worker is None:
                    worker = self._take()
                    if not worker.ready and not worker.wait_ready(
                            time.monotonic() + max(STARTUP_LIMIT, timeout), tick):
                        tail = worker.stderr_tail()
                        self._killed(worker)
                        worker = None
                        message = "the graph-pass worker could not start" + (f": {tail}" if tail else "")
                        _fail(results, [(index, target)] + pending, "import_error", message)
                        clock.finished(1 + len(pending))
                        break
                start = time.monotonic()
                facts = worker.answer(target, dict(self._hung), timeout, tick)
                if facts is not None:
                    results[index] = facts
                    if worker.files is not None:
                        self._remember(target, facts, worker.files)
                    clock.finished()
                    continue
                file = os.path.abspath(target.file)
                import_hung = file not in worker.imported
                status, message = self._failure(worker, target, import_hung, timeout)
                worker = None
                results[index] = TargetFacts(target, status=status, message=message,
                                             seconds=round(time.monotonic() - start, 4))
                clock.finished()
                if import_hung:
                    # The same import would fail the same way for the file's other targets.
                    same = [p for p in pending if os.path.abspath(p[1].file) == file]
                    _fail(results, same, status, message)
                    clock.finished(len(same), ran=False)
                    pending = [p for p in pending if os.path.abspath(p[1].file) != file]
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM) while the worker runs the project's code: it goes
            # now, instead of being asked to stop and waited for by a user who asked to stop.
            if worker is not None:
                self._killed(worker)
                worker = None
            raise
        finally:
            if worker is not None:
                self._give_back(worker)

    def _failure(self, worker: _Worker, target: GraphTarget, import_hung: bool,
                 timeout: float) -> tuple[str, str]:
        """Kill a worker that gave no answer (the deadline passed, it died, or it said
        something that is not a message); the target's status and message."""
        timed_out = (worker.garbled is None and not worker.eof
                     and time.monotonic() >= worker.deadline)
        tail = worker.stderr_tail()
        code = self._killed(worker)
        phase = ("importing" if import_hung else
                 "running the forwards of" if worker.built else "building")
        status = "import_error" if import_hung else "build_error"
        if worker.garbled is not None:
            return status, (f"the worker's reply while {phase} {target.display} was not a "
                            f"graph-pass message (the project's code wrote to its protocol "
                            f"stream?): {worker.garbled!r}; the worker process was killed")
        what = (f"exceeded the {timeout:g} s limit" if timed_out
                else f"ended the worker process (code {code})")
        within = self._not_again(target, os.path.abspath(target.file), worker.loading,
                                 import_hung, what)
        if timed_out:
            return "timeout", (f"{phase} {target.display} {what}{within}; "
                               "the worker process was killed")
        message = f"the worker process exited (code {code}) while {phase} {target.display}{within}"
        return status, message + (f": {tail}" if tail else "")


def _fail(results: dict[int, TargetFacts], items: list[tuple[int, GraphTarget]], status: str,
          message: str) -> None:
    for index, target in items:
        results[index] = TargetFacts(target, status=status, message=message)


def run_graph(targets: list[GraphTarget], timeout: float = 20.0,
              progress: Callable[[int, int, GraphTarget | None], None] | None = None,
              session: GraphSession | None = None, lanes: int | None = None,
              ) -> list[TargetFacts]:
    """Build and inspect each target in a child process; results in the order given.

    `progress(started, total, target)` is called as each target starts (its worker's start
    included), every TICK seconds while it runs, and with None at the end. `session` keeps
    the workers and what they built for a later call. `lanes`: default `lanes_for`."""
    own = session is None
    session = session if session is not None else GraphSession()
    try:
        return session.run(targets, timeout, progress, lanes)
    finally:
        if own:
            session.close()
