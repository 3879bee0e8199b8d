"""The worker process: user code that hangs, crashes, raises or prints cannot break a run.

One run_graph call, one worker at a time, covers every case (each killed worker costs a
fresh torch import); tests/graph/test_workers.py runs two side by side.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from graph_helpers import class_location, display_for, span_of, write  # noqa: E402

from snlint.graph_pass import built_findings  # noqa: E402
from snlint.graph import GraphTarget, run_graph, runner  # noqa: E402

TIMEOUT = 3.0

# The hang sits in a metaclass: the definitions-only copy keeps class statements, and
# creating the class runs the project's metaclass (a loop at module level, or in a class
# body, is left out of the copy and never runs).
HANG_IMPORT = '''
class Loops(type):
    def __new__(mcs, name, bases, namespace):
        while True:
            pass


class Hang(metaclass=Loops):
    pass
'''

CRASH = '''
import os


class Crashes(type):
    def __new__(mcs, name, bases, namespace):
        os._exit(3)


class Crash(metaclass=Crashes):
    pass
'''

RAISES = '''
import torch.nn as nn
import missing_module_xyz
'''

EXITS = '''
import sys


class Exits(type):
    def __new__(mcs, name, bases, namespace):
        sys.exit("bye")


class Exit(metaclass=Exits):
    pass
'''

NOISY = '''
import os
import sys

import torch.nn as nn


class D(nn.Module):
    def __init__(self):
        super().__init__()
        print('{"target": "not a protocol line"}')
        os.write(1, b"raw bytes on fd 1\\n")
        sys.stderr.write("noise on stderr\\n")
        sys.stdin.read()
        print("building D")
        self.c = nn.utils.spectral_norm(nn.Conv2d(3, 1, 3))

    def forward(self, x):
        print("forward")
        return self.c(x)


if __name__ == "__main__":
    raise SystemExit("the main block ran")
'''

SLOW_BUILD = '''
import time

import torch.nn as nn


class Slow(nn.Module):
    def __init__(self):
        super().__init__()
        time.sleep(1000)


class Fine(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 1, 3)
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        return self.bn(self.c(x))
'''


BLOCKS_PLAIN = '''
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 3, 3, padding=1)
'''

BLOCKS_SN = '''
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = spectral_norm(nn.Conv2d(3, 3, 3, padding=1))
'''

DISCRIMINATOR = '''
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm

from blocks import Block


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.out = spectral_norm(nn.Conv2d(3, 1, 3))

    def forward(self, x):
        return self.out(self.block(x))
'''


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One run over every case: (root, facts by "file:Class", the pids of the workers the
    runner started, in order)."""
    root = tmp_path_factory.mktemp("isolation")
    files = {"hang_import.py": HANG_IMPORT, "crash.py": CRASH, "raises.py": RAISES,
             "exits.py": EXITS, "noisy.py": NOISY, "slow_build.py": SLOW_BUILD}
    files.update({"a/blocks.py": BLOCKS_PLAIN, "a/d.py": DISCRIMINATOR,
                  "b/blocks.py": BLOCKS_SN, "b/d.py": DISCRIMINATOR})
    for name, source in files.items():
        write(root, name, source)
    order = [("hang_import.py", "D"), ("hang_import.py", "D2"), ("crash.py", "D"),
             ("raises.py", "D"), ("exits.py", "D"), ("slow_build.py", "Slow"),
             ("noisy.py", "D"), ("a/d.py", "D"), ("b/d.py", "D"),
             ("slow_build.py", "Fine")]
    targets = [GraphTarget(str(root / f), f, c, None, str(root)) for f, c in order]
    workers: list[int] = []
    start_worker = runner._Worker.__init__

    def counted(self):
        start_worker(self)
        workers.append(self.proc.pid)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner._Worker, "__init__", counted)
        results = run_graph(targets, timeout=TIMEOUT, lanes=1)
    by_name = {f"{t.display}:{t.class_name}": r for t, r in zip(targets, results)}
    return root, by_name, workers


def test_hung_import_is_killed_at_the_limit(run):
    _, results, workers = run
    facts = results["hang_import.py:D"]
    # "timeout" is only recorded once the runner's clock passed the deadline; a worker
    # killed earlier, or one that died, would be an import_error.
    assert facts.status == "timeout"
    assert facts.message == ("importing hang_import.py exceeded the 3 s limit; "
                             "the worker process was killed")
    # One worker until the hang, one after it, one after the crash, one after the slow
    # build: no target waited out a limit twice, no worker was started for nothing.
    assert len(workers) == 4
    assert sorted(name for name, r in results.items() if r.status == "timeout") == [
        "hang_import.py:D", "hang_import.py:D2", "slow_build.py:Slow"]


