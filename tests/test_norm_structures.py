"""Batch norm reached through strings and structures (issue 11): norm factories keyed by a
string, conv helpers whose mode string adds layers, lists of lists flattened, an
`OrderedDict` filled in a loop, `add_module` in a loop, classes under module-level `if`
branches. Each spelling has a twin that builds no batch norm and gets no SN301; SN201 is
checked on the same structures, so that the layers they build are seen either way.
"""

from __future__ import annotations

import pytest


def found(findings):
    return [(f.code, f.line) for f in findings]


# ------------------------------------------------------------ norm factories keyed by a string

GET_NORM_LAYER = '''
    import functools
    import torch.nn as nn


    def get_norm_layer(norm_type="instance"):
        if norm_type == "batch":
            norm_layer = functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
        elif norm_type == "instance":
            norm_layer = functools.partial(nn.InstanceNorm2d, affine=False)
        elif norm_type == "none":
            def norm_layer(x):
                return nn.Identity()
        else:
            raise NotImplementedError(norm_type)
        return norm_layer


    class Critic(nn.Module):
        def __init__(self, norm_layer):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4)
            self.norm = norm_layer(64)
            self.head = nn.Conv2d(64, 1, 4)


    netD = Critic(get_norm_layer({key}))
'''


def test_get_norm_layer_batch_is_batch_statistics(lint):
    findings = lint(GET_NORM_LAYER.format(key='"batch"'))
    assert found(findings) == [("SN301", 23)]
    assert findings[0].discriminator.evidence == "name"


@pytest.mark.parametrize("key", ['"instance"', '"none"', 'norm_type="instance"'])
def test_get_norm_layer_without_batch_statistics(lint, key):
    assert found(lint(GET_NORM_LAYER.format(key=key))) == []


NORM_STRING_ARGUMENT = '''
    import torch.nn as nn

    NORMS = {{"batch": nn.BatchNorm2d, "instance": nn.InstanceNorm2d}}


    class Discriminator(nn.Module):
        def __init__(self, norm={norm!r}, norm_type={norm_type!r}):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4)
            if norm == "batch_norm":
                self.n1 = nn.BatchNorm2d(64)
            elif norm == "instance_norm":
                self.n1 = nn.InstanceNorm2d(64)
            self.n2 = NORMS[norm_type](64)
            self.head = nn.Conv2d(64, 1, 4)
'''


def test_norm_strings_with_batch_defaults(lint):
    findings = lint(NORM_STRING_ARGUMENT.format(norm="batch_norm", norm_type="batch"))
    assert found(findings) == [("SN301", 12), ("SN301", 15)]


def test_norm_strings_with_instance_defaults(lint):
    assert found(lint(NORM_STRING_ARGUMENT.format(norm="instance_norm", norm_type="instance"))) == []


NORM_LAYER_CLASS = '''
    import torch.nn as nn


    class NormLayer(nn.Module):
        def __init__(self, channels, mode="batch"):
            super().__init__()
            if mode == "batch":
                self.norm = nn.BatchNorm2d(channels)
            elif mode == "instance":
                self.norm = nn.InstanceNorm2d(channels)
            else:
                self.norm = nn.Identity()


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 64, 4)
            self.norm = NormLayer(64{mode})
            self.head = nn.Conv2d(64, 1, 4)
'''


def test_norm_layer_class_with_a_batch_default_mode(lint):
    findings = lint(NORM_LAYER_CLASS.format(mode=""))
    assert found(findings) == [("SN301", 9)]
    assert findings[0].symbol == "NormLayer.norm"


@pytest.mark.parametrize("mode", [', mode="instance"', ', "none"'])
def test_norm_layer_class_with_another_mode(lint, mode):
    assert found(lint(NORM_LAYER_CLASS.format(mode=mode))) == []


