"""SN left off (SN201): a Conv*/ConvTranspose*/Linear of a discriminator that uses SN on
other layers has none. The finding points at the call that creates the layer, seen from
the discriminator: through a helper or a partial, at the helper's call site.

Every spelling of "this layer has SN" must count (aliases, helpers, partials,
post-construction SN, `modules()` loops, `apply(fn)`, hand-written SN), and only
discriminators are judged: SN in a generator is legitimate and never SN201.
"""

from __future__ import annotations


SOURCE_RULES = ["SN1", "SN2"]


def found(findings):
    return [(f.code, f.line, f.column) for f in findings]


# ---------------------------------------------------------------- where layers are built

def test_sn201_on_an_attribute_layer(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.fc = nn.Linear(64, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 19)]
    f = findings[0]
    assert (f.end_line, f.end_column) == (9, 35)
    assert f.symbol == "Discriminator.fc"
    assert (f.discriminator.cls, f.discriminator.evidence) == ("example.py:Discriminator", "name")
    assert f.severity == "error"


def test_sn201_on_the_first_layer(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.from_rgb = nn.Conv2d(3, 64, 1)
                self.conv = spectral_norm(nn.Conv2d(64, 128, 3, 1, 1))
                self.fc = spectral_norm(nn.Linear(128, 1))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 8, 25)]


def test_sn201_on_a_conv_transpose(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.up = nn.ConvTranspose2d(64, 64, 4, 2, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 19)]


def test_sn201_on_the_last_item_of_a_sequential_literal(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm as SN

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(
                    SN(nn.Conv2d(3, 64, 4, 2, 1)),
                    nn.LeakyReLU(0.2),
                    SN(nn.Conv2d(64, 128, 4, 2, 1)),
                    nn.Conv2d(128, 1, 4),
                )
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 12, 13)]
    assert findings[0].symbol == "Discriminator.main.3"
    assert (findings[0].end_line, findings[0].end_column) == (12, 33)


def test_sn201_on_a_layer_appended_in_a_loop_is_one_finding(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, n_layers=3):
                super().__init__()
                layers = [spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))]
                for i in range(n_layers):
                    layers.append(nn.Conv2d(64, 64, 3, 1, 1))
                    layers.append(nn.LeakyReLU(0.2))
                layers += [spectral_norm(nn.Conv2d(64, 1, 4))]
                self.layers = nn.Sequential(*layers)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 10, 27)]
    assert findings[0].symbol == "Discriminator.layers[*]"


def test_sn201_on_a_layer_built_in_a_list_over_a_literal_loop_counts_instances(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                layers = [spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))]
                for ch in [64, 128, 256]:
                    layers.append(nn.Conv2d(ch, ch, 3, 1, 1))
                self.layers = nn.Sequential(*layers)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 10, 27)]
    assert "(3 instances built here)" in findings[0].message


def test_sn201_on_a_layer_a_loop_of_unknown_count_builds_gives_no_count(lint):
    # `range(1, n_layers)` is read once for all its runs: with the call after it, the
    # helper's conv is built n_layers times, not twice.
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        def conv(c):
            return nn.Conv2d(c, c, 3, 1, 1)

        class Discriminator(nn.Module):
            def __init__(self, n_layers=3):
                super().__init__()
                layers = [spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))]
                for n in range(1, n_layers):
                    layers.append(conv(64))
                layers.append(conv(64))
                self.layers = nn.Sequential(*layers)
    ''', select=SOURCE_RULES)
    assert [f.code for f in findings] == ["SN201", "SN201"]
    assert not [f.message for f in findings if "instances built here" in f.message]


def test_sn201_in_a_module_list(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([spectral_norm(nn.Conv2d(3, 64, 3)), nn.Conv2d(64, 64, 3)])
                self.heads = nn.ModuleList()
                self.heads.append(nn.Linear(64, 1))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 8, 74), ("SN201", 10, 27)]
    assert [f.symbol for f in findings] == ["Discriminator.blocks.1", "Discriminator.heads.0"]


def test_sn201_in_an_ordered_dict_sequential(lint):
    findings = lint('''
        from collections import OrderedDict
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(OrderedDict([
                    ("conv1", spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))),
                    ("act1", nn.LeakyReLU(0.2)),
                    ("conv2", nn.Conv2d(64, 1, 4)),
                ]))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 12, 23)]
    assert findings[0].symbol == "Discriminator.main.conv2"


