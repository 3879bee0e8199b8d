"""Batch coupling: SN301 (batch statistics in a discriminator), SN303 (a gradient penalty
through them) and SN401 (real and generated samples scored in separate forward calls).

Every spelling the issue lists, positive and negative, with exact codes and lines under
the default selection. Discriminators here use plain convs (no SN), so SN1xx/SN201 stay
quiet and the findings are the batch-coupling ones alone.
"""

from __future__ import annotations

import textwrap

import pytest

from snlint.config import Config
from snlint.engine import run


def found(findings):
    return [(f.code, f.line) for f in findings]


def at(findings):
    return [(f.code, f.line, f.column) for f in findings]


# ---------------------------------------------------------------- SN301: direct layers

@pytest.mark.parametrize("layer", [
    "nn.BatchNorm1d(64)",
    "nn.BatchNorm2d(64)",
    "nn.BatchNorm3d(64)",
    "nn.LazyBatchNorm2d()",
    "nn.SyncBatchNorm(64)",
])
def test_batch_statistics_layer_in_a_discriminator(lint, layer):
    findings = lint(f'''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.norm = {layer}
                self.head = nn.Conv2d(64, 1, 4)
    ''')
    assert at(findings) == [("SN301", 8, 21)]
    assert findings[0].symbol == "Discriminator.norm"
    assert findings[0].discriminator.evidence == "name"


@pytest.mark.parametrize("layer", [
    "nn.InstanceNorm2d(64, affine=True)",
    "nn.LayerNorm([64, 8, 8])",
    "nn.GroupNorm(1, 64)",
    "nn.GroupNorm(32, 64)",
])
def test_per_sample_norms_are_not_batch_statistics(lint, layer):
    findings = lint(f'''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.norm = {layer}
                self.head = nn.Conv2d(64, 1, 4)
    ''')
    assert found(findings) == []


def test_batch_norm_in_a_sequential_names_its_index(lint):
    findings = lint('''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(
                    nn.Conv2d(3, 64, 4, 2, 1),
                    nn.BatchNorm2d(64),
                    nn.LeakyReLU(0.2),
                )
    ''')
    assert at(findings) == [("SN301", 9, 13)]
    assert findings[0].symbol == "Discriminator.main.1"


def test_batch_norm_added_to_a_module_list_with_plus_equals(lint):
    # ParallelWaveGAN's discriminator: `self.conv_layers += conv_layer`, ModuleList's extend.
    findings = lint('''
        import torch

        class Discriminator(torch.nn.Module):
            def __init__(self, layers=3, channels=8):
                super().__init__()
                self.conv_layers = torch.nn.ModuleList()
                for i in range(layers - 1):
                    conv_layer = [
                        torch.nn.Conv1d(1 if i == 0 else channels, channels, 3, padding=1),
                        torch.nn.BatchNorm1d(channels),
                    ]
                    self.conv_layers += conv_layer
                self.conv_layers += torch.nn.ModuleList([torch.nn.BatchNorm1d(channels)])
    ''')
    assert at(findings) == [("SN301", 11, 17), ("SN301", 14, 50)]
    assert findings[0].symbol == "Discriminator.conv_layers[*]"


def test_batch_norm_in_a_generator_is_fine(lint):
    findings = lint('''
        import torch.nn as nn

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(
                    nn.ConvTranspose2d(100, 64, 4, 1, 0),
                    nn.BatchNorm2d(64),
                    nn.ReLU(True),
                )
    ''')
    assert found(findings) == []


def test_batch_norm_in_a_block_the_discriminator_builds(lint):
    findings = lint('''
        import torch.nn as nn

        class DBlock(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.conv = nn.Conv2d(cin, cout, 3, 1, 1)
                self.bn = nn.BatchNorm2d(cout)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.b1 = DBlock(3, 64)
                self.b2 = DBlock(64, 128)
    ''')
    # One site, one finding, however many blocks the discriminator builds.
    assert at(findings) == [("SN301", 8, 19)]


def test_one_finding_for_a_block_used_several_times_says_how_many_it_builds(lint):
    findings = lint('''
        import torch.nn as nn

        def block(cin, cout, bn=True):
            layers = [nn.Conv2d(cin, cout, 4, 2, 1)]
            if bn:
                layers.append(nn.BatchNorm2d(cout))
            return layers

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(*block(3, 16, bn=False), *block(16, 32), *block(32, 64),
                                          *block(64, 128))
    ''')
    assert [(f.code, f.line, f.message) for f in findings] == [
        ("SN301", 7, "BatchNorm2d in Discriminator normalizes with the statistics of the current "
                     "batch (3 instances built here)")]


def test_a_block_some_of_whose_layers_an_undecided_if_builds_gives_no_count(lint):
    findings = lint('''
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, c, opt):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 3)
                if opt.bn:
                    self.bn = nn.BatchNorm2d(c)

        class Discriminator(nn.Module):
            def __init__(self, opt):
                super().__init__()
                self.b1 = Block(8, opt)
                self.b2 = Block(8, opt)
    ''')
    assert [(f.code, f.line, f.message) for f in findings] == [
        ("SN301", 9, "BatchNorm2d in Discriminator normalizes with the statistics of the current batch")]


def test_a_block_a_loop_also_builds_gives_no_count(lint):
    # pix2pix's NLayerDiscriminator: `for n in range(1, n_layers)` builds the block, and one
    # more call after the loop; the loop's body is read once, so a count would fall short.
    findings = lint('''
        import torch.nn as nn

        def block(cin, cout):
            return [nn.Conv2d(cin, cout, 4, 2, 1), nn.BatchNorm2d(cout)]

        class Discriminator(nn.Module):
            def __init__(self, n_layers=3):
                super().__init__()
                layers = []
                for n in range(1, n_layers):
                    layers += block(64, 64)
                layers += block(64, 64)
                self.main = nn.Sequential(*layers)
    ''')
    assert [(f.code, f.line, f.message) for f in findings] == [
        ("SN301", 5, "BatchNorm2d in Discriminator normalizes with the statistics of the current batch")]


def test_a_block_shared_with_the_generator_is_reported_once_for_the_discriminator(lint):
    findings = lint('''
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 3, 1, 1)
                self.bn = nn.BatchNorm2d(c)

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block(64)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block(64)
    ''')
    assert found(findings) == [("SN301", 8)]
    assert findings[0].discriminator.cls.endswith(":Discriminator")


# ---------------------------------------------------------------- SN301: F.batch_norm

def test_functional_batch_norm_in_training_mode(lint):
    findings = lint('''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.register_buffer("rm", torch.zeros(64))
                self.register_buffer("rv", torch.ones(64))

            def forward(self, x):
                h = self.conv(x)
                h = F.batch_norm(h, self.rm, self.rv, training=True)
                return h.mean()
    ''')
    assert at(findings) == [("SN301", 15, 13)]


def test_functional_batch_norm_following_the_module_mode(lint):
    findings = lint('''
        import torch.nn as nn
        import torch.nn.functional as F

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)

            def forward(self, x):
                return F.batch_norm(self.conv(x), None, None, training=self.training)
    ''')
    assert found(findings) == [("SN301", 11)]


@pytest.mark.parametrize("call", [
    "F.batch_norm(h, self.rm, self.rv, training=False)",
    "F.batch_norm(h, self.rm, self.rv)",
])
def test_functional_batch_norm_in_eval_mode_is_fine(lint, call):
    findings = lint(f'''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.register_buffer("rm", torch.zeros(64))
                self.register_buffer("rv", torch.ones(64))

            def forward(self, x):
                h = self.conv(x)
                return {call}
    ''')
    assert found(findings) == []


def test_functional_batch_norm_over_a_batch_of_one_is_instance_norm(lint):
    # AdaIN as MUNIT writes it: the batch reshaped to one sample of b * c channels, so
    # each channel of each sample is normalized with its own statistics.
    findings = lint('''
        import torch.nn as nn
        import torch.nn.functional as F

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)

            def forward(self, x):
                h = self.conv(x)
                b, c = h.size(0), h.size(1)
                flat = h.contiguous().view(1, b * c, *h.size()[2:])
                out = F.batch_norm(flat, None, None, None, None, True, 0.1, 1e-5)
                return out.view(b, c, *h.size()[2:])
    ''')
    assert found(findings) == []


def test_functional_batch_norm_in_a_generator_is_fine(lint):
    findings = lint('''
        import torch.nn as nn
        import torch.nn.functional as F

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.ConvTranspose2d(100, 64, 4)

            def forward(self, z):
                return F.batch_norm(self.conv(z), None, None, training=True)
    ''')
    assert found(findings) == []


# ---------------------------------------------------------------- SN301: indirect spellings

