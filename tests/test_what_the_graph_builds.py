"""The graph pass builds the classes the source pass takes for discriminators, and no
module merely bound to a name that looks like one: a loss bound to `self.D_lossfn`, a
data module bound to `self.d`."""

from __future__ import annotations

import os

from projects import write_project
from snlint.config import Config
from snlint.engine import run
from snlint.graph.facts import TargetFacts

MODEL = '''
    import torch.nn as nn


    class GANLoss(nn.Module):
        def __init__(self, gan_type):
            super().__init__()
            self.loss = nn.BCEWithLogitsLoss()

        def forward(self, x, target_is_real):
            return self.loss(x, x.new_ones(x.shape) if target_is_real else x.new_zeros(x.shape))


    class DataNet(nn.Module):
        def forward(self, x, alpha):
            return x * alpha


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4))

        def forward(self, x):
            return self.net(x)


    class ModelGAN:
        def __init__(self, opt):
            self.netD = Discriminator()
            self.D_lossfn = GANLoss(opt["gan_type"])
            self.D_lossfn_weight = opt["D_lossfn_weight"]
            self.d = DataNet()
'''


def _built(tmp_path, monkeypatch, files):
    """The classes the graph pass is asked to build in the project (none is built)."""
    asked = []

    def record(targets, *args, **kwargs):
        asked.extend(t.class_name for t in targets)
        return [TargetFacts(t, status="build_error", message="not built in this test")
                for t in targets]

    monkeypatch.setattr("snlint.graph_pass.run_graph", record)
    write_project(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    run(["."], Config(root=tmp_path, graph=True))
    return asked


def test_a_loss_and_a_data_module_bound_to_d_like_names_are_not_built(tmp_path, monkeypatch):
    assert _built(tmp_path, monkeypatch, {"model.py": MODEL}) == ["Discriminator"]


def test_a_module_bound_to_a_capital_d_is_still_built(tmp_path, monkeypatch):
    code = MODEL.replace("self.netD = Discriminator()", "self.D = Scorer()").replace(
        "class Discriminator(", "class Scorer(")
    assert _built(tmp_path, monkeypatch, {"model.py": code}) == ["Scorer"]