MODE_STRING_HELPER = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    def conv(in_c=64, out_c=64, kernel_size=3, stride=1, padding=1, mode="CBR"):
        layers = []
        for t in mode:
            if t == "C":
                layers.append(nn.Conv2d(in_c, out_c, kernel_size, stride, padding))
            elif t == "S":
                layers.append(spectral_norm(nn.Conv2d(in_c, out_c, kernel_size, stride, padding)))
            elif t == "B":
                layers.append(nn.BatchNorm2d(out_c))
            elif t == "I":
                layers.append(nn.InstanceNorm2d(out_c))
            elif t == "L":
                layers.append(nn.LeakyReLU(0.2, inplace=True))
        return nn.Sequential(*layers)


    class Discriminator_VGG(nn.Module):
        def __init__(self, ac_type={ac_type!r}):
            super().__init__()
            conv0 = conv(3, 64, mode={first} + ac_type[-1])
            conv1 = conv(64, 64, 4, 2, 1, mode={rest} + ac_type)
            self.features = nn.Sequential(conv0, conv1)
'''


def test_mode_string_adds_a_batch_norm(lint):
    findings = lint(MODE_STRING_HELPER.format(ac_type="BL", first='"C"', rest='"C"'))
    assert found(findings) == [("SN301", 14)]
    assert findings[0].symbol == "Discriminator_VGG.features.1[*]"


def test_mode_string_without_b_builds_no_batch_norm(lint):
    assert found(lint(MODE_STRING_HELPER.format(ac_type="IL", first='"C"', rest='"C"'))) == []


def test_mode_string_sn_on_some_convs_only_is_sn201(lint):
    findings = lint(MODE_STRING_HELPER.format(ac_type="IL", first='"S"', rest='"C"'))
    assert found(findings) == [("SN201", 10)]
    assert findings[0].symbol == "Discriminator_VGG.features.1[*]"


NORM_TYPE_DOWN_HELPERS = '''
    import torch.nn as nn


    def norm(norm_type, nc):
        norm_type = norm_type.lower()
        if norm_type == "batch":
            layer = nn.BatchNorm2d(nc, affine=True)
        elif norm_type == "instance":
            layer = nn.InstanceNorm2d(nc, affine=False)
        else:
            raise NotImplementedError(norm_type)
        return layer


    def conv_block(in_nc, out_nc, kernel_size, stride=1, norm_type=None, act_type="relu"):
        c = nn.Conv2d(in_nc, out_nc, kernel_size, stride)
        n = norm(norm_type, out_nc) if norm_type else None
        a = nn.LeakyReLU(0.2) if act_type else None
        return nn.Sequential(*[m for m in (c, n, a) if m is not None])


    class Discriminator_VGG_128(nn.Module):
        def __init__(self, in_nc=3, base_nf=64, norm_type={norm_type!r}, act_type="leakyrelu"):
            super().__init__()
            conv0 = conv_block(in_nc, base_nf, 3, norm_type=None, act_type=act_type)
            conv1 = conv_block(base_nf, base_nf, 4, 2, norm_type=norm_type, act_type=act_type)
            self.features = nn.Sequential(conv0, conv1)
'''


def test_norm_type_batch_default_through_helpers(lint):
    findings = lint(NORM_TYPE_DOWN_HELPERS.format(norm_type="BATCH"))
    assert found(findings) == [("SN301", 18)]
    assert findings[0].symbol == "Discriminator_VGG_128.features.1.1"


def test_norm_type_instance_through_helpers(lint):
    assert found(lint(NORM_TYPE_DOWN_HELPERS.format(norm_type="instance"))) == []


def test_filtered_comprehension_drops_the_none_it_filters(lint):
    # Without the filter the None would be a layer of unknown kind; with it, the block is
    # conv + activation, and SN on the conv covers every conv of the discriminator.
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self, bn=False):
                super().__init__()
                c = spectral_norm(nn.Conv2d(3, 64, 4))
                n = nn.BatchNorm2d(64) if bn else None
                self.main = nn.Sequential(*[m for m in (c, n, nn.LeakyReLU(0.2)) if m is not None])
                self.head = nn.Conv2d(64, 1, 4)
    ''')
    assert found(findings) == [("SN201", 12)]
    assert findings[0].symbol == "Discriminator.head"


# ------------------------------------------------------------ lists of lists, dicts, add_module