def test_norm_layer_default_is_reported_at_the_parameter(lint):
    findings = lint('''
        import torch.nn as nn

        class PatchDiscriminator(nn.Module):
            def __init__(self, ndf=64, norm_layer=nn.BatchNorm2d):
                super().__init__()
                self.conv = nn.Conv2d(3, ndf, 4, 2, 1)
                self.n1 = norm_layer(ndf)
                self.n2 = norm_layer(ndf * 2)
    ''')
    # One finding for the parameter, though it builds two layers.
    assert [(f.code, f.line, f.column, f.end_line, f.end_column) for f in findings] == [
        ("SN301", 5, 32, 5, 57)]


NORM_DEFAULT = '''
    import torch.nn as nn

    class PatchDiscriminator(nn.Module):
        def __init__(self, ndf=64, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.conv = nn.Conv2d(3, ndf, 4, 2, 1)
            self.n1 = norm_layer(ndf)

    netD = PatchDiscriminator(norm_layer=nn.InstanceNorm2d)
'''


def test_norm_layer_default_no_call_uses_is_no_finding(lint):
    # Known by its name only, built by the project with its own norm wherever it is built:
    # the batch-norm default is what no code here trains with.
    assert found(lint(NORM_DEFAULT)) == []


def test_norm_layer_default_stands_when_one_call_leaves_it(lint):
    findings = lint(NORM_DEFAULT + '''
    pretrain_D = PatchDiscriminator(ndf=32)
    ''')
    assert found(findings) == [("SN301", 5)]


def test_norm_layer_default_of_a_class_built_around_it_no_call_uses_is_no_finding(lint):
    # pix2pixHD: MultiscaleDiscriminator hands its own `norm_layer=nn.BatchNorm2d` default
    # to the NLayerDiscriminators it builds; define_D always passes the norm.
    findings = lint('''
        import torch.nn as nn

        class NLayerDiscriminator(nn.Module):
            def __init__(self, nc, norm_layer=nn.BatchNorm2d):
                super().__init__()
                self.conv = nn.Conv2d(nc, 64, 4, 2, 1)
                self.norm = norm_layer(64)

        class MultiscaleDiscriminator(nn.Module):
            def __init__(self, nc, norm_layer=nn.BatchNorm2d, num_D=3):
                super().__init__()
                for i in range(num_D):
                    setattr(self, "layer" + str(i), NLayerDiscriminator(nc, norm_layer))

        def define_D(nc, norm="instance"):
            norm_layer = nn.InstanceNorm2d if norm == "instance" else nn.BatchNorm2d
            return MultiscaleDiscriminator(nc, norm_layer)
    ''')
    assert found(findings) == []


# pix2pixHD with `getIntermFeat`: each scale's layers are set under computed names
# (`setattr(self, "model" + str(n), ...)`), and the multiscale discriminator copies them
# with a computed `getattr` in a loop whose count is not known here. Each copied layer is
# one of its modules, so the batch norm of the instance the training code builds counts.
MULTISCALE_COPIED = '''
    import torch
    import torch.nn as nn

    class NLayerDiscriminator(nn.Module):
        def __init__(self, nc, n_layers):
            super().__init__()
            sequence = [[nn.Conv2d(nc, 64, 4, 2, 1)], [nn.BatchNorm2d(64), nn.LeakyReLU(0.2)],
                        [nn.Conv2d(64, 1, 4)]]
            for n in range(len(sequence)):
                setattr(self, "model" + str(n), nn.Sequential(*sequence[n]))

    class MultiscaleDiscriminator(nn.Module):
        def __init__(self, nc, n_layers, num_D):
            super().__init__()
            self.num_D = num_D
            for i in range(num_D):
                netD = NLayerDiscriminator(nc, n_layers)
                for j in range(n_layers):
                    setattr(self, "scale" + str(i) + "_layer" + str(j), getattr(netD, "model" + str(j)))

        def forward(self, x):
            return [getattr(self, "scale" + str(i) + "_layer0")(x) for i in range(self.num_D)]

    def train(loader, netG, opt_d, num_D):
        netD = MultiscaleDiscriminator(3, 3, num_D)
        for real in loader:
            fake = netG(real)
            pred_fake = netD(fake.detach())
            pred_real = netD(real)
            loss = pred_fake[0].mean() - pred_real[0].mean()
            loss.backward()
            opt_d.step()
'''


def test_layers_copied_by_computed_getattr_are_the_copys_modules(lint):
    findings = lint(MULTISCALE_COPIED)
    assert at(findings) == [("SN301", 8, 52), ("SN401", 29, 21)]
    assert "MultiscaleDiscriminator" in findings[1].message


def test_computed_getattr_of_a_layer_with_no_computed_children_adds_nothing(lint):
    # No name was set by a computed setattr: what `getattr(netD, "model" + str(j))` reads
    # is not known, and no layer is made up for it (the part's own batch norm is the
    # copy's only if the copy holds it).
    findings = lint(MULTISCALE_COPIED.replace(
        'setattr(self, "model" + str(n), nn.Sequential(*sequence[n]))',
        'self.body = nn.Sequential(*sequence[n])'))
    assert found(findings) == []


def test_a_factory_branch_the_project_never_takes_is_no_finding_for_a_class_known_by_name(lint):
    # cycleGAN-PyTorch: PixelDiscriminator is built only in the factory's "pixel" branch,
    # always with the norm the factory is given; its batch-norm default is never used,
    # and the factory run on its own (with its `norm="batch"` default) takes a branch
    # of a key nobody passed.
    findings = lint('''
        import torch.nn as nn

        class PixelDiscriminator(nn.Module):
            def __init__(self, nc, norm_layer=nn.BatchNorm2d):
                super().__init__()
                self.conv = nn.Conv2d(nc, 64, 1)
                self.norm = norm_layer(64)

        def define_D(nc, netD, norm="batch"):
            norm_layer = nn.BatchNorm2d if norm == "batch" else nn.InstanceNorm2d
            if netD == "pixel":
                return PixelDiscriminator(nc, norm_layer=norm_layer)
            raise NotImplementedError(netD)
    ''')
    assert found(findings) == []


def test_functools_partial_of_batch_norm(lint):
    findings = lint('''
        import functools
        import torch.nn as nn

        norm = functools.partial(nn.BatchNorm2d, affine=True)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.norm = norm(64)
    ''')
    assert at(findings) == [("SN301", 11, 21)]


def test_functools_partial_of_instance_norm_is_fine(lint):
    findings = lint('''
        from functools import partial
        import torch.nn as nn

        norm = partial(nn.InstanceNorm2d, affine=True)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.norm = norm(64)
    ''')
    assert found(findings) == []


GET_NORM_LAYER = '''
    import functools
    import torch.nn as nn

    def get_norm_layer(norm_type="instance"):
        if norm_type == "batch":
            norm_layer = functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
        elif norm_type == "instance":
            norm_layer = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
        elif norm_type == "none":
            norm_layer = None
        else:
            raise NotImplementedError("normalization layer [%s] is not found" % norm_type)
        return norm_layer
'''


def test_get_norm_layer_factory_returning_batch_norm(lint):
    findings = lint(GET_NORM_LAYER + '''
    class NLayerDiscriminator(nn.Module):
        def __init__(self, ndf=64):
            super().__init__()
            norm_layer = get_norm_layer("batch")
            self.conv = nn.Conv2d(3, ndf, 4, 2, 1)
            self.norm = norm_layer(ndf)
    ''')
    assert at(findings) == [("SN301", 21, 21)]


def test_get_norm_layer_factory_returning_instance_norm_is_fine(lint):
    findings = lint(GET_NORM_LAYER + '''
    class NLayerDiscriminator(nn.Module):
        def __init__(self, ndf=64):
            super().__init__()
            norm_layer = get_norm_layer("instance")
            self.conv = nn.Conv2d(3, ndf, 4, 2, 1)
            self.norm = norm_layer(ndf)
    ''')
    assert found(findings) == []


def test_get_norm_layer_factory_that_tests_instance_first(lint):
    findings = lint('''
        import torch.nn as nn

        def get_norm_layer(norm_type):
            if norm_type == "instance":
                norm_layer = nn.InstanceNorm2d
            else:
                norm_layer = nn.BatchNorm2d
            return norm_layer

        class NLayerDiscriminator(nn.Module):
            def __init__(self, ndf=64):
                super().__init__()
                self.norm = get_norm_layer("batch")(ndf)
    ''')
    assert at(findings) == [("SN301", 14, 21)]


def test_one_line_helper_returning_batch_norm_reports_the_helper_call(lint):
    findings = lint('''
        import torch.nn as nn

        def bn(c):
            return nn.BatchNorm2d(c)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.norm = bn(64)
    ''')
    # As SN201: a layer built inside a helper is reported at the helper's call site.
    assert at(findings) == [("SN301", 11, 21)]