def test_sn201_on_a_layer_added_with_add_module(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.add_module("conv1", spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)))
                self.add_module("conv2", nn.Conv2d(64, 1, 4))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 34)]
    assert findings[0].symbol == "Discriminator.conv2"


def test_sn201_on_a_layer_added_with_setattr_in_a_loop(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, n=3):
                super().__init__()
                self.first = spectral_norm(nn.Conv2d(3, 64, 3))
                for i in range(n):
                    setattr(self, f"conv{i}", nn.Conv2d(64, 64, 3))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 10, 39)]


def test_sn201_symbol_of_a_layer_added_with_setattr_in_a_loop_has_no_placeholder(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, n=3):
                super().__init__()
                self.first = spectral_norm(nn.Conv2d(3, 64, 3))
                for i in range(n):
                    setattr(self, f"conv{i}", nn.Conv2d(64, 64, 3))
    ''', select=SOURCE_RULES)
    assert findings[0].symbol.startswith("Discriminator.")
    assert "<" not in findings[0].symbol


def test_sn201_on_a_layer_added_with_setattr_by_name(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                setattr(self, "conv1", spectral_norm(nn.Conv2d(3, 64, 3)))
                setattr(self, "conv2", nn.Conv2d(64, 64, 3))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 32)]
    assert findings[0].symbol == "Discriminator.conv2"


def test_sn201_in_a_module_dict(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = nn.ModuleDict({
                    "real": spectral_norm(nn.Linear(64, 1)),
                    "cls": nn.Linear(64, 10),
                })
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 10, 20)]
    assert findings[0].symbol == "Discriminator.heads.cls"


def test_a_module_dict_built_from_key_module_pairs(lint):
    # Projected GAN's MultiScaleD: `mini_discs += [str(i), Disc(...)],` then
    # `nn.ModuleDict(mini_discs)`; the keys are not known here.
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class MultiScaleDiscriminator(nn.Module):
            def __init__(self, channels):
                super().__init__()
                mini_discs = []
                for i, cin in enumerate(channels):
                    mini_discs += [str(i), nn.Sequential(spectral_norm(nn.Conv2d(cin, 64, 4)), nn.Conv2d(64, 1, 4))],
                self.mini_discs = nn.ModuleDict(mini_discs)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 10, 88)]
    assert findings[0].symbol == "MultiScaleDiscriminator.mini_discs[*][*]"


def test_sn201_in_a_sequential_filled_with_add_module(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential()
                self.main.add_module("conv", spectral_norm(nn.Conv2d(3, 64, 3)))
                self.main.add_module("out", nn.Conv2d(64, 1, 3))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 10, 37)]
    assert findings[0].symbol == "Discriminator.main.out"


def test_no_sn201_for_layers_of_a_sequential_comprehension_with_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, chs=(64, 128, 256)):
                super().__init__()
                self.main = nn.Sequential(*[
                    spectral_norm(nn.Conv2d(a, b, 3)) for a, b in zip(chs[:-1], chs[1:])
                ])
                self.fc = nn.Linear(256, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 11, 19)]


def test_sn201_for_a_layer_inside_a_sequential_a_helper_returns(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def down(in_ch, out_ch):
            return nn.Sequential(
                spectral_norm(nn.Conv2d(in_ch, out_ch, 4, 2, 1)),
                nn.LeakyReLU(0.2),
                nn.Conv2d(out_ch, out_ch, 3, 1, 1),
            )

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.d1 = down(3, 64)
                self.d2 = down(64, 128)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 9)]
    assert "(2 instances built here)" in findings[0].message


def test_sn201_for_layers_built_by_a_make_layers_method(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = self._make_layers([64, 128])
                self.fc = nn.Linear(128, 1)

            def _make_layers(self, chs):
                layers = []
                in_ch = 3
                for ch in chs:
                    layers += [spectral_norm(nn.Conv2d(in_ch, ch, 3)), nn.LeakyReLU(0.2)]
                    in_ch = ch
                layers.append(nn.Conv2d(in_ch, in_ch, 1))
                return nn.Sequential(*layers)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 19), ("SN201", 17, 23)]


def test_sn201_on_a_project_subclass_of_conv2d(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class MyConv(nn.Conv2d):
            pass

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 3))
                self.b = MyConv(64, 64, 3)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 12, 18)]


def test_no_sn201_when_an_unknown_option_chooses_between_sn_and_no_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, opt):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 3))
                if opt.use_sn:
                    self.b = spectral_norm(nn.Conv2d(64, 64, 3))
                else:
                    self.b = nn.Conv2d(64, 64, 3)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn201_pix2pix_nlayer_discriminator_last_conv(lint):
    findings = lint('''
        import functools
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class NLayerDiscriminator(nn.Module):
            def __init__(self, input_nc=3, ndf=64, n_layers=3, norm_layer=nn.InstanceNorm2d):
                super().__init__()
                if type(norm_layer) == functools.partial:
                    use_bias = norm_layer.func == nn.InstanceNorm2d
                else:
                    use_bias = norm_layer == nn.InstanceNorm2d
                kw = 4
                padw = 1
                sequence = [spectral_norm(nn.Conv2d(input_nc, ndf, kernel_size=kw, stride=2, padding=padw)),
                            nn.LeakyReLU(0.2, True)]
                nf_mult = 1
                for n in range(1, n_layers):
                    nf_mult_prev = nf_mult
                    nf_mult = min(2 ** n, 8)
                    sequence += [
                        spectral_norm(nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw,
                                                stride=2, padding=padw, bias=use_bias)),
                        norm_layer(ndf * nf_mult),
                        nn.LeakyReLU(0.2, True),
                    ]
                sequence += [nn.Conv2d(ndf * nf_mult, 1, kernel_size=kw, stride=1, padding=padw)]
                self.model = nn.Sequential(*sequence)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 27, 22)]


