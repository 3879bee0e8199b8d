"""The rules read the linked model (`snlint.link.model`): the records the interpreter
emitted, read-only once the link is sealed, the layers with stable ids. No module of
`snlint.checks` imports the interpreter or its working values, wherever the import is
written, so a rule cannot come to depend on a frame or a value still being filled in."""

from __future__ import annotations

import ast
import dataclasses
import textwrap
from pathlib import Path

import pytest

from snlint.link import link
from snlint.link.seal import seal
from snlint.source import extract

CHECKS = Path(__file__).resolve().parent.parent / "snlint" / "checks"

# What the rules may read of the link step: the model, and the graph pass's facts joined
# to it by source site (`Runtime`, which the model carries).
READABLE = {"snlint.link.model", "snlint.link.join"}


def _link_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "snlint":
                found.update(f"snlint.{a.name}" for a in node.names if a.name == "link")
            elif node.module == "snlint.link":
                found.update(f"snlint.link.{a.name}" for a in node.names)
            elif node.module.startswith("snlint.link."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[:2] == ["snlint", "link"])
    return found


@pytest.mark.parametrize("path", sorted(CHECKS.glob("*.py")), ids=lambda p: p.name)
def test_rules_import_only_the_model_of_the_link_step(path):
    assert sorted(_link_imports(path) - READABLE) == []


D = '''
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm


def snconv(i, o):
    return spectral_norm(nn.Conv2d(i, o, 3))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = snconv(c, c)
        self.norm = nn.BatchNorm2d(c)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(64) for _ in range(2)])
        self.head = nn.Linear(64, 1)
'''


@pytest.fixture
def model():
    facts = extract(textwrap.dedent(D), "d.py", "d.py")
    return seal(link([facts]))


def test_ids_are_places_in_the_model(model):
    assert [layer.id for layer in model.layers] == list(range(len(model.layers)))
    assert all(model.layer(child).id == child for layer in model.layers for _, child in layer.children)


def test_sealing_twice_gives_the_same_ids():
    facts = extract(textwrap.dedent(D), "d.py", "d.py")
    project = link([facts])
    first, second = seal(project), seal(project)
    assert [(f.id, f.type, f.call) for f in first.layers] == [(s.id, s.type, s.call) for s in second.layers]


def test_records_are_frozen(model):
    layer = model.roots["d.Discriminator"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        layer.opaque = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        model.roots["d.Block"] = layer  # type: ignore[index]


def test_forward_calls_are_read_only_once_sealed():
    code = D + "\n\nnetD = Discriminator()\nout = netD(real)\n"
    forward, = seal(link([extract(textwrap.dedent(code), "d.py", "d.py")])).forwards
    with pytest.raises(dataclasses.FrozenInstanceError):
        forward.kind = "fake"  # type: ignore[misc]


def test_the_model_holds_the_records_the_interpreter_emitted():
    # Sealing copies nothing: the rules read the very records the link step made.
    code = D + "\n\nnetD = Discriminator()\nout = netD(real)\n"
    project = link([extract(textwrap.dedent(code), "d.py", "d.py")])
    model = seal(project)
    assert model.roots["d.Discriminator"] is project.roots["d.Discriminator"]
    assert len(model.sn) == len(project.events.sn) > 0
    assert all(a is b for a, b in zip(model.sn, project.events.sn))
    assert model.forwards[0] is project.events.forwards[0]
    assert model.forwards[0].module is project.events.instances[-1]


def test_a_layer_holds_the_sn_records_the_model_lists(model):
    # One record per SN application: the layer's and the model's are the same object.
    applied = model.sn[0]
    assert applied.target.sn[applied.index] is applied.app


def test_members_carry_their_owner_symbol_and_site(model):
    root = model.roots["d.Discriminator"]
    members = {m.symbol: m for m in model.members(root)}
    assert sorted(members) == ["Block.conv", "Block.norm", "Discriminator.blocks",
                               "Discriminator.blocks[*]", "Discriminator.head"]
    conv = members["Block.conv"]
    assert conv.owner.type == "d.Block" and conv.layer.sn
    # Built by a helper that returns the layer: it shows at the helper's call in Block.
    assert conv.site.span.line == 13