def test_one_line_helper_used_only_by_the_generator_is_fine(lint):
    findings = lint('''
        import torch.nn as nn

        def bn(c):
            return nn.BatchNorm2d(c)

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = bn(64)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
    ''')
    assert found(findings) == []


BUILDER = '''
    import torch.nn as nn

    def conv_block(cin, cout, bn=True):
        layers = [nn.Conv2d(cin, cout, 4, 2, 1)]
        if bn:
            layers.append(nn.BatchNorm2d(cout))
        layers.append(nn.LeakyReLU(0.2))
        return nn.Sequential(*layers)
'''


def test_builder_with_a_bn_flag(lint):
    findings = lint(BUILDER + '''
    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.b1 = conv_block(3, 64, bn=False)
            self.b2 = conv_block(64, 128)
            self.b3 = conv_block(128, 256)
    ''')
    # At the line that constructs the layer (the builder returns a Sequential holding it,
    # not the layer itself); one finding for b2 and b3.
    assert at(findings) == [("SN301", 7, 23)]
    assert findings[0].symbol == "Discriminator.b2.1"


def test_builder_with_the_bn_flag_off_is_fine(lint):
    findings = lint(BUILDER + '''
    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.b1 = conv_block(3, 64, bn=False)
            self.b2 = conv_block(64, 128, False)
    ''')
    assert found(findings) == []


NORMS = '''
    import torch.nn as nn

    NORMS = {"batch": nn.BatchNorm2d, "instance": nn.InstanceNorm2d, "sync": nn.SyncBatchNorm}
'''


def test_norm_chosen_from_a_dict_by_a_literal_key(lint):
    findings = lint(NORMS + '''
    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.norm = NORMS["batch"](64)
    ''')
    assert at(findings) == [("SN301", 10, 21)]


def test_norm_chosen_from_a_dict_through_a_default_key(lint):
    findings = lint(NORMS + '''
    class Discriminator(nn.Module):
        def __init__(self, norm="sync"):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.norm = NORMS[norm](64)
    ''')
    assert at(findings) == [("SN301", 10, 21)]


def test_per_sample_norm_chosen_from_a_dict_is_fine(lint):
    findings = lint(NORMS + '''
    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.norm = NORMS["instance"](64)
    ''')
    assert found(findings) == []


# ---------------------------------------------------------------- SN301: kept in eval mode

KEPT_IN_EVAL = {
    "eval() on each batch norm": """
                for m in self.modules():
                    if isinstance(m, nn.BatchNorm2d):
                        m.eval()""",
    # `m.train(False)` is `m.eval()`.
    "train(False)": """
                self.bn.train(False)""",
}


def test_a_training_loop_named_train_that_samples_in_eval_mode_keeps_nothing_in_eval(lint):
    # U-GAT-IT: `UGATIT.train` is a plain object's training loop; its sampling block puts
    # the discriminators in eval mode and back. Not a train() override: the
    # discriminator still trains, and its 1x1 conv without SN is reported.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self, ndf=64):
                super().__init__()
                self.conv = nn.utils.spectral_norm(nn.Conv2d(3, ndf, 4))
                self.conv1x1 = nn.Conv2d(ndf, ndf, kernel_size=1)
                self.out = nn.utils.spectral_norm(nn.Conv2d(ndf, 1, 4))

            def forward(self, x):
                return self.out(self.conv1x1(self.conv(x)))


        class UGATIT(object):
            def __init__(self, args):
                self.args = args

            def build_model(self):
                self.genA2B = nn.ConvTranspose2d(3, 3, 3)
                self.disGA = Discriminator(ndf=64)
                self.D_optim = torch.optim.Adam(self.disGA.parameters())

            def train(self):
                self.genA2B.train(), self.disGA.train()
                for step in range(1, self.args.iteration + 1):
                    real_A, real_B = next(trainA_iter), next(trainB_iter)
                    fake_A2B = self.genA2B(real_A)
                    D_loss = (self.disGA(fake_A2B.detach()) - self.disGA(real_B)).mean()
                    D_loss.backward()
                    self.D_optim.step()
                    if step % 100 == 0:
                        self.genA2B.eval(), self.disGA.eval()
                        self.genA2B.train(), self.disGA.train()


        gan = UGATIT(args)
        gan.build_model()
        gan.train()
    ''')
    assert found(findings) == [("SN201", 10)]


@pytest.mark.parametrize("keeps", list(KEPT_IN_EVAL))
def test_batch_norm_kept_in_eval_by_a_train_override_is_fine(lint, keeps):
    findings = lint('''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)

            def train(self, mode=True):
                super().train(mode)''' + KEPT_IN_EVAL[keeps] + '''
                return self
    ''')
    assert found(findings) == []


def test_a_train_override_that_keeps_other_layers_in_eval_does_not_clear_batch_norm(lint):
    findings = lint('''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.drop = nn.Dropout(0.3)
                self.bn = nn.BatchNorm2d(64)

            def train(self, mode=True):
                super().train(mode)
                for m in self.modules():
                    if isinstance(m, nn.Dropout):
                        m.eval()
                return self
    ''')
    assert found(findings) == [("SN301", 9)]


def test_frozen_feature_extractor_kept_in_eval_in_init_is_fine(lint):
    findings = lint('''
        import torch.nn as nn

        class Features(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 3)
                self.bn = nn.BatchNorm2d(64)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = Features()
                self.features.eval()
                self.features.requires_grad_(False)
                self.head = nn.Conv2d(64, 1, 4)
    ''')
    assert found(findings) == []


def test_eval_in_training_code_for_validation_does_not_clear_batch_norm(lint):
    findings = lint('''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)

        def validate(netD, images):
            netD.eval()
            return netD(images)
    ''')
    assert found(findings) == [("SN301", 8)]


EVAL_SCRIPT_D = '''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)

        G = nn.Conv2d(3, 3, 1)
        netD = Discriminator()
        bce = nn.BCEWithLogitsLoss()
