"""Fixes are built only for what shows them: a plain lint marks each fixable finding from
the source facts (no parse, transform, compile or diff), and the mark says what a built
fix, and `--fix`, then do."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from snlint.catalogue import load_catalogue
from snlint.cli import main
from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.engine import lint_sources, run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def parses(monkeypatch):
    """How many files the fix stage has parsed (a fix is planned on a ParsedFile)."""
    count = {"files": 0}
    init = ParsedFile.__init__

    def counted(self, *args, **kwargs):
        count["files"] += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(ParsedFile, "__init__", counted)
    return count


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """A copy of examples/ as the working directory (so --fix may write it)."""
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "examples"


def snlint(*args: str):
    return CliRunner().invoke(main, [*args, "--no-graph"])


@pytest.mark.parametrize("fmt", ["concise", "full", "github"])
def test_a_plain_lint_parses_no_file_for_its_fixes(examples, parses, fmt):
    result = snlint("examples", "--output-format", fmt)
    assert result.exit_code == 1
    assert parses["files"] == 0
    if fmt != "github":
        assert "[*]" in result.stdout


@pytest.mark.parametrize("args", [["--output-format", "json"], ["--output-format", "json-lines"],
                                  ["--output-format", "sarif"], ["--show-fixes"]])
def test_outputs_that_show_fixes_build_them(examples, parses, args):
    result = snlint("examples", *args)
    assert result.exit_code == 1
    assert parses["files"] > 0
    if args[-1] == "json":
        fixes = [f["fix"] for f in json.loads(result.stdout) if f["fix"]]
        assert fixes and all(fix["message"] and fix["diff"].startswith("--- a/") for fix in fixes)


def test_statistics_build_no_fix_in_any_format(examples, parses):
    result = snlint("examples", "--statistics", "--output-format", "json")
    assert any(row["fixable"] for row in json.loads(result.stdout))
    assert parses["files"] == 0


def test_full_names_a_marked_fix_and_says_how_to_see_it(examples):
    # Its fixes change state_dict keys: unsafe, so enabled here.
    result = snlint("examples/sngan/buggy.py", "--output-format", "full", "--unsafe-fixes")
    assert "   = fix (unsafe): --show-fixes shows it\n" in result.stdout
    shown = snlint("examples/sngan/buggy.py", "--output-format", "full", "--show-fixes",
                   "--unsafe-fixes")
    assert "--show-fixes shows it" not in shown.stdout
    assert "+            self.c_sc = spectral_norm(nn.Conv2d(in_ch, out_ch, 1))" in shown.stdout


@pytest.mark.parametrize("unsafe", [False, True])
def test_the_summary_counts_what_fix_then_fixes(examples, unsafe):
    flags = ["--unsafe-fixes"] if unsafe else []
    summary = snlint("examples", "--exit-zero", *flags).stdout
    announced = int(re.search(r"\[\*\] (\d+) fixable with --fix", summary).group(1))
    fixed = snlint("examples", "--fix", "--exit-zero", *flags)
    done = int(re.search(r"Fixed (\d+) findings?", fixed.stderr).group(1))
    # With unsafe fixes, the two SN401 rewrites are not made: the same run's SN301 fixes
    # take out the batch norm that made them findings.
    assert (announced, done) == ((14, 12) if unsafe else (2, 2))


# The places a planner refuses that real projects hold (the benchmark corpus has each):
# the mark must refuse there too.
REFUSED = {
    # A batch norm built in a block class, not in the discriminator: the fix would change
    # it for every user of the block.
    "models.py": '''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        def block(c):
            return nn.Sequential(nn.Conv2d(c, c, 3), nn.BatchNorm2d(c), nn.LeakyReLU(0.2))


        class DBlock(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(c, c, 3))
                self.norm = nn.BatchNorm2d(c)

            def forward(self, x):
                return self.norm(self.conv(x))


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = block(3)
                self.body = DBlock(3)
                self.bn = nn.BatchNorm2d(3)
                self.head = nn.Linear(3, 1)

            def forward(self, x):
                return self.head(self.bn(self.body(self.stem(x))).mean((2, 3)))


        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.ConvTranspose2d(8, 3, 4)

            def forward(self, z):
                return self.net(z)
    ''',
    # The two calls are not two assignments in a row: no one-call rewrite is offered.
    "train.py": '''
        import torch
        from models import Discriminator, Generator


        def apart(G, D, loader):
            for real, _ in loader:
                fake = G(torch.randn(8, 8, 1, 1))
                out_real = D(real)
                loss_real = out_real.mean()
                out_fake = D(fake.detach())
                loss_fake = out_fake.mean()


        def in_a_row(G, D, loader):
            for real, _ in loader:
                fake = G(torch.randn(8, 8, 1, 1))
                pred_real = D(real)
                pred_fake = D(fake.detach())


        G, D = Generator(), Discriminator()
        loader = torch.utils.data.DataLoader([])
        apart(G, D, loader)
        in_a_row(G, D, loader)
    ''',
}


def _applicabilities(findings) -> list[tuple]:
    return sorted((f.path, f.line, f.column, f.code, f.fix.applicability if f.fix else None)
                  for f in findings if not f.is_diagnostic)


def test_marks_refuse_where_the_planners_refuse():
    sources = {path: textwrap.dedent(code) for path, code in REFUSED.items()}
    config = Config(root=Path("."), graph=False, select=["ALL"])
    marked = _applicabilities(lint_sources(sources, config))
    assert marked == _applicabilities(lint_sources(sources, config, fixes=True))
    batch = [(path, line, code, applicability) for path, line, _, code, applicability in marked
             if code in ("SN301", "SN401")]
    # Only the batch norm the discriminator builds itself, and the calls in a row.
    assert batch == [("models.py", 7, "SN301", None), ("models.py", 14, "SN301", None),
                     ("models.py", 25, "SN301", "unsafe"), ("train.py", 9, "SN401", None),
                     ("train.py", 18, "SN401", "unsafe")]


def test_marks_agree_with_built_fixes_on_the_examples():
    config = Config(root=EXAMPLES, graph=False, select=["ALL"])
    marked = _applicabilities(run([str(EXAMPLES)], config).findings)
    assert any(applicability for *_, applicability in marked)
    assert marked == _applicabilities(run([str(EXAMPLES)], config, fixes=True).findings)


@pytest.mark.parametrize("code", sorted(code for code, rule in load_catalogue().items()
                                        if rule.fix in ("safe", "unsafe")))
def test_marks_agree_with_built_fixes_on_the_rule_pages(code):
    rule = load_catalogue()[code]
    config = Config(root=Path("."), graph=False, select=["ALL"])
    sources = {"example.py": rule.code_block("Example")}
    marked = _applicabilities(lint_sources(sources, config))
    assert any(f[3] == code and f[4] for f in marked)
    assert marked == _applicabilities(lint_sources(sources, config, fixes=True))


def test_no_unwrap_fix_is_marked_for_a_module_dict_with_unpacked_entries():
    # The planner rewrites only `key: layer` entries; `**blocks` it refuses.
    sources = {"d.py": textwrap.dedent('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self, blocks):
                super().__init__()
                self.m = spectral_norm(nn.ModuleDict({**blocks, "conv": nn.Conv2d(3, 64, 3)}))
    ''')}
    config = Config(root=Path("."), graph=False, select=["SN1"])
    marked = _applicabilities(lint_sources(sources, config))
    assert marked == _applicabilities(lint_sources(sources, config, fixes=True))
    assert marked == [("d.py", 9, 18, "SN102", None)]


def test_no_migration_is_marked_for_a_call_through_the_hook_module():
    # `m.spectral_norm` where `m` is torch.nn.utils.spectral_norm (the module): no chain
    # names torch.nn.utils, so the fix has nothing to rewrite it to, and no mark says it has.
    sources = {"d.py": textwrap.dedent('''
        import torch.nn as nn
        import torch.nn.utils.spectral_norm as m


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = m.spectral_norm(nn.Conv2d(3, 8, 3))
                self.b = nn.utils.spectral_norm(nn.Conv2d(8, 8, 3))
    ''')}
    config = Config(root=Path("."), graph=False, select=["SN501"])
    marked = _applicabilities(lint_sources(sources, config))
    assert marked == _applicabilities(lint_sources(sources, config, fixes=True))
    assert marked == [("d.py", 9, 18, "SN501", None), ("d.py", 10, 18, "SN501", "unsafe")]
