"""`--fix` runs rounds to a fixed point; each round reads again only the files the round
before it changed (the others' facts are kept), and the report after the rounds reads
nothing the last round did not change."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from snlint.engine import linking, per_file
from snlint.cli import main
from snlint.config import Config
from snlint.engine import Reuse, lint_sources

# A discriminator with one mistake a safe fix corrects (SN103: hook SN twice, which
# raises at construction), the helpers it
# imports, and a training script: four files, one of which --fix changes.
PROJECT = {
    "layers.py": '''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        def snconv(cin, cout):
            return spectral_norm(nn.Conv2d(cin, cout, 3, padding=1))
    ''',
    "d.py": '''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        from layers import snconv


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = snconv(3, 8)
                self.b = spectral_norm(spectral_norm(nn.Conv2d(8, 8, 3)))
                self.head = spectral_norm(nn.Linear(8, 1))

            def forward(self, x):
                return self.head(self.b(self.a(x)).mean((2, 3)))
    ''',
    "g.py": '''
        import torch.nn as nn


        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.ConvTranspose2d(8, 3, 4)

            def forward(self, z):
                return self.net(z)
    ''',
    "train.py": '''
        import torch

        from d import Discriminator
        from g import Generator

        D, G = Discriminator(), Generator()
        for real in torch.utils.data.DataLoader([]):
            loss = D(real).mean() - D(G(torch.randn(8, 8, 1, 1))).mean()
    ''',
}


@pytest.fixture
def steps(monkeypatch):
    """What the engine did, in order: ("read", path) for each file it extracted facts
    from, ("link",) for each time it linked the project."""
    done: list[tuple] = []
    extract, link = per_file.extract_with_notes, linking.link

    def read(text, path, relpath):
        done.append(("read", Path(path).name))
        return extract(text, path, relpath)

    def linked(*args, **kwargs):
        done.append(("link",))
        return link(*args, **kwargs)

    monkeypatch.setattr(per_file, "extract_with_notes", read)
    monkeypatch.setattr(linking, "link", linked)
    return done


def rounds(done: list[tuple]) -> list[list[str]]:
    """The files read before each link, one list per lint."""
    out: list[list[str]] = [[]]
    for step in done:
        if step == ("link",):
            out.append([])
        else:
            out[-1].append(step[1])
    return [sorted(files) for files in out]


def test_fix_rounds_read_again_only_the_file_a_round_changed(tmp_path, monkeypatch, steps):
    for name, code in PROJECT.items():
        (tmp_path / name).write_text(textwrap.dedent(code))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [".", "--fix", "--no-graph", "--select", "SN1"])
    assert "spectral_norm(spectral_norm(" not in (tmp_path / "d.py").read_text()
    assert result.stderr == "Fixed 1 finding in 1 file.\n"
    # Round one reads every file; round two only d.py, which round one fixed, and finds
    # nothing left to fix; the report after the rounds has the last round's inputs, so
    # it neither reads nor links again.
    assert rounds(steps) == [["d.py", "g.py", "layers.py", "train.py"], ["d.py"], []]


def test_fix_walks_the_tree_once(tmp_path, monkeypatch):
    # The rounds and the report after them change files, never which files there are.
    from snlint import files

    for name, code in PROJECT.items():
        (tmp_path / name).write_text(textwrap.dedent(code))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    walks = []
    walker = files._Walker

    class Counted(walker):
        def __init__(self, *args, **kwargs):
            walks.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(files, "_Walker", Counted)
    result = CliRunner().invoke(main, [".", "--fix", "--no-graph", "--no-cache", "--select", "SN1"])
    assert result.stderr == "Fixed 1 finding in 1 file.\n"
    assert len(walks) == 1


def test_a_lint_reads_again_only_the_files_whose_text_changed(steps):
    sources = {name: textwrap.dedent(code) for name, code in PROJECT.items()}
    config = Config(root=Path("."), graph=False, cache=False)
    reuse = Reuse()
    first = lint_sources(sources, config, reuse=reuse)
    changed = dict(sources, **{"g.py": sources["g.py"] + "\nLATENT = 8\n"})
    second = lint_sources(changed, config, reuse=reuse)
    assert rounds(steps) == [["d.py", "g.py", "layers.py", "train.py"], ["g.py"], []]
    assert second == first


def test_a_lint_of_the_same_inputs_gives_the_last_findings_without_linking(steps):
    sources = {name: textwrap.dedent(code) for name, code in PROJECT.items()}
    config = Config(root=Path("."), graph=False, cache=False)
    reuse = Reuse()
    first = lint_sources(sources, config, reuse=reuse)
    assert lint_sources(dict(sources), config, reuse=reuse) == first
    assert lint_sources(sources, Config(root=Path("."), graph=False, cache=False, select=["SN2"]),
                        reuse=reuse) != first  # another selection: linked again
    assert steps.count(("link",)) == 2


def test_the_rounds_leave_the_collector_as_they_found_it():
    # The rounds set what the first lint left alive aside from the garbage collector;
    # a caller's process gets it back when they end.
    import gc

    from snlint.engine.fixing import fixed_point

    sources = {name: textwrap.dedent(code) for name, code in PROJECT.items()}
    config = Config(root=Path("."), graph=False, select=["SN1"])
    assert gc.get_freeze_count() == 0
    result = fixed_point(sources, config, unsafe=False,
                         report=print)
    assert sum(result.fixed.values()) == 1
    assert gc.get_freeze_count() == 0


def test_fixes_built_in_workers_equal_fixes_built_here(tmp_path, monkeypatch):
    # Each file of a round is fixed on its own; with enough of them they are shared with
    # a worker process (stealing), and come back in order, as this process makes them.
    from snlint.engine import workers as stealing

    d = textwrap.dedent(PROJECT["d.py"])
    trees = {}
    for jobs in (1, 2):
        root = tmp_path / f"jobs{jobs}"
        root.mkdir()
        for name, code in PROJECT.items():
            (root / name).write_text(textwrap.dedent(code))
        for i in range(6):  # six more discriminators, each with the SN103 mistake
            (root / f"d{i}.py").write_text(d.replace("Discriminator", f"Discriminator{i}"))
        (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
        monkeypatch.chdir(root)
        monkeypatch.setattr(stealing, "MIN_SHARED_TEXT", 0)
        result = CliRunner().invoke(main, [".", "--fix", "--no-graph", "--no-cache", "--select", "SN1",
                                           "--jobs", str(jobs)])
        assert result.stderr == "Fixed 7 findings in 7 files.\n"
        trees[jobs] = {p.name: p.read_text() for p in sorted(root.glob("*.py"))}
    assert trees[1] == trees[2]
    assert "spectral_norm(spectral_norm(" not in trees[2]["d3.py"]


def test_fix_each_in_workers_gives_what_it_gives_here(monkeypatch):
    import os
    import time

    from snlint.engine import fixing, workers as stealing
    from snlint.engine.fixing import fix_each

    sources = {name: textwrap.dedent(code) for name, code in PROJECT.items()}
    sources.update({f"d{i}.py": sources["d.py"] for i in range(6)})
    config = Config(root=Path("."), graph=False, cache=False, select=["SN1"])
    findings = lint_sources(sources, config)
    items = [(path, sources[path], [f for f in findings if f.path == path and f.fix is not None])
             for path in sorted(sources) if path.startswith("d")]
    here = fix_each(items, Config(root=Path("."), graph=False, jobs=1), unsafe=False)
    assert [f.applied for f in here] == [[0]] * 7 and all("spectral_norm(spectral_norm(" not in f.text for f in here)

    parent, chunk = os.getpid(), fixing.fix_chunk

    def where(items, **kwargs):
        if os.getpid() == parent:
            time.sleep(0.05)  # the worker takes chunks meanwhile
        done = chunk(items, **kwargs)
        for fixed in done:
            fixed.messages.append(os.getpid())
        return done

    monkeypatch.setattr(fixing, "fix_chunk", where)
    monkeypatch.setattr(stealing, "MIN_SHARED_TEXT", 0)
    shared = fix_each(items, Config(root=Path("."), graph=False, jobs=2), unsafe=False)
    made_by = {fixed.messages.pop() for fixed in shared}
    assert parent in made_by and made_by - {parent}  # both processes fixed files
    assert shared == here