'''


@pytest.mark.parametrize("mode", ["netD.eval()", "netD.train(False)"])
def test_separate_calls_of_a_discriminator_left_in_eval_mode_are_not_paired(lint, mode):
    # An evaluation script: in eval mode the batch norm uses its running statistics, the
    # same for both batches.
    findings = lint(EVAL_SCRIPT_D + f'''
        {mode}
        for real, lr in loader:
            fake = G(lr)
            print(bce(netD(real), real) + bce(netD(fake), fake))
    ''')
    assert found(findings) == [("SN301", 9)]


STEP = '''
            fake = G(lr)
            loss = bce(netD(real), real) + bce(netD(fake.detach()), fake)
            loss.backward()'''


@pytest.mark.parametrize("code, line", [
    # Back in training mode before the calls.
    ("netD.eval()\nnetD.train()\nfor real, lr in loader:" + STEP, 18),
    # Back in training mode at the end of each epoch: every epoch after the first trains
    # with batch statistics.
    ("netD.eval()\nfor epoch in range(9):\n    for real, lr in loader:" + STEP.replace("\n", "\n    ")
     + "\n    netD.train()", 18),
    # Left in eval mode in one branch only.
    ("if evaluate:\n    netD.eval()\nfor real, lr in loader:" + STEP, 18),
    ("if train_only:\n    pass\nelse:\n    netD.eval()\nfor real, lr in loader:" + STEP, 20),
])
def test_eval_mode_that_may_not_last_until_the_calls_still_pairs_them(lint, code, line):
    findings = lint(EVAL_SCRIPT_D + textwrap.indent(textwrap.dedent(code), " " * 8))
    assert found(findings) == [("SN301", 9), ("SN401", line)]


# ---------------------------------------------------------------- discriminator roles

def test_discriminator_found_from_training_code_alone(lint):
    findings = lint('''
        import torch
        import torch.nn as nn

        class Net1(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = nn.ConvTranspose2d(100, 3, 4)
                self.bn = nn.BatchNorm2d(3)

        class Net2(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)
                self.head = nn.Conv2d(64, 1, 4)

        def main(loader):
            G = Net1()
            model = Net2()
            for images, _ in loader:
                z = torch.randn(images.size(0), 100, 1, 1)
                out_real = model(images)
                out_fake = model(G(z).detach())
    ''')
    # Net2 is called on real images and on generator output in one update; Net1, the
    # generator, keeps its batch norm.
    assert found(findings) == [("SN301", 15), ("SN401", 23)]
    ref = findings[0].discriminator
    assert (ref.cls, ref.evidence) == ("example.py:Net2", "training code")
    assert "main()" in findings[0].explanation


def test_discriminator_found_from_one_concatenated_call(lint):
    findings = lint('''
        import torch
        import torch.nn as nn

        class Net1(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = nn.ConvTranspose2d(100, 3, 4)
                self.bn = nn.BatchNorm2d(3)

        class Net2(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)
                self.head = nn.Conv2d(64, 1, 4)

        def main(loader):
            G = Net1()
            model = Net2()
            for images, _ in loader:
                z = torch.randn(images.size(0), 100, 1, 1)
                out = model(torch.cat([images, G(z).detach()]))
    ''')
    # Net2 is called on real images and generator output in one update (one call, so no
    # SN401); Net1, the generator, keeps its batch norm.
    assert found(findings) == [("SN301", 15)]
    ref = findings[0].discriminator
    assert (ref.cls, ref.evidence) == ("example.py:Net2", "training code")
    assert "main()" in findings[0].explanation


def test_discriminator_found_from_a_gradient_penalty(lint):
    findings = lint('''
        import torch
        import torch.nn as nn

        class Scorer(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)
                self.head = nn.Conv2d(64, 1, 4)

            def forward(self, x):
                return self.head(self.bn(self.conv(x))).flatten()

        def r1_penalty(images):
            scorer = Scorer()
            images.requires_grad_(True)
            out = scorer(images)
            grad, = torch.autograd.grad(out.sum(), images, create_graph=True)
            return grad.pow(2).flatten(1).sum(1).mean()
    ''')
    assert found(findings) == [("SN301", 9), ("SN303", 18)]
    assert {f.discriminator.evidence for f in findings} == {"training code"}
    assert "gradient penalty" in findings[0].explanation


def test_discriminator_from_configuration(lint):
    findings = lint('''
        import torch.nn as nn

        class Scorer(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)
    ''', discriminators=["example.py:Scorer"])
    assert found(findings) == [("SN301", 8)]
    assert findings[0].discriminator.evidence == "configuration"


def test_not_discriminators_configuration_wins_over_the_name(lint):
    findings = lint('''
        import torch.nn as nn

        class DiscriminatorFeatures(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)
    ''', not_discriminators=["example.py:DiscriminatorFeatures"])
    assert found(findings) == []


def test_a_class_with_no_discriminator_evidence_is_not_one(lint):
    findings = lint('''
        import torch.nn as nn

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)
    ''')
    assert found(findings) == []


PARAMETER_LOOP = '''
    import torch
    import torch.nn as nn

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.bn = nn.BatchNorm2d(64)

    def train_step(netD, netG, real, z):
        d_real = netD(real)
        d_fake = netD(netG(z).detach())
        return d_fake.mean() - d_real.mean()
'''


def test_netD_parameter_with_one_candidate_class_says_what_was_assumed(lint):
    findings = lint(PARAMETER_LOOP)
    assert found(findings) == [("SN301", 9), ("SN401", 12)]
    assert "assumed to be Discriminator" in findings[1].explanation
    assert "only discriminator class" in findings[1].explanation


def test_netD_parameter_called_through_forward_is_the_same_call(lint):
    # pix2pixHD and other older code write `netD.forward(x)`: what `netD(x)` runs.
    findings = lint(PARAMETER_LOOP.replace("netD(real)", "netD.forward(real)")
                    .replace("netD(netG(z).detach())", "netD.forward(netG.forward(z).detach())"))
    assert at(findings) == [("SN301", 9, 19), ("SN401", 12, 14)]
    assert "generated samples (returned by netG at line 13)" in findings[1].explanation


def test_a_torch_module_called_through_forward_is_the_same_call(lint):
    # A discriminator that is an `nn.Sequential` of the script, called `netD.forward(x)`.
    findings = lint('''
        import torch
        import torch.nn as nn

        netG = nn.Sequential(nn.Linear(8, 48), nn.Tanh())
        netD = nn.Sequential(nn.Linear(48, 16), nn.BatchNorm1d(16), nn.Linear(16, 1))
        for real, _ in torch.utils.data.DataLoader([]):
            fake = netG.forward(torch.randn(real.size(0), 8))
            d_real = netD.forward(real)
            d_fake = netD.forward(fake.detach())
            (d_fake.mean() - d_real.mean()).backward()
    ''')
    assert at(findings) == [("SN301", 6, 41), ("SN401", 9, 14)]
    assert "generated samples (returned by netG at line 8)" in findings[1].explanation


# Shift-Net: the only discriminator class takes its norm as an argument (default batch
# norm), and the project's own factory passes one from its options.
NORM_PARAMETER = PARAMETER_LOOP.replace("def __init__(self):", "def __init__(self, norm_layer=nn.BatchNorm2d):") \
    .replace("self.bn = nn.BatchNorm2d(64)", "self.bn = norm_layer(64)")


def test_an_assumed_discriminator_is_the_class_built_with_its_defaults(lint):
    findings = lint(NORM_PARAMETER)
    assert found(findings) == [("SN301", 6), ("SN401", 12)]
    assert "assumed to be Discriminator" in findings[1].explanation


def test_no_assumption_where_the_project_builds_the_class_with_its_own_norm(lint):
    # What the factory passes is what trains; the class's default is never built.
    findings = lint(NORM_PARAMETER + '''
    def define_D(norm_layer):
        return Discriminator(norm_layer=norm_layer)
    ''')
    assert found(findings) == []


def test_an_assumption_stands_where_the_project_builds_the_class_with_other_arguments(lint):
    findings = lint(NORM_PARAMETER.replace("norm_layer=nn.BatchNorm2d", "ndf=64, norm_layer=nn.BatchNorm2d") + '''
    def define_D(ndf):
        return Discriminator(ndf)
    ''')
    assert found(findings) == [("SN301", 6), ("SN401", 12)]


def test_a_meter_bound_to_a_d_name_is_no_second_candidate(lint):
    # SRGAN-PyTorch: `d_losses = AverageMeter(...)` is a meter, not a discriminator.
    findings = lint(PARAMETER_LOOP + '''

    class AverageMeter(object):
        def __init__(self, name):
            self.name = name

    d_losses = AverageMeter("D loss")
    ''')
    assert found(findings) == [("SN301", 9), ("SN401", 12)]
    assert "assumed to be Discriminator" in findings[1].explanation


def test_netD_parameter_with_two_candidate_classes_assumes_nothing(lint):
    findings = lint(PARAMETER_LOOP + '''
    class PatchDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
    ''')
    assert found(findings) == [("SN301", 9)]


# ---------------------------------------------------------------- SN303

CRITIC = '''
    import torch
    import torch.nn as nn

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.norm = {norm}
            self.head = nn.Conv2d(64, 1, 4)

        def forward(self, x):
            return self.head(self.norm(self.conv(x))).flatten()

    def gradient_penalty(critic, real, fake):
        alpha = torch.rand(real.size(0), 1, 1, 1)
        x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        score = critic(x_hat)
        grad, = torch.autograd.grad(outputs=score, inputs=x_hat,
                                    grad_outputs=torch.ones_like(score), create_graph={create_graph})
        return ((grad.flatten(1).norm(dim=1) - 1) ** 2).mean()

    def train_step(real, z, netG):
        netD = Critic()
        fake = netG(z).detach()
        loss = netD(torch.cat([real, fake])).mean()
        return loss + 10 * gradient_penalty(netD, real, fake)
'''


def test_gradient_penalty_through_batch_norm(lint):
    findings = lint(CRITIC.format(norm="nn.BatchNorm2d(64)", create_graph="True"))
    assert at(findings) == [("SN301", 9, 21), ("SN303", 18, 13)]
    assert "line 19" in findings[1].explanation
    assert findings[1].discriminator.cls == "example.py:Critic"


def test_gradient_penalty_through_a_per_sample_norm_is_fine(lint):
    findings = lint(CRITIC.format(norm="nn.LayerNorm([64, 8, 8])", create_graph="True"))
    assert found(findings) == []


def test_a_jacobian_taken_with_respect_to_a_modules_output_is_no_penalty_through_it(lint):
    # first-order-model: the keypoint detector's output is warped and differentiated with
    # respect to itself (an equivariance Jacobian); nothing is differentiated through the
    # detector's input, so it is no critic.
    findings = lint('''
        import torch
        import torch.nn as nn
        from torch.autograd import grad

        class KPDetector(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 10, 3)
                self.norm = nn.BatchNorm2d(10)

            def forward(self, x):
                return {"value": self.norm(self.conv(x))}

        class Transform:
            def __init__(self, theta):
                self.theta = theta

            def warp_coordinates(self, coordinates):
                return torch.matmul(self.theta, coordinates.unsqueeze(-1)).squeeze(-1)

            def jacobian(self, coordinates):
                new_coordinates = self.warp_coordinates(coordinates)
                grad_x = grad(new_coordinates[..., 0].sum(), coordinates, create_graph=True)
                return grad_x[0]

        class MultiScaleDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 1, 3)

            def forward(self, x):
                return self.conv(x)

        class GeneratorFullModel(nn.Module):
            def __init__(self, kp_extractor, discriminator):
                super().__init__()
                self.kp_extractor = kp_extractor
                self.discriminator = discriminator

            def forward(self, x):
                transform = Transform(torch.eye(2))
                transformed_kp = self.kp_extractor(x["driving"])
                score = self.discriminator(x["driving"])
                return score.mean() + transform.jacobian(transformed_kp["value"]).mean()

        model = GeneratorFullModel(KPDetector(), MultiScaleDiscriminator())
        for x in torch.utils.data.DataLoader([]):
            model(x)
    ''')
    assert found(findings) == []


def test_a_wrapper_named_after_the_discriminator_it_calls_is_not_one(lint):
    # first-order-model's DiscriminatorFullModel holds the generator (batch norm) and calls
    # self.discriminator in its forward: a loss wrapper, not a discriminator.
    findings = lint('''
        import torch.nn as nn

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3)
                self.norm = nn.BatchNorm2d(3)

            def forward(self, x):
                return self.norm(self.conv(x))

        class MultiScaleDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 1, 3)
                self.norm = nn.InstanceNorm2d(1)

            def forward(self, x):
                return self.norm(self.conv(x))

        class DiscriminatorFullModel(nn.Module):
            def __init__(self, generator, discriminator):
                super().__init__()
                self.generator = generator
                self.discriminator = discriminator

            def forward(self, x):
                return self.discriminator(x) - self.discriminator(self.generator(x).detach())

        full = DiscriminatorFullModel(Generator(), MultiScaleDiscriminator())
    ''')
    assert found(findings) == []


def test_autograd_grad_without_create_graph_is_not_a_penalty(lint):
    findings = lint(CRITIC.format(norm="nn.BatchNorm2d(64)", create_graph="False"))
    assert found(findings) == [("SN301", 9)]


def test_gradient_penalty_through_a_parameter_says_what_was_assumed(lint):
    findings = lint('''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm2d(64)

        def d_step(netD, real):
            real.requires_grad_(True)
            d_real = netD(real)
            grad, = torch.autograd.grad(d_real.sum(), real, create_graph=True)
            return grad.pow(2).sum()
    ''')
    assert found(findings) == [("SN301", 8), ("SN303", 12)]
    assert "assumed to be Discriminator" in findings[1].explanation


def test_r1_penalty_on_real_images_through_batch_norm(lint):
    findings = lint('''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)

        def d_step(netD, real):
            real.requires_grad_(True)
            d_real = netD(real)
            grad, = torch.autograd.grad(d_real.sum(), real, create_graph=True)
            return grad.pow(2).sum()
    ''')
    assert found(findings) == [("SN301", 9), ("SN303", 13)]


# ---------------------------------------------------------------- SN401

DISCRIMINATOR = '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.norm = nn.BatchNorm2d(64)
            self.head = nn.Conv2d(64, 1, 4)

        def forward(self, x):
            return self.head(self.norm(self.conv(x))).flatten()

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(100, 3, 4)

        def forward(self, z):
            return self.up(z)
'''
# DISCRIMINATOR ends on line 22; training code starts on line 23.


