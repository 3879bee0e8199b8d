"""Networks for train.py: a pix2pix-style norm factory, a generator and a critic.

Corrected version of ../batch_coupling_project/nets.py: the critic's `norm_layer`
default is a per-sample norm, `GroupNorm(1, C)` from `get_norm_layer("group")`, so each
score depends on its own image only. The generator keeps batch norm.
"""

import functools

import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm

NZ = 64
NC = 3


def get_norm_layer(norm_type="instance"):
    """A norm layer constructor by name, as pix2pix/CycleGAN spell it."""
    if norm_type == "batch":
        return functools.partial(nn.BatchNorm2d, affine=True)
    if norm_type == "instance":
        return functools.partial(nn.InstanceNorm2d, affine=True)
    if norm_type == "group":
        return functools.partial(nn.GroupNorm, 1)
    raise NotImplementedError(f"normalization layer {norm_type!r} is not found")


class Generator(nn.Module):
    """z (N, NZ, 1, 1) -> image (N, NC, 16, 16)."""

    def __init__(self, nz=NZ, ngf=32, nc=NC, norm_layer=get_norm_layer("batch")):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            norm_layer(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            norm_layer(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Critic(nn.Module):
    """image (N, NC, 16, 16) -> one score per image; SN on every conv."""

    def __init__(self, nc=NC, ndf=32, norm_layer=get_norm_layer("group")):
        super().__init__()
        self.main = nn.Sequential(
            spectral_norm(nn.Conv2d(nc, ndf, 4, 2, 1)),
            nn.LeakyReLU(0.2),
            spectral_norm(nn.Conv2d(ndf, ndf * 2, 4, 2, 1)),
            norm_layer(ndf * 2),
            nn.LeakyReLU(0.2),
            spectral_norm(nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1)),
            norm_layer(ndf * 4),
            nn.LeakyReLU(0.2),
            spectral_norm(nn.Conv2d(ndf * 4, 1, 2, 1, 0)),
        )

    def forward(self, x):
        return self.main(x).flatten()