def test_sn201_on_a_learnable_shortcut_built_under_a_condition(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class DBlock(nn.Module):
            def __init__(self, in_ch, out_ch):
                super().__init__()
                self.c1 = spectral_norm(nn.Conv2d(in_ch, out_ch, 3, 1, 1))
                self.learnable_sc = in_ch != out_ch
                if self.learnable_sc:
                    self.c_sc = nn.Conv2d(in_ch, out_ch, 1)

        class ResNetDiscriminator(nn.Module):
            def __init__(self, ch=64):
                super().__init__()
                self.block1 = DBlock(3, ch)
                self.block2 = DBlock(ch, ch)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 11, 25)]
    assert findings[0].symbol == "DBlock.c_sc"


def test_sn201_for_a_block_used_twice_is_one_finding_counting_instances(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class DBlock(nn.Module):
            def __init__(self, in_ch, out_ch):
                super().__init__()
                self.c1 = spectral_norm(nn.Conv2d(in_ch, out_ch, 3, 1, 1))
                self.c_sc = nn.Conv2d(in_ch, out_ch, 1)

        class Discriminator(nn.Module):
            def __init__(self, ch=64):
                super().__init__()
                self.block1 = DBlock(3, ch)
                self.block2 = DBlock(ch, ch * 2)
                self.fc = spectral_norm(nn.Linear(ch * 2, 1))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 21)]
    assert "(2 instances built here)" in findings[0].message


def test_sn201_on_multihead_attention_out_proj_is_not_reported(lint):
    # out_proj's forward is bypassed; SN107 is the rule about it, not SN201.
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(3, 64, 3))
                self.attn = nn.MultiheadAttention(64, 4)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn201_for_layers_without_a_weight_matrix_to_normalize(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, n_classes=10):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(3, 64, 3))
                self.norm = nn.GroupNorm(4, 64)
                self.act = nn.LeakyReLU(0.2)
                self.embed = nn.Embedding(n_classes, 64)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


# ---------------------------------------------------------------- helpers and partials