def test_real_and_fake_in_consecutive_statements(lint):
    findings = lint(DISCRIMINATOR + '''
    def train(loader):
        netD, netG = Discriminator(), Generator()
        for real, _ in loader:
            fake = netG(torch.randn(real.size(0), 100, 1, 1))
            d_real = netD(real)
            d_fake = netD(fake.detach())
            loss_d = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean()
    ''')
    assert at(findings) == [("SN301", 10, 21), ("SN401", 28, 18)]
    assert "line 29" in findings[1].explanation
    assert findings[1].symbol == "train"
    assert findings[1].discriminator.cls == "example.py:Discriminator"


def test_a_penalty_on_the_real_score_leaves_it_the_real_call(lint):
    # SinGAN: the zero-centred penalty differentiates `D(x_in)`, whose output is also the
    # real batch's loss: that call is the real side of the update's pair, and SN303's.
    findings = lint(DISCRIMINATOR + '''
    def d_step(netD, netG, x_in, z):
        x_in.requires_grad_()
        d_fake_logit = netD(netG(z).detach())
        d_real_logit = netD(x_in)
        d_real = F.softplus(-d_real_logit).mean()
        d_fake = F.softplus(d_fake_logit).mean()
        grad, = torch.autograd.grad(d_real_logit.sum(), x_in, create_graph=True)
        return d_real + d_fake + grad.pow(2).sum()
    ''')
    assert found(findings) == [("SN301", 10), ("SN401", 26), ("SN303", 27)]


def test_a_penalty_call_beside_the_real_call_is_not_paired(lint):
    # DRAGAN: the penalty scores perturbed real samples in a call of its own; the real
    # batch's own call is the one paired with the generated batch's.
    findings = lint(DISCRIMINATOR + '''
    def d_step(netD, netG, real, z):
        d_real = netD(real)
        d_fake = netD(netG(z).detach())
        perturbed = (real + 0.5 * real.std() * torch.rand_like(real)).requires_grad_()
        grad, = torch.autograd.grad(netD(perturbed).sum(), perturbed, create_graph=True)
        return d_fake.mean() - d_real.mean() + grad.pow(2).sum()
    ''')
    assert found(findings) == [("SN301", 10), ("SN401", 25), ("SN303", 28)]


def test_a_script_trains_the_model_its_global_holds_when_the_step_runs(lint):
    # machine-learning-book: `d_train` reads the global `disc_model`, which the script
    # binds to another critic after its training loop.
    findings = lint(DISCRIMINATOR + '''
    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)

    gen_model = Generator()
    disc_model = Discriminator()

    def d_train(x):
        d_real = disc_model(x)
        d_fake = disc_model(gen_model(torch.randn(8, 100, 1, 1)))
        return d_fake.mean() - d_real.mean()

    for x, _ in loader:
        d_train(x)

    disc_model = Critic()
    ''')
    assert found(findings) == [("SN301", 10), ("SN401", 33)]


def test_real_and_fake_in_one_expression(lint):
    findings = lint(DISCRIMINATOR + '''
    def generator_step(netD, netG, real, z):
        fake = netG(z)
        loss_g = netD(fake).mean() - netD(real).mean()
        return loss_g
    ''')
    assert at(findings) == [("SN301", 10, 21), ("SN401", 26, 14)]


def test_relativistic_loss_under_a_unary_minus(lint):
    findings = lint(DISCRIMINATOR + '''
    def generator_step(netD, netG, real, z):
        fake = netG(z)
        loss_g = F.softplus(-(netD(fake).mean() - netD(real).mean()))
        return loss_g
    ''')
    assert at(findings) == [("SN301", 10, 21), ("SN401", 26, 27)]


def test_calls_through_a_local_helper_that_wraps_the_forward(lint):
    findings = lint(DISCRIMINATOR + '''
    def train(loader):
        netD, netG = Discriminator(), Generator()

        def run_D(x):
            return netD(x).view(-1)

        for real, _ in loader:
            fake = netG(torch.randn(real.size(0), 100, 1, 1)).detach()
            d_real = run_D(real)
            d_fake = run_D(fake)
    ''')
    # The forward call is one line for both; the helper's call sites tell them apart.
    assert found(findings) == [("SN301", 10), ("SN401", 32)]
    assert "line 33" in findings[1].explanation


def test_calls_inside_a_small_helper_that_scores_both(lint):
    findings = lint(DISCRIMINATOR + '''
    def train_d(netD, real, fake):
        d_real = netD(real)
        d_fake = netD(fake)
        return F.softplus(-d_real).mean() + F.softplus(d_fake).mean()

    def train(loader):
        netD, netG = Discriminator(), Generator()
        for real, _ in loader:
            fake = netG(torch.randn(real.size(0), 100, 1, 1)).detach()
            loss = train_d(netD, real, fake)
    ''')
    assert found(findings) == [("SN301", 10), ("SN401", 25)]


def test_methods_of_a_trainer_class(lint):
    findings = lint(DISCRIMINATOR + '''
    class Trainer:
        def __init__(self):
            self.netD = Discriminator()
            self.netG = Generator()

        def d_step(self, real, z):
            fake = self.netG(z).detach()
            d_real = self.netD(real)
            d_fake = self.netD(fake)
            return d_fake.mean() - d_real.mean()
    ''')
    assert at(findings) == [("SN301", 10, 21), ("SN401", 31, 18)]
    assert findings[1].symbol == "d_step"


def test_training_function_run_from_the_main_block_is_named(lint):
    findings = lint(DISCRIMINATOR + '''
    def train(loader):
        netD, netG = Discriminator(), Generator()
        for real, _ in loader:
            fake = netG(torch.randn(real.size(0), 100, 1, 1))
            d_real = netD(real)
            d_fake = netD(fake.detach())

    if __name__ == "__main__":
        train([])
    ''')
    assert at(findings) == [("SN301", 10, 21), ("SN401", 28, 18)]
    assert findings[1].symbol == "train"
    assert "train()" in findings[1].explanation and "<module>" not in findings[1].explanation


