"""A fix round parses only the top-level statements its fixes read (`snlint.edit.held_out`),
and makes the very text a parse of the whole file makes."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest

import snlint.edit.held_out as held_module
from snlint.checks.registry import fixers
from snlint.config import Config
from snlint.edit.held_out import NeedsWholeFile, held_out
from snlint.edit.parsed import ParsedFile
from snlint.engine import lint_sources
from snlint.fix.apply import _fix_one
from snlint.fix.planning import names_of

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

MODEL = textwrap.dedent('''\
    """Models."""
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(
                nn.ConvTranspose2d(64, 3, 4),
                nn.Tanh(),
            )

        def forward(self, z):
            return self.net(z)


    def helper(x):
        # "spectral_norm" is only a word here
        return x


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 64, 4))
            self.b = spectral_norm(nn.Conv2d(64, 64, 4))
            self.c = nn.Conv2d(64, 1, 4)

        def forward(self, x):
            return self.c(self.b(self.a(x)))


    LATENT = 128
    ''')


def _fixable(sources: dict[str, str]) -> dict[str, list]:
    by_file = defaultdict(list)
    for f in lint_sources(sources, Config(Path("."), graph=False)):
        if f.fix is not None:
            by_file[f.path].append(f)
    return by_file


def _whole(monkeypatch):
    monkeypatch.setattr(held_module, "held_out", lambda *args: None)


def test_a_round_trip_gives_the_file_back():
    findings = _fixable({"models.py": MODEL})["models.py"]
    held = held_out(MODEL, findings, names_of(findings))
    assert held is not None
    assert held.restore(held.text) == MODEL
    # Line for line: the generator's lines are a marker and empty lines.
    assert held.text.count("\n") == MODEL.count("\n")
    assert "class Generator" not in held.text and "class Discriminator" in held.text


def test_the_fix_is_the_one_the_whole_file_gets(monkeypatch):
    findings = _fixable({"models.py": MODEL})["models.py"]
    assert [f.code for f in findings] == ["SN201"]
    # SN201's fix changes state_dict keys: unsafe, so enabled here.
    held = _fix_one("models.py", MODEL, findings, Config(Path("."), graph=False), True, fixers())
    _whole(monkeypatch)
    whole = _fix_one("models.py", MODEL, findings, Config(Path("."), graph=False), True, fixers())
    assert held == whole
    assert "self.c = spectral_norm(nn.Conv2d(64, 1, 4))" in held.text


UNWRAP = textwrap.dedent('''\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    def describe(model):
        """Which layers spectral_norm wraps."""
        names = []
        # a layer spectral_norm wraps keeps its weight as weight_orig
        for name, module in model.named_modules():
            if hasattr(module, "weight_orig"):
                names.append(name)
        return names


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = spectral_norm(nn.BatchNorm2d(8))
            self.c = nn.Conv2d(8, 1, 3)
    ''')


def test_an_import_a_held_out_statement_mentions_stays(monkeypatch):
    findings = _fixable({"models.py": UNWRAP})["models.py"]
    assert [f.code for f in findings] == ["SN101", "SN301"]
    assert held_out(UNWRAP, findings, names_of(findings)) is not None
    held = _fix_one("models.py", UNWRAP, findings, Config(Path("."), graph=False), True, fixers())
    _whole(monkeypatch)
    whole = _fix_one("models.py", UNWRAP, findings, Config(Path("."), graph=False), True, fixers())
    assert held == whole
    assert "self.bn = nn.BatchNorm2d(8)" in held.text
    assert "from torch.nn.utils import spectral_norm" in held.text  # the docstring names it


def test_a_marker_a_fix_moved_is_noticed():
    findings = _fixable({"models.py": MODEL})["models.py"]
    held = held_out(MODEL, findings, names_of(findings))
    parsed = ParsedFile("models.py", MODEL, names_of(findings), held)
    marker = held.holes[0].marker
    with pytest.raises(NeedsWholeFile):
        parsed.whole(held.text.replace(marker, ""))
    with pytest.raises(NeedsWholeFile):
        parsed.whole(held.text.replace(marker, marker + marker))


def test_a_moved_marker_means_the_whole_file_is_parsed(monkeypatch):
    findings = _fixable({"models.py": MODEL})["models.py"]
    parsed_whole = []
    init = ParsedFile.__init__

    def recorded(self, path, text, names=None, held=None):
        parsed_whole.append(held is None)
        init(self, path, text, names, held)

    monkeypatch.setattr(ParsedFile, "__init__", recorded)
    monkeypatch.setattr(held_module.HeldOut, "restore", lambda self, code: None)
    fixed = _fix_one("models.py", MODEL, findings, Config(Path("."), graph=False), True, fixers())
    assert parsed_whole == [False, True]
    assert "self.c = spectral_norm(nn.Conv2d(64, 1, 4))" in fixed.text


def test_a_finding_in_module_level_code_parses_the_whole_file():
    text = MODEL + textwrap.dedent('''\

        NORM = spectral_norm(nn.BatchNorm2d(8))
        ''')
    findings = [f for f in _fixable({"models.py": text})["models.py"] if f.line == text.count("\n")]
    assert findings and held_out(text, findings, names_of(findings)) is None


def test_a_file_with_a_lone_carriage_return_is_parsed_whole():
    text = MODEL.replace("LATENT = 128\n", "LATENT = 128\rWIDTH = 4\n")
    findings = _fixable({"models.py": text})["models.py"]
    assert findings and held_out(text, findings, names_of(findings)) is None


def _corpus_module():
    spec = importlib.util.spec_from_file_location("snlint_benchmark_corpus", BENCHMARKS / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [0, 7])
def test_every_fix_of_the_benchmark_corpus_is_the_whole_files(monkeypatch, seed):
    files, _, _ = _corpus_module().generate_files(60, seed=seed)
    config = Config(Path("."), graph=False)
    fixable = _fixable(files)
    held_files = [p for p, fs in fixable.items() if held_out(files[p], fs, names_of(fs)) is not None]
    assert len(held_files) >= len(fixable) // 2
    for unsafe in (False, True):
        held = {p: _fix_one(p, files[p], fs, config, unsafe, fixers()) for p, fs in fixable.items()}
        with monkeypatch.context() as m:
            _whole(m)
            whole = {p: _fix_one(p, files[p], fs, config, unsafe, fixers()) for p, fs in fixable.items()}
        assert held == whole


BLOCKS = textwrap.dedent('''\
    import functools
    import torch.nn as nn
    from torch.nn.utils import spectral_norm

    SN = functools.partial(spectral_norm, eps=1e-6)


    class GBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = SN(nn.Conv2d(8, 8, 3))
            self.b = SN(nn.Conv2d(8, 8, 3))

        def forward(self, x):
            return self.b(self.a(x))


    class DBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(8, 8, 3)

        def forward(self, x):
            return self.conv(x)
    ''')
DISCRIMINATOR = textwrap.dedent('''\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm as sn
    from blocks import DBlock


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = sn(nn.Conv2d(3, 8, 3))
            self.block = DBlock()
            self.out = sn(nn.Linear(8, 1))
    ''')


def test_a_spelling_only_a_held_out_statement_calls_means_the_whole_file(monkeypatch):
    # The SN201 fix in blocks.py wraps the layer in the spelling the file calls most (the
    # generator's partial), which only the held-out generator shows.
    findings = _fixable({"blocks.py": BLOCKS, "disc.py": DISCRIMINATOR})["blocks.py"]
    assert [f.code for f in findings] == ["SN201"]
    held = _fix_one("blocks.py", BLOCKS, findings, Config(Path("."), graph=False), True, fixers())
    _whole(monkeypatch)
    whole = _fix_one("blocks.py", BLOCKS, findings, Config(Path("."), graph=False), True, fixers())
    assert held == whole
    assert "self.conv = SN(nn.Conv2d(8, 8, 3))" in held.text


def test_a_first_block_with_another_indent_is_kept():
    # libcst writes a fix's new blocks with the file's first indent: the parsed part must
    # begin its blocks with the same one.
    generator = MODEL[MODEL.index("class Generator"):MODEL.index("def helper")]
    two_spaces = "\n".join(" " * ((len(line) - len(line.lstrip())) // 2) + line.lstrip()
                            for line in generator.split("\n"))
    helper = "def helper(x):\n" + "".join(f"    x = x + {i}\n" for i in range(10)) + "    return x\n"
    text = MODEL.replace(generator, two_spaces).replace(
        MODEL[MODEL.index("def helper"):MODEL.index("class Discriminator")], helper + "\n\n")
    findings = _fixable({"models.py": text})["models.py"]
    held = held_out(text, findings, names_of(findings))
    assert held is not None and "class Generator" in held.text and "def helper" not in held.text
    assert held.restore(held.text) == text


def test_a_round_is_sent_only_the_sites_of_findings_without_a_node():
    from snlint.fix.apply import as_sent

    findings = _fixable({"models.py": MODEL})["models.py"]
    names = names_of(findings)
    assert names.sites and all(f.node is not None for f in findings)
    sent = as_sent(findings)
    assert names_of(sent).sites == {} and names_of(sent).quals == names.quals
    by_position = [findings[0].with_(span=replace(findings[0].span, node=None))]
    assert names_of(as_sent(by_position)).sites == {by_position[0].span: names.sites[by_position[0].span]}


def test_a_result_compiles_as_the_part_it_was_made_from():
    findings = _fixable({"models.py": MODEL})["models.py"]
    held = held_out(MODEL, findings, names_of(findings))
    parsed = ParsedFile("models.py", MODEL, names_of(findings), held)
    whole = parsed.whole(held.text)
    assert whole == MODEL and parsed.to_compile(whole) == held.text
    assert parsed.to_compile("x = 1\n") == "x = 1\n"  # not one of its results


def test_a_fix_that_breaks_the_parsed_part_is_dropped(monkeypatch):
    import libcst as cst

    import snlint.checks.sn201 as planner

    wrap = planner.fix

    def await_outside_async(finding, payload, parsed):
        plan = wrap(finding, payload, parsed)
        call = next(node for node, _ in plan.changes.values())
        return plan.replace(call, cst.Await(cst.Name("x")))

    findings = _fixable({"models.py": MODEL})["models.py"]
    assert held_out(MODEL, findings, names_of(findings)) is not None
    monkeypatch.setattr(planner, "fix", await_outside_async)
    fixed = _fix_one("models.py", MODEL, findings, Config(Path("."), graph=False), True, fixers())
    assert fixed.text == MODEL and fixed.applied == []
    assert len(fixed.messages) == 1 and "its result does not parse (SyntaxError:" in fixed.messages[0]


HEADED = textwrap.dedent('''\
    """Networks."""
    """Copyright (C) 2019: a second string before the imports."""

    import torch
    import torch.nn as nn


    class Helper(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 1)

        def forward(self, x):
            return self.conv(x)


    class Discriminator(nn.Module):
        def __init__(self, input_nc, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.conv = nn.Conv2d(input_nc, 64, 4)
            self.norm = norm_layer(64)

        def forward(self, x):
            return self.norm(self.conv(x))
    ''')


def test_an_import_a_fix_adds_goes_where_the_whole_file_has_it(monkeypatch):
    # SimSwap: the import block after the first statement ends at a second string; with
    # that string held out, a marker statement still ends it there.
    findings = _fixable({"networks.py": HEADED})["networks.py"]
    assert [f.code for f in findings] == ["SN301"]
    assert held_out(HEADED, findings, names_of(findings)) is not None
    held = _fix_one("networks.py", HEADED, findings, Config(Path("."), graph=False), True, fixers())
    _whole(monkeypatch)
    whole = _fix_one("networks.py", HEADED, findings, Config(Path("."), graph=False), True, fixers())
    assert held == whole
    assert held.text.startswith('"""Networks."""\nimport functools\n')