def test_sn201_through_a_plain_helper_is_at_the_helper_call_site(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def snconv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))

        def conv1x1(in_ch, out_ch):
            return nn.Conv2d(in_ch, out_ch, 1)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = snconv2d(3, 64, 3)
                self.proj = conv1x1(64, 64)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 15, 21)]
    assert (findings[0].end_line, findings[0].end_column) == (15, 36)


def test_no_sn201_for_layers_built_by_an_sn_helper(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def snconv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))

        def snlinear(*args, **kwargs):
            return spectral_norm(nn.Linear(*args, **kwargs))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = snconv2d(3, 64, 3)
                self.fc = snlinear(64, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn201_through_a_helper_with_an_sn_switch_turned_off(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def conv(in_ch, out_ch, k=3, use_sn=True):
            layer = nn.Conv2d(in_ch, out_ch, k)
            if use_sn:
                layer = spectral_norm(layer)
            return layer

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = conv(3, 64)
                self.b = conv(64, 1, use_sn=False)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 15, 18)]


def test_sn201_for_a_helper_class_whose_flag_turns_its_sn_off_is_at_the_helper_call(lint):
    # Self-Supervised-GANs: `conv2d(..., spectral_normed=False)` builds the Conv2d that the
    # helper normalizes everywhere else: the finding is where the flag is passed, and
    # wrapping the helper's own layer (every instance) is no fix.
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class conv2d(nn.Module):
            def __init__(self, in_ch, out_ch, spectral_normed=False):
                super().__init__()
                self.conv = nn.Conv2d(in_ch, out_ch, 3)
                if spectral_normed:
                    self.conv = spectral_norm(self.conv)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = conv2d(3, 64, spectral_normed=True)
                self.b = conv2d(64, 64, spectral_normed=True)
                self.shortcut = conv2d(3, 64, spectral_normed=False)
    ''', select=SOURCE_RULES, fixes=True)
    assert found(findings) == [("SN201", 17, 25)]
    assert "conv2d normalizes the Conv2d it builds in 2 other instances" in findings[0].message
    assert findings[0].fix is None


def test_sn201_for_a_block_whose_norm_string_picks_the_plain_branch_is_at_the_block_call(lint):
    # MUNIT: `Conv2dBlock(norm='sn')` wraps its conv on one line, `else` builds it plain on
    # another; the first block, `norm='none'`, is the one without SN, and its call is where
    # that is chosen (wrapping the `else` line would normalize every plain block).
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Conv2dBlock(nn.Module):
            def __init__(self, in_ch, out_ch, norm='none'):
                super().__init__()
                if norm == 'sn':
                    self.conv = spectral_norm(nn.Conv2d(in_ch, out_ch, 3))
                else:
                    self.conv = nn.Conv2d(in_ch, out_ch, 3)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Conv2dBlock(3, 64, norm='none')
                self.b = Conv2dBlock(64, 64, norm='sn')
                self.c = Conv2dBlock(64, 64, norm='sn')
    ''', select=SOURCE_RULES, fixes=True)
    assert found(findings) == [("SN201", 16, 18)]
    assert findings[0].message == (
        "Conv2d Conv2dBlock.conv has no spectral norm: Conv2dBlock normalizes the Conv2d it "
        "builds in 2 other instances of Discriminator, not in the one built here")
    assert findings[0].fix is None


def test_sn201_for_blocks_built_in_a_loop_gives_no_count(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Conv2dBlock(nn.Module):
            def __init__(self, in_ch, out_ch, norm='none'):
                super().__init__()
                if norm == 'sn':
                    self.conv = spectral_norm(nn.Conv2d(in_ch, out_ch, 3))
                else:
                    self.conv = nn.Conv2d(in_ch, out_ch, 3)

        class Discriminator(nn.Module):
            def __init__(self, n_layer=4):
                super().__init__()
                layers = [Conv2dBlock(3, 64, norm='none')]
                for _ in range(n_layer - 1):
                    layers.append(Conv2dBlock(64, 64, norm='sn'))
                self.main = nn.Sequential(*layers)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 16, 19)]
    assert "normalizes the Conv2d it builds in other instances of Discriminator" in findings[0].message


