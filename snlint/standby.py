"""A process forked ahead of the work it will do, preparing for it (imports) only while a
core is idle, then doing that work on request (`shared_map`, itself and its workers).

`--fix` needs libcst and the rules' fixes only after its first lint, and that lint leaves a
core idle in its serial stretches (start-up, the link step's bookkeeping); importing them
then, instead of after the lint with the other core idle, takes their 0.13 s off the run.

The process waits under SCHED_IDLE (it runs only on a core nobody else wants); when the
work comes, this process, which is about to wait for it, gives it the normal policy back
(Linux lets a process of the same user do that). Where that cannot be done (another
system, no fork, threads running) there is no standby and the caller does the work itself,
as it does when the standby fails in any way.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from typing import Callable, TypeVar

from snlint.stealing import MessagePipe, shared_map

I = TypeVar("I")  # noqa: E741
R = TypeVar("R")

_FAILED = b"!"


class Standby:
    """A forked process that runs `prepare()` at idle priority, then answers `map`
    requests until `close()`. Build one with `Standby.start`."""

    def __init__(self, pid: int, requests: MessagePipe, answers: MessagePipe) -> None:
        self._pid = pid
        self._requests = requests
        self._answers = answers
        self._woken = False
        self._waiting = False  # work was submitted and its answer not received
        self._kept: list | None = None  # a submitted work's answer `map` received first
        self._has_kept = False

    @classmethod
    def start(cls, prepare: Callable[[], None]) -> Standby | None:
        """The standby process, or None where it cannot be made (then nothing was
        started)."""
        idle = getattr(os, "SCHED_IDLE", None)
        if not sys.platform.startswith("linux") or idle is None or threading.active_count() != 1:
            return None
        to_child, from_parent = os.pipe()
        to_parent, from_child = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (to_child, from_parent, to_parent, from_child):
                os.close(fd)
            return None
        if pid == 0:  # the standby: it never returns into the caller's code
            try:
                os.close(from_parent)
                os.close(to_parent)
                _serve(MessagePipe(to_child), MessagePipe(from_child), prepare)
            finally:
                os._exit(0)
        os.close(to_child)
        os.close(from_child)
        # Set here, not by the standby itself, so that it always comes before `_wake`;
        # the standby prepares once it is set.
        try:
            os.sched_setscheduler(pid, idle, os.sched_param(0))
        except OSError:
            pass  # it prepares at normal priority, beside the lint
        requests = MessagePipe(from_parent)
        requests.send_bytes(b"")
        return cls(pid, requests, MessagePipe(to_parent))

    def map(self, work: Callable[[list[I]], list[R]], items: list[I], jobs: int,
            weight: Callable[[I], int]) -> list[R] | None:
        """`shared_map(work, items, jobs, weight)`'s results, done by the standby (`work`
        and `weight` must pickle: module-level functions, partials of them); None when it
        failed (the caller then does the work itself, and the standby is not asked
        again)."""
        if self._waiting:
            # Work handed over earlier (`submit`) is answered first: keep its answer.
            self._kept = self._receive()
            self._has_kept = True
        if not self._send(work, items, jobs, weight):
            return None
        return self._receive()

    def submit(self, work: Callable[[list[I]], list[R]], items: list[I], jobs: int = 1,
               weight: Callable[[I], int] | None = None) -> bool:
        """Hand the standby `map`'s work without waiting for it (`collect` gets the
        results): False when it cannot take it (it holds work not collected)."""
        if self._waiting or self._has_kept:
            return False
        return self._send(work, items, jobs, weight or _unit)

    def _send(self, work, items, jobs, weight) -> bool:
        if self._pid < 0:
            return False
        self._wake()
        try:
            self._requests.send_bytes(pickle.dumps((work, items, jobs, weight), pickle.HIGHEST_PROTOCOL))
        except Exception:  # noqa: BLE001 - a dead standby, work that does not pickle
            self.close()
            return False
        self._waiting = True
        return True

    def collect(self) -> list | None:
        """The results of the work `submit` handed over (waiting for them); None when it
        failed, or none was handed over."""
        if self._has_kept:
            kept, self._kept, self._has_kept = self._kept, None, False
            return kept
        return self._receive()

    def _receive(self) -> list | None:
        if self._pid < 0 or not self._waiting:
            return None
        self._waiting = False
        try:
            answer = self._answers.recv_bytes()
            if answer == _FAILED:
                raise EOFError
            return pickle.loads(answer)
        except Exception:  # noqa: BLE001 - a dead standby, a result that does not unpickle
            self.close()
            return None

    def _wake(self) -> None:
        """Back to the normal policy: the caller is about to wait for it."""
        if not self._woken:
            self._woken = True
            try:
                os.sched_setscheduler(self._pid, os.SCHED_OTHER, os.sched_param(0))
            except OSError:
                pass  # it ran at idle priority: only slower on a busy machine

    def close(self) -> None:
        """End the standby, whatever it is doing (preparing for work that never came)."""
        if self._pid < 0:
            return
        pid, self._pid = self._pid, -1
        for end in (self._requests, self._answers):
            try:
                end.close()
            except OSError:
                pass
        try:
            os.kill(pid, 9)
        except OSError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _unit(item: object) -> int:
    return 1


def _serve(requests: MessagePipe, answers: MessagePipe, prepare: Callable[[], None]) -> None:
    try:
        requests.recv_bytes()  # its scheduling policy is set
    except (EOFError, OSError):
        return
    try:
        prepare()
    except Exception:  # noqa: BLE001 - what it did not import, the work imports
        pass
    while True:
        try:
            request = requests.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            work, items, jobs, weight = pickle.loads(request)
            answer = pickle.dumps(shared_map(work, items, jobs, weight)[0], pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - the caller does the work itself
            answer = _FAILED
        try:
            answers.send_bytes(answer)
        except OSError:
            return