def test_trainer_holding_a_critic_from_another_module(tmp_path):
    write(tmp_path, {
        "models/__init__.py": "",
        "models/critic.py": '''
            import torch.nn as nn

            class Critic(nn.Module):
                def __init__(self, ch=64):
                    super().__init__()
                    self.bn = nn.BatchNorm2d(ch)
        ''',
        "trainer.py": '''
            import models.critic

            class Trainer:
                def __init__(self, G):
                    self.D = models.critic.Critic(ch=32)
                    self.G = G

                def step(self, real, z):
                    fake = self.G(z).detach()
                    return self.D(fake).mean() - self.D(real).mean()
        ''',
    })
    rows, findings = project_rows(tmp_path)
    assert rows == [("models/critic.py", "SN301", 7, 19), ("trainer.py", "SN401", 11, 16)]
    assert "line 11" in findings[1].explanation


def test_annotated_parameter_names_the_class_among_several_candidates(lint):
    findings = lint('''
        import torch.nn as nn

        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm2d(64)

        class PatchDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.gn = nn.GroupNorm(1, 64)

        def d_step(netD: Critic, real, fake):
            d_real = netD(real)
            d_fake = netD(fake)
            return d_fake.mean() - d_real.mean()
    ''')
    assert found(findings) == [("SN301", 7), ("SN401", 15)]


def test_one_concatenated_call_split_afterwards_is_fine(lint):
    findings = lint(DISCRIMINATOR + '''
    def train(loader):
        netD, netG = Discriminator(), Generator()
        for real, _ in loader:
            fake = netG(torch.randn(real.size(0), 100, 1, 1)).detach()
            d_real, d_fake = netD(torch.cat([real, fake])).split([real.size(0), fake.size(0)])
            loss_d = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean()
    ''')
    assert found(findings) == [("SN301", 10)]


def test_one_concatenated_call_chunked_is_fine(lint):
    findings = lint(DISCRIMINATOR + '''
    def d_step(netD, netG, real, z):
        fake = netG(z).detach()
        d_real, d_fake = netD(torch.cat((real, fake), dim=0)).chunk(2)
        return d_fake.mean() - d_real.mean()
    ''')
    assert found(findings) == [("SN301", 10)]


def test_generator_step_with_a_single_call_is_fine(lint):
    findings = lint(DISCRIMINATOR + '''
    def g_step(netD, netG, z):
        fake = netG(z)
        return -netD(fake).mean()
    ''')
    assert found(findings) == [("SN301", 10)]


def test_separate_calls_without_batch_statistics_are_harmless(lint):
    findings = lint(DISCRIMINATOR.replace("nn.BatchNorm2d(64)", "nn.GroupNorm(1, 64)") + '''
    def train(loader):
        netD, netG = Discriminator(), Generator()
        for real, _ in loader:
            fake = netG(torch.randn(real.size(0), 100, 1, 1))
            d_real = netD(real)
            d_fake = netD(fake.detach())
    ''')
    assert found(findings) == []


def test_minibatch_stddev_alone_does_not_make_separate_calls_a_mistake(lint):
    findings = lint('''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(4, 64, 4, 2, 1)

            def forward(self, x):
                std = x.std(dim=0, keepdim=True).mean().expand(x.size(0), 1, *x.shape[2:])
                return self.conv(torch.cat([x, std], dim=1)).mean()

        def d_step(netD, netG, real, z):
            d_real = netD(real)
            d_fake = netD(netG(z).detach())
            return d_fake.mean() - d_real.mean()
    ''')
    assert found(findings) == []


def test_real_and_fake_in_separate_updates_are_separate_calls_by_design(lint):
    findings = lint(DISCRIMINATOR + '''
    def d_real_step(netD, real):
        return -netD(real).mean()

    def d_fake_step(netD, netG, z):
        return netD(netG(z).detach()).mean()
    ''')
    # Each function scores one kind only; no one update scores both apart.
    assert found(findings) == [("SN301", 10)]


# ---------------------------------------------------------------- two files

NETS = '''
    import torch.nn as nn

    class Critic(nn.Module):
        def __init__(self, ndf=64, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.conv = nn.Conv2d(3, ndf, 4, 2, 1)
            self.norm = norm_layer(ndf)
            self.head = nn.Conv2d(ndf, 1, 4)

        def forward(self, x):
            return self.head(self.norm(self.conv(x))).flatten()

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(100, 3, 4)
            self.bn = nn.BatchNorm2d(3)

        def forward(self, z):
            return self.bn(self.up(z))
'''

TRAIN = '''
    import torch
    from nets import Critic, Generator

    def train(loader):
        netD = Critic()
        netG = Generator()
        for real, _ in loader:
            z = torch.randn(real.size(0), 100, 1, 1)
            fake = netG(z)
            d_real = netD(real)
            d_fake = netD(fake.detach())
            loss_g = -(netD(fake).mean())

    if __name__ == "__main__":
        train([])
'''


def write(root, files: dict[str, str]) -> None:
    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code), encoding="utf-8")


def project_rows(root):
    result = run([str(root)], Config(root=root, graph=False))
    return [(f.path.replace(str(root), "").lstrip("/"), f.code, f.line, f.column)
            for f in result.findings], result.findings


def test_two_file_project_training_script_imports_the_critic(tmp_path):
    write(tmp_path, {"nets.py": NETS, "train.py": TRAIN})
    rows, findings = project_rows(tmp_path)
    assert rows == [("nets.py", "SN301", 5, 32), ("train.py", "SN401", 11, 18)]
    assert "line 12" in findings[1].explanation
    assert findings[1].discriminator.cls.endswith("/nets.py:Critic")


def test_two_file_project_with_a_concatenated_call_reports_only_the_batch_norm(tmp_path):
    write(tmp_path, {"nets.py": NETS, "train.py": TRAIN.replace(
        "d_real = netD(real)\n            d_fake = netD(fake.detach())",
        "d_real, d_fake = netD(torch.cat([real, fake.detach()])).chunk(2)")})
    rows, _ = project_rows(tmp_path)
    assert rows == [("nets.py", "SN301", 5, 32)]


def test_two_file_project_where_the_critic_is_found_from_training_code_only(tmp_path):
    write(tmp_path, {
        "models/__init__.py": "",
        "models/scorer.py": '''
            import torch.nn as nn

            class Scorer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                    self.bn = nn.BatchNorm2d(64)
        ''',
        "train.py": '''
            import torch
            from models import scorer

            def fit(loader, G):
                model = scorer.Scorer()
                for images, _ in loader:
                    s_real = model(images)
                    s_fake = model(G(torch.randn(8, 100)).detach())
        ''',
    })
    rows, findings = project_rows(tmp_path)
    assert rows == [("models/scorer.py", "SN301", 8, 19), ("train.py", "SN401", 8, 18)]
    assert findings[0].discriminator.evidence == "training code"


def test_perceptual_network_called_on_real_and_fake_is_not_a_discriminator(lint):
    findings = lint('''
        import torch
        import torch.nn as nn

        class VGGFeatures(nn.Module):
            def __init__(self):
                super().__init__()
                self.f = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 3, 3)

        def train(loader):
            vgg, G = VGGFeatures(), Generator()
            for real, _ in loader:
                fake = G(torch.randn(2, 3, 8, 8))
                loss = (vgg(fake) - vgg(real)).abs().mean()
    ''')
    assert findings == []


MINIBATCH_STD = '''
    import torch
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm

    class MinibatchStd(nn.Module):
        def forward(self, x):
            y = torch.std(x, dim=0).mean()
            return torch.cat([x, y.expand(x.size(0), 1, *x.shape[2:])], dim=1)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.mbstd = MinibatchStd()
            self.conv = spectral_norm(nn.Conv2d(4, 8, 3))

        def forward(self, img):
            return self.conv(self.mbstd(img)).mean(dim=(1, 2, 3))
'''


def test_sn302_minibatch_stddev_block_when_selected(lint):
    findings = lint(MINIBATCH_STD, select=["SN302"])
    assert [(f.code, f.line, f.column) for f in findings] == [("SN302", 8, 13)]
    assert findings[0].symbol == "MinibatchStd.forward"



def test_sn302_in_a_container_subclass_built_from_named_layers(lint):
    # StyleGAN's discriminator top: (name, layer) pairs collected in a list, then
    # `super().__init__(OrderedDict(layers))`; its minibatch stddev is the discriminator's.
    findings = lint('''
        from collections import OrderedDict
        import torch.nn as nn

        class Stddev(nn.Module):
            def forward(self, x):
                y = x.reshape(4, -1, *x.shape[1:])
                y = (y - y.mean(0, keepdim=True)).pow(2).mean(0).sqrt().mean()
                return x + y

        class Top(nn.Sequential):
            def __init__(self, ch):
                layers = []
                layers.append(('stddev', Stddev()))
                layers.append(('conv', nn.Conv2d(ch, 1, 4)))
                super().__init__(OrderedDict(layers))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.top = Top(8)

            def forward(self, x):
                return self.top(x)
    ''', select=["SN302"])
    assert [(f.code, f.line, f.column) for f in findings] == [("SN302", 8, 13)]
    assert findings[0].symbol == "Stddev.forward"

