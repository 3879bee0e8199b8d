"""Chunks of work done by this process and forked workers together, each taking the next
chunk when it is free (work stealing: a pool handed its chunks up front left this process
idle at the end while one worker went through its queue)."""

from __future__ import annotations

import gc
import os
import pickle
import queue
import struct
import sys
import threading
from typing import Callable, Iterator, Sequence, TypeVar

C = TypeVar("C")
I = TypeVar("I")  # noqa: E741
R = TypeVar("R")

# Sharing pays off from about this much text: a fork costs 4-10 ms, and sending results
# back about a seventh of making them.
MIN_SHARED_TEXT = 32 * 1024
# Small chunks, so that nobody waits long for the last one.
CHUNKS_PER_JOB = 16


def shared_map(work: Callable[[list[I]], list[R]], items: list[I], jobs: int,
               weight: Callable[[I], int], *,
               meanwhile: Callable[[], None] | None = None) -> tuple[list[R], int | None]:
    """`work(items)` done in up to `jobs` processes (this one included) when the items
    weigh enough (`weight`: about the bytes of text an item makes work on); the results
    in order, and how many chunks were redone here after a worker failed (None: not
    shared). `meanwhile`: this process's own work (imports for the next stage), done
    once the workers have started, else first."""
    weights = [weight(item) for item in items]
    if jobs <= 1 or len(items) < 2 or sum(weights) < MIN_SHARED_TEXT:
        if meanwhile is not None:
            meanwhile()
        return work(items), None
    chunks, chunk_weights = _chunks(items, weights, min(jobs * CHUNKS_PER_JOB, _PIPE_ROOM // _TOKEN.size))
    shared = run_chunks(work, chunks, jobs - 1, meanwhile=meanwhile, weights=chunk_weights)
    if shared is None:
        return work(items), None
    done, failed = shared
    return [result for chunk in done for result in chunk], failed


def _chunks(items: list[I], weights: list[int], count: int) -> tuple[list[list[I]], list[int]]:
    """`items` cut into about `count` runs of about equal weight, and each run's weight."""
    step = (sum(weights) or 1) / max(1, count)
    out: list[list[I]] = [[]]
    sums = [0]
    filled = 0
    for item, weight in zip(items, weights):
        if out[-1] and filled >= step * len(out):
            out.append([])
            sums.append(0)
        out[-1].append(item)
        sums[-1] += weight
        filled += weight
    return out, sums


def run_chunks(work: Callable[[C], R], chunks: Sequence[C], workers: int, *,
               meanwhile: Callable[[], None] | None = None,
               weights: Sequence[int] | None = None) -> tuple[list[R], int] | None:
    """`work(chunk)` of every chunk, in order, done here and in `workers` processes; and
    how many chunks were redone here after their worker failed (an exception, a crash, a
    result that does not pickle). None when no worker could start: the caller does the
    work itself (`meanwhile` not done). Heaviest first (`weights`): a heavy chunk taken
    last would keep one process busy while the others idle."""
    order = list(range(len(chunks)))
    if weights is not None:
        order.sort(key=lambda i: -weights[i])
    if not _can_fork() or len(chunks) * _TOKEN.size > _PIPE_ROOM:
        return None
    tokens = _tokens(order)
    started = _forked(work, chunks, tokens, workers)
    if not started:
        os.close(tokens)
        return None
    if meanwhile is not None:
        meanwhile()
    # A thread per worker reads its results as they come (waiting without the interpreter
    # lock), so a full pipe never stops a worker; they are unpickled between own chunks.
    received: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    readers = [threading.Thread(target=_receive, args=(fd, received), daemon=True) for _, fd in started]
    for thread in readers:
        thread.start()
    done: dict[int, R] = {}
    for i in _taken(tokens):
        done[i] = work(chunks[i])
        _unpickle(received, done)
    for thread, (pid, fd) in zip(readers, started):
        thread.join()
        os.close(fd)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    os.close(tokens)
    _unpickle(received, done)
    failed = [i for i in range(len(chunks)) if i not in done]
    for i in failed:
        done[i] = work(chunks[i])
    return [done[i] for i in range(len(chunks))], len(failed)


# ------------------------------------------------------------- forked workers (Linux)
#
# Forked with `os.fork`, not multiprocessing: importing it and making its shared counter
# cost 30 ms, a fifth of a small project's run.

# A chunk's index, as a token in the pipe that hands them out.
_TOKEN = struct.Struct("=I")
# Every token is written before the first worker starts: they must fit in the pipe
# (POSIX promises at least 4 KiB, PIPE_BUF).
_PIPE_ROOM = 4096
# A message's length, before it, in the pipe a worker sends its results through.
_LENGTH = struct.Struct("=Q")


def _tokens(order: list[int]) -> int:
    """The read end of a pipe holding each chunk index once: whoever is free reads the next.
    A read of 4 bytes from a pipe of whole tokens and no writer gets one token, or EOF."""
    read, write = os.pipe()
    try:
        os.write(write, b"".join(_TOKEN.pack(i) for i in order))
    finally:
        os.close(write)
    return read


def _taken(tokens: int) -> Iterator[int]:
    while True:
        token = os.read(tokens, _TOKEN.size)
        if len(token) < _TOKEN.size:
            return
        yield _TOKEN.unpack(token)[0]


def _send(fd: int, data: bytes) -> None:
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _exactly(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    while size:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            raise EOFError  # the worker closed its end: it finished, or died
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _forked(work, chunks, tokens: int, workers: int) -> list[tuple[int, int]]:
    """(pid, read end of its results pipe) of each worker started."""
    started: list[tuple[int, int]] = []
    for _ in range(workers):
        read, write = os.pipe()
        _widen(write)
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            break
        if pid == 0:  # the worker: it never returns into the caller's code
            try:
                os.close(read)
                for _, earlier in started:
                    os.close(earlier)
                _worker(work, chunks, tokens, write)
            finally:
                os._exit(0)
        os.close(write)  # the worker's copy is the only one left: its end is EOF here
        started.append((pid, read))
    return started


def _widen(fd: int) -> None:
    """The pipe as large as Linux lets this process make it (1 MiB by default): a chunk's
    results are written at once, where the default 64 KiB made the worker wait for this
    process's reader thread, itself waiting for the interpreter lock."""
    import fcntl

    size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if size is None:
        return
    try:
        with open("/proc/sys/fs/pipe-max-size") as handle:
            wanted = int(handle.read())
    except (OSError, ValueError):
        wanted = 1 << 20
    try:
        fcntl.fcntl(fd, size, min(wanted, 1 << 22))
    except OSError:
        pass  # a smaller pipe only waits more


def _receive(fd: int, into: queue.SimpleQueue) -> None:
    while True:
        try:
            into.put(_exactly(fd, _LENGTH.unpack(_exactly(fd, _LENGTH.size))[0]))
        except (EOFError, OSError):  # every worker's end closed: it finished, or died
            return


def _unpickle(received: queue.SimpleQueue, done: dict) -> None:
    while True:
        try:
            message = received.get_nowait()
        except queue.Empty:
            return
        try:
            index, result = pickle.loads(message)
        except Exception:  # noqa: BLE001 - a message cut short by a dying worker: redone
            continue
        done[index] = result


def _can_fork() -> bool:
    """Whether workers may be forked: safe while this process runs no other thread.
    Elsewhere the work stays here: spawned workers would each import snlint again, which
    costs about what they would save."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _worker(work, chunks, tokens: int, fd: int) -> None:
    # A worker's objects live until they are sent: the cyclic collector would only rescan them.
    gc.disable()
    try:
        for index in _taken(tokens):
            _send(fd, pickle.dumps((index, work(chunks[index])), pickle.HIGHEST_PROTOCOL))
    except BaseException:  # noqa: BLE001 - the chunk it failed on (an error, a result that
        pass  # does not pickle) is redone by the parent, and it takes no more
    os.close(fd)