BLOCKS = '''
    import itertools
    from collections import OrderedDict

    import torch.nn as nn


    def block(i, o):
        return [nn.Conv2d(i, o, 4, 2, 1), {norm}(o), nn.LeakyReLU(0.2)]


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            blocks = [block(3, 64), block(64, 128)]
            self.main = nn.Sequential(*{flatten})
'''

FLATTENINGS = [
    "sum(blocks, [])",
    "itertools.chain(*blocks)",
    "list(itertools.chain.from_iterable(blocks))",
    "[layer for b in blocks for layer in b]",
]


@pytest.mark.parametrize("flatten", FLATTENINGS)
def test_flattened_lists_of_blocks_keep_their_batch_norm(lint, flatten):
    findings = lint(BLOCKS.format(norm="nn.BatchNorm2d", flatten=flatten))
    assert found(findings) == [("SN301", 9)]
    assert findings[0].symbol == "Discriminator.main.1"


@pytest.mark.parametrize("flatten", FLATTENINGS)
def test_flattened_lists_of_blocks_with_instance_norm(lint, flatten):
    assert found(lint(BLOCKS.format(norm="nn.InstanceNorm2d", flatten=flatten))) == []


@pytest.mark.parametrize("flatten", FLATTENINGS)
def test_flattened_lists_of_blocks_are_covered_by_sn201(lint, flatten):
    # The head has SN, the flattened convs do not: every one of them is found.
    code = BLOCKS.format(norm="nn.InstanceNorm2d", flatten=flatten).replace(
        "            self.main = ", "            self.head = spectral_norm(nn.Conv2d(128, 1, 4))\n"
                                    "            self.main = ").replace(
        "import torch.nn as nn", "import torch.nn as nn\n    from torch.nn.utils import spectral_norm")
    findings = lint(code)
    assert found(findings) == [("SN201", 10)]
    assert findings[0].symbol == "Discriminator.main.0"


ORDERED_DICT_LOOP = '''
    from collections import OrderedDict

    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self, n=3):
            super().__init__()
            layers = OrderedDict()
            for i in range(n):
                layers[f"conv{{i}}"] = nn.Conv2d(64, 64, 3)
                layers["norm%d" % i] = {norm}(64)
            self.main = nn.Sequential(layers)
'''


def test_ordered_dict_filled_in_a_loop(lint):
    findings = lint(ORDERED_DICT_LOOP.format(norm="nn.BatchNorm2d"))
    assert found(findings) == [("SN301", 13)]


def test_ordered_dict_filled_in_a_loop_with_instance_norm(lint):
    assert found(lint(ORDERED_DICT_LOOP.format(norm="nn.InstanceNorm2d"))) == []


ADD_MODULE_LOOP = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self, n=3):
            super().__init__()
            main = nn.Sequential()
            i = 0
            while i < n:
                main.add_module("Middle-Conv [%d]" % i, nn.Conv2d(64, 64, 3))
                main.add_module("Middle-{norm} [{{}}]".format(i), nn.{norm}(64))
                i += 1
            for j in range(n):
                self.add_module(f"extra{{j}}", nn.Conv2d(64, 64, 3))
            self.main = main
'''


def test_add_module_in_loops(lint):
    findings = lint(ADD_MODULE_LOOP.format(norm="BatchNorm2d"))
    assert found(findings) == [("SN301", 12)]


def test_add_module_in_loops_with_instance_norm(lint):
    assert found(lint(ADD_MODULE_LOOP.format(norm="InstanceNorm2d"))) == []


# ------------------------------------------------------------ classes under module-level branches

BRANCHES = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm

    ARCH = 0

    if ARCH == 0:
        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential()
                self.main.add_module("conv", spectral_norm(nn.Conv2d(3, 64, 4)))
                self.main.add_module("norm", nn.{norm}(64))
                self.main.add_module("head", nn.Conv2d(64, 1, 4))
    else:
        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4))
                self.b = nn.Conv2d(64, 1, 4)
'''


def test_same_name_classes_in_both_branches_are_each_analysed(lint):
    findings = lint(BRANCHES.format(norm="BatchNorm2d"))
    assert found(findings) == [("SN301", 13), ("SN201", 14), ("SN201", 20)]
    assert [f.symbol for f in findings] == [
        "Discriminator.main.norm", "Discriminator.main.head", "Discriminator.b"]


