"""Graph workers are forked from one process per snlint process that has imported torch
once (snlint.graph.forkserver), and each is the worker a fresh interpreter would have
been: its own folder, temporary folder, environment and arguments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from graph_helpers import write  # noqa: E402

from snlint.graph import GraphTarget, forkserver, run_graph, runner  # noqa: E402

pytestmark = pytest.mark.skipif(not forkserver.supported(), reason="Linux fork server")

# The constructor raises with what the worker sees, so the build error says it.
TELLS = '''
import os
import sys
import tempfile

import torch.nn as nn


class D(nn.Module):
    def __init__(self):
        super().__init__()
        raise RuntimeError(
            f"mark={os.environ.get('SNLINT_TEST_MARK')} "
            f"tmp_is_cwd={os.path.realpath(tempfile.gettempdir()) == os.path.realpath(os.getcwd())} "
            f"scratch={os.path.basename(os.getcwd()).startswith('snlint-graph-')} "
            f"argv={[os.path.basename(a) for a in sys.argv]}")
'''


@pytest.fixture
def parents(monkeypatch):
    """The parent pid of each worker started."""
    found: list[int] = []
    start = runner._Worker.__init__

    def counted(self):
        start(self)
        stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        found.append(int(stat.rpartition(")")[2].split()[1]))

    monkeypatch.setattr(runner._Worker, "__init__", counted)
    return found


def told(tmp_path) -> str:
    write(tmp_path, "d.py", TELLS)
    target = GraphTarget(str(tmp_path / "d.py"), "d.py", "D", None, str(tmp_path))
    [facts] = run_graph([target], timeout=60)
    assert facts.status == "build_error"
    return facts.message.partition("RuntimeError: ")[2]


def test_the_workers_of_two_graph_passes_are_forked_from_one_server(tmp_path, parents):
    told(tmp_path)
    told(tmp_path)
    server = forkserver.SERVERS.server
    assert server is not None
    assert parents == [server.proc.pid, server.proc.pid]


def test_a_forked_worker_has_its_own_folder_environment_and_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("SNLINT_TEST_MARK", "first")
    assert told(tmp_path) == "mark=first tmp_is_cwd=True scratch=True argv=['d.py']"
    # Another environment: another server, whose workers see it.
    before = forkserver.SERVERS.server
    monkeypatch.setenv("SNLINT_TEST_MARK", "second")
    assert told(tmp_path) == "mark=second tmp_is_cwd=True scratch=True argv=['d.py']"
    assert forkserver.SERVERS.server is not before
    # The replaced server had no worker left: it has ended.
    assert before.proc.poll() is not None


def test_without_a_server_workers_start_as_before(tmp_path, monkeypatch, parents):
    monkeypatch.setattr(forkserver.Server, "ready", lambda self, deadline: False)
    monkeypatch.setenv("SNLINT_TEST_MARK", "alone")  # not the server of another test
    assert told(tmp_path) == "mark=alone tmp_is_cwd=True scratch=True argv=['d.py']"
    assert parents == [os.getpid()]
    assert forkserver.SERVERS.server is None



# Forks the command from a small process and prints what wait4 says of its tree: a
# process forked from this one (pytest, torch imported) would start at its peak.
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
print(os.wait4(pid, 0)[2].ru_maxrss)
"""


def _tree_peak_kb(args: list[str], cwd: Path) -> int:
    """The largest resident set of any process of the command's tree that was waited
    for (wait4's ru_maxrss, what `time` and the benchmarks read)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1])


def test_a_command_waits_for_its_fork_server_so_the_graph_pass_counts_as_its_own(tmp_path):
    write(tmp_path, "d.py", """
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(8, 1)

            def forward(self, x):
                return self.head(x)
    """)
    torch_alone = _tree_peak_kb([sys.executable, "-c", "import torch"], tmp_path)
    command = _tree_peak_kb([sys.executable, "-m", "snlint", "--graph", "--no-cache", "."],
                            tmp_path)
    # Not waited for, the server and its worker (each holding torch) would not count.
    assert command >= 0.9 * torch_alone
