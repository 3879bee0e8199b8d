"""A discriminator's own method that calls `self.forward(x)` (PyTorch-GAN's BicycleGAN
`compute_loss`) scores its input like a call of the module."""

from __future__ import annotations

CODE = '''
    import torch
    import torch.nn as nn


    class MultiDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.{norm}(64), nn.Conv2d(64, 1, 4))

        def compute_loss(self, x, gt):
            return sum([torch.mean((out - gt) ** 2) for out in self.forward(x)])

        def forward(self, x):
            return [self.main(x)]


    generator = nn.Conv2d(3, 3, 1)
    D_VAE = MultiDiscriminator()
    for real_B in torch.utils.data.DataLoader(range(8)):
        fake_B = generator(real_B)
        loss_D_VAE = D_VAE.compute_loss(real_B, 1) + D_VAE.compute_loss(fake_B.detach(), 0)
'''


def test_compute_loss_through_self_forward_scores_apart(lint):
    findings = lint(CODE.format(norm="BatchNorm2d"))
    assert [(f.code, f.line) for f in findings] == [("SN301", 9), ("SN401", 22)]
    assert findings[1].column == 18
    assert findings[1].discriminator.evidence == "training code"


def test_compute_loss_without_batch_statistics(lint):
    assert [(f.code, f.line) for f in lint(CODE.format(norm="InstanceNorm2d"))] == []
