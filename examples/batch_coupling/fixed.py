"""WGAN-GP on 16x16 images with a spectrally normalized critic.

Corrected version of buggy.py: the critic's batch norm is replaced by a per-sample
norm, `nn.GroupNorm(1, C)`, as the SN301 fix does. Each score then depends on its own
image only, so the gradient penalty constrains a real per-sample gradient and scoring
real and generated images in separate calls is harmless. Runs on CPU in a second:
`python fixed.py`.
"""

import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm
from torch.utils.data import DataLoader, TensorDataset

NZ = 64  # size of the latent vector
NC = 3  # image channels
NGF = 32  # generator feature maps
NDF = 32  # critic feature maps
BATCH = 16
N_CRITIC = 2  # critic updates per generator update
LAMBDA_GP = 10.0


class Generator(nn.Module):
    """z (N, NZ, 1, 1) -> image (N, NC, 16, 16). Batch norm is fine here."""

    def __init__(self, nz=NZ, ngf=NGF, nc=NC):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
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


class Critic(nn.Module):
    """image (N, NC, 16, 16) -> one score per image."""

    def __init__(self, nc=NC, ndf=NDF):
        super().__init__()
        self.main = nn.Sequential(
            spectral_norm(nn.Conv2d(nc, ndf, 4, 2, 1)),
            nn.LeakyReLU(0.2),
            spectral_norm(nn.Conv2d(ndf, ndf * 2, 4, 2, 1)),
            nn.GroupNorm(1, ndf * 2),
            nn.LeakyReLU(0.2),
            spectral_norm(nn.Conv2d(ndf * 2, 1, 4, 1, 0)),
        )

    def forward(self, x):
        return self.main(x).flatten()


def gradient_penalty(critic, real, fake):
    """WGAN-GP: (||grad of the critic at points between real and fake|| - 1)^2."""
    alpha = torch.rand(real.size(0), 1, 1, 1)
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = critic(x_hat)
    grad, = torch.autograd.grad(outputs=score.sum(), inputs=x_hat, create_graph=True)
    return ((grad.flatten(1).norm(dim=1) - 1) ** 2).mean()


def train(steps=4):
    torch.manual_seed(0)
    images = torch.rand(BATCH * steps, NC, 16, 16) * 2 - 1  # stand-in for a dataset
    loader = DataLoader(TensorDataset(images), batch_size=BATCH, shuffle=True)
    netG = Generator()
    netD = Critic()
    opt_g = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.0, 0.9))
    for i, (real,) in enumerate(loader):
        z = torch.randn(real.size(0), NZ, 1, 1)
        fake = netG(z).detach()
        d_real = netD(real)
        d_fake = netD(fake)
        gp = gradient_penalty(netD, real, fake)
        loss_d = d_fake.mean() - d_real.mean() + LAMBDA_GP * gp
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()

        if (i + 1) % N_CRITIC == 0:
            z = torch.randn(real.size(0), NZ, 1, 1)
            loss_g = -netD(netG(z)).mean()
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()
            print(f"step {i + 1}: loss_d {loss_d.item():.3f} loss_g {loss_g.item():.3f}")


if __name__ == "__main__":
    train()
