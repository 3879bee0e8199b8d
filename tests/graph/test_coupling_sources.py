"""Which module really couples the batch (issue 32): the probe names the module that first
mixes samples and whether it standardizes with the batch's statistics; that gives SN301
at the discriminator's line that builds it (SN302 for a statistic concatenated to the
features), and the evidence counts for SN401 and SN303 where the source sees no batch
norm.

The projects are written to disk and linted as a user would (`snlint --graph .`). A
third-party package (a stand-in for torchvision, which CI's venv does not install) lives
in a `site-packages` folder outside the project, put on the graph pass's `sys.path` by
`graph-paths`: snlint sees its modules only where the discriminator builds them.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")

from graph_helpers import span_of, write  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

BACKBONES = '''
    import torch.nn as nn


    class TinyResNet(nn.Module):
        def __init__(self, num_classes=8):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, num_classes)

        def forward(self, x):
            return self.fc(self.pool(self.relu(self.bn1(self.conv1(x)))).flatten(1))


    def resnet_tiny(num_classes=8):
        return TinyResNet(num_classes)


    class BatchWhiten(nn.Module):
        def forward(self, x):
            return (x - x.mean(0, keepdim=True)) / (x.var(0, keepdim=True) + 1e-5).sqrt()
'''

BACKBONE_D = '''
    import torch.nn as nn

    import backbones


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = backbones.resnet_tiny(num_classes=8)
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            return self.head(self.backbone(x))
'''

# Real and generated batches scored in separate calls, as most GAN loops do.
TRAIN = '''
    import torch

    from models import Discriminator

    D = Discriminator()
    G = torch.nn.Linear(4, 3 * 32 * 32)
    opt = torch.optim.Adam(D.parameters())
    for step in range(3):
        real = torch.randn(4, 3, 32, 32)
        fake = G(torch.randn(4, 4)).view(4, 3, 32, 32)
        loss = D(real).mean() - D(fake.detach()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''

# A WGAN-GP critic step: the penalty differentiates D(x_hat).
TRAIN_GP = '''
    import torch

    from models import Discriminator

    D = Discriminator()
    opt = torch.optim.Adam(D.parameters())
    for step in range(3):
        real = torch.randn(4, 3, 32, 32)
        fake = torch.randn(4, 3, 32, 32)
        alpha = torch.rand(4, 1, 1, 1)
        x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        out = D(x_hat)
        grad = torch.autograd.grad(out.sum(), x_hat, create_graph=True)[0]
        gp = ((grad.flatten(1).norm(dim=1) - 1) ** 2).mean()
        loss = D(fake).mean() - D(real).mean() + 10 * gp
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


def lint(root: Path, files: dict[str, str], *, graph: bool = True, select=None,
         packages: dict[str, str] | None = None) -> list:
    """The findings of `snlint [--graph] .` in a project at `root / "proj"`, with
    `packages` installed in a site-packages folder beside it."""
    project = root / "proj"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    for name, code in files.items():
        write(project, name, code)
    paths = []
    if packages:
        for name, code in packages.items():
            write(root / "site-packages", name, code)
        paths = ["../site-packages"]
    cwd = os.getcwd()
    os.chdir(project)
    try:
        config = Config(root=project, graph=graph, graph_paths=paths, select=select)
        return [f for f in run(["."], config).findings if f.cleared_by is None]
    finally:
        os.chdir(cwd)


def where(findings) -> list[tuple]:
    return [(f.code, f.path, f.line, f.column, f.end_line, f.end_column, f.pass_) for f in findings]


def test_backbone_batch_norm_is_sn301_at_the_discriminators_line_and_feeds_sn401(tmp_path):
    files = {"models.py": BACKBONE_D, "train.py": TRAIN}
    packages = {"backbones/__init__.py": BACKBONES}
    # The source pass cannot see inside an installed package: nothing without the graph pass.
    assert lint(tmp_path, files, graph=False, packages=packages) == []
    findings = lint(tmp_path, files, packages=packages)
    sn301, sn401 = findings
    assert where(findings) == [
        ("SN301", "models.py", *span_of(BACKBONE_D, "backbones.resnet_tiny(num_classes=8)"), "graph"),
        ("SN401", "train.py", *span_of(TRAIN, "D(real)"), "graph"),
    ]
    assert sn301.symbol == "Discriminator.backbone.bn1"
    assert sn301.message.startswith(
        "BatchNorm2d `backbone.bn1` in Discriminator normalizes with the "
        "statistics of the current batch in training mode")
    assert sn301.evidence.startswith("Measured: perturbing sample 0 changes the other samples' output of `backbone.bn1`.")
    assert sn301.evidence_of()["discriminator"] == (
        "Discriminator: used as a discriminator by the training code; called on real and generated samples at module level")
    second = span_of(TRAIN, "D(fake.detach())")[0]
    line = span_of(BACKBONE_D, "backbones.resnet_tiny")[0]
    assert f"in a separate call at line {second}" in sn401.explanation
    assert (f"its batch statistics (BatchNorm2d `backbone.bn1` at models.py:{line}, batch-coupled "
            "as measured by the graph pass)") in sn401.explanation


def test_measured_coupling_feeds_sn303_for_a_penalty_through_the_backbone(tmp_path):
    findings = lint(tmp_path, {"models.py": BACKBONE_D, "train.py": TRAIN_GP},
                    packages={"backbones/__init__.py": BACKBONES}, select=["SN303"])
    assert where(findings) == [("SN303", "train.py", *span_of(TRAIN_GP, "D(x_hat)"), "graph")]
    assert "batch-coupled as measured by the graph pass" in findings[0].explanation


WHITEN_D = '''
    import torch.nn as nn


    class Whiten(nn.Module):
        def forward(self, x):
            return (x - x.mean(0)) / x.std(0)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 4, 2, 1)
            self.norm = Whiten()
            self.c2 = nn.Conv2d(8, 1, 4, 2, 1)

        def forward(self, x):
            return self.c2(self.norm(self.c1(x)))
'''


def test_hand_rolled_batch_standardizing_layer_is_sn301_and_its_reductions_are_part_of_it(tmp_path):
    findings = lint(tmp_path, {"models.py": WHITEN_D, "train.py": TRAIN}, select=["SN3", "SN4"])
    sn301, sn401 = findings
    assert where(findings) == [
        ("SN301", "models.py", *span_of(WHITEN_D, "Whiten()"), "graph"),
        ("SN401", "train.py", *span_of(TRAIN, "D(real)"), "graph"),
    ]
    assert sn301.message.startswith(
        "Whiten `norm` in Discriminator standardizes with the statistics of the current batch")
    assert sn301.evidence.startswith("Measured: perturbing sample 0 changes the other samples' output of `norm`")
    line = span_of(WHITEN_D, "Whiten()")[0]
    assert f"Whiten `norm` at models.py:{line}, batch-coupled as measured by the graph pass" in sn401.explanation


def test_hand_rolled_layer_without_the_graph_pass_is_only_its_reductions(tmp_path):
    findings = lint(tmp_path, {"models.py": WHITEN_D, "train.py": TRAIN}, graph=False,
                    select=["SN3", "SN4"])
    line = span_of(WHITEN_D, "x.mean(0)")[0]
    assert [(f.code, f.line) for f in findings] == [("SN302", line), ("SN302", line)]


def test_third_party_standardizing_block_is_sn301_at_the_line_that_builds_it(tmp_path):
    models = '''
        import torch.nn as nn

        import backbones


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 8, 4, 2, 1)
                self.white = backbones.BatchWhiten()
                self.c2 = nn.Conv2d(8, 1, 4, 2, 1)

            def forward(self, x):
                return self.c2(self.white(self.c1(x)))
    '''
    # What fx inlines of the block (its reductions, recorded at the forward's call of it)
    # is part of the one finding: no SN302 beside it.
    findings = lint(tmp_path, {"models.py": models, "train.py": TRAIN},
                    packages={"backbones/__init__.py": BACKBONES}, select=["SN3", "SN4"])
    assert where(findings) == [
        ("SN301", "models.py", *span_of(models, "backbones.BatchWhiten()"), "graph"),
        ("SN401", "train.py", *span_of(TRAIN, "D(real)"), "graph"),
    ]


MBSTD_D = '''
    import torch
    import torch.nn as nn


    class MinibatchStd(nn.Module):
        def forward(self, x):
            s = x.std(0, keepdim=True).mean().expand(x.shape[0], 1, *x.shape[2:])
            return torch.cat([x, s], 1)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 4, 2, 1)
            self.mbstd = MinibatchStd()
            self.c2 = nn.Conv2d(9, 1, 4, 2, 1)

        def forward(self, x):
            return self.c2(self.mbstd(self.c1(x)))
'''


def test_minibatch_stddev_stays_sn302_and_gives_no_sn301_or_sn401(tmp_path):
    files = {"models.py": MBSTD_D, "train.py": TRAIN}
    assert lint(tmp_path, files) == []
    findings = lint(tmp_path, files, select=["SN302"])
    assert where(findings) == [
        ("SN302", "models.py", *span_of(MBSTD_D, "x.std(0, keepdim=True)"), "source+graph")]


def test_per_sample_norms_give_nothing(tmp_path):
    models = '''
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 8, 4, 2, 1)
                self.n1 = nn.InstanceNorm2d(8, affine=True)
                self.n2 = nn.LayerNorm([8, 16, 16])
                self.drop = nn.Dropout(0.3)
                self.c2 = nn.Conv2d(8, 1, 4, 2, 1)

            def forward(self, x):
                return self.c2(self.drop(self.n2(self.n1(self.c1(x)))))
    '''
    assert lint(tmp_path, {"models.py": models, "train.py": TRAIN}, select=["ALL"]) == []


@pytest.mark.skipif(importlib.util.find_spec("torchvision") is None, reason="torchvision not installed")
def test_torchvision_backbone_is_sn301_at_the_discriminators_line_and_feeds_sn401(tmp_path):
    models = '''
        import torch.nn as nn
        import torchvision


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = torchvision.models.resnet18(num_classes=8)
                self.head = nn.Linear(8, 1)

            def forward(self, x):
                return self.head(self.backbone(x))
    '''
    findings = lint(tmp_path, {"models.py": models, "train.py": TRAIN}, select=["SN3", "SN4"])
    assert where(findings) == [
        ("SN301", "models.py", *span_of(models, "torchvision.models.resnet18(num_classes=8)"), "graph"),
        ("SN401", "train.py", *span_of(TRAIN, "D(real)"), "graph"),
    ]
    assert findings[0].symbol == "Discriminator.backbone.bn1"


# --- the probe itself, in process ------------------------------------------------------


def _probed(mid, channels_after: int = 8) -> dict:
    import torch.nn as nn
    from torch.nn.utils import spectral_norm

    from snlint.graph import probe
    from snlint.graph.pristine import Pristine

    model = nn.Sequential(spectral_norm(nn.Conv2d(3, 8, 4, 2, 1)), mid, nn.Dropout(0.3),
                          spectral_norm(nn.Conv2d(channels_after, 1, 4, 2, 1)))
    with Pristine(model) as fresh:
        result, _ = probe.probe(fresh)
    return result


def _modules():
    import torch
    import torch.nn as nn

    class Whiten(nn.Module):
        def forward(self, x):
            return (x - x.mean(0)) / x.std(0)

    class Center(nn.Module):  # centers with the batch mean, never scales
        def forward(self, x):
            return x - x.mean(0)

    class MinibatchStd(nn.Module):
        def forward(self, x):
            s = x.std(0, keepdim=True).mean().expand(x.shape[0], 1, *x.shape[2:])
            return torch.cat([x, s], 1)

    return {"BatchNorm2d": (nn.BatchNorm2d(8), 8), "SyncBatchNorm": (nn.SyncBatchNorm(8), 8),
            "Whiten": (Whiten(), 8), "Center": (Center(), 8), "MinibatchStd": (MinibatchStd(), 9)}


@pytest.mark.parametrize("name, standardizes", [
    ("BatchNorm2d", True), ("SyncBatchNorm", True), ("Whiten", True),
    ("Center", False), ("MinibatchStd", False),
])
def test_probe_tells_batch_normalization_from_other_coupling(name, standardizes):
    module, channels = _modules()[name]
    result = _probed(module, channels)
    assert result["coupled"]
    assert [(s["path"], s["type"], s["standardizes"]) for s in result["sources"]] == [
        ("1", name, standardizes)]


@pytest.mark.parametrize("seed", [282, 376])
def test_probe_names_the_batch_standardizing_layer_whatever_its_neighbours_weights(seed):
    import torch

    # Over two samples the layer gives +-1/sqrt(2) everywhere: with these weights the signs
    # that move keep their count, and a summary of sums alone took the dropout or the
    # conv after it for a second source.
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        module, channels = _modules()["Whiten"]
        result = _probed(module, channels)
    assert [(s["path"], s["type"], s["standardizes"]) for s in result["sources"]] == [
        ("1", "Whiten", True)]


def test_probe_names_only_the_first_module_that_mixes_samples():
    import torch.nn as nn

    # The stddev layer runs after the batch norm: its input already differs for the other
    # samples, so it is not where the coupling enters.
    mid = nn.Sequential(nn.BatchNorm2d(8), nn.Conv2d(8, 8, 3, padding=1), _modules()["MinibatchStd"][0])
    result = _probed(mid, 9)
    assert [s["path"] for s in result["sources"]] == ["1.0"]


def test_probe_sees_no_coupling_in_per_sample_norms_dropout_or_sn():
    import torch.nn as nn

    result = _probed(nn.Sequential(nn.InstanceNorm2d(8, affine=True), nn.GroupNorm(2, 8)))
    assert result["ran"] and not result["coupled"]


PATCH_D = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 4, 4, 2, 1), nn.BatchNorm2d(4), nn.Conv2d(4, 1, 3, 1, 1))

        def forward(self, x):
            return self.net(x).view(-1)
'''

PATCH_TRAIN = '''
    from models import Discriminator


    def step(G, opt, real, z):
        D = Discriminator()
        fake = G(z).detach()
        d_real = D(real)
        d_fake = D(fake)
        loss = d_fake.mean() - d_real.mean()
        opt.zero_grad()
        loss.backward()
'''


def test_sn401_offers_no_split_for_a_discriminator_built_to_return_a_flat_patch_map(tmp_path):
    # `.view(-1)` of a patch map: the concatenated call returns more rows than samples, and
    # `.split([real.size(0), fake.size(0)])` raises. Only the built model shows the map is
    # not 1x1; the source pass still offers the fix.
    files = {"models.py": PATCH_D, "train.py": PATCH_TRAIN}
    source = lint(tmp_path / "a", files, graph=False, select=["SN401"])
    built = lint(tmp_path / "b", files, select=["SN401"])
    span = span_of(PATCH_TRAIN, "D(real)")
    assert [(f.code, f.line, f.column, f.fix is not None) for f in source] == [("SN401", *span[:2], True)]
    assert [(f.code, f.line, f.column, f.fix) for f in built] == [("SN401", *span[:2], None)]