def test_same_name_classes_in_both_branches_without_batch_norm(lint):
    assert found(lint(BRANCHES.format(norm="InstanceNorm2d"))) == [("SN201", 14), ("SN201", 20)]


def test_class_under_try_and_its_fallback_are_each_analysed(lint):
    findings = lint('''
        import torch.nn as nn

        try:
            from fancy import FancyNorm

            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 64, 4)
                    self.norm = FancyNorm(64)
        except ImportError:
            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 64, 4)
                    self.norm = nn.BatchNorm2d(64)
    ''')
    assert found(findings) == [("SN301", 17)]


def test_layers_collected_in_a_local_module_list_and_unpacked_keep_their_batch_norm(lint):
    # SinGAN: each scale's blocks go into a local `nn.ModuleList()`, unpacked into a
    # Sequential.
    findings = lint('''
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self, nf=32):
                super().__init__()
                self.sub_discriminators = nn.ModuleList()
                first = nn.ModuleList()
                first.append(nn.Conv2d(3, nf, 3, 1, 1))
                for _ in range(3):
                    first.append(nn.Sequential(nn.Conv2d(nf, nf, 3, 1, 1), nn.BatchNorm2d(nf), nn.LeakyReLU(0.2)))
                first.append(nn.Conv2d(nf, 1, 3, 1, 1))
                self.sub_discriminators.append(nn.Sequential(*first))

            def forward(self, x):
                return self.sub_discriminators[0](x)
    ''')
    assert found(findings) == [("SN301", 12)]


def test_layers_repacked_from_a_sequential_keep_their_batch_norm(lint):
    # A `sequential(*args)` helper that unpacks each Sequential's children into a new one.
    findings = lint('''
        import torch.nn as nn


        def sequential(*args):
            if len(args) == 1:
                return args[0]
            modules = []
            for module in args:
                if isinstance(module, nn.Sequential):
                    for submodule in module.children():
                        modules.append(submodule)
                elif isinstance(module, nn.Module):
                    modules.append(module)
            return nn.Sequential(*modules)


        def conv(in_c, out_c, mode="CBR"):
            layers = []
            for t in mode:
                if t == "C":
                    layers.append(nn.Conv2d(in_c, out_c, 3))
                elif t == "B":
                    layers.append(nn.BatchNorm2d(out_c))
            return sequential(*layers)


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = sequential(conv(3, 64, mode="C"), conv(64, 64, mode="CB"))
    ''')
    assert found(findings) == [("SN301", 24)]
    assert findings[0].symbol == "Discriminator.features[*]"


BRANCH_CHOSEN_BY_AN_OPTION = '''
    import argparse

    import torch
    import torch.nn as nn

    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", type=int, default={arch})
    param = parser.parse_args()

    if param.arch == 1:
        class DCGAN_D(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.LayerNorm(64), nn.Conv2d(64, 1, 4))

            def forward(self, x):
                return self.main(x)
    else:
        class DCGAN_D(nn.Module):
            def __init__(self):
                super().__init__()
                main = nn.Sequential()
                main.add_module("conv", nn.Conv2d(3, 64, 4))
                main.add_module("bn", nn.BatchNorm2d(64))
                self.main = main

            def forward(self, x):
                return self.main(x)

    D = DCGAN_D()
    for real in torch.utils.data.DataLoader(range(8)):
        fake = torch.randn(8, 3, 8, 8)
        loss = D(real).mean() - D(fake).mean()
'''


def test_the_branch_an_option_default_takes_is_the_class_the_script_builds(lint):
    findings = lint(BRANCH_CHOSEN_BY_AN_OPTION.format(arch=0))
    assert found(findings) == [("SN301", 25), ("SN401", 34)]
    assert findings[1].discriminator.evidence == "training code"


def test_the_other_branch_builds_no_batch_norm(lint):
    assert found(lint(BRANCH_CHOSEN_BY_AN_OPTION.format(arch=1))) == []
