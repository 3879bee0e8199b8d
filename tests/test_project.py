"""Cross-file resolution (the project index): helpers, blocks, hand-written SN and
discriminators defined in one file and used from another, through every import form
(`from .layers import snconv2d`, `import layers`, `from models import blocks`, ...).

Findings land in the file that holds the node the rule contract names: SN201 at the
call that builds the layer as the discriminator sees it (a helper's call site), SN1xx
at the SN call, wherever it is. Most tests use in-memory projects (`lint_project`,
display paths relative to the root); a few write real files and run the engine.
"""

from __future__ import annotations

import textwrap

import pytest

from snlint.config import Config
from snlint.engine import run

SOURCE_RULES = ["SN1", "SN2"]


def found(findings):
    return [(f.path, f.code, f.line, f.column) for f in findings]


LAYERS = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    def snconv2d(*args, **kwargs):
        return spectral_norm(nn.Conv2d(*args, **kwargs))


    def conv1x1(in_ch, out_ch):
        return nn.Conv2d(in_ch, out_ch, 1)
'''


# ---------------------------------------------------------------- import forms

def discriminator_using(import_line: str, prefix: str = "") -> str:
    """A discriminator that builds one conv with LAYERS' snconv2d and one with its plain
    conv1x1 (the SN201, at 9:21), the helpers imported by `import_line`."""
    return f'''
        import torch.nn as nn
        {import_line}

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = {prefix}snconv2d(3, 64, 3)
                self.proj = {prefix}conv1x1(64, 64)
    '''


PACKAGE = {"models/__init__.py": "", "models/layers.py": LAYERS}

# (the files beside the discriminator, its path, the import line, how helpers are named)
IMPORT_FORMS = [
    pytest.param(PACKAGE, "models/d.py", "from .layers import snconv2d, conv1x1", "",
                 id="relative-import-from-a-sibling-module"),
    pytest.param({"models/layers.py": LAYERS}, "models/d.py",
                 "from .layers import snconv2d, conv1x1", "",
                 id="relative-import-without-an-init-file"),
    pytest.param(PACKAGE, "models/d.py", "from . import layers", "layers.",
                 id="relative-import-of-the-module"),
    pytest.param({"layers.py": LAYERS}, "d.py", "import layers", "layers.",
                 id="import-of-a-sibling-script-module"),
    # Scripts run with their folder on sys.path: `import layers` in gan/d.py is gan/layers.py.
    pytest.param({"gan/layers.py": LAYERS}, "gan/d.py", "import layers as L", "L.",
                 id="import-of-a-sibling-script-module-in-a-subfolder"),
    pytest.param(PACKAGE, "train.py", "from models.layers import snconv2d, conv1x1", "",
                 id="absolute-from-import-of-a-package-module"),
    pytest.param({"layers.py": LAYERS}, "d.py", "from layers import *", "", id="star-import"),
]


@pytest.mark.parametrize(("beside", "path", "import_line", "prefix"), IMPORT_FORMS)
def test_helpers_resolve_through_every_import_form(lint_project, beside, path, import_line, prefix):
    findings = lint_project({**beside, path: discriminator_using(import_line, prefix)},
                            select=SOURCE_RULES)
    assert found(findings) == [(path, "SN201", 9, 21)]
    assert findings[0].symbol == "Discriminator.proj"


def test_an_import_from_inside_one_of_several_projects_finds_its_own_package(lint_project):
    # SelectionGAN: each project of the repository has its own `models` package and
    # imports `models.norms` from inside it (its scripts run from the project's folder).
    disc = '''
        import torch.nn as nn
        from models.norms import sn_layer

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.first = nn.Conv2d(3, 64, 4, 2, 1)
                self.last = sn_layer(nn.Conv2d(64, 1, 4, 1, 0))
    '''
    findings = lint_project({
        "a/models/__init__.py": "",
        "a/models/norms.py": '''
            from torch.nn.utils import spectral_norm

            def sn_layer(layer):
                return spectral_norm(layer)
        ''',
        "a/models/disc.py": disc,
        "b/models/__init__.py": "",
        "b/models/norms.py": '''
            def sn_layer(layer):
                return layer
        ''',
        "b/models/disc.py": disc,
    }, select=SOURCE_RULES)
    assert found(findings) == [("a/models/disc.py", "SN201", 8, 22)]



def test_a_script_folder_imports_its_own_module_before_the_roots_package(lint_project):
    # AttentionGAN: `AttentionGAN-v1/train.py` runs from its folder and imports its own
    # `models.py` (batch norm); the repository's root has a `models` package of another
    # project (instance norm).
    models = '''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.norm = nn.BatchNorm2d(64)

            def forward(self, x):
                return self.norm(self.conv(x))
    '''
    script = '''
        import torch
        import torch.nn as nn
        from models import Discriminator

        netD, netG = Discriminator(), nn.Conv2d(8, 3, 1)
        for real, _ in torch.utils.data.DataLoader([]):
            fake = netG(torch.randn(8, 8, 1, 1))
            loss = netD(real).mean() - netD(fake.detach()).mean()
    '''
    findings = lint_project({
        "models/__init__.py": "from models.nets import Discriminator\n",
        "models/nets.py": models.replace("BatchNorm2d", "InstanceNorm2d"),
        "train.py": script,
        "v1/models.py": models,
        "v1/train.py": script,
    })
    assert [(f.path, f.code, f.line) for f in findings] == [("v1/models.py", "SN301", 8), ("v1/train.py", "SN401", 9)]


def test_three_files_block_reported_in_the_block_file(lint_project):
    findings = lint_project({
        "models/__init__.py": "",
        "models/layers.py": LAYERS,
        "models/blocks.py": '''
            import torch.nn as nn
            from models.layers import snconv2d, conv1x1

            class DBlock(nn.Module):
                def __init__(self, in_ch, out_ch):
                    super().__init__()
                    self.c1 = snconv2d(in_ch, out_ch, 3, padding=1)
                    self.c2 = snconv2d(out_ch, out_ch, 3, padding=1)
                    self.c_sc = conv1x1(in_ch, out_ch)
        ''',
        "train.py": '''
            import torch.nn as nn
            from models import blocks

            class Discriminator(nn.Module):
                def __init__(self, ch=64):
                    super().__init__()
                    self.block1 = blocks.DBlock(3, ch)
                    self.block2 = blocks.DBlock(ch, ch * 2)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("models/blocks.py", "SN201", 10, 21)]
    f = findings[0]
    assert f.symbol == "DBlock.c_sc"
    assert "(2 instances built here)" in f.message
    assert f.discriminator.cls == "train.py:Discriminator"


