"""SNGAN for 32x32 images: ResNet discriminator (Miyato et al. 2018) and a generator
that also uses spectral normalization (as SAGAN does).

Corrected version of buggy.py: DBlock's learnable shortcut is normalized, and the
generator's ConvTranspose2d stem uses SN's default dim (1, its output axis).
"""

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm


def snconv2d(*args, **kwargs):
    return spectral_norm(nn.Conv2d(*args, **kwargs))


def SNLinear(*args, **kwargs):
    return spectral_norm(nn.Linear(*args, **kwargs))


snconv3x3 = functools.partial(snconv2d, kernel_size=3, padding=1)


class GBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.b1 = nn.BatchNorm2d(ch)
        self.c1 = snconv3x3(ch, ch)
        self.b2 = nn.BatchNorm2d(ch)
        self.c2 = snconv3x3(ch, ch)

    def forward(self, x):
        h = F.interpolate(F.relu(self.b1(x)), scale_factor=2)
        h = self.c2(F.relu(self.b2(self.c1(h))))
        return h + F.interpolate(x, scale_factor=2)


class Generator(nn.Module):
    def __init__(self, z_dim=128, ch=256):
        super().__init__()
        self.z_dim = z_dim
        self.stem = spectral_norm(nn.ConvTranspose2d(z_dim, ch, 4, 1, 0))
        self.blocks = nn.Sequential(GBlock(ch), GBlock(ch), GBlock(ch))
        self.out = nn.Sequential(nn.BatchNorm2d(ch), nn.ReLU(), snconv3x3(ch, 3), nn.Tanh())

    def forward(self, z):
        h = self.stem(z.view(-1, self.z_dim, 1, 1))
        return self.out(self.blocks(h))


class OptimizedDBlock(nn.Module):
    """First block: convolves the image before the first ReLU."""

    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.c1 = snconv3x3(in_ch, out_ch)
        self.c2 = snconv3x3(out_ch, out_ch)
        self.c_sc = snconv2d(in_ch, out_ch, 1, padding=0)

    def forward(self, x):
        h = F.avg_pool2d(self.c2(F.relu(self.c1(x))), 2)
        return h + self.c_sc(F.avg_pool2d(x, 2))


class DBlock(nn.Module):
    def __init__(self, in_ch, out_ch, downsample=False):
        super().__init__()
        self.downsample = downsample
        self.learnable_sc = in_ch != out_ch or downsample
        self.c1 = snconv3x3(in_ch, out_ch)
        self.c2 = snconv3x3(out_ch, out_ch)
        if self.learnable_sc:
            self.c_sc = spectral_norm(nn.Conv2d(in_ch, out_ch, 1))

    def shortcut(self, x):
        if self.learnable_sc:
            x = self.c_sc(x)
            if self.downsample:
                x = F.avg_pool2d(x, 2)
        return x

    def forward(self, x):
        h = self.c2(F.relu(self.c1(F.relu(x))))
        if self.downsample:
            h = F.avg_pool2d(h, 2)
        return h + self.shortcut(x)


class ResNetDiscriminator(nn.Module):
    def __init__(self, ch=128):
        super().__init__()
        self.blocks = nn.Sequential(
            OptimizedDBlock(3, ch),
            DBlock(ch, ch, downsample=True),
            DBlock(ch, ch),
            DBlock(ch, ch),
        )
        self.linear = SNLinear(ch, 1)

    def forward(self, x):
        h = F.relu(self.blocks(x)).sum(dim=(2, 3))  # global sum pooling
        return self.linear(h)


if __name__ == "__main__":
    torch.manual_seed(0)
    G, D = Generator(), ResNetDiscriminator()
    fake = G(torch.randn(4, 128))
    print(fake.shape, D(fake).shape)  # (4, 3, 32, 32) (4, 1)