def test_other_classes_of_a_hung_file_are_not_retried(run):
    root, results, _ = run
    assert results["hang_import.py:D2"].status == "timeout"
    assert results["hang_import.py:D2"].seconds == 0.0
    # One diagnostic for the file, whichever class asked: equal findings deduplicate.
    findings = [built_findings(results[f"hang_import.py:{c}"], {}, display_for=display_for(root),
                               fallback=class_location(root / "hang_import.py", "hang_import.py", c))
                for c in ("D", "D2")]
    assert findings[0] == findings[1]
    assert [(f.code, f.line, f.column) for f in findings[0]] == [("SN911", 1, 1)]


def test_a_worker_that_dies_is_an_import_error_and_the_run_goes_on(run):
    _, results, _ = run
    facts = results["crash.py:D"]
    assert facts.status == "import_error"
    assert facts.message.startswith("the worker process exited (code 3) while importing crash.py")


def test_module_raising_on_import_gives_sn910_at_the_failing_line(run):
    root, results, _ = run
    facts = results["raises.py:D"]
    assert facts.status == "import_error"
    fallback = class_location(root / "raises.py", "raises.py", "D")
    findings = built_findings(facts, {}, display_for=display_for(root), fallback=fallback)
    assert [(f.code, f.severity, f.path, f.line, f.column, f.end_column) for f in findings] == [
        ("SN910", "info", "raises.py", *span_of(RAISES, "import missing_module_xyz")[:2],
         span_of(RAISES, "import missing_module_xyz")[3])]
    assert findings[0].message == ("graph pass: importing raises.py failed: "
                                   "ModuleNotFoundError: No module named 'missing_module_xyz'")


def test_sys_exit_on_import_is_an_import_error(run):
    _, results, _ = run
    assert (results["exits.py:D"].status, results["exits.py:D"].message) == (
        "import_error", "SystemExit: bye")


def test_hung_build_is_killed_and_a_fresh_worker_builds_the_next_class(run):
    root, results, _ = run
    slow = results["slow_build.py:Slow"]
    assert slow.status == "timeout"
    assert slow.message == ("building slow_build.py exceeded the 3 s limit; "
                            "the worker process was killed")
    fallback = class_location(root / "slow_build.py", "slow_build.py", "Slow")
    findings = built_findings(slow, {}, display_for=display_for(root), fallback=fallback)
    assert [(f.code, f.line) for f in findings] == [("SN911", fallback.span.line)]
    fine = results["slow_build.py:Fine"]
    assert fine.status == "ok"
    assert [m.type_name for m in fine.modules if m.uses_batch_stats] == ["BatchNorm2d"]


def test_user_output_and_stdin_do_not_touch_the_protocol(run):
    _, results, _ = run
    facts = results["noisy.py:D"]
    assert facts.status == "ok", facts.message
    assert facts.probe["ran"] and facts.trace_ok
    assert [m.path for m in facts.modules] == ["c"]


def test_same_named_modules_in_two_folders_are_not_shared(run):
    root, results, _ = run
    plain, normalized = results["a/d.py:D"], results["b/d.py:D"]
    assert [(m.path, bool(m.sn), m.site.file) for m in plain.modules] == [
        ("block.c", False, str(root / "a" / "blocks.py")), ("out", True, str(root / "a" / "d.py"))]
    assert [(m.path, bool(m.sn), m.site.file) for m in normalized.modules] == [
        ("block.c", True, str(root / "b" / "blocks.py")), ("out", True, str(root / "b" / "d.py"))]


def test_a_worker_that_cannot_start_fails_every_target_once(tmp_path, monkeypatch):
    # The child imports torch first; a PYTHONPATH torch that raises stands for a broken
    # or missing install.
    write(tmp_path / "fake", "torch/__init__.py", "raise ImportError('no torch here')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake"))
    targets = [GraphTarget(str(tmp_path / "d.py"), "d.py", c, None, str(tmp_path)) for c in ("A", "B")]
    results = run_graph(targets, timeout=TIMEOUT)
    assert [(r.status, r.message) for r in results] == [
        ("import_error", "the graph-pass worker could not start: ImportError: no torch here")] * 2
