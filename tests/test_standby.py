"""A process forked ahead of its work (snlint.standby): it prepares at idle priority, works
at normal priority once asked, gives what `shared_map` gives, and any failure of it
leaves the work to the caller."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from snlint.standby import Standby
from snlint.stealing import shared_map

pytestmark = pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux scheduling policies")


def square(chunk: list[int]) -> list[int]:
    return [n * n for n in chunk]


def policy(chunk: list[int]) -> list[int]:
    return [os.sched_getscheduler(0) for _ in chunk]


def fails(chunk: list[int]) -> list[int]:
    raise ValueError("a bug in the work")


def one(item: int) -> int:
    return 1


def noted(path: Path):
    def prepare() -> None:
        written = path.with_suffix(".part")
        written.write_text(str(os.sched_getscheduler(0)))
        written.replace(path)  # whole when it appears
    return prepare


def test_the_standby_gives_what_shared_map_gives(tmp_path):
    standby = Standby.start(noted(tmp_path / "policy"))
    assert standby is not None
    try:
        items = list(range(50))
        assert standby.map(square, items, 2, one) == shared_map(square, items, 2, one)[0]
        assert standby.map(square, [3], 1, one) == [9]  # it answers request after request
    finally:
        standby.close()


def test_it_prepares_at_idle_priority_and_works_at_normal_priority(tmp_path):
    standby = Standby.start(noted(tmp_path / "policy"))
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "policy").exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # asked before it is ready, it would prepare at normal priority
        assert (tmp_path / "policy").read_text() == str(os.SCHED_IDLE)
        assert standby.map(policy, [0, 1], 1, one) == [os.SCHED_OTHER] * 2
    finally:
        standby.close()


@pytest.mark.parametrize("work", [fails, lambda chunk: chunk], ids=["raises", "does not pickle"])
def test_a_failure_leaves_the_work_to_the_caller(tmp_path, work):
    standby = Standby.start(noted(tmp_path / "policy"))
    try:
        assert standby.map(work, [1, 2], 1, one) is None
        assert standby.map(square, [2], 1, one) is None  # not asked again
    finally:
        standby.close()


def test_closing_ends_a_standby_still_preparing(tmp_path):
    # Ended, not waited for: a close that waited would find the preparation finished.
    def prepare() -> None:
        time.sleep(60)
        (tmp_path / "prepared").touch()

    standby = Standby.start(prepare)
    pid = standby._pid
    standby.close()
    assert not (tmp_path / "prepared").exists()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left behind


def test_no_standby_while_threads_run():
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert Standby.start(lambda: None) is None
    finally:
        stop.set()
        thread.join()


DISCRIMINATOR = textwrap.dedent('''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.b = spectral_norm(nn.Conv2d(8, 8, 3), dim=1)

        def forward(self, x):
            return self.b(self.a(x))
''')


@pytest.mark.parametrize("jobs, started", [(1, False), (2, True)])
def test_fix_starts_a_standby_only_with_a_second_core(tmp_path, monkeypatch, jobs, started):
    from snlint import standby
    from snlint.cli import main

    (tmp_path / "d.py").write_text(DISCRIMINATOR)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    made = []
    start = standby.Standby.start.__func__

    def recorded(cls, prepare):
        made.append(start(cls, prepare))
        return made[-1]

    monkeypatch.setattr(standby.Standby, "start", classmethod(recorded))
    # SN105's fix changes the u/v shapes: unsafe, so enabled here.
    result = CliRunner().invoke(main, [".", "--fix", "--unsafe-fixes", "--no-graph", "--no-cache",
                                       "--jobs", str(jobs)])
    assert result.stderr == "Fixed 1 finding in 1 file.\n"
    assert "dim=1" not in (tmp_path / "d.py").read_text()
    assert bool(made) == started
    assert all(s._pid == -1 for s in made)  # closed once the rounds are done


def test_work_handed_over_is_collected_after_the_work_asked_later(tmp_path):
    standby = Standby.start(noted(tmp_path / "policy"))
    assert standby is not None
    try:
        assert standby.submit(square, [2, 3])
        assert not standby.submit(square, [4])  # one piece of work at a time
        assert standby.map(square, [5], 1, one) == [25]  # answered after the first
        assert standby.collect() == [4, 9]
        assert standby.collect() is None
    finally:
        standby.close()


# Three overlapping fixes on one line (SN twice on an activation: SN103, and SN102 on each
# call): the outer call goes first, the inner one in the next round.
NESTED = textwrap.dedent('''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.act = spectral_norm(spectral_norm(nn.LeakyReLU(0.2)))
            self.b = spectral_norm(nn.Conv2d(8, 8, 3), dim=1)

        def forward(self, x):
            return self.b(self.act(self.a(x)))
''')


@pytest.mark.parametrize("source, rounds", [(DISCRIMINATOR, 1), (NESTED, 2)])
def test_fix_writes_the_first_rounds_files_early_and_leaves_nothing_behind(tmp_path, monkeypatch,
                                                                        source, rounds):
    # The standby writes what the first round fixed while the next lint runs; a file a
    # later round changes again is written at the end instead.
    from snlint import fix
    from snlint.cli import main

    (tmp_path / "d.py").write_text(source)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    late = []
    write_atomic = fix.write_atomic
    monkeypatch.setattr(fix, "write_atomic", lambda path, data: late.append(path) or write_atomic(path, data))
    # SN105's fix changes the u/v shapes: unsafe, so enabled here.
    result = CliRunner().invoke(main, [".", "--fix", "--unsafe-fixes", "--no-graph", "--no-cache",
                                       "--jobs", "2"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "d.py").read_text()
    assert "dim=1" not in text
    assert len(late) == rounds - 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.py", "pyproject.toml"]
    if rounds == 2:
        assert "        self.act = nn.LeakyReLU(0.2)\n" in text
