"""A class named as a discriminator by the abbreviation of one, as a word of its
CamelCase name (`SNProjectionDisResNet`, `MsImageDis`, `SingleDisc`), is one by its name,
as `NLayerDiscriminator` is; the same letters starting a longer word are not."""

from __future__ import annotations

import pytest

from projects import lint_in as lint

PARTIAL_SN = '''
    import torch
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class {name}(nn.Module):
        def __init__(self, ch=64):
            super().__init__()
            self.conv = spectral_norm(nn.Conv2d(3, ch, 3, 1, 1))
            self.l7 = nn.Linear(ch, 1)

        def forward(self, x):
            return self.l7(torch.sum(torch.relu(self.conv(x)), dim=(2, 3)))
'''

BATCH_NORM = '''
    import torch.nn as nn


    class {name}(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.bn = nn.BatchNorm2d(64)

        def forward(self, x):
            return self.bn(self.conv(x))
'''


def codes(findings):
    return [(f.code, f.line, f.discriminator.evidence if f.discriminator else None) for f in findings]


@pytest.mark.parametrize("name", ["SNProjectionDisResNet", "MsImageDis", "SingleDisc", "Disc"])
def test_an_abbreviated_discriminator_name_is_a_discriminator(tmp_path, name):
    found = codes(lint(tmp_path, {"models.py": PARTIAL_SN.format(name=name)}))
    assert found == [("SN201", 11, "name")]


def test_an_abbreviated_name_with_batch_norm_gets_sn301(tmp_path):
    found = codes(lint(tmp_path, {"models.py": BATCH_NORM.format(name="PatchDis")}))
    assert found == [("SN301", 9, "name")]


@pytest.mark.parametrize("name", ["Distiller", "DisentangledEncoder", "DiscreteHead", "Actor_dis",
                                  "DisGenerator", "DisLoss"])
def test_the_letters_starting_another_word_name_no_discriminator(tmp_path, name):
    assert codes(lint(tmp_path, {"models.py": BATCH_NORM.format(name=name)})) == []
