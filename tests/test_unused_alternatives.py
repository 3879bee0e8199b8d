"""A class named as a discriminator that nothing in the project builds, beside the
discriminator the training code uses, is an alternative left in the code (instagan's
`PixelDiscriminator`, enhancing-transformers' `PatchDiscriminator`): not judged. With no
discriminator in use to set beside it, or when anything mentions it, it stays one by
its name."""

from __future__ import annotations

from projects import lint_in as lint

MODELS = '''
    import torch.nn as nn

    class NLayerDiscriminator(nn.Module):
        def __init__(self):
            super(NLayerDiscriminator, self).__init__()
            self.conv = nn.Conv2d(3, 64, 4, 2, 1)
            self.norm = nn.InstanceNorm2d(64)

        def forward(self, x):
            return self.norm(self.conv(x))

    class PixelDiscriminator(nn.Module):
        def __init__(self, norm_layer=nn.BatchNorm2d):
            super(PixelDiscriminator, self).__init__()
            self.conv = nn.Conv2d(3, 64, 1)
            self.norm = norm_layer(64)

        def forward(self, x):
            return self.norm(self.conv(x))

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(8, 3, 1)

        def forward(self, z):
            return self.conv(z)
'''

TRAIN = '''
    import torch
    from models import Generator, NLayerDiscriminator

    netD, netG = NLayerDiscriminator(), Generator()
    for real, _ in torch.utils.data.DataLoader([]):
        fake = netG(torch.randn(8, 8, 1, 1))
        loss = netD(real).mean() - netD(fake.detach()).mean()
'''


def codes(findings):
    return [(f.code, f.path, f.line) for f in findings]


def test_a_discriminator_class_nothing_builds_beside_the_one_in_use_is_not_judged(tmp_path):
    assert codes(lint(tmp_path, {"models.py": MODELS, "train.py": TRAIN})) == []


def test_a_model_file_alone_keeps_its_discriminators_by_name(tmp_path):
    assert codes(lint(tmp_path, {"models.py": MODELS})) == [("SN301", "models.py", 14)]


def test_a_class_a_string_names_is_not_an_unused_alternative(tmp_path):
    # `getattr(models, cfg["D"])` with the key in a config the link cannot read.
    train = TRAIN + '''
    ALTERNATIVES = ["PixelDiscriminator"]
'''
    assert codes(lint(tmp_path, {"models.py": MODELS, "train.py": train})) == [("SN301", "models.py", 14)]


def test_a_subclass_makes_its_base_used(tmp_path):
    models = MODELS + '''
    class PixelDiscriminatorSN(PixelDiscriminator):
        pass
'''
    found = codes(lint(tmp_path, {"models.py": models, "train.py": TRAIN}))
    assert ("SN301", "models.py", 14) in found


def test_a_registered_class_is_not_an_unused_alternative(tmp_path):
    # `@ARCH_REGISTRY.register()`: built by a key a YAML file may give.
    models = MODELS.replace("    class PixelDiscriminator(nn.Module):",
                            "    @ARCH_REGISTRY.register()\n    class PixelDiscriminator(nn.Module):")
    models = models.replace("import torch.nn as nn\n", "import torch.nn as nn\n    from registry import ARCH_REGISTRY\n", 1)
    found = codes(lint(tmp_path, {"models.py": models, "train.py": TRAIN, "registry.py": "ARCH_REGISTRY = {}\n"}))
    assert [code for code, _, _ in found] == ["SN301"]


def test_an_import_alone_does_not_use_a_class(tmp_path):
    # StyleGAN_PyTorch's train_stylegan.py imports networks_gan.Discriminator beside the
    # StyleDiscriminator it builds.
    train = TRAIN.replace("from models import Generator, NLayerDiscriminator",
                          "from models import Generator, NLayerDiscriminator, PixelDiscriminator")
    assert codes(lint(tmp_path, {"models.py": MODELS, "train.py": train})) == []


ALONE = '''
    import torch.nn as nn

    class PatchDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 4)
            self.norm = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.norm(self.conv(x))
'''


def test_a_discriminator_file_no_name_joins_to_the_training_code_keeps_its_finding(tmp_path):
    found = codes(lint(tmp_path, {"models.py": MODELS, "train.py": TRAIN, "other.py": ALONE}))
    assert found == [("SN301", "other.py", 8)]


def test_linked_whole_for_the_graph_pass_the_project_decides_alternatives_part_by_part(tmp_path, monkeypatch):
    # A graph run links the project in one part (it builds every discriminator together);
    # a file apart from the training code is still a model file alone. The graph pass is
    # stubbed to build nothing: only the link differs from the run above.
    import snlint.graph_pass
    from projects import write_project
    from snlint.config import Config
    from snlint.engine import run

    monkeypatch.setattr(snlint.graph_pass, "graph_pass", lambda project, config, **kw: ([], {}))
    write_project(tmp_path, {"models.py": MODELS, "train.py": TRAIN, "other.py": ALONE})
    monkeypatch.chdir(tmp_path)
    found = codes(run(["."], Config(root=tmp_path, graph=True)).findings)
    assert found == [("SN301", "other.py", 8)]