def test_sn201_for_such_a_block_is_one_finding_when_another_instance_reads_an_unknown_config(lint_project):
    # The instance a test script builds from a config file named on its command line has
    # the block's norm unknown: its plain conv shows at the `else` line, the same mistake
    # the trained instance reports at the block's call.
    files = {
        "nets.py": '''
            import torch.nn as nn
            from torch.nn.utils import spectral_norm

            class Conv2dBlock(nn.Module):
                def __init__(self, in_ch, out_ch, norm='none'):
                    super().__init__()
                    if norm == 'sn':
                        self.conv = spectral_norm(nn.Conv2d(in_ch, out_ch, 3))
                    else:
                        self.conv = nn.Conv2d(in_ch, out_ch, 3)

                def forward(self, x):
                    return self.conv(x)

            class Dis(nn.Module):
                def __init__(self, params):
                    super().__init__()
                    self.a = Conv2dBlock(3, 64, norm='none')
                    self.b = Conv2dBlock(64, 64, norm=params['norm'])
                    self.head = spectral_norm(nn.Conv2d(64, 1, 1))

                def forward(self, x):
                    return self.head(self.b(self.a(x)))
        ''',
        "train.py": '''
            import torch
            from nets import Dis

            def train(loader, gen, z):
                dis = Dis({'norm': 'sn'})
                opt = torch.optim.Adam(dis.parameters())
                for x in loader:
                    loss = dis(gen(z).detach()).mean() - dis(x).mean()
                    loss.backward()
                    opt.step()
        ''',
        "test.py": '''
            import json
            import sys

            import torch
            from nets import Dis

            params = json.load(open(sys.argv[1]))
            dis = Dis(params)
            for x in torch.utils.data.DataLoader([]):
                print(dis(x))
        ''',
    }
    findings = lint_project(files, select=SOURCE_RULES)
    assert [(f.code, f.path, f.line, f.column) for f in findings] == [("SN201", "nets.py", 19, 18)]


def test_no_sn201_for_a_partial_of_an_sn_helper(lint):
    findings = lint('''
        import functools
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def snconv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))

        snconv3x3 = functools.partial(snconv2d, kernel_size=3, padding=1)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = snconv3x3(3, 64)
                self.b = snconv3x3(64, 64)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn201_through_a_partial_of_a_plain_layer_is_at_the_call(lint):
    findings = lint('''
        from functools import partial
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        conv3x3 = partial(nn.Conv2d, kernel_size=3, padding=1)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(conv3x3(3, 64))
                self.b = conv3x3(64, 64)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 12, 18)]


