"""Patterns met in public GAN repositories (BigGAN-PyTorch, PyTorch-GAN, Self-Attention-GAN,
pytorch-gan-collections, pytorch-spectral-normalization-gan, stylegan2-pytorch,
PyTorch-StudioGAN, GAN_stability, StackGAN-v2, pytorch-lightning-gans), rewritten from scratch in a few lines each.

Each test names the repository whose code showed the pattern. Tests marked xfail
(strict) reproduce a problem snlint has today: a crash or hang, a false positive, a miss
or a wrong location. The others pin real-world patterns that already work.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from snlint.config import Config
from snlint.engine import run
from projects import write_project as write


def found(findings):
    return [(f.code, f.line) for f in findings]


def with_models(snippet: str) -> str:
    """BN_MODELS followed by a snippet of training code, each dedented on its own."""
    return textwrap.dedent(BN_MODELS) + textwrap.dedent(snippet)


def run_paths(root: Path, paths: list[str], **options):
    return run([str(root / p) for p in paths], Config(root=root, graph=False, **options)).findings


# A discriminator with batch norm, and a generator, used by the training-code patterns.
BN_MODELS = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 64, 3)
            self.bn = nn.BatchNorm2d(64)

        def forward(self, x):
            return self.bn(self.c(x))


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 3, 3)

        def forward(self, z):
            return self.c(z)
'''


# ============================================================== hangs (PyTorch-StudioGAN)

def test_recursive_function_with_two_self_calls_finishes(tmp_path, interpreter_work):
    # Each call followed into itself twice explored 2**MAX_DEPTH paths: snlint never
    # finished. A call already running is not entered again; the limit stops a regression.
    write(tmp_path, {"walk.py": '''
        def convert(module):
            if module is None:
                return convert(module.inner)
            for child in module.children():
                convert(child)
            return module
    '''})
    work = interpreter_work(limit=1000)
    assert run_paths(tmp_path, ["walk.py"]) == []
    assert work.cut_short == 0


def test_recursive_function_with_one_self_call_finishes(tmp_path, interpreter_work):
    write(tmp_path, {"walk.py": '''
        def convert(module):
            for child in module.children():
                convert(child)
            return module
    '''})
    work = interpreter_work(limit=1000)
    assert run_paths(tmp_path, ["walk.py"]) == []
    assert work.cut_short == 0


# ============================================ SN103 false positive (pytorch-gan-collections)

def test_sn_applied_once_in_an_init_helper_method_is_not_sn103(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.spectral_norm import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = nn.Linear(128, 1)
                self.initialize()

            def initialize(self):
                spectral_norm(self.linear)
    ''')
    assert found(findings) == []


def test_sn_modules_loop_in_an_init_helper_method_is_not_sn103(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.spectral_norm import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 3), nn.LeakyReLU(0.1))
                self.linear = nn.Linear(64, 1)
                self.initialize()

            def initialize(self):
                for m in self.modules():
                    if isinstance(m, (nn.Conv2d, nn.Linear)):
                        spectral_norm(m)
    ''')
    assert found(findings) == []


def test_sn_applied_once_directly_in_init_is_clean(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.spectral_norm import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 3), nn.LeakyReLU(0.1))
                self.linear = nn.Linear(64, 1)
                for m in self.modules():
                    if isinstance(m, (nn.Conv2d, nn.Linear)):
                        spectral_norm(m)
    ''')
    assert found(findings) == []


@pytest.mark.xfail(strict=True, reason="a true SN103 through an init helper method is reported "
                   "twice: at the helper's call site in __init__ and at the SN call inside it")
def test_sn_on_a_wrapped_layer_again_in_an_init_helper_is_sn103_once(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.spectral_norm import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = spectral_norm(nn.Linear(128, 1))
                self.initialize()

            def initialize(self):
                spectral_norm(self.linear)
    ''')
    assert found(findings) == [("SN103", 13)]


# ==================================== pre-commit passes files one by one (BigGAN-PyTorch)

LAYERS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    def snconv(cin, cout):
        return spectral_norm(nn.Conv2d(cin, cout, 3))
'''

D_WITH_HELPER = '''
    import torch.nn as nn

    import layers


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = layers.snconv(3, 64)
            self.c2 = layers.snconv(64, 128)
            self.out = nn.Linear(128, 1)
'''


def test_sn201_through_a_helper_in_another_file_when_linting_the_project(tmp_path):
    write(tmp_path, {"layers.py": LAYERS, "d.py": D_WITH_HELPER})
    assert found(run_paths(tmp_path, ["."])) == [("SN201", 12)]


def test_sn201_through_a_helper_in_another_file_when_linting_one_file(tmp_path):
    write(tmp_path, {"layers.py": LAYERS, "d.py": D_WITH_HELPER})
    assert found(run_paths(tmp_path, ["d.py"])) == [("SN201", 12)]


# ============================= training code: how the discriminator instance is lost (PyTorch-GAN)

TRAIN_STAR = '''
    from models import *
    {extra}
    generator = Generator()
    discriminator = Discriminator()
    for i, imgs in enumerate(dataloader):
        imgs_lr = imgs["lr"]
        imgs_hr = imgs["hr"]
        gen_hr = generator(imgs_lr)
        loss_real = discriminator(imgs_hr).mean()
        loss_fake = discriminator(gen_hr.detach()).mean()
'''


def test_sn401_through_a_star_import(tmp_path):
    write(tmp_path, {"models.py": BN_MODELS, "train.py": TRAIN_STAR.format(extra="")})
    findings = [f for f in run_paths(tmp_path, ["."]) if f.code == "SN401"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("train.py", 10)]


def test_sn401_through_a_star_import_next_to_another_star_import(tmp_path):
    write(tmp_path, {"models.py": BN_MODELS, "datasets.py": "import glob\n",
                     "train.py": TRAIN_STAR.format(extra="from datasets import *")})
    findings = [f for f in run_paths(tmp_path, ["."]) if f.code == "SN401"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("train.py", 10)]


TRAIN_DETACH = BN_MODELS + '''

    generator = Generator()
    discriminator = Discriminator()
    for imgs in loader:
        {name} = generator(torch.randn(8, 3, 8, 8))
        loss_real = discriminator(imgs).mean()
        loss_fake = discriminator({name}.detach()).mean()
'''


def test_sn401_detached_generator_output_with_a_fake_name(lint):
    findings = lint("import torch\n" + textwrap.dedent(TRAIN_DETACH.format(name="fake_imgs")))
    assert ("SN401", 29) in found(findings)


def test_sn401_detached_generator_output_with_a_neutral_name(lint):
    findings = lint("import torch\n" + textwrap.dedent(TRAIN_DETACH.format(name="samples")))
    assert ("SN401", 29) in found(findings)


IF_ELSE_TRAIN = """

    class OtherDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 1, 3)

{built}
    generator = Generator()


    def train(loader):
        for data, _ in loader:
            loss = -discriminator(data).mean() + discriminator(generator(z)).mean()
"""


def test_sn401_global_discriminator_used_inside_a_training_function(lint):
    findings = lint(with_models(IF_ELSE_TRAIN.format(built="    discriminator = Discriminator()\n")))
    assert found(findings) == [("SN301", 9), ("SN401", 36)]


def test_sn401_global_discriminator_built_in_both_branches_of_an_if(lint):
    built = ("    if use_cuda:\n        discriminator = Discriminator().cuda()\n"
             "    else:\n        discriminator = Discriminator()\n")
    findings = lint(with_models(IF_ELSE_TRAIN.format(built=built)))
    assert found(findings) == [("SN301", 9), ("SN401", 39)]


def test_sn401_discriminator_from_a_registry_dict(lint):  # pytorch-gan-collections
    findings = lint(with_models('''

        class OtherDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 1, 3)


        net_D_models = {"cnn32": Discriminator}


        def train(arch, net_G, looper):
            net_D = net_D_models[arch]()
            for step in range(10):
                fake = net_G(z).detach()
                real = next(looper)
                net_D_real = net_D(real)
                net_D_fake = net_D(fake)
    '''))
    assert ("SN301", 9) in found(findings)  # the file parsed: the miss is SN401's
    assert ("SN401", 38) in found(findings)


def test_sn401_points_at_the_discriminator_step_not_the_generator_step(lint):
    findings = lint(with_models('''

        generator = Generator()
        discriminator = Discriminator()
        for imgs, _ in loader:
            real_imgs = imgs
            gen_imgs = generator(z)
            g_loss = loss_fn(discriminator(gen_imgs), valid)
            g_loss.backward()

            real_loss = loss_fn(discriminator(real_imgs), valid)
            fake_loss = loss_fn(discriminator(gen_imgs.detach()), fake)
    '''))
    assert ("SN301", 9) in found(findings)  # the file parsed: the question is SN401's place
    sn401 = [f for f in findings if f.code == "SN401"]
    assert found(sn401) == [("SN401", 32)]
    assert "line 33" in sn401[0].explanation


def test_sn401_and_sn301_dcgan_discriminator_step(lint):
    findings = lint('''
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()

                def discriminator_block(in_filters, out_filters, bn=True):
                    block = [nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2)]
                    if bn:
                        block.append(nn.BatchNorm2d(out_filters, 0.8))
                    return block

                self.model = nn.Sequential(
                    *discriminator_block(3, 16, bn=False),
                    *discriminator_block(16, 32),
                )
                self.adv_layer = nn.Linear(32, 1)

            def forward(self, img):
                return self.adv_layer(self.model(img).flatten(1))


        generator = nn.Conv2d(3, 3, 3)
        discriminator = Discriminator()
        for imgs, _ in dataloader:
            real_imgs = imgs
            gen_imgs = generator(imgs)
            real_loss = loss_fn(discriminator(real_imgs), valid)
            fake_loss = loss_fn(discriminator(gen_imgs.detach()), fake)
    ''')
    assert found(findings) == [("SN301", 12), ("SN401", 30)]
    assert "line 31" in findings[1].explanation


# A conditional discriminator scores each sample beside its condition. pix2pix passes the
# condition first (`D(x, y)` then `D(x, G(x))`), StackGAN second, and its condition comes
# out of the generator (`D(real, c)` then `D(fake, c)`): what the two calls pass alike is
# the condition, and what differs is what they score.
CONDITIONAL = '''
    import torch
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(6, 64, 4, 2, 1)
            self.bn = nn.BatchNorm2d(64)
            self.head = nn.Conv2d(64, 1, 4)

        def forward(self, a, b):
            return self.head(self.bn(self.conv(torch.cat([a, b], 1))))


    generator = nn.Conv2d(3, 3, 3)
    D = Discriminator()
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=64)
    for x, y in dataloader:
        {step}
'''


@pytest.mark.parametrize("step", [
    "fake = generator(x)\n        real_loss = D(x, y).mean()\n        fake_loss = D(x, fake.detach()).mean()",
    "fake, c = generator(x), generator(y)\n        real_loss = D(x, c).mean()\n        fake_loss = D(fake.detach(), c).mean()",
], ids=["condition first", "condition second, from the generator"])
def test_sn401_conditional_discriminator_scores_what_its_calls_pass_apart(lint, step):
    findings = lint(CONDITIONAL.format(step=step))
    assert found(findings) == [("SN301", 10), ("SN401", 22)]
    assert findings[1].evidence.startswith("real samples (a batch of `dataloader` (line 20))")
    assert "(returned by generator at line 21)" in findings[1].evidence and "generated samples at line 23" in findings[1].message


def test_a_conditional_discriminator_named_for_nothing_is_found_by_what_its_calls_score(lint):
    # The condition first, the same real batch in both calls: what the second argument
    # holds (the data, then the generator's output) is what makes it the discriminator.
    findings = lint(CONDITIONAL.replace("Discriminator", "PatchNet").replace("D = ", "judge = ")
                    .replace("D(x", "judge(x").format(step=(
                        "fake = generator(x)\n        real_loss = judge(x, y).mean()\n"
                        "        fake_loss = judge(x, fake.detach()).mean()")))
    assert found(findings) == [("SN301", 10), ("SN401", 22)]
    assert "PatchNet (used as a discriminator by the training code; called on real and generated samples" \
        in findings[0].explanation


def test_a_u_net_block_taking_a_skip_connection_is_no_conditional_discriminator(lint):
    # PyTorch-GAN's UNetUp: `self.up1(d7, d6)` in a generator's forward joins a layer's
    # output with an earlier one; neither is a batch of the data or a generator's output.
    findings = lint('''
        import torch
        import torch.nn as nn


        class UNetUp(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.model = nn.Sequential(nn.ConvTranspose2d(n, n, 4, 2, 1), nn.BatchNorm2d(n))

            def forward(self, x, skip):
                return torch.cat((self.model(x), skip), 1)


        class UNetDown(nn.Module):
            def __init__(self, n, m):
                super().__init__()
                self.model = nn.Conv2d(n, m, 4, 2, 1)

            def forward(self, x):
                return self.model(x)


        class GeneratorUNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.down1 = UNetDown(3, 64)
                self.down2 = UNetDown(64, 64)
                self.up1 = UNetUp(64)
                self.up2 = UNetUp(128)

            def forward(self, x):
                d1 = self.down1(x)
                d2 = self.down2(d1)
                u1 = self.up1(d2, d1)
                return self.up2(u1, x)


        generator = GeneratorUNet()
        for real_A, real_B in dataloader:
            fake_B = generator(real_A)
    ''')
    assert found(findings) == []


# lightning-bolts' Pix2Pix: the discriminator step scores generated then real samples in
# one branch of `if optimizer_idx == 0`, the generator step scores generated ones in the
# other. The two branches never run together: the real call pairs with its own step's
# generated call, not with the generator step's.
LIGHTNING_BRANCHES = '''
    import pytorch_lightning as pl
    import torch.nn as nn


    class PatchGAN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.bn = nn.BatchNorm2d(64)

        def forward(self, x):
            return self.bn(self.conv(x))


    class Pix2Pix(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.gen = nn.Conv2d(3, 3, 3)
            self.patch_gan = PatchGAN()

        def _gen_step(self, real, condition):
            fake = self.gen(condition)
            return self.patch_gan(fake).mean()

        def _disc_step(self, real, condition):
            fake = self.gen(condition).detach()
            fake_logits = self.patch_gan(fake)
            real_logits = self.patch_gan(real)
            return fake_logits.mean() - real_logits.mean()

        def training_step(self, batch, batch_idx, optimizer_idx):
            real, condition = batch
            if optimizer_idx == 0:
                loss = self._disc_step(real, condition)
            elif optimizer_idx == 1:
                loss = self._gen_step(real, condition)
            return loss
'''


def test_sn401_pairs_no_calls_from_the_two_branches_of_one_if(lint):
    findings = [f for f in lint(LIGHTNING_BRANCHES) if f.code == "SN401"]
    assert [f.line for f in findings] == [28]
    assert "here and real samples" in findings[0].explanation
    assert "in a separate call at line 29" in findings[0].explanation


# joliGEN's projected discriminator: `if conv:` builds spectrally normalized conv heads
# (in a block class), otherwise plain MLP heads. Each configuration is whole: the MLP heads
# are another design, not layers missing from the SN one. A layer both configurations
# build still counts.
BRANCHED_HEADS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class ConvHead(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.main = nn.Sequential(spectral_norm(nn.Conv2d(c, c, 4, 2, 1)), nn.LeakyReLU(0.2),
                                      spectral_norm(nn.Conv2d(c, 1, 4)))


    class MultiScaleDiscriminator(nn.Module):
        def __init__(self, channels, conv, num_discs=4):
            super().__init__()
            heads = []
            if conv:
                for i in range(num_discs):
                    heads += ([str(i), ConvHead(channels[i])],)
            else:
                for i in range(num_discs):
                    mlp = nn.Sequential(nn.Flatten(), nn.Linear(channels[i], 100), nn.ReLU())
                    heads += ([str(i), mlp],)
            self.heads = nn.ModuleDict(heads){shared}
'''


def test_sn201_spares_layers_of_another_configuration_than_the_normalized_ones(lint):
    assert found(lint(BRANCHED_HEADS.format(shared=""))) == []
    shared = "\n            self.proj = nn.Linear(8, 8)"
    assert found(lint(BRANCHED_HEADS.format(shared=shared))) == [("SN201", 25)]


def test_sn303_gradient_penalty_through_a_bn_critic(lint):
    findings = lint('''
        import torch
        import torch.nn as nn
        from torch import autograd


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.Conv2d(16, 1, 3))

            def forward(self, x):
                return self.model(x)


        def compute_gradient_penalty(D, real_samples, fake_samples):
            alpha = torch.rand(real_samples.size(0), 1, 1, 1)
            interpolates = (alpha * real_samples + (1 - alpha) * fake_samples).requires_grad_(True)
            validity = D(interpolates)
            gradients = autograd.grad(outputs=validity, inputs=interpolates,
                                      grad_outputs=torch.ones_like(validity),
                                      create_graph=True, retain_graph=True)[0]
            return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


        generator = nn.Conv2d(3, 3, 3)
        discriminator = Discriminator()
        for real_imgs in loader:
            fake_imgs = generator(real_imgs)
            gp = compute_gradient_penalty(discriminator, real_imgs, fake_imgs)
            d_loss = -discriminator(torch.cat([real_imgs, fake_imgs])).mean() + gp
    ''')
    assert found(findings) == [("SN301", 10), ("SN303", 19)]


# ====================================== hand-written SN (Self-Attention-GAN, christiancosgrove)

SPECTRAL = '''
    import torch.nn as nn


    class SpectralNorm(nn.Module):
        def __init__(self, module, name="weight"):
            super().__init__()
            self.module = module
            self.name = name

        def forward(self, *args):
            w = getattr(self.module, self.name)
            height = w.data.shape[0]
            sigma = w.view(height, -1).norm()
            return self.module.forward(*args) / sigma
'''


def test_sn201_sagan_attention_and_last_conv_without_sn(lint_project):
    findings = lint_project({"spectral.py": SPECTRAL, "sagan.py": '''
        import torch.nn as nn

        from spectral import SpectralNorm


        class Self_Attn(nn.Module):
            def __init__(self, in_dim):
                super().__init__()
                self.query_conv = nn.Conv2d(in_dim, in_dim // 8, 1)
                self.value_conv = nn.Conv2d(in_dim, in_dim, 1)


        class Discriminator(nn.Module):
            def __init__(self, conv_dim=64):
                super().__init__()
                layer1 = []
                layer1.append(SpectralNorm(nn.Conv2d(3, conv_dim, 4, 2, 1)))
                layer1.append(nn.LeakyReLU(0.1))
                self.l1 = nn.Sequential(*layer1)
                last = []
                last.append(nn.Conv2d(conv_dim, 1, 4))
                self.last = nn.Sequential(*last)
                self.attn1 = Self_Attn(conv_dim)
    '''})
    assert [(f.path, f.code, f.line) for f in findings] == [
        ("sagan.py", "SN201", 10), ("sagan.py", "SN201", 11), ("sagan.py", "SN201", 22)]


def test_sn201_fix_reuses_the_files_hand_written_wrapper(lint_project):
    findings = lint_project(fixes=True, files={"spectral.py": SPECTRAL, "d.py": '''
        import torch.nn as nn

        from spectral import SpectralNorm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = SpectralNorm(nn.Conv2d(3, 64, 4, 2, 1))
                self.c2 = SpectralNorm(nn.Conv2d(64, 128, 4, 2, 1))
                self.last = nn.Conv2d(128, 1, 4)
    '''})
    (finding,) = findings
    assert (finding.code, finding.line) == ("SN201", 12)
    assert "+        self.last = SpectralNorm(nn.Conv2d(128, 1, 4))" in finding.fix.diff
    assert "parametrizations" not in finding.fix.diff


def test_sn105_hand_written_sn_reshapes_a_conv_transpose_weight_along_dim_0(lint_project):
    findings = lint_project({"spectral.py": SPECTRAL, "g.py": '''
        import torch.nn as nn

        from spectral import SpectralNorm


        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = SpectralNorm(nn.ConvTranspose2d(128, 64, 4, 2, 1))
    '''})
    assert [(f.path, f.code, f.line) for f in findings] == [("spectral.py", "SN105", 14)]


def test_sn201_bypass_conv_assigned_then_wrapped_inside_a_sequential(lint_project):
    block = '''
        import torch.nn as nn

        from spectral import SpectralNorm


        class ResBlockDiscriminator(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.conv1 = nn.Conv2d(cin, cout, 3, 1, padding=1)
                self.bypass_conv = nn.Conv2d(cin, cout, 1, 1, padding=0)
                self.model = nn.Sequential(nn.ReLU(), SpectralNorm(self.conv1))
                self.bypass = nn.Sequential({bypass}, nn.AvgPool2d(2))


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = ResBlockDiscriminator(3, 64)
                self.fc = SpectralNorm(nn.Linear(64, 1))
    '''
    clean = lint_project({"spectral.py": SPECTRAL,
                          "d.py": block.format(bypass="SpectralNorm(self.bypass_conv)")})
    assert found(clean) == []
    missing = lint_project({"spectral.py": SPECTRAL, "d.py": block.format(bypass="self.bypass_conv")})
    assert [(f.path, f.code, f.line) for f in missing] == [("d.py", "SN201", 11)]


# =============================================== BigGAN-style mixins and partials (BigGAN-PyTorch)

BIGGAN_LAYERS = '''
    import torch.nn as nn


    class SN(object):
        def __init__(self, num_svs, num_itrs, num_outputs, transpose=False, eps=1e-12):
            self.num_itrs = num_itrs

        def W_(self):
            return self.weight


    class SNConv2d(nn.Conv2d, SN):
        def __init__(self, in_channels, out_channels, kernel_size=3, padding=0, num_svs=1,
                     num_itrs=1, eps=1e-12):
            nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, padding=padding)
            SN.__init__(self, num_svs, num_itrs, out_channels, eps=eps)


    class SNLinear(nn.Linear, SN):
        def __init__(self, in_features, out_features, num_svs=1, num_itrs=1, eps=1e-12):
            nn.Linear.__init__(self, in_features, out_features)
            SN.__init__(self, num_svs, num_itrs, out_features, eps=eps)


    class DBlock(nn.Module):
        def __init__(self, in_channels, out_channels, which_conv=SNConv2d):
            super().__init__()
            self.which_conv = which_conv
            self.conv1 = self.which_conv(in_channels, out_channels)
            self.conv_sc = self.which_conv(in_channels, out_channels, kernel_size=1, padding=0)
'''

BIGGAN_D = '''
    import functools

    import torch.nn as nn

    import layers


    class Discriminator(nn.Module):
        def __init__(self, D_ch=64, D_param="SN", num_D_SVs=1):
            super().__init__()
            self.D_param = D_param
            if self.D_param == "SN":
                self.which_conv = functools.partial(layers.SNConv2d, kernel_size=3, padding=1,
                                                    num_svs=num_D_SVs)
                self.which_linear = functools.partial(layers.SNLinear, num_svs=num_D_SVs)
            self.blocks = nn.ModuleList([layers.DBlock(3, D_ch, which_conv=self.which_conv)])
            self.linear = {linear}(D_ch, 1)
'''


def test_biggan_style_discriminator_is_clean(tmp_path):
    write(tmp_path, {"layers.py": BIGGAN_LAYERS, "d.py": BIGGAN_D.format(linear="self.which_linear")})
    assert found(run_paths(tmp_path, ["."])) == []


def test_biggan_style_discriminator_with_a_plain_output_linear_is_sn201(tmp_path):
    write(tmp_path, {"layers.py": BIGGAN_LAYERS, "d.py": BIGGAN_D.format(linear="nn.Linear")})
    findings = run_paths(tmp_path, ["."])
    assert [(Path(f.path).name, f.code, f.line) for f in findings] == [("d.py", "SN201", 18)]


# ======================================================== minibatch stddev (stylegan2-pytorch)

STDDEV_D = '''
    import torch
    import torch.nn as nn


    class FromRGB(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 1)

        def forward(self, input):
            return input, self.conv(input)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.from_rgb = FromRGB()
            self.conv = nn.Conv2d(3, 8, 1)
            self.final = nn.Linear(9, 1)

        def forward(self, input):
            {body}
            stddev = torch.sqrt(out.var(0, unbiased=False) + 1e-8)
            return self.final(torch.cat([out, stddev], 1))
'''


def test_sn302_minibatch_stddev(lint):
    findings = lint(STDDEV_D.format(body="out = self.conv(input)"), select=["SN302"])
    assert found(findings) == [("SN302", 24)]


def test_sn302_minibatch_stddev_after_a_tuple_returning_submodule(lint):
    findings = lint(STDDEV_D.format(body="input, out = self.from_rgb(input)"), select=["SN302"])
    assert found(findings) == [("SN302", 24)]


def test_no_sn302_by_default(lint):
    assert found(lint(STDDEV_D.format(body="out = self.conv(input)"))) == []


# PyTorch-GAN (cyclegan, discogan, unit): the cycle-consistency loss calls the generator on
# real images and on generated ones; that does not make it a critic.
def test_a_generator_in_a_cycle_loss_is_not_a_discriminator(lint):
    findings = lint('''
        import torch.nn as nn


        class GeneratorUNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3, 1, 1)
                self.bn = nn.BatchNorm2d(3)

            def forward(self, x):
                return self.bn(self.conv(x))


        G_AB = GeneratorUNet()
        G_BA = GeneratorUNet()

        for real_A, real_B in dataloader:
            fake_B = G_AB(real_A)
            recov_A = G_BA(fake_B)
            identity_A = G_BA(real_A)
            loss = (recov_A - real_A).abs().mean() + (identity_A - real_A).abs().mean()
    ''')
    assert found(findings) == []


# stylegan2-pytorch (swagan): the path-length regularization differentiates the generator's
# output; it is not a gradient penalty through a critic.
def test_a_generator_under_a_path_length_penalty_is_not_a_discriminator(lint):
    findings = lint('''
        import torch
        import torch.nn as nn


        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.bn = nn.BatchNorm1d(8)

            def forward(self, z):
                return self.bn(self.fc(z))


        generator = Generator()


        def g_path_regularize(fake_img, latents):
            grad, = torch.autograd.grad(outputs=fake_img.sum(), inputs=latents, create_graph=True)
            return grad.pow(2).sum(1).mean()


        def train(noise):
            fake_img = generator(noise)
            return g_path_regularize(fake_img, noise)
    ''')
    assert found(findings) == []


# StackGAN-v2: one discriminator per image scale, appended to a list by the configured
# number of scales, and trained in a loop over the scales: `self.netsD[idx]` at an index
# only the loop knows. Every candidate is called on that scale's real and generated images.
STACKED = {
    "model.py": '''
        import torch.nn as nn


        def encode(ndf):
            return nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 1), nn.BatchNorm2d(ndf), nn.LeakyReLU(0.2))


        class D_NET64(nn.Module):
            def __init__(self):
                super().__init__()
                self.code = encode(64)
                self.logits = nn.Conv2d(64, 1, 4)

            def forward(self, x):
                return [self.logits(self.code(x))]


        class D_NET128(nn.Module):
            def __init__(self):
                super().__init__()
                self.code = encode(64)
                self.down = nn.Conv2d(64, 64, 4, 2, 1)
                self.logits = nn.Conv2d(64, 1, 4)

            def forward(self, x):
                return [self.logits(self.down(self.code(x)))]
    ''',
    "trainer.py": '''
        import torch

        from model import D_NET64, D_NET128
        from config import cfg


        def load_network():
            netsD = []
            if cfg.TREE.BRANCH_NUM > 0:
                netsD.append(D_NET64())
            if cfg.TREE.BRANCH_NUM > 1:
                netsD.append(D_NET128())
            return netsD, len(netsD)


        class GANTrainer(object):
            def __init__(self, netG, data_loader):
                self.netG, self.data_loader = netG, data_loader

            def train_Dnet(self, idx):
                netD = self.netsD[idx]
                real_imgs = self.real_imgs[idx]
                fake_imgs = self.fake_imgs[idx]
                real_logits = netD(real_imgs)
                fake_logits = netD(fake_imgs.detach())
                return fake_logits[0].mean() - real_logits[0].mean()

            def train(self):
                self.netsD, self.num_Ds = load_network()
                for data in self.data_loader:
                    self.real_imgs = [data, data]
                    self.fake_imgs = self.netG(torch.randn(8, 100))
                    for i in range(self.num_Ds):
                        self.train_Dnet(i)
    ''',
}


def test_a_discriminator_picked_from_a_list_by_the_loop_index(tmp_path):
    write(tmp_path, STACKED)
    findings = run_paths(tmp_path, ["."])
    assert found(findings) == [("SN301", 6), ("SN401", 25)]
    message = findings[1].explanation
    assert findings[1].message.endswith("go through D_NET64 or 1 other candidate as separate batches")
    assert "Candidates: D_NET64 (used as a discriminator by the training code) or D_NET128 " \
        "(used as a discriminator by the training code)" in message
    # Both candidates' batch norm is the shared helper's: named once.
    assert f"the batch statistics of each (BatchNorm2d at {tmp_path / 'model.py'}:6) " \
        "then differ between the two batches" in message


def test_a_slice_of_a_list_of_discriminators_is_not_one_of_them(tmp_path):
    write(tmp_path, dict(STACKED, **{"trainer.py": STACKED["trainer.py"].replace(
        "netD = self.netsD[idx]", "netD = self.netsD[idx:]")}))
    assert ("SN401", 25) not in found(run_paths(tmp_path, ["."]))


# AttnGAN: the list of discriminators is built one way or another by an undecided `if`
# (one class imported under one name on one branch, one per scale appended on the
# other), so its one item is itself one of several modules; the loop's index picks it.
ATTN_LOAD = '''
        def load_network():
            netsD = []
            if cfg.GAN.B_DCGAN:
                if cfg.TREE.BRANCH_NUM == 1:
                    from model import D_NET64 as D_NET
                else:
                    from model import D_NET128 as D_NET
                netsD = [D_NET()]
            else:
                netsD.append(D_NET64())
            return netsD, len(netsD)
'''


def test_a_list_item_that_is_one_of_several_discriminators_is_each_of_them(tmp_path):
    start = STACKED["trainer.py"].index("        def load_network():")
    end = STACKED["trainer.py"].index("        class GANTrainer(object):")
    trainer = STACKED["trainer.py"][:start] + ATTN_LOAD + "\n\n" + STACKED["trainer.py"][end:]
    write(tmp_path, dict(STACKED, **{"trainer.py": trainer}))
    findings = run_paths(tmp_path, ["."])
    sn401 = [f for f in findings if f.code == "SN401"]
    assert [(f.line, f.path.endswith("trainer.py")) for f in sn401] == [(30, True)]
    assert sn401[0].evidence.startswith("real samples (a batch of `data_loader` (line 36)) go through")
    assert "Candidates: D_NET64 (used as a discriminator by the training code) or D_NET128 (used as a " \
        "discriminator by the training code), one of 2 classes D_NET may name at " in sn401[0].evidence


# pytorch-lightning-gans: the discriminator's calls are arguments of the module's own loss
# method (`self.adversarial_loss(self.discriminator(imgs), valid)`). They were evaluated
# twice (once by the method lookup, once by the call), and the generator step's lone
# `D(fake)` then found a second real call to pair with.
LIGHTNING = '''
    import pytorch_lightning as pl
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(8, 16)

        def forward(self, z):
            return self.net(z)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 16)
            self.bn = nn.BatchNorm1d(16)

        def forward(self, x):
            return self.bn(self.fc(x))


    class GAN(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.generator = Generator()
            self.discriminator = Discriminator()

        def forward(self, z):
            return self.generator(z)

        def adversarial_loss(self, y_hat, y):
            return F.binary_cross_entropy(y_hat, y)

        def training_step(self, batch, batch_idx, optimizer_idx):
            imgs, _ = batch
            z = torch.randn(imgs.shape[0], 8)
            if optimizer_idx == 0:
                return self.adversarial_loss(self.discriminator(self(z)), 1)
            if optimizer_idx == 1:
                real_loss = self.adversarial_loss(self.discriminator(imgs), 1)
                fake_loss = self.adversarial_loss(self.discriminator(self(z).detach()), 0)
                return real_loss + fake_loss
'''


def test_discriminator_calls_inside_a_loss_method_of_the_module_are_one_update(tmp_path):
    write(tmp_path, {"gan.py": LIGHTNING})
    assert found(run_paths(tmp_path, ["gan.py"])) == [("SN301", 21), ("SN401", 45)]


def test_a_lightning_discriminator_named_otherwise_is_found_by_its_training_step(tmp_path):
    # Nothing in `self.scorer(self(z))` is named: the data flow says it scores the output of
    # another model (the module's own forward, the generator), `self.scorer(imgs)` the batch.
    renamed = LIGHTNING.replace("Discriminator", "Scorer").replace("self.discriminator", "self.scorer")
    write(tmp_path, {"gan.py": renamed})
    findings = run_paths(tmp_path, ["gan.py"])
    assert found(findings) == [("SN301", 21), ("SN401", 45)]
    assert "Scorer (used as a discriminator by the training code; called on real and generated " \
           "samples in training_step())" in findings[0].explanation


# Noise sized after the real batch is not real data: `torch.randn(real.size(0), nz)` made
# the generator's input, and with it the generated batch, count as real.
FRESH_NOISE = BN_MODELS.replace("Discriminator", "Scorer").replace("Generator", "Maker") + '''

    import torch

    net_s, maker = Scorer(), Maker()
    for real, _ in torch.utils.data.DataLoader([]):
        z = torch.randn(real.size(0), 3, 8, 8).type_as(real)
        out = maker(z)
        loss = net_s(real).mean() - net_s(out.detach()).mean()
'''


def test_noise_sized_after_the_real_batch_is_not_real(lint):
    findings = lint(FRESH_NOISE)
    assert [f.code for f in findings] == ["SN301", "SN401"]
    assert "generated samples (returned by maker at line 29)" in findings[1].explanation


# mmgeneration's BigGAN block: a conditional norm called on the block input and then on a
# conv module's output, in forward. Each layer's output feeds the next: the norm is no
# discriminator, whatever the data flow would say of training code.
def test_a_norm_called_between_layers_in_a_forward_is_no_discriminator(lint):
    findings = lint(BN_MODELS + '''

    class ConvModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(8, 8, 3)

        def forward(self, x):
            return self.conv(x)


    class ConditionBN(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm2d(8, affine=False)

        def forward(self, x, y):
            return self.bn(x) * y


    class GenBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn1, self.conv1, self.bn2 = ConditionBN(), ConvModule(), ConditionBN()

        def forward(self, x, y):
            skip = self.bn1(x, y)
            h = self.conv1(y)
            return self.bn2(h, y) + skip
    ''')
    assert [f for f in findings if "ConditionBN" in f.explanation] == []


# pix2pixHD, vid2vid, SPADE: the discriminator's layers are grouped in a list of lists,
# then put in one Sequential by index: `for n in range(len(sequence)): stream += sequence[n]`.
# Its layers were lost (an index the loop did not know), and with them every finding.
def test_layers_gathered_by_index_over_a_list_are_seen(lint):
    findings = lint('''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class NLayerDiscriminator(nn.Module):
        def __init__(self, input_nc=3, ndf=64, n_layers=3):
            super().__init__()
            sequence = [[spectral_norm(nn.Conv2d(input_nc, ndf, 4, 2, 1)), nn.LeakyReLU(0.2)]]
            nf = ndf
            for n in range(1, n_layers):
                nf_prev, nf = nf, min(nf * 2, 512)
                sequence += [[spectral_norm(nn.Conv2d(nf_prev, nf, 4, 2, 1)), nn.LeakyReLU(0.2)]]
            sequence += [[nn.Conv2d(nf, 1, 4, 1, 1)]]
            stream = []
            for n in range(len(sequence)):
                stream += sequence[n]
            self.model = nn.Sequential(*stream)

        def forward(self, x):
            return self.model(x)
    ''')
    assert found(findings) == [("SN201", 14)]


# vid2vid: one wrapper class (DataParallel with padding) holds the generator, the
# discriminator and the flow network: `modelG = myModel(opt, modelG)`, `modelD =
# myModel(opt, modelD)`. Bound to `modelD`, the wrapper was taken for a discriminator,
# and the generator's batch norms it also wraps were reported.
def test_a_wrapper_of_the_generator_and_the_discriminator_alike_is_neither(lint):
    findings = lint('''
    import torch.nn as nn


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.ConvTranspose2d(8, 3, 4), nn.BatchNorm2d(3))

        def forward(self, z):
            return self.net(z)


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Conv2d(3, 1, 4)

        def forward(self, x):
            return self.net(x)


    class Padded(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.module = model

        def forward(self, *inputs):
            return self.module(*inputs)


    modelG = Padded(Generator())
    modelD = Padded(Critic())
    ''')
    assert found(findings) == []


# advGAN_pytorch: the generated batch is a real batch plus the generator's clipped
# perturbation. Each sample combines both, so the batch is generated; it read as real and
# generated samples scored together, and the separate calls were not reported.
def test_a_real_batch_plus_a_generated_perturbation_is_generated(lint):
    findings = lint(with_models('''

    import torch

    D, G = Discriminator(), Generator()


    def train_batch(x):
        adv = torch.clamp(G(x), -0.3, 0.3) + x
        pred_real = D(x)
        pred_fake = D(adv.detach())
    '''))
    assert found(findings) == [("SN301", 9), ("SN401", 31)]
    assert "real samples (the data parameter `x`)" in findings[1].explanation
    assert "(returned by G at line 30, combined with another tensor at line 30)" in findings[1].explanation


# pytorch_GAN_zoo: a WGAN-GP penalty on interpolates and an R1 penalty on the real batch,
# the loss itself on one concatenated batch. Interpolates combine real and generated
# samples (generated, by the rule above), but a penalty's call scores neither side: it is
# SN303's, and pairs with no other call for SN401.
def test_penalty_calls_are_not_paired_as_separate_batches(lint):
    findings = lint(with_models('''

    import torch

    D, G = Discriminator(), Generator()
    for real, _ in loader:
        fake = G(real)
        loss = D(torch.cat([real, fake.detach()])).mean()
        alpha = torch.rand(real.size(0), 1, 1, 1)
        interp = alpha * real + (1 - alpha) * fake.detach()
        grads = torch.autograd.grad(D(interp).sum(), interp, create_graph=True)[0]
        r1 = torch.autograd.grad(D(real).sum(), real, create_graph=True)[0]
    '''))
    assert [f.code for f in findings] == ["SN301", "SN303", "SN303"]


# PyTorch-FastCampus: the models are built, then restored whole when a checkpoint
# exists (`try: generator, discriminator = torch.load(path)`). The restored names read as
# unknown, and the training code's calls reached no class: no SN401.
def test_a_model_restored_whole_with_torch_load_keeps_its_class(lint):
    findings = lint(with_models('''

    import torch

    generator = nn.DataParallel(Generator()).cuda()
    discriminator = nn.DataParallel(Discriminator()).cuda()
    try:
        generator, discriminator = torch.load("./model/dcgan.pkl")
    except Exception:
        pass
    loader = torch.utils.data.DataLoader(dataset)
    for image, _ in loader:
        gen_fake = generator.forward(torch.randn(8, 3, 8, 8))
        dis_fake = discriminator.forward(gen_fake.detach())
        dis_real = discriminator.forward(image)
    '''))
    assert found(findings) == [("SN301", 9), ("SN401", 35)]
    assert "assumed" not in findings[1].explanation


# APDrawingGAN: one call in a loop scores each facial part with its own discriminator
# (`net = getattr(self, 'net' + local_names[i])`). The runs of that call reach different
# discriminators: a real batch through one and a generated batch through another share no
# batch statistics, and make no SN401.
def test_one_call_that_reaches_another_discriminator_each_run_pairs_nothing(lint):
    findings = lint(with_models('''

    import torch


    class Model:
        def __init__(self):
            self.netG = Generator()
            self.netDEye, self.netDHair = Discriminator(), Discriminator()

        def backward_D(self, real):
            fake = self.netG(real).detach()
            parts = [real, fake]
            names = ["DEye", "DHair"]
            for i in range(len(parts)):
                net = getattr(self, "net" + names[i])
                net(parts[i])
    '''))
    assert found(findings) == [("SN301", 9)]


def test_a_discriminator_re_packing_an_encoders_layers_but_the_last(lint):
    # GANomaly's NetD: `layers = list(encoder.main.children())`, then the features are
    # `nn.Sequential(*layers[:-1])` and the classifier `nn.Sequential(layers[-1])`.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Encoder(nn.Module):
            def __init__(self, nc, ndf):
                super().__init__()
                self.main = nn.Sequential(
                    nn.Conv2d(nc, ndf, 4, 2, 1),
                    nn.LeakyReLU(0.2),
                    nn.Conv2d(ndf, ndf * 2, 4, 2, 1),
                    nn.BatchNorm2d(ndf * 2),
                    nn.LeakyReLU(0.2),
                    nn.Conv2d(ndf * 2, 1, 4, 1, 0),
                )


        class NetD(nn.Module):
            def __init__(self):
                super().__init__()
                layers = list(Encoder(3, 64).main.children())
                self.features = nn.Sequential(*layers[:-1])
                self.classifier = nn.Sequential(layers[-1])

            def forward(self, x):
                return self.classifier(self.features(x))


        netg = nn.ConvTranspose2d(100, 3, 4)
        netd = NetD()
        for real, _ in torch.utils.data.DataLoader([]):
            fake = netg(torch.randn(8, 100, 1, 1))
            pred_real = netd(real)
            pred_fake = netd(fake.detach())
    ''')
    assert found(findings) == [("SN301", 13), ("SN401", 34)]



def test_a_discriminator_moved_to_its_device_through_sync_batch_norm_conversion(lint):
    # TecoGAN-PyTorch: the factory's discriminator goes through `model_to_device`, which
    # on several GPUs makes its batch norms SyncBatchNorm and wraps it in DDP; it stays
    # the module the training code calls.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 4))

            def forward(self, x):
                return self.main(x)


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 4))

            def forward(self, x):
                return self.main(x)


        def define_discriminator(opt):
            if opt.name == "stnet":
                return Discriminator()
            elif opt.name == "patch":
                return Critic()
            raise ValueError(opt.name)


        class Model:
            def __init__(self, opt):
                self.dist = opt.dist
                self.net_G = nn.ConvTranspose2d(8, 3, 4)
                self.net_D = define_discriminator(opt)
                self.net_D = self.model_to_device(self.net_D)

            def model_to_device(self, net):
                net = net.to("cpu")
                if self.dist:
                    net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
                    net = nn.parallel.DistributedDataParallel(net)
                return net

            def train(self, loader):
                for real in loader:
                    fake = self.net_G(torch.randn(8, 8, 1, 1))
                    real_pred = self.net_D(real)
                    fake_pred = self.net_D(fake.detach())
    ''')
    assert found(findings) == [("SN301", 9), ("SN301", 18), ("SN401", 49)]


def test_an_encoder_of_the_discriminators_class_is_no_half_of_its_pairs(lint):
    # 3dbraingen's Alpha-GAN: the encoder is `E = Discriminator(out_class=latent_dim,
    # is_dis=False)`, another network of the same class; its call on the real batch is
    # no pair for the discriminator's call on a generated one.
    findings = lint('''
        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self, out_class=1, is_dis=True):
                super().__init__()
                self.main = nn.Sequential(nn.Conv3d(1, 64, 4), nn.BatchNorm3d(64), nn.Conv3d(64, out_class, 4))

            def forward(self, x):
                return self.main(x)


        G = nn.ConvTranspose3d(100, 1, 4)
        E = Discriminator(out_class=100, is_dis=False)
        D = Discriminator()
        for real_images in torch.utils.data.DataLoader([]):
            z_hat = E(real_images)
            x_hat = G(z_hat)
            x_rand = G(torch.randn(8, 100, 1, 1, 1))
            d_loss = D(x_hat).mean() + D(x_rand).mean() - 2 * D(real_images).mean()
    ''')
    assert found(findings) == [("SN301", 9), ("SN401", 22)]


def test_a_discriminator_held_by_another_as_self_discriminator_is_not_named_beside_it(lint):
    # SimSwap / Projected GAN: ProjectedDiscriminator holds its MultiScaleD as
    # `self.discriminator` (a discriminator's name) and runs it in its forward; the
    # training code's calls score the outer one.
    findings = lint('''
        import torch
        import torch.nn as nn


        class MultiScaleD(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 4))

            def forward(self, x):
                return self.main(x)


        class ProjectedDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.discriminator = MultiScaleD()

            def forward(self, x):
                return self.discriminator(x)


        netG = nn.ConvTranspose2d(8, 3, 4)
        netD = ProjectedDiscriminator()
        for real, _ in torch.utils.data.DataLoader([]):
            fake = netG(torch.randn(8, 8, 1, 1))
            gen_logits = netD(fake.detach())
            real_logits = netD(real)
    ''')
    assert [(f.code, f.line) for f in findings if f.code == "SN401"] == [("SN401", 28)]
    assert "MultiScaleD" not in findings[-1].message


def test_a_trainer_objects_own_train_method_runs_from_the_script(tmp_path):
    # DiscoGAN-pytorch, StarGAN: `trainer.train()` is the trainer's own method, not
    # nn.Module's mode switch; run from the script, it sees what the script set.
    from projects import lint_in

    findings = lint_in(tmp_path, {"trainer.py": '''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self, batch_norm):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.norm = nn.BatchNorm2d(64) if batch_norm else nn.Identity()

            def forward(self, x):
                return self.norm(self.conv(x))

        class Trainer(object):
            def __init__(self):
                self.batch_norm = False
                self.gen = nn.Conv2d(8, 3, 1)

            def train(self):
                disc = Discriminator(self.batch_norm)
                for real, _ in torch.utils.data.DataLoader([]):
                    d_real = disc(real)
                    d_fake = disc(self.gen(torch.randn(8, 8, 1, 1)).detach())
    ''', "main.py": '''
        from trainer import Trainer

        trainer = Trainer()
        trainer.batch_norm = True
        trainer.train()
    '''})
    assert [(f.code, f.path, f.line) for f in findings if f.code == "SN401"] == [("SN401", "trainer.py", 22)]


def test_a_scripts_module_level_attribute_assignment_is_kept(tmp_path):
    # `opt.norm = "batch"` after `parse_args()` in a script: the option the script trains with.
    from projects import lint_in

    findings = lint_in(tmp_path, {"train.py": '''
        import argparse
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self, norm):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.norm = nn.BatchNorm2d(64) if norm == "batch" else nn.InstanceNorm2d(64)

            def forward(self, x):
                return self.norm(self.conv(x))

        parser = argparse.ArgumentParser()
        parser.add_argument("--norm", default="instance")
        opt = parser.parse_args()
        opt.norm = "batch"
        netD, netG = Discriminator(opt.norm), nn.Conv2d(8, 3, 1)
        for real, _ in torch.utils.data.DataLoader([]):
            loss = netD(real).mean() - netD(netG(torch.randn(8, 8, 1, 1)).detach()).mean()
    '''})
    assert [(f.code, f.line) for f in findings] == [("SN301", 10), ("SN401", 21)]


# ================================== fsgan: a discriminator made from a string, pix2pixHD's pair

MULTISCALE = '''
    import torch
    import torch.nn as nn
    from factory import obj_factory


    class NLayerDiscriminator(nn.Module):
        def __init__(self, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.model = nn.Sequential(nn.Conv2d(3, 64, 4), norm_layer(64), nn.Conv2d(64, 1, 4))

        def forward(self, x):
            return self.model(x)


    class MultiscaleDiscriminator(nn.Module):
        def __init__(self, num_D=2):
            super().__init__()
            for i in range(num_D):
                netD = NLayerDiscriminator()
                setattr(self, "layer" + str(i), netD.model)

        def forward(self, x):
            return [getattr(self, "layer" + str(i))(x) for i in range(2)]


    D = obj_factory("models.MultiscaleDiscriminator")
    {generator} = obj_factory("models.Generator")
    opt = torch.optim.Adam(D.parameters())
    for img in torch.utils.data.DataLoader([]):
        out = {generator}(torch.randn(4, 8))
        pred_fake = D(out.detach())
        pred_real = D(img)
        loss = pred_fake[0].mean() - pred_real[0].mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


def test_a_discriminator_that_keeps_a_piece_of_another_is_the_one_a_bare_call_takes(lint):
    # MultiscaleDiscriminator builds an NLayerDiscriminator per scale and keeps its
    # `.model`: the two are one discriminator, so `D`, built where the source pass cannot
    # follow (fsgan's obj_factory), is taken for the outer one.
    findings = lint(MULTISCALE.format(generator="G"))
    sn401 = [f for f in findings if f.code == "SN401"]
    assert found(sn401) == [("SN401", 32)]
    assert "assumed to be MultiscaleDiscriminator, the project's only discriminator class" in sn401[0].explanation


@pytest.mark.parametrize("name", ["Gb", "G2"])
def test_a_generator_named_by_a_capital_g_and_a_letter_or_number(lint, name):
    # fsgan's blending and inpainting scripts call their generators `Gb` and `Gc`.
    findings = lint(MULTISCALE.format(generator=name))
    assert found(f for f in findings if f.code == "SN401") == [("SN401", 32)]


def test_a_generators_blocks_named_g_and_a_number_are_no_generators(lint):
    # CAT (SPADE's generator): `self.G_middle_0`'s output fed to `self.G_middle_1` is no
    # generated batch, and their block class, with a batch norm, no discriminator.
    findings = lint('''
        import torch.nn as nn


        class ResBlock(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.norm = nn.BatchNorm2d(c)
                self.conv = nn.Conv2d(c, c, 3)

            def forward(self, x, seg):
                return self.conv(self.norm(x)) + x


        class SPADEGenerator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Conv2d(3, 16, 3)
                self.head_0 = ResBlock(16)
                self.G_middle_0 = ResBlock(16)
                self.G_middle_1 = ResBlock(16)

            def forward(self, input):
                x = self.head_0(self.fc(input), input)
                x = self.G_middle_0(x, input)
                return self.G_middle_1(x, input)
    ''')
    assert found(findings) == []


def test_a_gradient_penalty_written_as_a_module_is_one(lint):
    # RealSR (BasicSR-old): `self.cri_gp = GradientPenaltyLoss()` takes the gradient in its
    # own forward, of the critic's output its caller passes.
    findings = lint('''
        import torch
        import torch.nn as nn


        class GradientPenaltyLoss(nn.Module):
            def forward(self, interp, interp_crit):
                grad = torch.autograd.grad(outputs=interp_crit, inputs=interp,
                                           grad_outputs=torch.ones_like(interp_crit), create_graph=True)[0]
                return ((grad.norm(2, dim=1) - 1) ** 2).mean()


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 3))

            def forward(self, x):
                return self.main(x)


        netD = Discriminator()
        cri_gp = GradientPenaltyLoss()
        for real, _ in torch.utils.data.DataLoader([]):
            interp = real.requires_grad_(True)
            interp_crit = netD(interp)
            l_d_gp = cri_gp(interp, interp_crit)
    ''')
    assert found(f for f in findings if f.code == "SN303") == [("SN303", 26)]
