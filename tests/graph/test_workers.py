"""How many workers the graph pass starts: one per command (torch imported once), two
side by side when there are enough discriminators and cores, and a fresh one only for a
lane whose worker hung or died. Results do not depend on which worker built what."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402
from graph_helpers import write  # noqa: E402

from snlint.cli import main  # noqa: E402
from snlint.graph import GraphTarget, run_graph, runner  # noqa: E402
from snlint.graph.runner import GraphSession  # noqa: E402

DISCRIMINATOR = '''
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm


class D{n}(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = spectral_norm(nn.Conv2d(3, 8, 3))
        self.bn = nn.BatchNorm2d(8)
        self.head = {head}

    def forward(self, x):
        return self.head(self.bn(self.c(x)).mean((2, 3)))
'''

HANG = '''
import torch.nn as nn


class Hang(nn.Module):
    def __init__(self):
        super().__init__()
        while True:
            pass
'''


def discriminator(n: int, head: str = "nn.Linear(8, 1)") -> str:
    return DISCRIMINATOR.format(n=n, head=head)


@pytest.fixture
def starts(monkeypatch):
    """The workers started (their pids), on a machine said to have two cores."""
    pids: list[int] = []
    start = runner._Worker.__init__

    def counted(self):
        start(self)
        pids.append(self.proc.pid)

    monkeypatch.setattr(runner._Worker, "__init__", counted)
    monkeypatch.setattr(runner, "_cores", lambda: 2)
    return pids


def targets_in(tmp_path, count: int) -> list[GraphTarget]:
    for n in range(count):
        write(tmp_path, f"d{n}.py", discriminator(n))
    return [GraphTarget(str(tmp_path / f"d{n}.py"), f"d{n}.py", f"D{n}", None, str(tmp_path))
            for n in range(count)]


def comparable(results) -> list[dict]:
    out = []
    for facts in results:
        d = facts.to_dict()
        d.pop("seconds", None)
        out.append(d)
    return out


def test_fewer_than_four_discriminators_share_one_worker(tmp_path, starts):
    results = run_graph(targets_in(tmp_path, 3), timeout=60)
    assert [r.status for r in results] == ["ok"] * 3
    assert len(starts) == 1


def test_four_discriminators_on_two_cores_are_built_by_two_workers_alike(tmp_path, starts):
    targets = targets_in(tmp_path, 4)
    side_by_side = run_graph(targets, timeout=60)
    assert len(starts) == 2
    one_worker = run_graph(targets, timeout=60, lanes=1)
    assert len(starts) == 3
    assert [r.status for r in side_by_side] == ["ok"] * 4
    assert comparable(side_by_side) == comparable(one_worker)


def test_one_core_builds_with_one_worker(tmp_path, starts, monkeypatch):
    monkeypatch.setattr(runner, "_cores", lambda: 1)
    run_graph(targets_in(tmp_path, 4), timeout=60)
    assert len(starts) == 1


def test_a_hung_build_in_one_lane_loses_no_other_result(tmp_path, starts):
    targets = targets_in(tmp_path, 3)
    write(tmp_path, "hang.py", HANG)
    targets.insert(1, GraphTarget(str(tmp_path / "hang.py"), "hang.py", "Hang", None, str(tmp_path)))
    results = run_graph(targets, timeout=3, lanes=2)
    assert [r.status for r in results] == ["ok", "timeout", "ok", "ok"]
    assert results[1].message == ("building hang.py exceeded the 3 s limit; "
                                  "the worker process was killed")
    # Two lanes, and at most one fresh worker for the lane whose worker was killed.
    assert 2 <= len(starts) <= 3


def test_a_session_keeps_its_workers_and_builds_only_what_changed(tmp_path, starts):
    targets = targets_in(tmp_path, 2)
    session = GraphSession()
    try:
        first = session.run(targets, timeout=60)
        again = session.run(targets, timeout=60)
        assert all(a is b for a, b in zip(first, again))  # not built again
        write(tmp_path, "d1.py", discriminator(1, head="spectral_norm(nn.Linear(8, 1))"))
        changed = session.run(targets, timeout=60)
    finally:
        session.close()
    assert changed[0] is first[0]
    # The worker imported the changed file afresh: its head now has SN.
    assert [m.path for m in first[1].modules if m.sn] == ["c"]
    assert [m.path for m in changed[1].modules if m.sn] == ["c", "head"]
    assert len(starts) == 1


PROJECT = {
    "models.py": '''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 8, 3))
                self.head = nn.Linear(8, 1)

            def forward(self, x):
                return self.head(self.c(x).mean((2, 3)))


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 8, 3))
                self.head = spectral_norm(nn.Linear(8, 1))

            def forward(self, x):
                return self.head(self.c(x).mean((2, 3)))
    ''',
}


def test_fix_with_the_graph_pass_starts_one_worker_per_command(tmp_path, monkeypatch, starts):
    for name, code in PROJECT.items():
        (tmp_path / name).write_text(textwrap.dedent(code))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    # SN201's fix changes state_dict keys: unsafe, so enabled here.
    fixed = CliRunner().invoke(main, [".", "--fix", "--unsafe-fixes", "--graph"])
    assert "self.head = spectral_norm(nn.Linear(8, 1))" in (tmp_path / "models.py").read_text()
    assert "Fixed 1 finding in 1 file." in fixed.stderr
    # The first round's graph pass and the report's after the fixes share one worker.
    assert len(starts) == 1
    assert "graph pass: 2 discriminators built" in fixed.stderr


def test_a_second_worker_needs_two_targets_of_its_own(tmp_path, starts):
    # Four discriminators, three of them in one file (imported by one worker): the other
    # file alone is not worth a second torch import.
    targets = targets_in(tmp_path, 2)
    write(tmp_path, "many.py", discriminator(7) + discriminator(8) + discriminator(9))
    targets += [GraphTarget(str(tmp_path / "many.py"), "many.py", f"D{n}", None, str(tmp_path))
                for n in (7, 8)]
    results = run_graph(targets[1:] + targets[:1], timeout=60)
    assert [r.status for r in results] == ["ok"] * 4
    assert len(starts) == 2  # d1.py and d0.py against many.py's two: two lanes of two
    run_graph([targets[0], *targets[2:], GraphTarget(str(tmp_path / "many.py"), "many.py", "D9",
                                                     None, str(tmp_path))], timeout=60)
    assert len(starts) == 3  # d0.py alone against many.py's three: one lane


def test_an_interrupted_run_kills_the_worker_busy_with_the_projects_code(tmp_path, monkeypatch, starts):
    """Ctrl-C or SIGTERM while a discriminator's build hangs: the worker is killed at once,
    not asked to stop and waited for (it would not stop: it runs the project's code)."""
    import signal
    import threading

    write(tmp_path, "hang.py", HANG)
    killed: list[int] = []
    kill = runner._Worker.kill

    def kill_and_note(self):
        killed.append(self.proc.pid)
        return kill(self)

    answer = runner._Worker.answer

    def interrupted_once_busy(self, *args, **kwargs):
        # A real SIGINT, which wakes the main thread from its wait on the worker's pipe.
        main = threading.get_ident()
        threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT)).start()
        return answer(self, *args, **kwargs)

    monkeypatch.setattr(runner._Worker, "kill", kill_and_note)
    monkeypatch.setattr(runner._Worker, "answer", interrupted_once_busy)
    session = GraphSession()
    with pytest.raises(KeyboardInterrupt):
        session.run([GraphTarget(str(tmp_path / "hang.py"), "hang.py", "Hang", None, str(tmp_path))],
                    timeout=600)
    assert killed == starts
    session.close()
