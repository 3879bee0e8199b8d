"""Relativistic average GAN training for nets.Critic and nets.Generator.

Corrected version of ../batch_coupling_project/train.py: real and generated images go
through the critic in one call on `torch.cat([real, fake])`, split afterwards, in both
updates. With the per-sample norm of nets.py separate calls would be harmless too; one
call is also what keeps a critic that has batch norm from telling the batches apart.
Runs on CPU in a second, from this folder: `python train.py`.
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
        d_real, d_fake = netD(torch.cat([real, fake.detach()])).split([real.size(0), fake.size(0)])
        loss_d = (F.softplus(-(d_real - d_fake.mean())).mean()
                  + F.softplus(d_fake - d_real.mean()).mean())
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()

        # Generator (relativistic): generated images should score above real ones.
        g_real, g_fake = netD(torch.cat([real, fake])).split([real.size(0), fake.size(0)])
        loss_g = F.softplus(-(g_fake.mean() - g_real.mean()))
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        print(f"step {step}: loss_d {loss_d.item():.3f} loss_g {loss_g.item():.3f}")


if __name__ == "__main__":
    train()
