"""Chunks of work done by this process and worker processes together, each taking the next
chunk from one shared counter when it is free (work stealing).

A pool that is handed its chunks up front promises each to a worker before the worker is
free to start it: at the end this process sat idle while the one worker went through the
chunks queued for it (on 200 files, a third of the stage's wall time). Here nobody idles
while a chunk is left.
"""

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

# Sharing pays off from about this much text to work on: starting a worker costs a fork
# (4-10 ms), and sending its results back about a seventh of making them (pickling there,
# unpickling here). Measured with stealing on 2 cores, 30 files (95 KB) were lowered in
# 0.29-0.34 s shared against 0.39-0.46 s alone; a few small files stay in this process.
MIN_SHARED_TEXT = 32 * 1024
# Small chunks, so that nobody waits long for the last one.
CHUNKS_PER_JOB = 16


def shared_map(work: Callable[[list[I]], list[R]], items: list[I], jobs: int,
               weight: Callable[[I], int], *,
               meanwhile: Callable[[], None] | None = None) -> tuple[list[R], int | None]:
    """`work(items)` done in up to `jobs` processes (this one included) when the items
    weigh enough (`weight`: about the bytes of text an item makes work on), in chunks of
    consecutive items; the results in the order of `items`, and how many chunks were
    redone here after a worker failed (None when the work was not shared).

    `meanwhile`: work of this process alone that the workers need not have (importing
    what the next stage uses), done once they have started, before this process takes
    its first chunk: the workers' chunks overlap it, instead of waiting for it. Done
    first when the work is not shared."""
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
    """`items` cut into about `count` runs of about equal weight, in order; and each
    run's weight."""
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
    how many chunks were done again here because the worker that took them failed (an
    exception, a crash, a result that does not pickle). None when no worker could start
    (no fork: another system, or this process runs threads; more chunks than the pipe
    that hands them out holds): the caller does the work itself (`meanwhile` not done).

    The chunks are taken heaviest first (by `weights`, else in order): one heavy chunk
    taken last (a project part of many files) would keep one process busy while the
    others have nothing left to take."""
    order = list(range(len(chunks)))
    if weights is not None:
        order.sort(key=lambda i: -weights[i])
    if not _can_fork() or len(chunks) * _TOKEN.size > _PIPE_ROOM:
        return None
    tokens = _Tokens(order)
    started = _forked(work, chunks, tokens, workers)
    if not started:
        tokens.close()
        return None
    if meanwhile is not None:
        meanwhile()
    # Each worker sends every chunk as it finishes it (its pickling overlaps its next
    # chunk); a thread per worker reads the bytes as they come (the read waits without the
    # interpreter lock), so a full pipe never stops a worker from taking the next chunk.
    # This process unpickles what has come between its own chunks, not all at the end.
    received: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    readers = [threading.Thread(target=_receive, args=(reader, received), daemon=True)
               for _, reader in started]
    for thread in readers:
        thread.start()
    done: dict[int, R] = {}
    for i in tokens.taken(len(chunks)):
        done[i] = work(chunks[i])
        _unpickle(received, done)
    for thread, (process, reader) in zip(readers, started):
        thread.join()
        reader.close()
        process.join()
    tokens.close()
    _unpickle(received, done)
    failed = [i for i in range(len(chunks)) if i not in done]
    for i in failed:
        done[i] = work(chunks[i])
    return [done[i] for i in range(len(chunks))], len(failed)


# ------------------------------------------------------------- forked workers (Linux)
#
# Workers forked with `os.fork`, not multiprocessing: importing it and making its shared
# counter (ctypes, a lock, an arena) cost 30 ms, a fifth of a small project's run; the
# chunks are handed out by a pipe and results come back through one per worker.

# A chunk's index, as a token in the pipe that hands them out.
_TOKEN = struct.Struct("=I")
# Every token is written before the first worker starts: they must fit in the pipe
# (Linux gives 64 KiB; POSIX promises at least 4 KiB, PIPE_BUF).
_PIPE_ROOM = 4096
# A message's length, before it, in the pipe a worker sends its results through.
_LENGTH = struct.Struct("=Q")


class _Tokens:
    """The chunk indices, each in the pipe once: whoever is free reads the next. A read of
    one token is one read of 4 bytes from a pipe that holds only whole tokens and no
    writer: the kernel gives each token to one reader, whole, then end of file to all."""

    def __init__(self, order: list[int]) -> None:
        self._read, write = os.pipe()
        try:
            os.write(write, b"".join(_TOKEN.pack(i) for i in order))
        finally:
            os.close(write)

    def taken(self, total: int) -> Iterator[int]:
        while True:
            token = os.read(self._read, _TOKEN.size)
            if len(token) < _TOKEN.size:
                return
            yield _TOKEN.unpack(token)[0]

    def close(self) -> None:
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


class MessagePipe:
    """One end of a pipe, as multiprocessing's Connection is used here: whole messages,
    each after its length."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def send_bytes(self, data: bytes) -> None:
        view = memoryview(_LENGTH.pack(len(data)) + data)
        while view:
            view = view[os.write(self._fd, view):]

    def recv_bytes(self) -> bytes:
        return self._exactly(_LENGTH.unpack(self._exactly(_LENGTH.size))[0])

    def _exactly(self, size: int) -> bytes:
        parts: list[bytes] = []
        while size:
            part = os.read(self._fd, min(size, 1 << 20))
            if not part:
                raise EOFError  # the worker closed its end: it finished, or died
            parts.append(part)
            size -= len(part)
        return b"".join(parts)

    def close(self) -> None:
        os.close(self._fd)


class _Child:
    def __init__(self, pid: int) -> None:
        self.pid = pid

    def join(self) -> None:
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _forked(work, chunks, tokens: _Tokens, workers: int) -> list[tuple[_Child, MessagePipe]]:
    started: list[tuple[_Child, MessagePipe]] = []
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
                    earlier.close()
                _worker(work, chunks, tokens, MessagePipe(write))
            finally:
                os._exit(0)
        os.close(write)  # the worker's copy is the only one left: its end is EOF here
        started.append((_Child(pid), MessagePipe(read)))
    return started


def _widen(fd: int) -> None:
    """The pipe as large as Linux lets this process make it (1 MiB by default): a chunk's
    results (about 75 KB for 3 files' facts) are written at once, where the default 64 KiB
    made the worker wait for this process's reader thread, which waits for the
    interpreter lock this process holds while it lowers its own chunks (up to the 5 ms
    switch interval for every 64 KiB)."""
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


def _receive(reader, into: queue.SimpleQueue) -> None:
    while True:
        try:
            into.put(reader.recv_bytes())
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
    """Whether workers may be forked: a worker starts with snlint already imported, safe
    while this process runs no other thread. Workers started as fresh interpreters
    (multiprocessing's spawn) would each import snlint again, which costs about what
    they would save on a typical project, so elsewhere the work stays here."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _worker(work, chunks, counter: _Tokens, writer) -> None:
    # A worker only builds objects that live until they are sent: the cyclic collector
    # would only rescan them.
    gc.disable()
    try:
        for index in counter.taken(len(chunks)):
            writer.send_bytes(pickle.dumps((index, work(chunks[index])), pickle.HIGHEST_PROTOCOL))
    except BaseException:  # noqa: BLE001 - the chunk it failed on (an error, a result that
        pass  # does not pickle) is redone by the parent, and it takes no more
    writer.close()
