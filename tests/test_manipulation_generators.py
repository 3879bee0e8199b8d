"""An image-manipulation generator is called on features of real images and then of its
own output (Lightweight-Manipulation's `netG(noise, ..., region_features, ...)`): it is
no discriminator, whether its class says so (AttnGAN's family's `G_NET`) or only the
name it is called by (`netG`)."""

from __future__ import annotations

from projects import lint_in as lint

PROGRAM = '''
    import torch
    import torch.nn as nn


    class GEN_CLASS(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 16)
            self.bn = nn.BatchNorm1d(16)

        def forward(self, noise, features):
            return self.bn(self.fc(noise + features))


    class D_NET(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 1)

        def forward(self, x):
            return self.fc(x)


    def save_img_results(netG, encoder, noise, imgs):
        fake = netG(noise, encoder(imgs))
        return netG(noise, encoder(fake.detach()))


    encoder = nn.Linear(16, 16)
    encoder.requires_grad_(False)
    encoder.eval()
    netG, netD = GEN_CLASS(), D_NET()
    for imgs in torch.utils.data.DataLoader([]):
        noise = torch.randn(4, 16)
        fake = netG(noise, encoder(imgs))
        loss_d = netD(imgs).mean() - netD(fake.detach()).mean()
        save_img_results(netG, encoder, noise, imgs)
'''


def codes(tmp_path, cls: str, name: str = "netG"):
    program = PROGRAM.replace("GEN_CLASS", cls).replace("netG", name)
    return [(f.code, f.line) for f in lint(tmp_path, {"train.py": program})]


def test_a_g_net_class_is_a_generator(tmp_path):
    assert codes(tmp_path, "G_NET") == []


def test_a_class_called_as_netg_only_is_a_generator(tmp_path):
    assert codes(tmp_path, "Net") == []