def test_sn201_biggan_which_conv_partials_stored_on_self(lint):
    findings = lint('''
        import functools
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        def SNConv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))

        class Discriminator(nn.Module):
            def __init__(self, ch=64):
                super().__init__()
                self.which_conv = functools.partial(SNConv2d, kernel_size=3, padding=1)
                self.which_linear = functools.partial(nn.Linear)
                self.conv1 = self.which_conv(3, ch)
                self.conv2 = self.which_conv(ch, ch)
                self.linear = self.which_linear(ch, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 16, 23)]
    assert findings[0].symbol == "Discriminator.linear"


def test_sn201_when_a_discriminator_picks_sn_by_a_flag(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, use_sn=True):
                super().__init__()
                norm = spectral_norm if use_sn else (lambda m: m)
                self.a = norm(nn.Conv2d(3, 64, 3))
                self.b = norm(nn.Conv2d(64, 64, 3))
                self.fc = nn.Linear(64, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 11, 19)]


# ---------------------------------------------------------------- post-construction SN

def test_no_sn201_after_reassigning_each_layer_with_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 64, 3)
                self.c2 = nn.Conv2d(64, 1, 3)
                self.c1 = spectral_norm(self.c1)
                self.c2 = spectral_norm(self.c2)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn201_on_the_layer_a_post_construction_sn_forgot(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 64, 3)
                self.c2 = nn.Conv2d(64, 1, 3)
                self.c1 = spectral_norm(self.c1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 19)]


def test_no_sn201_with_a_modules_loop_over_conv_and_linear(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2))
                self.fc = nn.Linear(64, 1)
                for m in self.modules():
                    if isinstance(m, (nn.Conv2d, nn.Linear)):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn201_for_the_type_a_modules_loop_filter_leaves_out(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 4, 2, 1)
                self.fc = nn.Linear(64, 1)
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 19)]


def test_no_sn201_with_a_modules_loop_filtered_by_the_conv_base_class(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.fc = spectral_norm(nn.Linear(64, 1))
                for m in self.modules():
                    if isinstance(m, nn.modules.conv._ConvNd):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn201_when_a_loop_over_a_module_list_applies_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.convs = nn.ModuleList([nn.Conv2d(64, 64, 3) for _ in range(3)])
                self.fc = spectral_norm(nn.Linear(64, 1))
                for conv in self.convs:
                    spectral_norm(conv)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn201_with_apply_of_a_module_level_function(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        def add_sn(m):
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                spectral_norm(m)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 3)
                self.fc = nn.Linear(64, 1)
                self.apply(add_sn)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn201_with_apply_of_a_nested_function(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 3)
                self.fc = nn.Linear(64, 1)

                def add_sn(m):
                    if isinstance(m, (nn.Conv2d, nn.Linear)):
                        spectral_norm(m)

                self.apply(add_sn)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn201_for_the_type_a_static_method_apply_filter_leaves_out(lint):
    # Read on `self`, a static method gets no `self`: each module is its `m`.
    findings = lint('''
        import torch
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(1, 16, 15, 1, 7)
                self.fc = nn.Linear(16, 1)
                self.apply(self._apply_sn)

            @staticmethod
            def _apply_sn(m):
                if isinstance(m, nn.Conv1d):
                    torch.nn.utils.spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 19)]


def test_no_sn201_with_apply_of_a_class_method(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            KINDS = (nn.Conv2d, nn.Linear)

            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 3)
                self.fc = nn.Linear(64, 1)
                self.apply(self._apply_sn)

            @classmethod
            def _apply_sn(cls, m):
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn201_for_the_type_an_apply_filter_leaves_out(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        def add_sn(m):
            if isinstance(m, nn.Conv2d):
                return spectral_norm(m)
            return m

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 3)
                self.fc = nn.Linear(64, 1)
                self.apply(add_sn)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 14, 19)]


def test_no_sn201_when_a_subclass_adds_sn_to_a_base_class_layer(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 3))
                self.b = nn.Conv2d(64, 1, 3)

        class Discriminator(Base):
            def __init__(self):
                super().__init__()
                self.b = spectral_norm(self.b)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn201_when_the_discriminator_is_handed_to_an_unknown_function(lint):
    # Something snlint cannot follow may add SN: it does not guess.
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm
        from mylib import add_spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 3))
                self.b = nn.Conv2d(64, 1, 3)
                add_spectral_norm(self)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


# ---------------------------------------------------------------- hand-written SN counts as SN