def test_sn302_through_a_lambda_that_forwards_its_keywords(lint):
    # PGGAN's minibatch stddev: `lambda x, **kwargs: torch.mean(..., **kwargs)` called with dim=0.
    findings = lint('''
        import torch
        import torch.nn as nn

        class MinibatchStd(nn.Module):
            def __init__(self):
                super().__init__()
                self.std = lambda x, *rest, **kw: torch.sqrt(torch.mean(x ** 2, **kw))

            def forward(self, x):
                return torch.cat([x, self.std(x, dim=0, keepdim=True).expand_as(x)], 1)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.mbstd = MinibatchStd()
                self.conv = nn.Conv2d(6, 1, 3)

            def forward(self, x):
                return self.conv(self.mbstd(x))
    ''', select=["SN302"])
    assert [(f.code, f.line, f.column) for f in findings] == [("SN302", 8, 54)]
    assert findings[0].message.startswith("torch.mean(dim=0) in MinibatchStd.forward reduces over the batch")


def test_sn302_once_for_a_reduction_nested_in_another(lint):
    # PGGAN's `adjusted_std`: a variance written as two means over the batch, one mistake.
    findings = lint('''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(6, 1, 3)

            def forward(self, x):
                std = torch.sqrt(torch.mean((x - torch.mean(x, dim=0)) ** 2, dim=0) + 1e-8)
                return self.conv(torch.cat([x, std.expand_as(x)], 1))
    ''', select=["SN302"])
    assert [(f.code, f.line, f.column) for f in findings] == [("SN302", 11, 26)]


def test_sn302_after_a_block_picked_from_a_module_list_by_an_unknown_index(lint):
    # A progressive discriminator: `self.from_rgb[index](input)` with `index` computed from
    # the loop's step; whichever block it picks, its output is still the batch.
    findings = lint('''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.from_rgb = nn.ModuleList([nn.Conv2d(3, 4, 1), nn.Conv2d(3, 4, 1)])
                self.conv = nn.Conv2d(5, 1, 3)

            def forward(self, input, step=0):
                for i in range(step, -1, -1):
                    if i == step:
                        out = self.from_rgb[i](input)
                    if i == 0:
                        std = torch.sqrt(out.var(0, unbiased=False) + 1e-8)
                        out = torch.cat([out, std.mean().expand(out.size(0), 1, 4, 4)], 1)
                return self.conv(out)
    ''', select=["SN302"])
    assert [(f.code, f.line, f.column) for f in findings] == [("SN302", 16, 34)]
    assert findings[0].message.startswith(".var(dim=0) in Discriminator.forward reduces over the batch")


def test_sn302_is_off_by_default(lint):
    assert lint(MINIBATCH_STD) == []


def test_sn302_not_for_reductions_over_other_dims_or_outside_discriminators(lint):
    findings = lint('''
        import torch.nn as nn

        class Generator(nn.Module):
            def forward(self, z):
                return z.std(0)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 8, 3)

            def forward(self, x):
                return self.c(x).mean(dim=(2, 3)).var(1)
    ''', select=["SN302"])
    assert findings == []


# StyleGAN2-ADA's MappingNetwork, which its discriminator builds too: the forward writes a
# batch mean into a buffer (`self.w_avg.copy_(...)`, the W average) and returns no
# statistic of the batch. Its layers are read by a computed name.
BUFFER_UPDATE = '''
    import torch
    import torch.nn as nn

    class Mapping(nn.Module):
        def __init__(self, n=2):
            super().__init__()
            self.n = n
            for i in range(n):
                setattr(self, f"fc{i}", nn.Linear(8, 8))
            self.register_buffer("w_avg", torch.zeros(8))

        def forward(self, x):
            for i in range(self.n):
                x = getattr(self, f"fc{i}")(x)
            self.w_avg.copy_(x.detach().mean(dim=0).lerp(self.w_avg, 0.995))
            return x

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.mapping = Mapping()
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            return self.head(self.mapping(x))
'''


def test_sn302_not_for_a_batch_mean_written_into_a_buffer(lint):
    assert lint(BUFFER_UPDATE, select=["SN302"]) == []


def test_sn302_for_a_batch_mean_the_forward_returns_beside_a_buffer_update(lint):
    findings = lint(BUFFER_UPDATE.replace("            return x\n", "            return x - x.mean(dim=0)\n"),
                    select=["SN302"])
    assert [(f.code, f.line, f.column) for f in findings] == [("SN302", 17, 20)]


def test_an_image_pool_called_on_generated_samples_is_no_discriminator():
    # cycleGAN-PyTorch's Sample_from_Pool(object) with a __call__, called on real and
    # generated images: not a module, so no discriminator for the graph pass to build.
    from snlint.link import link
    from snlint.source import extract

    code = textwrap.dedent(PARAMETER_LOOP + '''

    class Sample_from_Pool(object):
        def __init__(self, max_elements=50):
            self.items = []

        def __call__(self, in_items):
            return in_items

    def pool_step(netG, loader):
        pool = Sample_from_Pool()
        for real_a in loader:
            fake_a = netG(real_a)
            fake_a = pool(torch.cat([real_a, fake_a]))
    ''')
    project = link([extract(code, "example.py", "example.py")])
    assert [d.ref.cls for d in project.discriminators] == ["example.py:Discriminator"]


def test_a_block_named_as_a_discriminator_inside_one_is_part_of_it():
    # StyleGAN.pytorch's DiscriminatorBlock / DiscriminatorTop make up its Discriminator:
    # not discriminators of their own (the graph pass would try to build each alone).
    from snlint.link import link
    from snlint.source import extract

    code = textwrap.dedent('''
        import torch.nn as nn

        class DiscriminatorBlock(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.conv = nn.Conv2d(cin, cout, 3)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([DiscriminatorBlock(3, 8), DiscriminatorBlock(8, 8)])
    ''')
    project = link([extract(code, "example.py", "example.py")])
    assert [d.ref.cls for d in project.discriminators] == ["example.py:Discriminator"]


def test_a_block_named_as_a_discriminator_built_in_a_branch_not_taken_is_part_of_it():
    # A conditional final block the discriminator builds only when given `num_classes`
    # (default None): no child of the instance built with the defaults, still a part.
    from snlint.link import link
    from snlint.source import extract

    code = textwrap.dedent('''
        import torch.nn as nn

        class ConDisFinalBlock(nn.Module):
            def __init__(self, cin, num_classes):
                super().__init__()
                self.conv = nn.Conv2d(cin, 1, 4)
                self.embed = nn.Embedding(num_classes, cin)

        class Discriminator(nn.Module):
            def __init__(self, num_classes=None):
                super().__init__()
                if num_classes is not None:
                    self.final = ConDisFinalBlock(8, num_classes)
                else:
                    self.final = nn.Conv2d(8, 1, 4)
    ''')
    project = link([extract(code, "example.py", "example.py")])
    assert [d.ref.cls for d in project.discriminators] == ["example.py:Discriminator"]



def test_a_discriminator_step_helper_run_twice_in_one_update_is_one_finding(lint):
    # MSGAN: `backward_D(D, real, fake1) + backward_D(D, real, fake2)`, each scoring the
    # generated batch, then the real one: one pair of call sites, one finding.
    findings = lint('''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)

        def backward_D(netD, real, fake):
            pred_fake = netD(fake.detach())
            pred_real = netD(real)
            return pred_fake.mean() - pred_real.mean()

        def update_D(netD, netG, loader, z1, z2):
            for real in loader:
                fake1, fake2 = netG(z1), netG(z2)
                loss = backward_D(netD, real, fake1) + backward_D(netD, real, fake2)
                loss.backward()
    ''')
    assert found(findings) == [("SN301", 9), ("SN401", 12)]
    assert "in a separate call at line 13" in findings[1].explanation


NO_GRAD = '''
    import torch
    import torch.nn as nn

    class Inverter(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.bn = nn.BatchNorm2d(64)

        def forward(self, x):
            h = self.bn(self.conv(x))
            return h, h

    def destylize(batches, generator, latent):
        encoder = Inverter()
        for batch in batches:
            imgs = []
            for img in batch:
                imgs.append(img)
                {body}
'''


