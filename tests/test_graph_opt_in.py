"""The graph pass imports and runs the project's code: only when asked (`--graph`, or
`graph = true` in `[tool.snlint]`). Asked for where torch cannot be imported, the run
stops with exit 2 and says how to get it. Not asked for, a terminal hears once what
it would add."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from snlint.cli import main
from snlint.config import load_config
from snlint.graph.diagnostics import graph_note
from snlint.graph.runner import torch_importable

HAS_TORCH = importlib.util.find_spec("torch") is not None

# Importing the module (its class body runs) leaves a marker beside it.
MARKING = textwrap.dedent('''\
    import torch.nn as nn


    class Discriminator(nn.Module):
        open(__file__ + ".imported", "w").close()

        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 8, 3)
            self.n = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.n(self.c(x))
''')
GRAPH_TRUE = "[tool.snlint]\ngraph = true\n"
NO_TORCH_HINT = "pip install 'snlint[graph]'"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project root holding models.py (MARKING) as the working directory."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "models.py").write_text(MARKING)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def imported(project) -> bool:
    return (project / "models.py.imported").exists()


def built(result) -> bool:
    """Whether the graph pass built the discriminator: its batch norm was seen by both
    passes. (The worker never runs the class body's write: the copy drops the call, and
    its audit hook would refuse it.)"""
    return any(f["pass"] == "source+graph" for f in json.loads(result.stdout or "[]"))


def run(*args: str):
    result = CliRunner().invoke(main, ["--output-format", "json", "--no-cache", *args])
    return result, [(f["code"], f["line"]) for f in json.loads(result.stdout or "[]")]


def without_torch(tmp_path) -> dict[str, str]:
    """An environment whose Python (and the graph pass's workers) cannot import torch."""
    hiding = tmp_path / "hide-torch"
    hiding.mkdir()
    (hiding / "sitecustomize.py").write_text('import sys\nsys.modules["torch"] = None\n')
    paths = [str(hiding), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def snlint_process(*args: str, env=None, **streams) -> subprocess.CompletedProcess:
    if not streams:
        streams = {"capture_output": True}
    return subprocess.run([sys.executable, "-m", "snlint", *args], text=True, timeout=120,
                          env=env, **streams)


# ------------------------------------------------------------------ off unless asked

def test_the_graph_setting_is_off_by_default(tmp_path):
    assert load_config(tmp_path).graph is False


def test_a_run_without_graph_imports_nothing_of_the_project(project):
    result, found = run(".")
    assert result.exit_code == 1
    assert found == [("SN301", 10)]
    assert not imported(project)


@pytest.mark.skipif(not HAS_TORCH, reason="the graph pass needs torch")
def test_graph_flag_imports_and_builds_the_discriminators(project):
    result, found = run(".", "--graph")
    assert result.exit_code == 1
    assert built(result)
    assert not imported(project)
    assert ("SN301", 10) in found


@pytest.mark.skipif(not HAS_TORCH, reason="the graph pass needs torch")
def test_graph_true_in_the_configuration_builds_them(project):
    (project / "pyproject.toml").write_text(GRAPH_TRUE)
    result, _ = run(".")
    assert result.exit_code == 1
    assert built(result)


def test_no_graph_wins_over_graph_true_in_the_configuration(project):
    (project / "pyproject.toml").write_text(GRAPH_TRUE)
    result, found = run(".", "--no-graph")
    assert found == [("SN301", 10)]
    assert not built(result) and not imported(project)


# ------------------------------------------------------------------ asked, no torch

def test_torch_refused_by_a_finder_is_not_importable(monkeypatch):
    class Refusing:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "torch":
                raise ImportError("no torch here")
            return None

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Refusing(), *sys.meta_path])
    assert torch_importable() is False


