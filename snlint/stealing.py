"""Chunks of work done by this process and worker processes together, each taking the next
chunk from one shared counter when it is free (work stealing).

A pool that is handed its chunks up front promises each to a worker before the worker is
free to start it: at the end this process sat idle while the one worker went through the
chunks queued for it (on 200 files, a third of the stage's wall time). Here nobody idles
while a chunk is left.
"""

from __future__ import annotations

import gc
import pickle
import queue
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
               weight: Callable[[I], int]) -> tuple[list[R], int | None]:
    """`work(items)` done in up to `jobs` processes (this one included) when the items
    weigh enough (`weight`: about the bytes of text an item makes work on), in chunks of
    consecutive items; the results in the order of `items`, and how many chunks were
    redone here after a worker failed (None when the work was not shared)."""
    weights = [weight(item) for item in items]
    if jobs <= 1 or len(items) < 2 or sum(weights) < MIN_SHARED_TEXT:
        return work(items), None
    chunks = _chunks(items, weights, jobs * CHUNKS_PER_JOB)
    shared = run_chunks(work, chunks, jobs - 1)
    if shared is None:
        return work(items), None
    done, failed = shared
    return [result for chunk in done for result in chunk], failed


def _chunks(items: list[I], weights: list[int], count: int) -> list[list[I]]:
    """`items` cut into about `count` runs of about equal weight, in order."""
    step = (sum(weights) or 1) / max(1, count)
    out: list[list[I]] = [[]]
    filled = 0
    for item, weight in zip(items, weights):
        if out[-1] and filled >= step * len(out):
            out.append([])
        out[-1].append(item)
        filled += weight
    return out


def run_chunks(work: Callable[[C], R], chunks: Sequence[C], workers: int) -> tuple[list[R], int] | None:
    """`work(chunk)` of every chunk, in order, done here and in `workers` processes; and
    how many chunks were done again here because the worker that took them failed (an
    exception, a crash, a result that does not pickle). None when no worker could start:
    the caller does the work itself."""
    import multiprocessing  # only for a run big enough to share (the one-file path has none)

    context = multiprocessing.get_context(_start_method())
    counter = context.Value("q", 0)
    started = []
    for _ in range(workers):
        reader, writer = context.Pipe(duplex=False)
        try:
            process = context.Process(target=_worker, args=(work, chunks, counter, writer), daemon=True)
            process.start()
        except (OSError, ValueError, RuntimeError):
            reader.close()
            writer.close()
            break
        writer.close()  # the worker's copy is the only one left: its end is EOF here
        started.append((process, reader))
    if not started:
        return None
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
    for i in _taken(counter, len(chunks)):
        done[i] = work(chunks[i])
        _unpickle(received, done)
    for thread, (process, reader) in zip(readers, started):
        thread.join()
        reader.close()
        process.join()
    _unpickle(received, done)
    failed = [i for i in range(len(chunks)) if i not in done]
    for i in failed:
        done[i] = work(chunks[i])
    return [done[i] for i in range(len(chunks))], len(failed)


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


def _start_method() -> str:
    # fork: a worker starts with snlint and libcst already imported, safe while this
    # process runs no other thread; else a fresh interpreter.
    return "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"


def _taken(counter, total: int) -> Iterator[int]:
    """The chunk indices this process takes, one at a time, until none is left."""
    while True:
        with counter.get_lock():
            index = counter.value
            if index >= total:
                return
            counter.value = index + 1
        yield index


def _worker(work, chunks, counter, writer) -> None:
    # A worker only builds objects that live until they are sent: the cyclic collector
    # would only rescan them.
    gc.disable()
    try:
        for index in _taken(counter, len(chunks)):
            writer.send_bytes(pickle.dumps((index, work(chunks[index])), pickle.HIGHEST_PROTOCOL))
    except BaseException:  # noqa: BLE001 - the chunk it failed on (an error, a result that
        pass  # does not pickle) is redone by the parent, and it takes no more
    writer.close()