def test_a_network_run_on_real_and_generated_samples_without_gradients_trains_nothing(lint):
    # DualStyleGAN's destylize.py: an encoder inverting real images, then generated ones.
    code = '''with torch.no_grad():
                    img_rec, latent_e = encoder(imgs)
                with torch.no_grad():
                    img_dsty = generator([latent.detach()])
                    _, latent_i = encoder(img_dsty)'''
    assert found(lint(NO_GRAD.format(body=code))) == []
    # The same calls with gradients: scored as a discriminator is.
    assert found(lint(NO_GRAD.format(body=code.replace("with torch.no_grad():", "if True:")))) == \
        [("SN301", 9), ("SN401", 22)]


def test_a_generator_run_without_gradients_still_feeds_the_discriminator_step(lint):
    findings = lint(NO_GRAD.replace("encoder = Inverter()", "netD = Inverter()").format(body='''with torch.no_grad():
                    fake = generator([latent])
                d_real = netD(imgs)
                d_fake = netD(fake)'''))
    assert found(findings) == [("SN301", 9), ("SN401", 23)]


# Tutorials build the discriminator as an nn.Sequential, not a class.
SEQUENTIAL = '''
    import torch
    import torch.nn as nn

    G = nn.Sequential(nn.Linear(64, 784), nn.Tanh())
    {name} = nn.Sequential(nn.Linear(784, 256), nn.BatchNorm1d(256), nn.LeakyReLU(0.2), nn.Linear(256, 1))
    for x, _ in torch.utils.data.DataLoader([]):
        fake = G(torch.randn(64, 64))
        d_real = {name}(x)
        d_fake = {name}(fake.detach())
'''


def test_a_sequential_called_as_a_discriminator_is_judged_as_one(lint):
    findings = lint(SEQUENTIAL.format(name="D"))
    assert at(findings) == [("SN301", 6, 40), ("SN401", 9, 14)]
    assert findings[0].message.startswith("BatchNorm1d in D normalizes")
    assert findings[0].evidence_of()["discriminator"].startswith("D: used as a discriminator by the training code")
    assert findings[1].discriminator.to_dict() == {"class": "example.py:D", "evidence": "training code"}


def test_a_sequential_called_under_another_name_is_no_discriminator(lint):
    assert found(lint(SEQUENTIAL.format(name="encoder"))) == []


GAN_CLASS = '''
        import torch
        import torch.nn as nn

        class GAN(nn.Module):
            def __init__(self):
                super().__init__()
                self.generator = nn.Sequential(nn.Linear(64, 784), nn.Tanh())
                self.discriminator = nn.Sequential(nn.Linear(784, 256), nn.BatchNorm1d(256), nn.Linear(256, 1))

            def generator_forward(self, z):
                return self.generator(z)

            def discriminator_forward(self, img):
                return self.discriminator(img)

        model = GAN()
        for features, _ in torch.utils.data.DataLoader([]):
            generated = model.generator_forward(torch.randn(64, 64))
            pred_real = model.discriminator_forward(features)
            pred_fake = model.discriminator_forward(generated.detach())
'''


def test_a_gan_class_holding_a_sequential_discriminator(lint):
    # rasbt's deeplearning-models: one module holds both networks, scored through methods.
    findings = lint(GAN_CLASS)
    assert found(findings) == [("SN301", 9), ("SN401", 20)]
    assert findings[0].message.startswith("BatchNorm1d in GAN.discriminator normalizes")
    assert "GAN.discriminator (used as a discriminator by the training code" in findings[0].explanation


def test_a_size_read_from_the_real_batch_leaves_generated_samples_generated(lint):
    # rasbt's gan-conv: `D(fake.view(targets.size(0), 1, 28, 28).detach())`: sizes are no samples.
    findings = lint(PARAMETER_LOOP.replace("d_fake = netD(netG(z).detach())",
                                           "d_fake = netD(netG(z).view(real.size(0), -1).detach())"))
    assert found(findings) == [("SN301", 9), ("SN401", 12)]


def test_a_buffer_the_real_samples_are_written_into_holds_real_samples(lint):
    # pix2pix (znxlwm): a random crop into a new tensor, one sample at a time.
    findings = lint(PARAMETER_LOOP.replace("""        d_real = netD(real)""", """        crops = torch.FloatTensor(real.size(0), 3, 64, 64)
        for i in range(real.size(0)):
            crops[i] = real[i, :, :64, :64]
        d_real = netD(crops)"""))
    assert found(findings) == [("SN301", 9), ("SN401", 15)]
    assert "real samples (the data parameter `real`)" in findings[1].explanation


def test_a_sequential_a_discriminator_runs_in_its_forward_is_a_part_of_it(lint):
    # lightning-bolts' DCGANDiscriminator: `return self.disc(x)`.
    findings = lint('''
        import torch
        import torch.nn as nn

        class DCGANDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.disc = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

            def forward(self, x):
                return self.disc(x)

        def step(netD, netG, loader):
            for real in loader:
                d_real = netD(real)
                d_fake = netD(netG(torch.randn(8, 8)).detach())

        step(DCGANDiscriminator(), nn.Linear(8, 8), [])
    ''')
    assert found(findings) == [("SN301", 8), ("SN401", 15)]
    assert "DCGANDiscriminator.disc" not in findings[1].explanation


def test_a_global_rebound_to_itself_moved_to_a_device_keeps_its_module(lint):
    # rasbt's gan-conv: `model = model.to(device)`, read as a global inside a method.
    findings = lint(GAN_CLASS.replace("return self.discriminator(img)", "return model.discriminator(img)")
                    .replace("model = GAN()\n", "model = GAN()\n        model = model.to(torch.device(\"cpu\"))\n"))
    assert found(findings) == [("SN301", 9), ("SN401", 21)]


def test_a_function_decorated_no_grad_trains_nothing(lint):
    # An evaluation pass (`@torch.no_grad()`) scoring real and generated images apart.
    code = NO_GRAD.replace("    def destylize(", "    @torch.no_grad()\n    def destylize(").format(
        body='''img_rec, latent_e = encoder(imgs)
                img_dsty = generator([latent.detach()])
                _, latent_i = encoder(img_dsty)''')
    assert found(lint(code)) == []
    assert found(lint(code.replace("@torch.no_grad()", "@torch.enable_grad()"))) == [("SN301", 9), ("SN401", 22)]


VQ_MODEL = '''
    import torch.nn as nn


    class NLayerDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

        def forward(self, x):
            return self.main(x)


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)

        def forward(self, z):
            return self.conv(z)


    class VQModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = Decoder()
            self.discriminator = NLayerDiscriminator()

        def forward(self, input, step=0):
            dec = self.decoder(input)
            if step == 0:
                return -self.discriminator(dec).mean()
            logits_real = self.discriminator(input.detach())
            logits_fake = self.discriminator(dec.detach())
            return (logits_fake - logits_real).mean()
'''

ENGINE = '''
    def train_one_epoch(model, data_loader, opt_ae, opt_disc):
        for x in data_loader:
            model(x, step=0).backward()
            opt_ae.step()
            model(x, step={step}).backward()
            opt_disc.step()
'''


def test_a_default_another_call_overrides_decides_nothing_in_a_method_run_on_its_own(lint_project):
    # VQGAN-LC: the training loop, which only receives the model, calls it with `step=1`
    # for the discriminator's update; the forward's `step=0` default is not what runs.
    findings = lint_project({"models.py": VQ_MODEL, "engine.py": ENGINE.format(step=1)})
    assert [(f.code, f.path, f.line) for f in findings] == [("SN301", "models.py", 8), ("SN401", "models.py", 33)]


def test_a_default_no_call_overrides_decides_its_branch(lint_project):
    findings = lint_project({"models.py": VQ_MODEL, "engine.py": ENGINE.format(step=0)})
    assert [(f.code, f.path, f.line) for f in findings] == [("SN301", "models.py", 8)]


DELAYED_DISCRIMINATOR = DISCRIMINATOR + '''
    global_step = 0
    disc_iter_start = 30000


    def train(netG, netD, loader, d_opt):
        global global_step
        while True:
            for x, real in loader:
                fake = netG(x)
                if global_step > disc_iter_start:
                    d_real = netD(real)
                    d_fake = netD(fake.detach())
                    (d_fake - d_real).mean().backward()
                    d_opt.step()
                global_step += 1


    train(Generator(), Discriminator(), loader, d_opt)
'''


def test_a_step_counter_a_training_loop_increments_decides_no_branch(lint):
    # wav2lip_288x288: the discriminator trains once a global step count passes a start;
    # the loop runs once here for all its iterations, so the count is not its start.
    assert found(lint(DELAYED_DISCRIMINATOR)) == [("SN301", 10), ("SN401", 34)]


def test_a_local_step_counter_decides_no_branch_either(lint):
    code = DELAYED_DISCRIMINATOR.replace("    global global_step\n", "    global_step = 0\n")
    assert found(lint(code)) == [("SN301", 10), ("SN401", 34)]