def test_hand_written_wrapper_class_counts_as_sn(lint):
    findings = lint('''
        import torch.nn as nn

        class SpectralNorm(nn.Module):
            def __init__(self, module, name="weight", power_iterations=1):
                super().__init__()
                self.module = module
                self.name = name
                self.power_iterations = power_iterations

            def _update_u_v(self):
                pass

            def forward(self, *args):
                self._update_u_v()
                return self.module.forward(*args)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = SpectralNorm(nn.Conv2d(3, 64, 3))
                self.c2 = SpectralNorm(nn.Conv2d(64, 64, 3))
                self.fc = nn.Linear(64, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 23, 19)]


# torch's own hook SN vendored into a project (for an old torch): `spectral_norm(module)`
# calls `SpectralNorm.apply(module, name)`, whose hook is built around the parameter's
# name and registered on the module.
VENDORED_SN = '''
    import torch
    import torch.nn as nn


    class {cls}:
        def __init__(self, name):
            self.name = name

        def compute_weight(self, module):
            return getattr(module, self.name + "_orig")

        @staticmethod
        def apply(module, name):
            fn = {cls}(name)
            weight = getattr(module, name)
            del module._parameters[name]
            module.register_parameter(name + "_orig", nn.Parameter(weight.data))
            module.register_forward_pre_hook(fn)
            return fn

        def __call__(self, module, input):
            setattr(module, self.name, self.compute_weight(module))


    def {fn}(module, name="weight"):
        {cls}.apply(module, name)
        return module


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = {fn}(nn.Conv2d(3, 64, 3))
            self.c2 = {fn}(nn.Conv2d(64, 64, 3))
            self.fc = nn.Linear(64, 1)
'''


def test_vendored_hook_spectral_norm_counts_as_sn(lint):
    findings = lint(VENDORED_SN.format(cls="SpectralNorm", fn="spectral_norm"), select=SOURCE_RULES, fixes=True)
    assert found(findings) == [("SN201", 36, 19)]
    # The fix wraps the layer in the project's own function, as the others are.
    assert "self.fc = spectral_norm(nn.Linear(64, 1))" in findings[0].fix.edits[0].new_text


def test_an_equalized_learning_rate_of_the_same_shape_is_no_sn(lint):
    # rosinality's EqualLR: `compute_weight`, `apply`, a hook; a weight scale, not SN.
    assert found(lint(VENDORED_SN.format(cls="EqualLR", fn="equal_lr"), select=SOURCE_RULES)) == []


def test_biggan_sn_mixin_layers_count_as_sn(lint):
    findings = lint('''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class SN(object):
            def __init__(self, num_svs, num_itrs, num_outputs, eps=1e-12):
                self.num_svs = num_svs
                self.num_itrs = num_itrs

            @property
            def sv(self):
                return [getattr(self, "sv%d" % i) for i in range(self.num_svs)]

            def W_(self):
                return self.weight

        class SNConv2d(nn.Conv2d, SN):
            def __init__(self, in_channels, out_channels, kernel_size, padding=0, num_svs=1, num_itrs=1):
                nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, padding=padding)
                SN.__init__(self, num_svs, num_itrs, out_channels)

            def forward(self, x):
                return F.conv2d(x, self.W_(), self.bias, self.stride, self.padding)

        class Discriminator(nn.Module):
            def __init__(self, ch=64):
                super().__init__()
                self.conv1 = SNConv2d(3, ch, 3, padding=1)
                self.conv_sc = nn.Conv2d(3, ch, 1)
                self.conv2 = SNConv2d(ch, ch, 3, padding=1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 30, 24)]


# ---------------------------------------------------------------- generator vs discriminator

