"""The worker's limits hold whatever the project's code does (issue 31, points 2, 5, 12):
endless standard error, a killed snlint, a replaced json.dumps, a garbled protocol."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from graph_helpers import write  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402
from snlint.graph import runner  # noqa: E402

BN_CRITIC = '''
    import torch.nn as nn


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.bn(self.conv(x)).mean(dim=(1, 2, 3))
'''


def test_endless_stderr_is_killed_at_the_limit_and_only_its_end_is_kept(tmp_path, monkeypatch):
    write(tmp_path, "loud.py", '''
        import sys

        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                while True:
                    sys.stderr.write("x" * 4096 + "\\n")
    ''')
    write(tmp_path, "quiet.py", BN_CRITIC)
    kept: list[int] = []
    close = runner._Worker.close

    def measured(self, wait=5.0):
        kept.append(len(self.stderr))
        return close(self, wait)

    monkeypatch.setattr(runner._Worker, "close", measured)
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, graph_timeout=3, cache=False))
    assert [(r.target.class_name, r.status) for r in result.graph] == [
        ("Discriminator", "timeout"), ("Critic", "ok")]
    assert [(f.code, Path(f.path).name) for f in result.findings] == [
        ("SN911", "loud.py"), ("SN301", "quiet.py")]
    assert kept and max(kept) <= runner.STDERR_KEPT


def test_a_replaced_json_dumps_does_not_touch_the_workers_replies(tmp_path):
    write(tmp_path, "nets.py", '''
        import json

        import torch.nn as nn


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                json.dumps = lambda *args, **kwargs: "not json"
                json.loads = lambda *args, **kwargs: {}
                self.conv = nn.Conv2d(3, 8, 3)
                self.bn = nn.BatchNorm2d(8)

            def forward(self, x):
                return self.bn(self.conv(x)).mean(dim=(1, 2, 3))
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, cache=False))
    assert [(r.target.class_name, r.status) for r in result.graph] == [("Critic", "ok")]
    assert [f.code for f in result.findings] == ["SN301"]


def test_a_garbled_protocol_stream_is_reported_as_such_not_as_a_time_out(tmp_path):
    write(tmp_path, "nets.py", '''
        import os

        import torch.nn as nn


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                for fd in range(3, 32):
                    try:
                        os.write(fd, b"not a message\\n")
                    except OSError:
                        pass
                self.conv = nn.Conv2d(3, 8, 3)
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, cache=False))
    [note] = result.findings
    assert note.code == "SN912"
    assert note.message == (
        f"graph pass: cannot build Critic: the worker's reply while building {tmp_path / 'nets.py'} "
        "was not a graph-pass message (the project's code wrote to its protocol stream?): "
        "'not a message'; the worker process was killed")


def _descendants(pid: int) -> list[int]:
    found = _children(pid)
    for child in list(found):
        found += _descendants(child)
    return found


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"  # a zombie has ended


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_the_worker_ends_when_snlint_is_killed(tmp_path, how):
    write(tmp_path, "slow.py", '''
        import time

        import torch.nn as nn


        class Sleeps(type):
            def __new__(mcs, name, bases, namespace):
                open("asleep", "w").close()  # in the worker's scratch folder
                time.sleep(1000)


        class Discriminator(nn.Module, metaclass=Sleeps):
            pass
    ''')
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    snlint = subprocess.Popen([sys.executable, "-m", "snlint", "--graph", "--graph-timeout", "600",
                               "--no-cache", str(tmp_path)], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        workers: list[int] = []
        for _ in range(1200):  # until the worker sleeps in the module's import
            # The worker: a child, or a child of the fork server snlint started.
            workers = [p for p in _descendants(snlint.pid) if os.path.exists(f"/proc/{p}/cwd/asleep")]
            if workers:
                break
            if snlint.poll() is not None:
                break
            time.sleep(0.1)
        assert workers and os.path.exists(f"/proc/{workers[0]}/cwd/asleep"), "no worker asleep"
        scratch = os.readlink(f"/proc/{workers[0]}/cwd")
        workers = _descendants(snlint.pid)
        snlint.send_signal(how)
        snlint.wait()
        for _ in range(300):  # a bound against a hang, not a speed claim
            if not any(map(_alive, workers)):
                break
            time.sleep(0.1)
        assert not any(map(_alive, workers)), "a worker (or the fork server) outlived snlint"
        # A scratch folder its killed snlint left goes with the next run's sweep.
        runner._swept = False
        runner._sweep_scratch()
        assert not Path(scratch).exists()
    finally:
        if snlint.poll() is None:
            snlint.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_project_module_whose_import_hung_is_not_imported_again_by_the_next_worker(tmp_path):
    write(tmp_path, "slow.py", "TOTAL = sum(range(10 ** 12))\n")
    for name in ("a", "b"):
        write(tmp_path, f"{name}.py", f'''
            import torch.nn as nn
            import slow


            class {name.upper()}Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 1, 4)

                def forward(self, x):
                    return self.conv(x).flatten(1)
        ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, graph_timeout=3, cache=False))
    assert [(r.target.class_name, r.status) for r in result.graph] == [
        ("ADiscriminator", "timeout"), ("BDiscriminator", "import_error")]
    assert "a.py exceeded the 3 s limit (still importing slow.py); " in result.graph[0].message
    assert result.graph[1].message == (
        "ImportError: slow.py is not imported again: its import exceeded the 3 s limit while "
        "another discriminator was built")


def test_forwards_that_would_pass_the_limit_are_skipped_and_the_class_stays_built(tmp_path):
    write(tmp_path, "models.py", '''
        import time

        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 1, 4)

            def forward(self, x):
                time.sleep(2)  # a large model on a loaded machine (fx's trace runs it too)
                return self.conv(x).flatten(1)
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, graph_timeout=7, cache=False))
    [facts] = result.graph
    assert facts.status == "ok"
    assert not facts.probe["ran"]
    assert facts.probe["reason"].startswith("a forward at 3x16x16 takes 2.0 s and ")
    assert facts.probe["reason"].endswith(" s of the time limit were left (raise --graph-timeout)")


def test_the_build_and_the_forwards_each_have_the_limit(tmp_path):
    write(tmp_path, "models.py", '''
        import time

        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                time.sleep(2)  # an orthogonal init of a large critic
                self.conv = nn.Conv2d(3, 1, 4)

            def forward(self, x):
                time.sleep(0.15)
                return self.conv(x).flatten(1)
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, graph_timeout=3, cache=False))
    [facts] = result.graph
    assert facts.status == "ok"
    assert facts.probe["ran"], facts.probe


def test_a_forward_that_hangs_is_named_as_such_not_as_a_build(tmp_path):
    write(tmp_path, "models.py", '''
        import time

        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 1, 4)

            def forward(self, x):
                time.sleep(60)
                return self.conv(x).flatten(1)
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, graph_timeout=3, cache=False))
    [facts] = result.graph
    assert facts.status == "timeout"
    assert facts.message.startswith("running the forwards of ")
    assert facts.message.endswith("models.py exceeded the 3 s limit; the worker process was killed")


def test_input_sizes_stop_being_tried_when_the_next_would_pass_the_limit(tmp_path):
    write(tmp_path, "models.py", '''
        import time

        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 1, 4)

            def forward(self, x):
                time.sleep(1)
                if x.shape[-1] != 256:
                    raise ValueError("only 256x256")
                return self.conv(x).flatten(1)
    ''')
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, graph_timeout=5, cache=False))
    [facts] = result.graph
    assert facts.status == "ok"
    assert facts.probe["reason"] == (
        "the input sizes tried took the time limit (ValueError: only 256x256)")
