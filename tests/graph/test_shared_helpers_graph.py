"""Both passes agree where a finding points when a batch norm is built in a helper the
generator runs too (issue 32): one finding per discriminator at its own line, confirmed
by the built model, never a second one at the helper's line; and a feature network that
keeps itself in eval mode through its own `train()` has no SN301 from either pass."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from snlint.cli import main  # noqa: E402
from projects import write_project  # noqa: E402
from test_shared_helpers import FROZEN_FEATURES, KAIR  # noqa: E402


def lint_json(root, monkeypatch, *args: str) -> tuple[int, list[dict]]:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, [".", "--output-format", "json", *args])
    return result.exit_code, json.loads(result.stdout)


def test_a_helper_built_batch_norm_is_one_finding_per_discriminator_with_the_graph_pass(tmp_path, monkeypatch):
    write_project(tmp_path, KAIR)
    _, found = lint_json(tmp_path, monkeypatch, "--graph")
    assert [(o["code"], o["path"], o["line"], o["pass"]) for o in found] == [
        ("SN301", "models/networks.py", 16, "source+graph"),
        ("SN301", "models/networks.py", 30, "source+graph")]
    assert [[(r["path"], r["line"]) for r in o["related"]] for o in found] == [
        [("models/basicblock.py", 11)], [("models/basicblock.py", 11)]]


def test_a_feature_network_kept_in_eval_by_its_own_train_has_no_sn301_in_either_pass(tmp_path, monkeypatch):
    write_project(tmp_path, {"nets.py": FROZEN_FEATURES})
    assert lint_json(tmp_path, monkeypatch, "--no-graph") == (0, [])
    assert lint_json(tmp_path, monkeypatch, "--graph") == (0, [])


# A base class builds three batch norms; a subclass the training code trains calls its
# `__init__` through `super()`. The source reports the subclass once, at the super() call;
# the graph pass confirms that finding with all three built layers, not only the first
# (pytorch-gan-collections' dcgan.py: the other two became graph findings of the subclass
# at the base's lines and hid the base's own findings there).
BASE_WITH_THREE_BATCH_NORMS = {
    "nets.py": """\
import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, M):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, 8, 4, 2, 1),
            nn.BatchNorm2d(8),
            nn.Conv2d(8, 16, 4, 2, 1),
            nn.BatchNorm2d(16),
            nn.Conv2d(16, 32, 4, 2, 1),
            nn.BatchNorm2d(32),
        )
        self.linear = nn.Linear(M // 8 * M // 8 * 32, 1)

    def forward(self, x):
        return self.linear(torch.flatten(self.main(x), 1))


class Discriminator32(Discriminator):
    def __init__(self):
        super().__init__(M=32)


class Discriminator48(Discriminator):
    def __init__(self):
        super().__init__(M=48)
""",
    "train.py": """\
import torch
from nets import Discriminator32

D = Discriminator32()
opt = torch.optim.Adam(D.parameters())


def train(real, fake):
    loss = D(torch.cat([real, fake])).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
}


def test_every_batch_norm_a_super_call_builds_is_the_subclass_finding_not_a_second_one(tmp_path, monkeypatch):
    write_project(tmp_path, BASE_WITH_THREE_BATCH_NORMS)
    _, source = lint_json(tmp_path, monkeypatch, "--no-graph")
    _, graph = lint_json(tmp_path, monkeypatch, "--graph")
    assert [(o["code"], o["line"], o["symbol"]) for o in source] == [
        ("SN301", 10, "Discriminator.main.1"), ("SN301", 12, "Discriminator.main.3"),
        ("SN301", 14, "Discriminator.main.5"), ("SN301", 24, "Discriminator32.main.1")]
    assert [(o["code"], o["line"], o["symbol"], o["pass"]) for o in graph] == [
        ("SN301", 10, "Discriminator.main.1", "source+graph"),
        ("SN301", 12, "Discriminator.main.3", "source+graph"),
        ("SN301", 14, "Discriminator.main.5", "source+graph"),
        ("SN301", 24, "Discriminator32.main.1", "source+graph")]


# A factory's `norm="batch"` default every call replaces, and a class built only in a
# branch of a key the training code does not pass (contrastive-unpaired-translation's
# define_D with `--netD pixel`, `--normD instance` by default).
FACTORY_BRANCH_WITH_UNUSED_DEFAULT = {
    "nets.py": """\
import torch.nn as nn


class PixelDiscriminator(nn.Module):
    def __init__(self, nc, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.conv = nn.Conv2d(nc, 64, 1)
        self.norm = norm_layer(64)
        self.head = nn.Conv2d(64, 1, 1)

    def forward(self, x):
        return self.head(self.norm(self.conv(x)))


def define_D(nc, netD, norm="batch"):
    norm_layer = nn.BatchNorm2d if norm == "batch" else nn.InstanceNorm2d
    if netD == "pixel":
        return PixelDiscriminator(nc, norm_layer=norm_layer)
    raise NotImplementedError(netD)
""",
    "train.py": """\
import argparse
from nets import define_D

parser = argparse.ArgumentParser()
parser.add_argument("--netD", default="basic")
parser.add_argument("--normD", default="instance")
opt = parser.parse_args()
D = define_D(3, opt.netD, opt.normD)
""",
}


def test_a_factory_branch_the_project_never_takes_is_no_finding_with_the_graph_pass(tmp_path, monkeypatch):
    write_project(tmp_path, FACTORY_BRANCH_WITH_UNUSED_DEFAULT)
    assert lint_json(tmp_path, monkeypatch, "--no-graph") == (0, [])
    assert lint_json(tmp_path, monkeypatch, "--graph") == (0, [])


CLOSURE_THROUGH_A_HELPER = '''\
import torch.nn as nn


def batchNorm2d(*args, **kwargs):
    return nn.BatchNorm2d(*args, **kwargs)


class Decoder(nn.Module):
    def __init__(self, ch=8):
        super().__init__()

        def up(c_in, c_out):
            return nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(c_in, c_out, 3, 1, 1),
                                 batchNorm2d(c_out), nn.ReLU())

        self.main = nn.Sequential(up(ch, ch), up(ch, ch), nn.Conv2d(ch, 3, 3, 1, 1))

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 4, 2, 1)
        self.head = nn.Conv2d(8, 1, 4)
        self.decoder = Decoder(8)

    def forward(self, x):
        h = self.conv(x)
        return self.head(h).flatten(1) + self.decoder(h).mean((1, 2, 3))[:, None]
'''


def test_a_closure_calling_a_helper_twice_is_one_finding_at_the_closures_line(tmp_path, monkeypatch):
    # The source reports the batch norm where the closure calls the helper; the built
    # layers were made through that line too, so no second finding at each closure call.
    write_project(tmp_path, {"models.py": CLOSURE_THROUGH_A_HELPER})
    _, found = lint_json(tmp_path, monkeypatch, "--graph")
    assert [(o["code"], o["line"], o["column"], o["pass"]) for o in found] == [
        ("SN301", 14, 34, "source+graph")]