def test_the_order_of_files_does_not_change_the_findings(lint_project):
    files = {
        "models/__init__.py": "",
        "models/layers.py": LAYERS,
        "models/d.py": '''
            import torch.nn as nn
            from .layers import snconv2d, conv1x1

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = snconv2d(3, 64, 3)
                    self.proj = conv1x1(64, 64)
        ''',
    }
    forward = lint_project(files, select=SOURCE_RULES)
    backward = lint_project(dict(reversed(list(files.items()))), select=SOURCE_RULES)
    assert found(forward) == found(backward) == [("models/d.py", "SN201", 9, 21)]


# ---------------------------------------------------------------- placement across files

def test_sn101_in_a_helper_of_another_file_is_reported_in_that_file(lint_project):
    findings = lint_project({
        "layers.py": LAYERS + '''

    def sn_norm(channels):
        return spectral_norm(nn.BatchNorm2d(channels))
''',
        "d.py": '''
            import torch.nn as nn
            from layers import snconv2d, sn_norm

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = snconv2d(3, 64, 3)
                    self.norm = sn_norm(64)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("layers.py", "SN101", 15, 12)]


def test_sn103_on_a_helper_of_another_file_is_reported_at_the_outer_call(lint_project):
    findings = lint_project({
        "models/__init__.py": "",
        "models/layers.py": LAYERS,
        "models/d.py": '''
            import torch.nn as nn
            from torch.nn.utils.parametrizations import spectral_norm
            from .layers import snconv2d

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = spectral_norm(snconv2d(3, 64, 3))
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("models/d.py", "SN103", 9, 21)]
    assert "models/layers.py" in findings[0].message


def test_sn101_on_a_plain_helper_of_another_file_wrapped_here(lint_project):
    findings = lint_project({
        "layers.py": '''
            import torch.nn as nn

            def norm_layer(channels):
                return nn.InstanceNorm2d(channels, affine=True)
        ''',
        "d.py": '''
            import torch.nn as nn
            from torch.nn.utils.parametrizations import spectral_norm
            from layers import norm_layer

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norm = spectral_norm(norm_layer(64))
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("d.py", "SN101", 9, 21)]


def test_sn106_weights_init_from_another_file(lint_project):
    findings = lint_project({
        "utils.py": '''
            import torch.nn as nn

            def weights_init(m):
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    nn.init.normal_(m.weight, 0.0, 0.02)
        ''',
        "d.py": '''
            import torch.nn as nn
            from torch.nn.utils.parametrizations import spectral_norm
            import utils

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = spectral_norm(nn.Conv2d(3, 64, 3))
                    self.apply(utils.weights_init)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("utils.py", "SN106", 6, 9)]


def test_sn_applied_by_apply_of_a_function_from_another_file(lint_project):
    findings = lint_project({
        "sn_utils.py": '''
            import torch.nn as nn
            from torch.nn.utils import spectral_norm

            def add_sn(m):
                if isinstance(m, (nn.Conv2d, nn.Linear, nn.BatchNorm2d)):
                    spectral_norm(m)
        ''',
        "d.py": '''
            import torch.nn as nn
            from sn_utils import add_sn

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 64, 3)
                    self.norm = nn.BatchNorm2d(64)
                    self.fc = nn.Linear(64, 1)
                    self.apply(add_sn)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("sn_utils.py", "SN101", 7, 9)]


# ---------------------------------------------------------------- hand-written SN across files

def test_hand_written_wrapper_imported_from_another_file_counts_as_sn(lint_project):
    findings = lint_project({
        "models/__init__.py": "",
        "models/spectral.py": '''
            import torch.nn as nn

            class SpectralNorm(nn.Module):
                def __init__(self, module, name="weight", power_iterations=1):
                    super().__init__()
                    self.module = module

                def _update_u_v(self):
                    pass

                def forward(self, *args):
                    self._update_u_v()
                    return self.module.forward(*args)
        ''',
        "models/d.py": '''
            import torch.nn as nn
            from .spectral import SpectralNorm

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.c1 = SpectralNorm(nn.Conv2d(3, 64, 3))
                    self.c2 = SpectralNorm(SpectralNorm(nn.Conv2d(64, 64, 3)))
                    self.fc = nn.Linear(64, 1)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("models/d.py", "SN103", 9, 19), ("models/d.py", "SN201", 10, 19)]


VENDORED_SN = '''
    """A copy of torch/nn/utils/spectral_norm.py, as older GAN repos vendor it."""
    import torch
    from torch.nn.functional import normalize


    class SpectralNorm(object):
        def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
            self.name = name
            self.dim = dim
            self.n_power_iterations = n_power_iterations
            self.eps = eps

        def compute_weight(self, module):
            weight = getattr(module, self.name + "_orig")
            u = getattr(module, self.name + "_u")
            return weight / torch.dot(u, u)

        def __call__(self, module, inputs):
            setattr(module, self.name, self.compute_weight(module))

        @staticmethod
        def apply(module, name, n_power_iterations, dim, eps):
            fn = SpectralNorm(name, n_power_iterations, dim, eps)
            weight = module._parameters[name]
            module.register_forward_pre_hook(fn)
            return fn


    def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
        if dim is None:
            dim = 0
        SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
        return module
'''


def test_a_vendored_copy_of_torch_spectral_norm_counts_as_sn(lint_project):
    findings = lint_project({
        "sn.py": VENDORED_SN,
        "d.py": '''
            import torch.nn as nn
            from sn import spectral_norm

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = spectral_norm(nn.Conv2d(3, 64, 3))
                    self.n = spectral_norm(nn.BatchNorm2d(64))
                    self.b = nn.Conv2d(64, 1, 3)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("d.py", "SN101", 9, 18), ("d.py", "SN201", 10, 18)]


BIGGAN_LAYERS = '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class SN(object):
        def __init__(self, num_svs, num_itrs, num_outputs, transpose=False, eps=1e-12):
            self.num_itrs = num_itrs
            self.num_svs = num_svs
            for i in range(self.num_svs):
                self.register_buffer("u%d" % i, torch.randn(1, num_outputs))
                self.register_buffer("sv%d" % i, torch.ones(1))

        @property
        def sv(self):
            return [getattr(self, "sv%d" % i) for i in range(self.num_svs)]

        def W_(self):
            return self.weight


    class SNConv2d(nn.Conv2d, SN):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                     dilation=1, groups=1, bias=True, num_svs=1, num_itrs=1, eps=1e-12):
            nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, stride,
                               padding, dilation, groups, bias)
            SN.__init__(self, num_svs, num_itrs, out_channels, eps=eps)

        def forward(self, x):
            return F.conv2d(x, self.W_(), self.bias, self.stride, self.padding)


    class SNLinear(nn.Linear, SN):
        def __init__(self, in_features, out_features, bias=True, num_svs=1, num_itrs=1, eps=1e-12):
            nn.Linear.__init__(self, in_features, out_features, bias)
            SN.__init__(self, num_svs, num_itrs, out_features, eps=eps)

        def forward(self, x):
            return F.linear(x, self.W_(), self.bias)
'''


def test_biggan_which_conv_partial_of_a_mixin_layer_from_another_file(lint_project):
    findings = lint_project({
        "layers.py": BIGGAN_LAYERS,
        "BigGAN.py": '''
            import functools
            import torch.nn as nn
            import layers

            class Discriminator(nn.Module):
                def __init__(self, D_ch=64, D_wide=True):
                    super().__init__()
                    self.which_conv = functools.partial(layers.SNConv2d, kernel_size=3, padding=1)
                    self.which_linear = functools.partial(layers.SNLinear)
                    self.which_embedding = nn.Embedding
                    self.conv1 = self.which_conv(3, D_ch)
                    self.conv2 = self.which_conv(D_ch, D_ch)
                    self.conv_sc = nn.Conv2d(3, D_ch, 1)
                    self.linear = self.which_linear(D_ch, 1)
                    self.embed = self.which_embedding(1000, D_ch)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("BigGAN.py", "SN201", 14, 24)]


def test_no_finding_for_a_biggan_discriminator_fully_built_from_mixin_layers(lint_project):
    findings = lint_project({
        "layers.py": BIGGAN_LAYERS,
        "BigGAN.py": '''
            import functools
            import torch.nn as nn
            import layers

            class DBlock(nn.Module):
                def __init__(self, in_channels, out_channels, which_conv=layers.SNConv2d):
                    super().__init__()
                    self.conv1 = which_conv(in_channels, out_channels)
                    self.conv2 = which_conv(out_channels, out_channels)
                    self.conv_sc = which_conv(in_channels, out_channels, kernel_size=1, padding=0)

            class Discriminator(nn.Module):
                def __init__(self, D_ch=64):
                    super().__init__()
                    self.which_conv = functools.partial(layers.SNConv2d, kernel_size=3, padding=1)
                    self.blocks = nn.ModuleList([
                        DBlock(3, D_ch, which_conv=self.which_conv),
                        DBlock(D_ch, D_ch * 2, which_conv=self.which_conv),
                    ])
                    self.linear = layers.SNLinear(D_ch * 2, 1)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == []


# ---------------------------------------------------------------- generator vs discriminator across files

def test_a_generator_using_the_same_helpers_is_never_sn201(lint_project):
    findings = lint_project({
        "models/__init__.py": "",
        "models/layers.py": LAYERS,
        "models/g.py": '''
            import torch.nn as nn
            from .layers import snconv2d, conv1x1

            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = snconv2d(64, 64, 3)
                    self.to_rgb = conv1x1(64, 3)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == []


def test_a_block_file_shared_by_generator_and_discriminator(lint_project):
    findings = lint_project({
        "blocks.py": '''
            import torch.nn as nn
            from torch.nn.utils.parametrizations import spectral_norm

            class ResBlock(nn.Module):
                def __init__(self, ch):
                    super().__init__()
                    self.c1 = spectral_norm(nn.Conv2d(ch, ch, 3, 1, 1))
                    self.c2 = nn.Conv2d(ch, ch, 3, 1, 1)
        ''',
        "g.py": '''
            import torch.nn as nn
            from blocks import ResBlock

            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.b = ResBlock(64)
        ''',
        "d.py": '''
            import torch.nn as nn
            from blocks import ResBlock

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.b = ResBlock(64)
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("blocks.py", "SN201", 9, 19)]
    assert findings[0].discriminator.cls == "d.py:Discriminator"


def test_a_discriminator_subclassing_a_base_from_another_file(lint_project):
    findings = lint_project({
        "base.py": '''
            import torch.nn as nn
            from torch.nn.utils.parametrizations import spectral_norm

            class BaseNet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = spectral_norm(nn.Conv2d(3, 64, 3))
                    self.b = nn.Conv2d(64, 1, 3)
        ''',
        "d.py": '''
            from base import BaseNet

            class PatchDiscriminator(BaseNet):
                pass
        ''',
    }, select=SOURCE_RULES)
    assert found(findings) == [("base.py", "SN201", 9, 18)]
    assert findings[0].discriminator.cls == "d.py:PatchDiscriminator"


def _write(root, files):
    for path, code in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(code), encoding="utf-8")


NETS_PROJECT = {
    "models/__init__.py": "",
    "models/layers.py": LAYERS,
    "models/nets.py": '''
        import torch.nn as nn
        from .layers import snconv2d, conv1x1

        class NLayerNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = snconv2d(3, 64, 3)
                self.head = conv1x1(64, 1)
    ''',
}


def test_real_files_configuration_makes_a_class_a_discriminator(tmp_path):
    _write(tmp_path, NETS_PROJECT)
    config = Config(root=tmp_path, select=SOURCE_RULES, graph=False, discriminators=["models/nets.py:NLayerNet"])
    findings = run([str(tmp_path)], config).findings
    assert [(f.code, f.line, f.column) for f in findings] == [("SN201", 9, 21)]
    assert findings[0].path.endswith("models/nets.py")
    assert findings[0].discriminator.evidence == "configuration"


def test_real_files_without_configuration_nothing_is_a_discriminator(tmp_path):
    _write(tmp_path, NETS_PROJECT)
    findings = run([str(tmp_path)], Config(root=tmp_path, select=SOURCE_RULES, graph=False)).findings
    assert findings == []


def test_real_files_helper_file_linted_alone_gives_nothing(tmp_path):
    _write(tmp_path, NETS_PROJECT)
    config = Config(root=tmp_path, select=SOURCE_RULES, graph=False, discriminators=["models/nets.py:NLayerNet"])
    findings = run([str(tmp_path / "models" / "layers.py")], config).findings
    assert findings == []


def test_linting_one_file_reads_the_helpers_it_imports_but_reports_only_it(tmp_path):
    from snlint.engine import run

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "layers.py").write_text(
        "import torch.nn as nn\n"
        "from torch.nn.utils import spectral_norm\n\n"
        "def snconv(*a, **k):\n"
        "    return spectral_norm(nn.Conv2d(*a, **k))\n\n"
        "bad = spectral_norm(nn.BatchNorm2d(3))\n")
    (tmp_path / "d.py").write_text(
        "import torch.nn as nn\n"
        "from layers import snconv\n\n"
        "class Discriminator(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.c1 = snconv(3, 64, 3)\n"
        "        self.c2 = nn.Conv2d(64, 64, 3)\n")
    findings = run([str(tmp_path / "d.py")], Config(root=tmp_path, graph=False)).findings
    assert [(f.path.rsplit("/", 1)[-1], f.code, f.line) for f in findings] == [("d.py", "SN201", 8)]


def test_a_class_re_exported_by_a_package_init_is_followed(tmp_path):
    from snlint.engine import run

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("from .nets import Critic\n")
    (tmp_path / "models" / "nets.py").write_text(
        "import torch.nn as nn\n\n"
        "class Critic(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.bn = nn.BatchNorm2d(3)\n")
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "from models import Critic\n\n"
        "def train(loader, G):\n"
        "    net = Critic()\n"
        "    for real, _ in loader:\n"
        "        fake = G(torch.randn(4, 8))\n"
        "        loss = net(fake).mean() - net(real).mean()\n")
    findings = run([str(tmp_path)], Config(root=tmp_path, graph=False)).findings
    assert [(f.path.rsplit("/", 1)[-1], f.code, f.line) for f in findings] == [
        ("nets.py", "SN301", 6), ("train.py", "SN401", 8)]
