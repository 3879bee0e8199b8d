"""Where a built layer's class came from a parameter default, the graph pass names that
default only when it is the one in use: a subclass that hands its own `norm_layer`
default on to its base (CUT's `PatchDiscriminator(NLayerDiscriminator)`) built the layer
from the subclass's default, not from the base's, though both hold the same class."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

from graph_helpers import span_of, write  # noqa: E402

MODELS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class NLayerDiscriminator(nn.Module):
        def __init__(self, nc=3, ndf=8, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.c1 = spectral_norm(nn.Conv2d(nc, ndf, 4, 2, 1))
            self.norm = norm_layer(ndf)
            self.c2 = spectral_norm(nn.Conv2d(ndf, 1, 4, 1, 0))

        def forward(self, x):
            return self.c2(self.norm(self.c1(x)))


    class PatchDiscriminator(NLayerDiscriminator):
        def __init__(self, nc=3, ndf=8, norm_layer=nn.BatchNorm2d):
            super().__init__(nc, ndf, norm_layer)


    class WrittenDiscriminator(NLayerDiscriminator):
        def __init__(self):
            super().__init__(3, 8, nn.BatchNorm2d)
'''

# The base is trained with a per-sample norm: its own batch-norm default is never used.
TRAIN = '''
    import torch
    import torch.nn as nn

    from models import NLayerDiscriminator

    netD = NLayerDiscriminator(3, 8, norm_layer=nn.InstanceNorm2d)
    for real in torch.utils.data.DataLoader([]):
        loss = netD(torch.cat([real, torch.randn_like(real)])).mean()
'''


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    write(root, "models.py", MODELS)
    write(root, "train.py", TRAIN)
    result = run([str(root)], Config(root=root, graph=True, cache=False))
    return [(f.code, f.line, f.column, f.pass_, f.message.split(" normalizes")[0])
            for f in result.findings]


def test_a_default_handed_on_to_the_base_is_the_subclass_default(findings):
    line, column = span_of(MODELS, "norm_layer=nn.BatchNorm2d", nth=1)[:2]
    assert ("SN301", line, column, "source+graph",
            "its norm_layer default builds BatchNorm2d in PatchDiscriminator") \
        in findings


def test_the_base_default_nobody_uses_is_not_reported(findings):
    line = span_of(MODELS, "norm_layer=nn.BatchNorm2d")[0]
    assert not [f for f in findings if f[1] == line]


def test_a_class_written_at_the_call_is_reported_where_it_is_built(findings):
    line, column = span_of(MODELS, "norm_layer(ndf)")[:2]
    assert ("SN301", line, column, "source+graph",
            "BatchNorm2d in WrittenDiscriminator") in findings
    assert len(findings) == 2


KWARGS = '''
    import torch.nn as nn


    class Base(nn.Module):
        def __init__(self, nc=3, ndf=8, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.c1 = nn.Conv2d(nc, ndf, 4, 2, 1)
            self.norm = norm_layer(ndf)

        def forward(self, x):
            return self.norm(self.c1(x))


    class KwargsDiscriminator(Base):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
'''


def test_a_default_not_in_the_kwargs_handed_on_is_the_base_default(tmp_path):
    # `**kwargs` without norm_layer (the graph pass builds the class with none): the
    # base's default is in use, and named.
    write(tmp_path, "models.py", KWARGS)
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True, cache=False, select=["SN301"]))
    line, column = span_of(KWARGS, "norm_layer=nn.BatchNorm2d")[:2]
    assert [(f.line, f.column, f.pass_) for f in result.findings] == [(line, column, "source+graph")]
