"""DCGAN for 64x64 images, with spectral normalization added to the discriminator.

Planted mistakes (see examples/EXPECTED.md): SN wraps a BatchNorm2d (SN101) and a
LeakyReLU (SN102, which also makes Discriminator() raise KeyError: 'weight'), and the
last conv has no SN (SN201). The batch norm itself is SN301's business.
"""

import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm

NZ = 100  # size of the latent vector
NGF = 64  # generator feature maps
NDF = 64  # discriminator feature maps
NC = 3  # image channels


def weights_init(m):
    """DCGAN init: N(0, 0.02) for convs, N(1, 0.02) for batch-norm scales."""
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    """z (N, NZ, 1, 1) -> image (N, NC, 64, 64). BatchNorm and no SN, as in DCGAN."""

    def __init__(self, nz=NZ, ngf=NGF, nc=NC):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 8),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    """image (N, NC, 64, 64) -> one logit per image."""

    def __init__(self, nc=NC, ndf=NDF):
        super().__init__()
        self.main = nn.Sequential(
            spectral_norm(nn.Conv2d(nc, ndf, 4, 2, 1)),
            nn.LeakyReLU(0.2, inplace=True),
            spectral_norm(nn.Conv2d(ndf, ndf * 2, 4, 2, 1)),
            spectral_norm(nn.BatchNorm2d(ndf * 2)),
            spectral_norm(nn.LeakyReLU(0.2, inplace=True)),
            spectral_norm(nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1)),
            nn.LeakyReLU(0.2, inplace=True),
            spectral_norm(nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1)),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 8, 1, 4, 1, 0),
        )

    def forward(self, x):
        return self.main(x).flatten(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    netG = Generator()
    netG.apply(weights_init)
    netD = Discriminator()
    z = torch.randn(8, NZ, 1, 1)
    print(netD(netG(z)).shape)  # torch.Size([8, 1])
