"""Relativistic average GAN training for nets.Critic and nets.Generator.

Planted (see examples/EXPECTED.md): the critic has batch norm (nets.py), and this script
scores real and generated images in separate calls of it, in the critic update and in
the relativistic generator update (SN401, twice). Runs on CPU in a second, from this
folder: `python train.py`.
"""

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from nets import NC, NZ, Critic, Generator

BATCH = 16


def train(steps=4):
    torch.manual_seed(0)
    images = torch.rand(BATCH * steps, NC, 16, 16) * 2 - 1  # stand-in for a dataset
    loader = DataLoader(TensorDataset(images), batch_size=BATCH, shuffle=True)
    netG = Generator()
    netD = Critic()
    opt_g = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for step, (real,) in enumerate(loader):
        z = torch.randn(real.size(0), NZ, 1, 1)
        fake = netG(z)

        # Critic: real images should score above the average generated one.
        d_real = netD(real)
        d_fake = netD(fake.detach())
        loss_d = (F.softplus(-(d_real - d_fake.mean())).mean()
                  + F.softplus(d_fake - d_real.mean()).mean())
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()

        # Generator (relativistic): generated images should score above real ones.
        loss_g = F.softplus(-(netD(fake).mean() - netD(real).mean()))
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        print(f"step {step}: loss_d {loss_d.item():.3f} loss_g {loss_g.item():.3f}")


if __name__ == "__main__":
    train()
