"""Chunks shared by this process and its workers (snlint.engine.workers): every chunk done once,
in order, whoever takes it, and a worker's failure costs only a redo here."""

from __future__ import annotations

import os
import time

from snlint.engine.workers import run_chunks, shared_map

PARENT = os.getpid()


def square(chunk: list[int]) -> list[int]:
    return [n * n for n in chunk]


def test_every_chunk_comes_back_in_order():
    chunks = [[i, i + 1] for i in range(0, 40, 2)]
    done, failed = run_chunks(square, chunks, 1)
    assert done == [square(c) for c in chunks] and failed == 0


def test_this_process_and_its_worker_both_take_chunks():
    def where(chunk):
        time.sleep(0.05)
        return os.getpid()

    done, failed = run_chunks(where, [[i] for i in range(8)], 1)
    assert failed == 0
    assert PARENT in done and set(done) - {PARENT}  # both took some


def test_a_worker_that_dies_loses_nothing():
    def dies(chunk):
        if os.getpid() != PARENT:
            os._exit(3)  # no message at all: its pipe closes
        time.sleep(0.05)
        return square(chunk)

    chunks = [[i] for i in range(6)]
    done, failed = run_chunks(dies, chunks, 1)
    assert done == [square(c) for c in chunks] and failed == 1


def test_a_result_that_does_not_pickle_is_made_again_here():
    def unpicklable(chunk):
        if os.getpid() != PARENT:
            return lambda: chunk
        time.sleep(0.05)
        return chunk

    chunks = [[i] for i in range(4)]
    done, failed = run_chunks(unpicklable, chunks, 1)
    assert done == chunks and failed >= 1  # every chunk the worker did: how many is its pace


def test_threads_running_keep_the_work_here(monkeypatch):
    # Forking is unsafe while this process runs other threads (a graph-pass session):
    # then no worker starts, and the caller does the work itself.
    import threading

    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert run_chunks(square, [[1], [2]], 1) is None
    assert shared_map(lambda chunk: [n * n for n in chunk], [1] * 100, 2, lambda n: 1 << 20) == ([1] * 100, None)


def test_the_work_is_cut_into_no_more_chunks_than_the_pipe_holds(monkeypatch):
    # Forked workers take chunk indices from a pipe filled before they start.
    from snlint.engine import workers as stealing

    monkeypatch.setattr(stealing, "CHUNKS_PER_JOB", 10_000)
    items = list(range(3000))
    done, failed = shared_map(lambda chunk: [n * n for n in chunk], items, 2, lambda n: 1 << 20)
    assert done == [n * n for n in items] and failed == 0


def test_forked_workers_need_no_multiprocessing():
    # Importing multiprocessing and making its shared counter cost a fifth of a small
    # project's run.
    import subprocess
    import sys

    code = ("import sys\nfrom snlint.engine.workers import run_chunks\n"
            "done, failed = run_chunks(sorted, [[3, 1], [2, 0]] * 8, 1)\n"
            "assert done == [[1, 3], [0, 2]] * 8 and failed == 0\n"
            "print(sorted(m for m in sys.modules if m.startswith('multiprocessing')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


def test_a_worker_whose_work_raises_leaves_its_chunk_to_this_process():
    def raises(chunk):
        if os.getpid() != PARENT:
            raise RuntimeError("worker")
        time.sleep(0.05)
        return square(chunk)

    chunks = [[i] for i in range(6)]
    done, failed = run_chunks(raises, chunks, 1)
    assert done == [square(c) for c in chunks] and failed == 1


def started_at(chunk: list[int]) -> tuple[int, float]:
    began = time.monotonic()
    time.sleep(0.02)
    return chunk[0], began


def test_the_heaviest_chunk_is_taken_first():
    # A heavy chunk taken last keeps one process busy while the others have nothing left.
    chunks = [[i] for i in range(6)]
    done, failed = run_chunks(started_at, chunks, 1, weights=[1, 1, 1, 1, 1, 50])
    assert failed == 0 and [i for i, _ in done] == list(range(6))  # results in order
    first_two = {i for i, _ in sorted(done, key=lambda d: d[1])[:2]}
    assert 5 in first_two


def test_meanwhile_runs_here_once_the_worker_has_started(tmp_path):
    # What only this process needs (the link step's imports) overlaps the worker's chunks.
    from snlint.engine.workers import shared_map

    # By order, not by clock: `meanwhile` waits for a chunk the worker did; had the worker
    # waited for `meanwhile`, none would come.
    events: list[tuple[str, int, bool]] = []
    worked = tmp_path / "worked"

    def meanwhile():
        for _ in range(3000):  # a bound, not a limit on speed: 30 s
            if worked.exists():
                break
            time.sleep(0.01)
        events.append(("meanwhile", os.getpid(), worked.exists()))

    def work(items):
        if os.getpid() != PARENT:
            worked.touch()
        return [os.getpid() for _ in items]

    done, failed = shared_map(work, list(range(8)), 2, lambda item: 1 << 20, meanwhile=meanwhile)
    assert events == [("meanwhile", PARENT, True)] and failed == 0
    assert [pid for pid in done if pid != PARENT]


def test_meanwhile_runs_first_when_the_work_is_not_shared():
    from snlint.engine.workers import shared_map

    events: list[str] = []
    done, failed = shared_map(lambda items: events.append("work") or items, [1, 2], 2, lambda item: 1,
                              meanwhile=lambda: events.append("meanwhile"))
    assert (done, failed) == ([1, 2], None) and events == ["meanwhile", "work"]


def test_a_forked_worker_writes_a_chunk_of_results_without_waiting():
    # The default 64 KiB pipe made a worker wait on this process's reader thread, which
    # waits for the interpreter lock this process holds while it works on its own chunks.
    import fcntl
    import sys

    import pytest

    from snlint.engine import workers as stealing

    if not sys.platform.startswith("linux") or not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("pipe sizes are Linux's")
    read, write = os.pipe()
    try:
        stealing._widen(write)
        with open("/proc/sys/fs/pipe-max-size") as handle:
            allowed = int(handle.read())
        assert fcntl.fcntl(write, fcntl.F_GETPIPE_SZ) >= min(allowed, 1 << 20)
    finally:
        os.close(read)
        os.close(write)