def test_graph_flag_without_torch_exits_2_naming_the_install(project, tmp_path):
    proc = snlint_process(".", "--graph", env=without_torch(tmp_path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (f"snlint: --graph needs torch, which {sys.executable} cannot import: "
                           f"{NO_TORCH_HINT}\n")
    assert not imported(project)


def test_graph_true_without_torch_exits_2_naming_the_file(project, tmp_path):
    (project / "pyproject.toml").write_text(GRAPH_TRUE)
    proc = snlint_process(".", env=without_torch(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr == (f"snlint: graph = true (in {project / 'pyproject.toml'}) needs torch, "
                           f"which {sys.executable} cannot import: {NO_TORCH_HINT}, "
                           "or run with --no-graph\n")


def test_without_graph_a_python_without_torch_lints_as_ever(project, tmp_path):
    proc = snlint_process(".", env=without_torch(tmp_path))
    assert proc.returncode == 1
    assert proc.stderr == ""
    assert proc.stdout.startswith("models.py:10:18: SN301 ")


# ------------------------------------------------------------------ the terminal's note

def test_note_on_a_terminal_says_what_graph_would_add():
    assert graph_note(2, asked=False, quiet=False, terminal=True) == (
        "note: 2 discriminators found; --graph builds them with torch to measure weights "
        "and batch coupling (runs project code)")


def test_note_for_one_discriminator_is_singular():
    assert graph_note(1, asked=False, quiet=False, terminal=True).startswith(
        "note: 1 discriminator found; --graph builds it with torch ")


def test_note_fits_a_line():
    assert len(graph_note(99, asked=False, quiet=False, terminal=True)) <= 120


@pytest.mark.parametrize("count, asked, quiet, terminal", [
    (2, False, False, False),  # pre-commit, CI logs, a pipe
    (2, False, True, True),  # -q
    (2, True, False, True),  # the graph pass ran
    (0, False, False, True),  # nothing it would build
])
def test_no_note(count, asked, quiet, terminal):
    assert graph_note(count, asked=asked, quiet=quiet, terminal=terminal) == ""


def test_note_reaches_a_terminal_and_not_a_pipe(project):
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    try:
        terminal = snlint_process(".", stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        follower = None
        noted = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed (Linux: EIO)
                break
            if not chunk:
                break
            noted += chunk
    finally:
        os.close(leader)
        if follower is not None:
            os.close(follower)
    assert terminal.returncode == 1
    # What the terminal shows: a progress line a slow machine drew is overwritten (\r).
    shown = [line.rstrip("\r").rpartition("\r")[2] for line in noted.decode().split("\n")]
    assert [line for line in shown if line.strip()] == [
        "note: 1 discriminator found; --graph builds it with torch to measure weights and "
        "batch coupling (runs project code)"]
    piped = snlint_process(".")
    assert piped.returncode == 1
    assert piped.stderr == ""


NOTE_ONE = ("note: 1 discriminator found; --graph builds it with torch to measure weights "
            "and batch coupling (runs project code)\n")


def test_note_after_a_run_the_run_cache_answers_and_after_fix(project, monkeypatch, tmp_path):
    from snlint import cli

    monkeypatch.setattr(cli, "_stderr_is_terminal", lambda: True)
    monkeypatch.setenv("SNLINT_CACHE_DIR", str(tmp_path / "cache"))
    (project / "train.py").write_text("from models import Discriminator\nD = Discriminator()\n")
    cold = CliRunner().invoke(main, ["."])
    with monkeypatch.context() as patch:
        from snlint.engine import linking

        patch.setattr(linking, "link_parts", None)  # the warm run must not link
        warm = CliRunner().invoke(main, ["."])
    fixed = CliRunner().invoke(main, [".", "--fix", "--unsafe-fixes"])
    assert (cold.exit_code, warm.exit_code, fixed.exit_code) == (1, 1, 0)
    assert cold.stderr == warm.stderr == NOTE_ONE
    assert fixed.stderr == "Fixed 1 finding in 1 file.\n" + NOTE_ONE
    assert not imported(project)


def test_note_after_a_run_only_a_comment_changed(project, monkeypatch, tmp_path):
    from snlint import cli
    from snlint.engine import linking

    monkeypatch.setattr(cli, "_stderr_is_terminal", lambda: True)
    monkeypatch.setenv("SNLINT_CACHE_DIR", str(tmp_path / "cache"))
    (project / "train.py").write_text("from models import Discriminator\nD = Discriminator()\n")
    assert CliRunner().invoke(main, ["."]).stderr == NOTE_ONE
    with open(project / "train.py", "a") as handle:
        handle.write("# a comment: the same facts\n")
    monkeypatch.setattr(linking, "link_parts", None)  # answered from the last run's findings
    commented = CliRunner().invoke(main, ["."])
    assert (commented.exit_code, commented.stderr) == (1, NOTE_ONE)


def test_note_counts_the_discriminators_of_every_part_of_the_project(project, monkeypatch):
    from snlint import cli

    monkeypatch.setattr(cli, "_stderr_is_terminal", lambda: True)
    (project / "other.py").write_text(MARKING.replace("Discriminator", "PatchDiscriminator"))
    result = CliRunner().invoke(main, [".", "--no-cache", "--jobs", "1"])
    assert result.stderr.startswith("note: 2 discriminators found; --graph builds them ")