def test_no_sn201_in_a_generator_that_uses_sn_on_some_layers(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = spectral_norm(nn.Linear(128, 4 * 4 * 256))
                self.up = spectral_norm(nn.ConvTranspose2d(256, 128, 4, 2, 1))
                self.to_rgb = nn.Conv2d(128, 3, 3, 1, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn201_in_a_discriminator_without_any_sn(lint):
    findings = lint('''
        import torch.nn as nn

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Conv2d(3, 64, 4, 2, 1)
                self.b = nn.Conv2d(64, 1, 4)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn201_in_a_class_that_is_neither(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.b = nn.Conv2d(64, 1, 4)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_a_block_shared_with_the_generator_is_judged_where_the_discriminator_builds_it(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class ResBlock(nn.Module):
            def __init__(self, ch, sn=False):
                super().__init__()
                conv = nn.Conv2d(ch, ch, 3, 1, 1)
                self.c1 = spectral_norm(conv) if sn else conv
                self.c2 = nn.Conv2d(ch, ch, 3, 1, 1)

        class Generator(nn.Module):
            def __init__(self, ch=64):
                super().__init__()
                self.block = ResBlock(ch)

        class Discriminator(nn.Module):
            def __init__(self, ch=64):
                super().__init__()
                self.block = ResBlock(ch, sn=True)
    ''', select=SOURCE_RULES, fixes=True)
    assert found(findings) == [("SN201", 10, 19)]
    assert findings[0].discriminator.cls == "example.py:Discriminator"
    # torchgan's SelfAttention2d: wrapping the layer where the shared block builds it would
    # normalize the generator's too; no fix.
    assert findings[0].fix is None


def test_a_block_only_the_generator_builds_is_not_judged(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class GBlock(nn.Module):
            def __init__(self, ch):
                super().__init__()
                self.c1 = spectral_norm(nn.Conv2d(ch, ch, 3, 1, 1))
                self.c2 = nn.Conv2d(ch, ch, 3, 1, 1)

        class Generator(nn.Module):
            def __init__(self, ch=64):
                super().__init__()
                self.block = GBlock(ch)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_a_sub_discriminator_held_by_a_multiscale_discriminator_is_reported_once(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class NLayerDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.b = nn.Conv2d(64, 1, 4)

        class MultiscaleDiscriminator(nn.Module):
            def __init__(self, num_d=3):
                super().__init__()
                self.ds = nn.ModuleList([NLayerDiscriminator() for _ in range(num_d)])
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 18)]


def test_class_name_evidence_for_a_critic(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class WGANCritic(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.b = nn.Conv2d(64, 1, 4)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 18)]
    assert findings[0].discriminator.evidence == "name"


def test_class_name_evidence_for_netd(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class NetD(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.b = nn.Conv2d(64, 1, 4)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 9, 18)]


NETS = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm

    class NLayerNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
            self.b = nn.Conv2d(64, 1, 4)

    class ResnetDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
            self.b = nn.Conv2d(64, 1, 4)
'''


def test_only_name_evidence_without_configuration(lint):
    findings = lint(NETS, "models/nets.py", select=SOURCE_RULES)
    assert found(findings) == [("SN201", 15, 18)]


def test_configuration_makes_a_class_a_discriminator(lint):
    findings = lint(NETS, "models/nets.py", select=SOURCE_RULES,
                    discriminators=["models/nets.py:NLayerNet"])
    assert found(findings) == [("SN201", 9, 18), ("SN201", 15, 18)]
    assert findings[0].discriminator.evidence == "configuration"
    assert findings[0].discriminator.cls == "models/nets.py:NLayerNet"


def test_not_discriminators_clears_a_class_named_discriminator(lint):
    findings = lint(NETS, "models/nets.py", select=SOURCE_RULES,
                    not_discriminators=["models/nets.py:ResnetDiscriminator"])
    assert found(findings) == []


def test_configuration_names_the_file_too(lint):
    findings = lint(NETS, "models/nets.py", select=SOURCE_RULES,
                    discriminators=["other/nets.py:NLayerNet"])
    assert found(findings) == [("SN201", 15, 18)]


def test_configuration_with_real_files_and_the_project_root(tmp_path):
    import textwrap

    from snlint.config import Config
    from snlint.engine import run

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "nets.py").write_text(textwrap.dedent(NETS), encoding="utf-8")
    config = Config(root=tmp_path, select=SOURCE_RULES, graph=False,
                    discriminators=["models/nets.py:NLayerNet"],
                    not_discriminators=["models/nets.py:ResnetDiscriminator"])
    findings = run([str(tmp_path)], config).findings
    assert found(findings) == [("SN201", 9, 18)]
    assert findings[0].discriminator.evidence == "configuration"


# ---------------------------------------------------------------- suppression

def test_noqa_sn201_on_the_creating_line(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.b = nn.Conv2d(64, 64, 4)  # noqa: SN201
                self.c = nn.Conv2d(64, 1, 4)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 10, 18)]


def test_noqa_sn2_prefix(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.b = nn.Conv2d(64, 1, 4)  # noqa: SN2
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_file_level_disable_sn201(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.b = nn.Conv2d(64, 64, 4)
                self.c = nn.Conv2d(64, 1, 4)
                self.n = spectral_norm(nn.BatchNorm2d(64))

        # snlint: disable=SN201
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 11, 18)]


def test_noqa_in_the_helper_does_not_suppress_the_call_site(lint):
    # The finding is at the helper's call site, so that is where its noqa goes.
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def conv1x1(in_ch, out_ch):
            return nn.Conv2d(in_ch, out_ch, 1)  # noqa: SN201

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 3))
                self.b = conv1x1(64, 64)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN201", 12, 18)]
