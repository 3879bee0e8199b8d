"""`for real_i, fake_i in zip(reals, fakes)`: each name takes the items of its own
sequence (Synthetic2Realistic scores a pyramid of real and of generated images in separate
calls), not all of them together."""

from __future__ import annotations

from projects import lint_in as lint

PROGRAM = '''
    import torch
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.bn(self.conv(x))


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.ConvTranspose2d(8, 3, 3)

        def forward(self, z):
            return self.conv(z)


    def backward_D(netD, real, fake):
        loss = 0
        for (real_i, fake_i) in zip(real, fake):
            d_real = netD(real_i.detach())
            d_fake = netD(fake_i.detach())
            loss = loss + d_real.mean() - d_fake.mean()
        return loss


    netD, netG = Discriminator(), Generator()
    loader = torch.utils.data.DataLoader([])
    for images in loader:
        fakes = REALS_AND_FAKES
        backward_D(netD, reals, fakes).backward()
'''


def found(tmp_path, pairs: str):
    program = PROGRAM.replace("fakes = REALS_AND_FAKES", pairs)
    return [(f.code, f.line) for f in lint(tmp_path, {"train.py": program})]


def test_lists_zipped_are_scored_item_by_item(tmp_path):
    pairs = "fakes = [netG(torch.randn(4, 8, 8, 8))]\n        reals = [images]"
    assert found(tmp_path, pairs) == [("SN301", 10), ("SN401", 28)]


def test_sequences_of_unknown_length_give_each_name_its_own_items(tmp_path):
    pairs = ("fakes = [netG(torch.randn(4, 8, 8, 8)) for _ in range(3)]\n"
             "        reals = [torch.nn.functional.interpolate(images, scale_factor=s) for s in (1, 0.5)]")
    assert found(tmp_path, pairs) == [("SN301", 10), ("SN401", 28)]


def test_two_loaders_zipped_are_both_real_data(tmp_path):
    program = PROGRAM.replace('''    for images in loader:
        fakes = REALS_AND_FAKES
        backward_D(netD, reals, fakes).backward()''', '''    loader_b = torch.utils.data.DataLoader([])
    for a, b in zip(loader, loader_b):
        d_a = netD(a)
        d_b = netD(b)
        d_fake = netD(netG(torch.randn(4, 8, 8, 8)).detach())''')
    findings = [f for f in lint(tmp_path, {"train.py": program}) if f.line > 30]
    assert [(f.code, f.line) for f in findings] == [("SN401", 39)]  # d_b, beside d_fake
    assert findings[0].evidence.startswith("real samples (a batch of `loader_b` (line 37))")
