"""A layer the discriminator builds and nothing reads, or of a class that normalizes its own
weight, is in the built model too: the graph pass, which sees every module it holds,
reports no more about it than the source does (`LinkedModel.unread`)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from graph_helpers import write  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

MODELS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)),
                spectral_norm(nn.Conv2d(64, 128, 4, 2, 1)),
            )
            self.linear = nn.Linear(128 * 4, 1)

        def forward(self, x):
            x = self.body(x)
            #x = self.linear(x)
            return x.view(x.size(0), -1)
'''


def test_the_built_model_adds_no_finding_on_a_layer_nothing_reads(tmp_path):
    write(tmp_path, "models.py", MODELS)
    assert run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings == []


def test_the_built_model_reports_the_layer_forward_runs(tmp_path):
    write(tmp_path, "models.py", MODELS.replace("#x = self.linear(x)", "x = self.linear(x.flatten(1))"))
    findings = run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings
    assert [(f.code, f.line) for f in findings] == [("SN201", 13)]


OWN = '''
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.utils import spectral_norm


    class SANConv2d(nn.Conv2d):
        def forward(self, x):
            return F.conv2d(x, F.normalize(self.weight, dim=1))


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = spectral_norm(nn.Conv2d(3, 8, 3))
            self.last = SANConv2d(8, 1, 3)

        def forward(self, x):
            return self.last(self.body(x))
'''


def test_the_built_model_adds_no_finding_on_a_layer_that_normalizes_its_own_weight(tmp_path):
    # The runtime sees a plain Conv2d there; the source knows its class.
    write(tmp_path, "models.py", OWN)
    assert run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings == []
