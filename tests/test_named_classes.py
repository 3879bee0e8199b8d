"""Discriminators a project builds from a dotted name in its configuration (NVlabs'
dnnlib: `construct_class_by_name(class_name='pkg.mod.Cls')`), as StyleGAN-XL does: its
loss calls `self.D`, a constructor parameter the training loop fills with an instance
made from `c.D_kwargs.class_name`. Of several discriminator classes, the one a
`class_name` names is the one such a call is taken for (snlint.link.named_classes)."""

from __future__ import annotations

from snlint.link.named_classes import class_names, named_near, named_one
from snlint.source import extract_file
from projects import lint_in as lint

DISCRIMINATORS = {
    "pg_modules/__init__.py": "",
    "pg_modules/discriminator.py": '''
        import torch.nn as nn

        class ProjectedDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.bn = nn.BatchNorm2d(64)
                self.head = nn.Conv2d(64, 1, 4)

            def forward(self, x, c):
                return self.head(self.bn(self.conv(x)))
    ''',
    "training/__init__.py": "",
    "training/networks_stylegan2.py": '''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.head = nn.Conv2d(64, 1, 4)

            def forward(self, x, c):
                return self.head(self.conv(x))
    ''',
    "training/loss.py": '''
        class ProjectedGANLoss:
            def __init__(self, device, G, D):
                self.G = G
                self.D = D

            def run_D(self, img, c):
                return self.D(img, c)

            def accumulate_gradients(self, real_img, real_c, gen_z, gen_c):
                gen_img = self.G(gen_z, gen_c)
                gen_logits = self.run_D(gen_img, gen_c)
                loss_gen = gen_logits.mean()
                real_logits = self.run_D(real_img, real_c)
                (loss_gen - real_logits.mean()).backward()
    ''',
}

TRAIN = '''
    import dnnlib

    def main():
        c = dnnlib.EasyDict()
        c.G_kwargs = dnnlib.EasyDict(class_name='training.networks_stylegan2.Generator', z_dim=512)
        c.D_kwargs = dnnlib.EasyDict(class_name='pg_modules.discriminator.ProjectedDiscriminator')
        c.loss_kwargs = dnnlib.EasyDict(class_name='training.loss.ProjectedGANLoss')
        launch_training(c)
'''


def test_a_bare_call_is_taken_for_the_discriminator_the_configuration_builds_by_name(tmp_path):
    findings = lint(tmp_path, {**DISCRIMINATORS, "train.py": TRAIN})
    assert [(f.code, f.path, f.line) for f in findings] == [
        ("SN301", "pg_modules/discriminator.py", 8), ("SN401", "training/loss.py", 12)]
    assert findings[1].evidence.rstrip(".").endswith(
        "(self.D is not built where it is used; assumed to be ProjectedDiscriminator, the "
        "discriminator class the project builds by name "
        "(`pg_modules.discriminator.ProjectedDiscriminator` at train.py:7))")


def test_two_discriminators_named_assume_neither(tmp_path):
    # A configuration that builds one or the other (`--cfg`) says nothing of a bare call.
    train = TRAIN + '''
    def stylegan2(c):
        c.D_kwargs.class_name = 'training.networks_stylegan2.Discriminator'
'''
    findings = lint(tmp_path, {**DISCRIMINATORS, "train.py": train})
    assert [(f.code, f.path, f.line) for f in findings] == [("SN301", "pg_modules/discriminator.py", 8)]


def test_class_names_are_read_from_keywords_attributes_and_keys():
    text = ("import dnnlib\n"
            "kw = dnnlib.EasyDict(class_name='a.b.C')\n"
            "def f(cfg):\n"
            "    cfg.D_kwargs.class_name = 'nets.D'\n"
            "    cfg['class_name'] = 'nets.E'\n"
            "    cfg.other = 'nets.F'\n"
            "    cfg.class_name = 'not a name'\n")
    file, _ = extract_file(text, "train.py", "train.py")
    assert file.class_names == (("a.b.C", 2), ("nets.D", 4), ("nets.E", 5))  # facts of the file
    names = class_names([file])
    assert names == {"a.b.C": ("train.py", 2), "nets.D": ("train.py", 4), "nets.E": ("train.py", 5)}
    assert named_one(["pkg.nets.D", "pkg.nets.G"], names) == ("pkg.nets.D", "nets.D", ("train.py", 4))
    assert named_one(["pkg.nets.X"], names) is None


def test_in_a_repository_of_several_projects_a_call_takes_its_own_projects_class(tmp_path):
    # Diffusion-GAN: diffusion-projected-gan/ and diffusion-stylegan2/, each with its own
    # train.py naming its discriminator and a loss calling self.D.
    projected = {f"diffusion-projected-gan/{path}": text for path, text in DISCRIMINATORS.items()}
    stylegan = {f"diffusion-stylegan2/{path}": text for path, text in DISCRIMINATORS.items()
                if not path.startswith("pg_modules")}
    train = TRAIN.replace("pg_modules.discriminator.ProjectedDiscriminator",
                          "training.networks_stylegan2.Discriminator")
    findings = lint(tmp_path, {**projected, **stylegan, "diffusion-projected-gan/train.py": TRAIN,
                               "diffusion-stylegan2/train.py": train})
    assert [(f.code, f.path, f.line) for f in findings] == [
        ("SN301", "diffusion-projected-gan/pg_modules/discriminator.py", 8),
        ("SN401", "diffusion-projected-gan/training/loss.py", 12)]
    assert findings[1].evidence.rstrip(".").endswith(
        "assumed to be ProjectedDiscriminator, the discriminator class its project builds by name "
        "(`pg_modules.discriminator.ProjectedDiscriminator` at diffusion-projected-gan/train.py:7))")


def test_names_given_in_another_project_say_nothing_of_a_call(tmp_path):
    assert named_near({"a.nets.D": "a/nets.py"}, [("nets.D", "a/train.py", 3)], "b/loss.py") is None
    assert named_near({"a.nets.D": "a/nets.py"}, [("nets.D", "a/train.py", 3)], "a/loss.py") == \
        ("a.nets.D", "nets.D", ("a/train.py", 3))
