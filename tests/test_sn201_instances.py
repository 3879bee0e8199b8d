"""SN201 judges each instance of a discriminator the program builds, not only the class
built alone with its defaults: few-shot-vid2vid's `define_D` passes the norm that adds
spectral norm (`NLayerDiscriminator(..., norm_layer)`), which the class's default
(`nn.BatchNorm2d`) does not."""

from __future__ import annotations

from projects import lint_in as lint

NETS = '''
    import torch.nn as nn
    from torch.nn.utils.spectral_norm import spectral_norm as sn


    def get_nonspade_norm_layer(opt, norm_type="instance"):
        def add_norm_layer(layer):
            if norm_type.startswith("spectral"):
                layer = sn(layer)
            return nn.Sequential(layer, nn.InstanceNorm2d(layer.out_channels))
        return add_norm_layer


    class NLayerDiscriminator(nn.Module):
        def __init__(self, input_nc, ndf=64, n_layers=3, norm_layer=nn.BatchNorm2d):
            super(NLayerDiscriminator, self).__init__()
            sequence = [[nn.Conv2d(input_nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2, False)]]
            nf = ndf
            for n in range(1, n_layers):
                nf_prev, nf = nf, min(nf * 2, 512)
                sequence += [[norm_layer(nn.Conv2d(nf_prev, nf, 4, 2, 1)), nn.LeakyReLU(0.2, False)]]
            sequence += [[nn.Conv2d(nf, 1, 4, 1, 1)]]
            for n in range(len(sequence)):
                setattr(self, "model" + str(n), nn.Sequential(*sequence[n]))

        def forward(self, x):
            return self.model0(x)


    def define_D(opt, input_nc, ndf, n_layers_D, norm="spectralinstance"):
        norm_layer = get_nonspade_norm_layer(opt, norm_type=norm)
        return NLayerDiscriminator(input_nc, ndf, n_layers_D, norm_layer)
'''


def train(norm: str) -> str:
    return f'''
        import argparse
        import torch
        import torch.nn as nn
        from nets import define_D

        parser = argparse.ArgumentParser()
        parser.add_argument("--norm_D", default="{norm}")
        opt = parser.parse_args()
        netD = define_D(opt, 3, 64, 3, opt.norm_D)
        netG = nn.ConvTranspose2d(8, 3, 4)
        for real, _ in torch.utils.data.DataLoader([]):
            fake = netG(torch.randn(8, 8, 1, 1))
            loss = netD(real).mean() - netD(fake.detach()).mean()
    '''


def test_the_instance_the_training_code_builds_is_judged(tmp_path):
    findings = lint(tmp_path, {"nets.py": NETS, "train.py": train("spectralinstance")})
    assert [(f.code, f.path, f.line) for f in findings] == [("SN201", "nets.py", 17), ("SN201", "nets.py", 22)]
    assert "used as a discriminator by the training code" in findings[0].explanation


def test_an_instance_built_without_spectral_norm_says_nothing(tmp_path):
    findings = lint(tmp_path, {"nets.py": NETS, "train.py": train("instance")})
    assert [f.code for f in findings] == []


# PSGAN: the norm comes from a yacs config the link cannot read; each layer tests it.
PSGAN = '''
    import torch
    import torch.nn as nn
    from torch.nn.utils import spectral_norm as SpectralNorm


    class Discriminator(nn.Module):
        def __init__(self, conv_dim=64, repeat_num=3, norm="SN"):
            super(Discriminator, self).__init__()
            layers = []
            if norm == "SN":
                layers.append(SpectralNorm(nn.Conv2d(3, conv_dim, 4, 2, 1)))
            else:
                layers.append(nn.Conv2d(3, conv_dim, 4, 2, 1))
            curr_dim = conv_dim
            for i in range(1, repeat_num):
                if norm == "SN":
                    layers.append(SpectralNorm(nn.Conv2d(curr_dim, curr_dim * 2, 4, 2, 1)))
                else:
                    layers.append(nn.Conv2d(curr_dim, curr_dim * 2, 4, 2, 1))
                curr_dim = curr_dim * 2
            self.main = nn.Sequential(*layers)
            self.head = LAST

        def forward(self, x):
            return self.head(self.main(x))


    class Solver:
        def __init__(self, config):
            self.norm = config.MODEL.NORM
            self.D = Discriminator(64, 3, self.norm)
            self.G = nn.ConvTranspose2d(8, 3, 4)

        def train(self, loader):
            for real, _ in loader:
                fake = self.G(torch.randn(8, 8, 1, 1))
                loss = self.D(real).mean() - self.D(fake.detach()).mean()
'''


def test_layers_of_the_other_branch_of_one_test_repeated_at_each_layer_are_not_missing_sn(tmp_path):
    code = PSGAN.replace("LAST", 'SpectralNorm(nn.Conv2d(curr_dim, 1, 4)) if norm == "SN" else nn.Conv2d(curr_dim, 1, 4)')
    assert [f.code for f in lint(tmp_path, {"net.py": code})] == []


def test_a_layer_built_whatever_the_test_says_is_missing_sn(tmp_path):
    findings = lint(tmp_path, {"net.py": PSGAN.replace("LAST", "nn.Conv2d(curr_dim, 1, 4)")})
    assert [(f.code, f.line) for f in findings] == [("SN201", 23)]
