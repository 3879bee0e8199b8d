"""What the link step reads once and keeps (per function, per class) must not carry one
call site's values to another: each call is still judged with its own arguments."""

from __future__ import annotations

import textwrap

from snlint.link import link
from snlint.source import extract

FACTORY = '''
import torch.nn as nn


class SmallD(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)


class BigD(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, 3)


def define_D(arch, norm="batch"):
    if arch == "small":
        return SmallD()
    return BigD()


first = define_D("small")
second = define_D("big")
third = define_D("small", norm="instance")
'''


def _project(code: str):
    return link([extract(textwrap.dedent(code), "m.py", "m.py")])


def test_a_factory_called_twice_notes_each_call_s_own_choice():
    # Which parameters a factory compares is read once per function; the strings each
    # call passes for them are its own.
    project = _project(FACTORY)
    vias = [(i.type, i.via) for i in project.events.instances if i.frame.call_site is not None]
    assert vias == [
        ("m.SmallD", ["built by define_D() at m.py:23 (arch='small')"]),
        ("m.BigD", ["built by define_D() at m.py:24 (arch='big')"]),
        ("m.SmallD", ["built by define_D() at m.py:25 (arch='small', norm='instance')"]),
    ]


SPELLINGS = '''
import torch.nn as nn
from torch.nn.utils import spectral_norm
from torch.nn.utils import spectral_norm as SN


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = spectral_norm(nn.Conv2d(3, 8, 3))
        self.b = SN(nn.Conv2d(8, 8, 3))
        self.c = nn.utils.spectral_norm(nn.Linear(8, 1))
'''


def test_one_torch_name_spelled_three_ways_keeps_each_spelling():
    # What a torch name is (an SN function, a layer type) is found once per name; the
    # value each read gives is its own, with the name as written there.
    project = _project(SPELLINGS)
    calls = [(c.callee, c.call.span.line) for c in project.events.sn_calls]
    assert calls == [("spectral_norm", 10), ("SN", 11), ("nn.utils.spectral_norm", 12)]
    layers = [(a.target.type, a.app.callee) for a in project.events.sn]
    assert layers == [("Conv2d", "spectral_norm"), ("Conv2d", "SN"), ("Linear", "nn.utils.spectral_norm")]


def test_same_named_classes_keep_their_own_bases():
    # A class's bases are read once (per class and file); a class of the same name in
    # another file, with other bases, is read on its own.
    files = {
        "a.py": '''
import torch.nn as nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)


class Block(Base):
    pass
''',
        "b.py": '''
import torch.nn as nn


class Block(nn.Conv2d):
    def __init__(self):
        super().__init__(3, 8, 3)
''',
    }
    project = link([extract(textwrap.dedent(code), path, path) for path, code in files.items()])
    roots = {q: (layer.kind, layer.base_type, [name for name, _ in layer.named_children()])
             for q, layer in project.roots.items()}
    assert roots == {"a.Base": ("module", None, ["conv"]), "a.Block": ("module", None, ["conv"]),
                     "b.Block": ("conv", "Conv2d", [])}


INHERITED = '''
import torch.nn as nn


class ConvBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Conv2d(3, 8, 3)


class LinearBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)


class A(ConvBase):
    pass


class B(LinearBase):
    pass


class C(ConvBase):
    def __init__(self):
        super().__init__()
        self.extra = nn.Linear(8, 8)
'''


def test_inherited_methods_are_each_class_s_own():
    # Which method a class inherits is found once per class and question: `__init__` of
    # A is ConvBase's, of B LinearBase's, and C's is its own (calling ConvBase's).
    project = _project(INHERITED)
    built = {q.rpartition(".")[2]: [(name, child.type) for name, child in layer.named_children()]
             for q, layer in project.roots.items()}
    assert built == {"ConvBase": [("layer", "Conv2d")], "LinearBase": [("layer", "Linear")],
                     "A": [("layer", "Conv2d")], "B": [("layer", "Linear")],
                     "C": [("layer", "Conv2d"), ("extra", "Linear")]}
