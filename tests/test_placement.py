"""SN put on the wrong thing (SN101-SN107) and the legacy API (SN501), through every
spelling real GAN code uses: import forms and aliases, helpers, partials, lambdas,
containers, post-construction SN (`self.c = SN(self.c)`, `modules()` loops, `apply(fn)`),
and hand-written SN (wrapper classes, BigGAN-style mixins).

Every test asserts the exact (code, line, column) list. Placement rules concern any
module, generator or discriminator, so the inputs use both. Most tests select the
families SN1 and SN2 (so a false SN201 would show) and leave the batch-coupling rules
out, so that their findings do not change these expectations.
"""

from __future__ import annotations

import pytest

SOURCE_RULES = ["SN1", "SN2"]


def found(findings):
    return [(f.code, f.line, f.column) for f in findings]


# ---------------------------------------------------------------- import forms and aliases

# (imports, the SN callable as written at the call, the API's SN501-ness)
IMPORT_FORMS = {
    "torch.nn.utils.spectral_norm": (
        "import torch\nimport torch.nn as nn", "torch.nn.utils.spectral_norm", True),
    "from torch.nn.utils import spectral_norm": (
        "import torch.nn as nn\nfrom torch.nn.utils import spectral_norm", "spectral_norm", True),
    "from torch.nn import utils": (
        "import torch.nn as nn\nfrom torch.nn import utils", "utils.spectral_norm", True),
    "SN = nn.utils.spectral_norm": (
        "import torch.nn as nn\nSN = nn.utils.spectral_norm", "SN", True),
    "import torch.nn.utils.spectral_norm as spectral_norm": (
        "import torch.nn as nn\nimport torch.nn.utils.spectral_norm as spectral_norm",
        "spectral_norm", True),
    "from torch.nn.utils.spectral_norm import spectral_norm": (
        "import torch.nn as nn\nfrom torch.nn.utils.spectral_norm import spectral_norm",
        "spectral_norm", True),
    "import torch.nn.utils as U": (
        "import torch.nn as nn\nimport torch.nn.utils as U", "U.spectral_norm", True),
    "from torch.nn.utils.parametrizations import spectral_norm": (
        "import torch.nn as nn\nfrom torch.nn.utils.parametrizations import spectral_norm",
        "spectral_norm", False),
    "torch.nn.utils.parametrizations.spectral_norm": (
        "import torch\nimport torch.nn as nn", "torch.nn.utils.parametrizations.spectral_norm", False),
    "from torch.nn.utils import parametrizations as P": (
        "import torch.nn as nn\nfrom torch.nn.utils import parametrizations as P",
        "P.spectral_norm", False),
    "nn.utils.parametrizations.spectral_norm": (
        "import torch.nn as nn", "nn.utils.parametrizations.spectral_norm", False),
    "SN = partial(spectral_norm)": (
        "import functools\nimport torch.nn as nn\nfrom torch.nn.utils.parametrizations import spectral_norm\n"
        "SN = functools.partial(spectral_norm, n_power_iterations=1)", "SN", False),
}


def _form_module(imports: str, callee: str) -> tuple[str, int]:
    """A module whose only SN call wraps a BatchNorm2d; returns (code, line of the call)."""
    code = (
        f"{imports}\n\n"
        "class Discriminator(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"        self.n = {callee}(nn.BatchNorm2d(64))\n"
    )
    return code, code.count("\n")


@pytest.mark.parametrize("form", list(IMPORT_FORMS))
def test_every_import_form_is_recognised_as_sn(lint, form):
    imports, callee, _ = IMPORT_FORMS[form]
    code, line = _form_module(imports, callee)
    findings = lint(code, select=SOURCE_RULES)
    assert found(findings) == [("SN101", line, 18)]
    assert (findings[0].end_line, findings[0].end_column) == (line, 18 + len(callee) + len("(nn.BatchNorm2d(64))"))


@pytest.mark.parametrize("form", list(IMPORT_FORMS))
def test_sn501_exactly_for_the_hook_api_forms(lint, form):
    imports, callee, hook = IMPORT_FORMS[form]
    code, line = _form_module(imports, callee)
    assert found(lint(code, select=["SN501"])) == ([("SN501", line, 18)] if hook else [])


def test_a_local_name_shadowing_spectral_norm_is_not_sn(lint):
    findings = lint('''
        import torch.nn as nn

        def spectral_norm(module):
            return module

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.n = spectral_norm(nn.BatchNorm2d(64))
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_spectral_norm_as_a_method_of_an_unrelated_object_is_not_sn(lint):
    findings = lint('''
        import torch.nn as nn
        import mylib

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.n = mylib.spectral_norm(nn.BatchNorm2d(64))
    ''', select=SOURCE_RULES)
    assert found(findings) == []


# ---------------------------------------------------------------- SN101 sn-on-normalization

@pytest.mark.parametrize("layer", [
    "nn.BatchNorm1d(64)",
    "nn.BatchNorm2d(64)",
    "nn.BatchNorm3d(64)",
    "nn.LazyBatchNorm2d()",
    "nn.SyncBatchNorm(64)",
    "nn.LayerNorm(64)",
    "nn.GroupNorm(4, 64)",
    "nn.InstanceNorm1d(64, affine=True)",
    "nn.InstanceNorm2d(64, affine=True)",
    "nn.InstanceNorm3d(64, affine=True)",
    "nn.RMSNorm(64)",
])
def test_sn101_on_each_normalization_layer(lint, layer):
    findings = lint(f'''
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm

class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = spectral_norm({layer})
''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 8, 18)]
    assert (findings[0].end_line, findings[0].end_column) == (8, 18 + len(f"spectral_norm({layer})"))


def test_sn101_on_a_project_subclass_of_batch_norm(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class MyBatchNorm(nn.BatchNorm2d):
            pass

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.n = spectral_norm(MyBatchNorm(64))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 11, 18)]


def test_sn101_on_a_norm_built_by_a_plain_helper(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def norm(channels):
            return nn.GroupNorm(32, channels)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.n = spectral_norm(norm(64))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 11, 18)]


def test_sn101_inside_a_helper_is_reported_in_the_helper(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def sn_norm(channels):
            return spectral_norm(nn.BatchNorm2d(channels))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = sn_norm(64)
                self.b = sn_norm(128)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 6, 12)]


def test_sn101_in_a_lambda_helper(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        sn_bn = lambda c: spectral_norm(nn.BatchNorm2d(c))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.n = sn_bn(64)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 5, 19)]


def test_sn101_inside_a_sequential_literal(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm as SN

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(
                    SN(nn.Conv2d(3, 64, 4, 2, 1)),
                    SN(nn.BatchNorm2d(64)),
                    nn.LeakyReLU(0.2),
                )
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 10, 13)]


def test_sn101_in_a_list_appended_in_a_loop_is_one_finding(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, n_layers=3):
                super().__init__()
                layers = []
                for i in range(n_layers):
                    layers.append(spectral_norm(nn.Conv2d(64, 64, 3, 1, 1)))
                    layers.append(spectral_norm(nn.InstanceNorm2d(64, affine=True)))
                self.layers = nn.Sequential(*layers)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 11, 27)]


def test_sn101_inside_an_ordered_dict_sequential(lint):
    findings = lint('''
        from collections import OrderedDict
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(OrderedDict([
                    ("conv", spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))),
                    ("norm", spectral_norm(nn.BatchNorm2d(64))),
                ]))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 11, 22)]


def test_sn101_by_post_construction_reassignment(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                self.c = spectral_norm(self.c)
                self.n = spectral_norm(self.n)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 11, 18)]


def test_sn101_from_a_modules_loop_whose_filter_lets_batch_norm_through(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                self.fc = nn.Linear(64, 1)
                for m in self.modules():
                    if isinstance(m, (nn.Conv2d, nn.Linear, nn.BatchNorm2d)):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 13, 17)]
    assert "isinstance filter" in findings[0].message


def test_no_finding_from_a_modules_loop_filtered_to_conv_and_linear(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                self.fc = nn.Linear(64, 1)
                for m in self.modules():
                    if isinstance(m, (nn.Conv2d, nn.Linear)):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_finding_from_a_named_modules_loop_filtered_to_conv(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.GroupNorm(4, 64)
                for name, m in self.named_modules():
                    if isinstance(m, nn.Conv2d):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_finding_from_a_modules_loop_that_skips_other_types_with_continue(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.GroupNorm(4, 64)
                for m in self.modules():
                    if not isinstance(m, nn.Conv2d):
                        continue
                    spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_finding_from_a_modules_loop_with_an_elif_chain(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                self.fc = nn.Linear(64, 1)
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        spectral_norm(m)
                    elif isinstance(m, nn.Linear):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_finding_from_a_modules_loop_with_or_of_isinstance_tests(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                self.fc = nn.Linear(64, 1)
                for m in self.modules():
                    if isinstance(m, nn.Conv2d) or isinstance(m, nn.Linear):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_finding_from_apply_of_a_lambda_with_an_isinstance_test(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                self.apply(lambda m: spectral_norm(m) if isinstance(m, nn.Conv2d) else m)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn101_from_a_named_children_loop_without_a_filter(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                for name, module in self.named_children():
                    setattr(self, name, spectral_norm(module))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 11, 33)]


def test_sn101_from_a_loop_over_the_items_of_a_sequential(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64))
                for layer in self.main:
                    spectral_norm(layer)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 10, 13)]


def test_sn101_with_the_module_passed_by_keyword(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.n = spectral_norm(module=nn.BatchNorm2d(64))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 8, 18)]


def test_sn101_from_a_modules_loop_filtered_by_hasattr_weight(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.GroupNorm(4, 64)
                for m in self.modules():
                    if hasattr(m, "weight"):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 12, 17)]


def test_sn101_from_apply_with_a_module_level_function(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        def add_sn(m):
            if isinstance(m, (nn.Conv2d, nn.BatchNorm2d)):
                spectral_norm(m)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                self.apply(add_sn)
    ''', select=["SN1"])
    assert found(findings) == [("SN101", 7, 9)]


def test_sn101_from_apply_with_a_nested_function(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)

                def add_sn(m):
                    if isinstance(m, (nn.Conv2d, nn.BatchNorm2d)):
                        return spectral_norm(m)
                    return m

                self.apply(add_sn)
    ''', select=["SN1"])
    assert found(findings) == [("SN101", 13, 24)]


def test_no_finding_from_apply_filtered_to_conv_and_linear(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        def add_sn(m):
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                spectral_norm(m)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.n = nn.BatchNorm2d(64)
                self.fc = nn.Linear(64, 1)
                self.apply(add_sn)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn101_by_a_hand_written_wrapper_class(lint):
    findings = lint('''
        import torch.nn as nn

        class SpectralNorm(nn.Module):
            def __init__(self, module, name="weight", power_iterations=1):
                super().__init__()
                self.module = module
                self.name = name

            def _update_u_v(self):
                pass

            def forward(self, *args):
                self._update_u_v()
                return self.module.forward(*args)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = SpectralNorm(nn.Conv2d(3, 64, 3))
                self.n = SpectralNorm(nn.BatchNorm2d(64))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 21, 18)]


def test_sn101_in_a_module_level_sequential(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        netD = nn.Sequential(
            spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)),
            spectral_norm(nn.BatchNorm2d(64)),
        )
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 7, 5)]


def test_sn102_in_a_factory_function(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def build_discriminator():
            return nn.Sequential(
                spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)),
                spectral_norm(nn.LeakyReLU(0.2)),
            )
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN102", 8, 9)]


def test_sn101_with_sn_passed_as_a_parameter_default(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Block(nn.Module):
            def __init__(self, ch, sn=spectral_norm):
                super().__init__()
                self.c = sn(nn.Conv2d(ch, ch, 3))
                self.n = sn(nn.GroupNorm(4, ch))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 9, 18)]


def test_sn101_also_in_a_generator(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = spectral_norm(nn.ConvTranspose2d(128, 64, 4, 2, 1))
                self.bn = spectral_norm(nn.BatchNorm2d(64))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 9, 19)]


# ---------------------------------------------------------------- SN102 sn-on-weightless-layer

@pytest.mark.parametrize("layer", [
    "nn.PReLU()",
    "nn.LeakyReLU(0.2)",
    "nn.ReLU(inplace=True)",
    "nn.Dropout(0.3)",
    "nn.Dropout2d(0.3)",
    "nn.MaxPool2d(2)",
    "nn.AvgPool2d(2)",
    "nn.AdaptiveAvgPool2d(1)",
    "nn.Identity()",
    "nn.Flatten()",
    "nn.Upsample(scale_factor=2)",
    "nn.PixelShuffle(2)",
    "nn.ZeroPad2d(1)",
    "nn.Sequential(nn.Conv2d(3, 64, 3), nn.LeakyReLU(0.2))",
    "nn.ModuleList([nn.Conv2d(3, 64, 3)])",
    "nn.ModuleDict({'conv': nn.Conv2d(3, 64, 3)})",
    "nn.MultiheadAttention(64, 4)",
])
def test_sn102_on_each_weightless_module(lint, layer):
    findings = lint(f'''
import torch.nn as nn
from torch.nn.utils import spectral_norm

class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = spectral_norm({layer})
''', select=["SN1"])
    assert found(findings) == [("SN102", 8, 18)]


@pytest.mark.parametrize("layer", [
    "nn.Conv1d(3, 64, 3)",
    "nn.Conv2d(3, 64, 3)",
    "nn.Conv3d(3, 64, 3)",
    "nn.ConvTranspose2d(3, 64, 4)",
    "nn.Linear(64, 1)",
    "nn.Bilinear(8, 8, 1)",
    "nn.Embedding(10, 64)",
    "nn.LazyConv2d(64, 3)",
    "nn.LazyLinear(1)",
])
def test_no_placement_finding_on_layers_with_a_weight_matrix(lint, layer):
    findings = lint(f'''
import torch.nn as nn
from torch.nn.utils import spectral_norm

class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = spectral_norm({layer})
''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn102_on_a_sequential_built_by_a_helper(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def block(in_ch, out_ch):
            return nn.Sequential(nn.Conv2d(in_ch, out_ch, 3), nn.LeakyReLU(0.2))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = spectral_norm(block(3, 64))
    ''', select=["SN1"])
    assert found(findings) == [("SN102", 11, 18)]


def test_sn102_on_a_project_block_class(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class DBlock(nn.Module):
            def __init__(self, in_ch, out_ch):
                super().__init__()
                self.c1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
                self.c2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = spectral_norm(DBlock(3, 64))
    ''', select=["SN1"])
    assert found(findings) == [("SN102", 14, 22)]


def test_no_sn102_on_a_project_module_that_owns_a_weight_parameter(lint):
    findings = lint('''
        import torch
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class EqualLinear(nn.Module):
            def __init__(self, in_dim, out_dim):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(out_dim, in_dim))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = spectral_norm(EqualLinear(64, 1))
    ''', select=["SN1"])
    assert found(findings) == []


def test_sn102_on_an_activation_inside_a_sequential(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(
                    spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)),
                    spectral_norm(nn.LeakyReLU(0.2, inplace=True)),
                )
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN102", 10, 13)]


def test_sn102_on_a_sequential_by_post_construction_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.LeakyReLU(0.2))
                self.main = spectral_norm(self.main)
    ''', select=["SN1"])
    assert found(findings) == [("SN102", 9, 21)]


def test_sn102_on_a_sequential_item_by_index(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.LeakyReLU(0.2))
                self.main[0] = spectral_norm(self.main[0])
                self.main[1] = spectral_norm(self.main[1])
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN102", 10, 24)]


def test_sn102_by_a_hand_written_wrapper_class(lint):
    findings = lint('''
        import torch.nn as nn

        class SpectralNorm(nn.Module):
            def __init__(self, module, name="weight", power_iterations=1):
                super().__init__()
                self.module = module

            def _update_u_v(self):
                pass

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = SpectralNorm(nn.LeakyReLU(0.2))
    ''', select=["SN1"])
    assert found(findings) == [("SN102", 15, 20)]


# ---------------------------------------------------------------- SN103 sn-applied-twice

def test_sn103_nested_hook_calls(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(spectral_norm(nn.Conv2d(3, 64, 3)))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 8, 18)]
    assert (findings[0].end_line, findings[0].end_column) == (8, 67)


def test_sn103_nested_parametrization_calls(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(spectral_norm(nn.Conv2d(3, 64, 3)))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 8, 18)]
    assert "stack" in findings[0].message


def test_sn103_mixing_the_two_apis(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import parametrizations, spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = parametrizations.spectral_norm(spectral_norm(nn.Conv2d(3, 64, 3)))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 8, 18)]


def test_sn103_on_a_helper_that_already_applies_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def snconv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = snconv2d(3, 64, 3)
                self.b = spectral_norm(snconv2d(64, 64, 3))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 12, 18)]


def test_sn103_on_a_partial_of_a_helper_that_already_applies_sn(lint):
    findings = lint('''
        from functools import partial
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def snconv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))

        snconv3x3 = partial(snconv2d, kernel_size=3, padding=1)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(snconv3x3(3, 64))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 14, 18)]


def test_sn103_on_a_lambda_helper_that_already_applies_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        SNConv2d = lambda *args, **kwargs: spectral_norm(nn.Conv2d(*args, **kwargs))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(SNConv2d(3, 64, 3))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 10, 18)]


def test_sn103_post_construction_on_an_already_wrapped_layer(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                self.c = spectral_norm(self.c)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 9, 18)]


def test_sn103_modules_loop_over_an_already_wrapped_layer(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                self.fc = nn.Linear(64, 1)
                for m in self.modules():
                    if isinstance(m, (nn.Conv2d, nn.Linear)):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 12, 17)]


def test_sn103_apply_over_layers_built_by_an_sn_helper(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def snconv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))

        def add_sn(m):
            if isinstance(m, nn.Conv2d):
                spectral_norm(m)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = snconv2d(3, 64, 3)
                self.apply(add_sn)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 10, 9)]


def test_sn103_two_modules_loops(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        spectral_norm(m)
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 14, 17)]


def test_sn103_hand_written_wrapper_twice(lint):
    findings = lint('''
        import torch.nn as nn

        class SpectralNorm(nn.Module):
            def __init__(self, module, name="weight", power_iterations=1):
                super().__init__()
                self.module = module

            def _update_u_v(self):
                pass

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = SpectralNorm(SpectralNorm(nn.Conv2d(3, 64, 3)))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 15, 18)]


BIGGAN_LAYERS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class SN(object):
    def __init__(self, num_svs, num_itrs, num_outputs, transpose=False, eps=1e-12):
        self.num_itrs = num_itrs
        self.num_svs = num_svs
        self.transpose = transpose
        self.eps = eps
        for i in range(self.num_svs):
            self.register_buffer("u%d" % i, torch.randn(1, num_outputs))
            self.register_buffer("sv%d" % i, torch.ones(1))

    @property
    def u(self):
        return [getattr(self, "u%d" % i) for i in range(self.num_svs)]

    @property
    def sv(self):
        return [getattr(self, "sv%d" % i) for i in range(self.num_svs)]

    def W_(self):
        W_mat = self.weight.view(self.weight.size(0), -1)
        return self.weight / 1.0


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
'''  # a leading empty line, then 46 lines: the module's last line is line 47


def test_sn103_hook_sn_on_a_biggan_sn_mixin_layer(lint):
    findings = lint(BIGGAN_LAYERS + '''

class Discriminator(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.conv = nn.utils.spectral_norm(SNConv2d(3, ch, 3))
''', select=SOURCE_RULES)
    assert found(findings) == [("SN103", 53, 21)]


def test_no_finding_for_biggan_sn_mixin_layers(lint):
    findings = lint(BIGGAN_LAYERS + '''

class Discriminator(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.conv1 = SNConv2d(3, ch, 3, padding=1)
        self.conv2 = SNConv2d(ch, ch, 3, padding=1)
        self.linear = SNLinear(ch, 1)
''', select=SOURCE_RULES)
    assert found(findings) == []


# ---------------------------------------------------------------- SN104 sn-wrong-parameter

def test_sn104_name_bias_keyword(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3), name="bias")
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN104", 8, 18)]
    assert (findings[0].end_line, findings[0].end_column) == (8, 65)


def test_sn104_name_bias_positional_hook_api(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = spectral_norm(nn.Linear(64, 1), "bias")
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN104", 8, 19)]


def test_no_sn104_for_name_weight(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3), name="weight")
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn104_through_a_helper_passing_name(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        def sn(module, name="weight"):
            return spectral_norm(module, name=name)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = sn(nn.Conv2d(3, 64, 3), name="bias")
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN104", 11, 18)]


# ---------------------------------------------------------------- SN105 sn-wrong-dim

def _dim_module(layer: str, dim: str) -> str:
    return f'''
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm

class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = spectral_norm({layer}, {dim})
'''


def test_sn105_dim_1_on_a_3x3_conv(lint):
    findings = lint(_dim_module("nn.Conv2d(3, 64, 3)", "dim=1"), select=SOURCE_RULES)
    assert found(findings) == [("SN105", 8, 53)]
    assert (findings[0].end_line, findings[0].end_column) == (8, 58)


# (layer, dim argument, the SN105 column on line 8 or None). The output axis is 1 for
# transposed convs and 0 for the rest; a linear or a 1x1 kernel is never reported, as
# both reshapes there are W and W^T, of the same sigma (rules/SN105.md).
DIMS = [
    pytest.param("nn.Conv2d(3, 64, kernel_size=(3, 3))", "dim=1", 70, id="tuple-3x3-kernel"),
    pytest.param("nn.Conv2d(3, 64, 1)", "dim=1", None, id="1x1-conv"),
    pytest.param("nn.Conv2d(3, 64, kernel_size=1)", "dim=1", None, id="1x1-conv-kernel-keyword"),
    pytest.param("nn.Conv2d(3, 64, kernel_size=(1, 1))", "dim=1", None, id="1x1-conv-tuple-kernel"),
    pytest.param("nn.ConvTranspose2d(64, 3, 1)", "dim=0", None, id="dim-0-on-a-1x1-conv-transpose"),
    pytest.param("nn.Conv1d(64, 3, 3)", "dim=1", 53, id="conv1d"),
    pytest.param("nn.Linear(64, 1)", "dim=1", None, id="dim-1-on-a-linear"),
    pytest.param("nn.ConvTranspose2d(64, 3, 4, 2, 1)", "dim=0", 68, id="dim-0-on-a-conv-transpose"),
    pytest.param("nn.ConvTranspose2d(64, 3, 4, 2, 1)", "dim=1", None, id="dim-1-on-a-conv-transpose"),
    pytest.param("nn.Conv2d(3, 64, 3)", "dim=0", None, id="dim-0-on-a-conv"),
    pytest.param("nn.ConvTranspose2d(64, 3, 4)", "dim=None", None, id="dim-none"),
]


@pytest.mark.parametrize(("layer", "dim", "column"), DIMS)
def test_sn105_dim_against_the_layer(lint, layer, dim, column):
    findings = lint(_dim_module(layer, dim), select=SOURCE_RULES)
    assert found(findings) == ([] if column is None else [("SN105", 8, column)])


def test_sn105_positional_dim_of_the_hook_api(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3), "weight", 1, 1e-12, 1)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN105", 8, 73)]
    assert (findings[0].end_line, findings[0].end_column) == (8, 74)


def test_sn105_dim_in_a_partial_of_spectral_norm_is_reported_at_the_call(lint):
    findings = lint('''
        from functools import partial
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        SNT = partial(spectral_norm, dim=0)

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = SNT(nn.ConvTranspose2d(64, 3, 4, 2, 1))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN105", 11, 19)]


# ---------------------------------------------------------------- SN106 sn-init-of-derived-weight

def test_sn106_init_of_weight_after_parametrizations_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                nn.init.normal_(self.c.weight, 0.0, 0.02)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 9, 9)]
    assert (findings[0].end_line, findings[0].end_column) == (9, 50)


def test_sn106_init_after_post_construction_parametrizations_sn(lint):
    findings = lint('''
        import torch
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.c = spectral_norm(self.c)
                torch.nn.init.normal_(self.c.weight)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 11, 9)]


def test_sn106_in_place_copy_under_no_grad(lint):
    findings = lint('''
        import torch
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self, pretrained):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                with torch.no_grad():
                    self.c.weight.copy_(pretrained)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 11, 13)]


def test_sn106_init_applied_after_sn_by_apply(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def init_weights(m):
            if isinstance(m, nn.Conv2d):
                nn.init.xavier_uniform_(m.weight)

        def add_sn(m):
            if isinstance(m, nn.Conv2d):
                spectral_norm(m)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.apply(add_sn)
                self.apply(init_weights)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 7, 9)]


def test_no_sn106_init_applied_before_sn_by_apply(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def init_weights(m):
            if isinstance(m, nn.Conv2d):
                nn.init.xavier_uniform_(m.weight)

        def add_sn(m):
            if isinstance(m, nn.Conv2d):
                spectral_norm(m)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                self.apply(init_weights)
                self.apply(add_sn)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn106_with_a_try_except_compat_import(lint):
    findings = lint('''
        import torch.nn as nn
        try:
            from torch.nn.utils.parametrizations import spectral_norm
        except ImportError:
            from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                nn.init.normal_(self.c.weight)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 12, 9)]


def test_no_sn106_with_the_hook_api(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                nn.init.normal_(self.c.weight, 0.0, 0.02)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn106_init_before_sn(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(3, 64, 3)
                nn.init.normal_(self.c.weight, 0.0, 0.02)
                self.c = spectral_norm(self.c)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn106_init_of_the_original(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                nn.init.orthogonal_(self.c.parametrizations.weight.original)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_no_sn106_init_of_the_bias(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                nn.init.zeros_(self.c.bias)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn106_tensor_method_init_in_weights_init_applied_with_self_apply(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def weights_init(m):
            if isinstance(m, nn.Conv2d):
                m.weight.data.normal_(0.0, 0.02)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                self.apply(weights_init)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 7, 9)]


def test_sn106_init_by_a_modules_loop(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        nn.init.xavier_uniform_(m.weight)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 11, 17)]


def test_sn106_dcgan_weights_init_reports_only_the_conv_branch(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def weights_init(m):
            classname = m.__class__.__name__
            if classname.find("Conv") != -1:
                nn.init.normal_(m.weight.data, 0.0, 0.02)
            elif classname.find("BatchNorm") != -1:
                nn.init.normal_(m.weight.data, 1.0, 0.02)
                nn.init.constant_(m.bias.data, 0)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
                self.apply(weights_init)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 8, 9)]


def test_sn106_weights_init_applied_at_module_level(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def weights_init(m):
            if isinstance(m, nn.Conv2d):
                m.weight.data.normal_(0.0, 0.02)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))

        netD = Discriminator()
        netD.apply(weights_init)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 7, 9)]


def test_sn106_weights_init_applied_in_a_training_function(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        def weights_init(m):
            if isinstance(m, nn.Conv2d):
                m.weight.data.normal_(0.0, 0.02)

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))

        def main():
            netD = Discriminator()
            netD.apply(weights_init)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN106", 7, 9)]


# ---------------------------------------------------------------- SN107 sn-never-applied

def test_sn107_hook_sn_on_multihead_attention_out_proj(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = nn.MultiheadAttention(64, 4)
                self.attn.out_proj = spectral_norm(self.attn.out_proj)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN107", 9, 30)]
    assert (findings[0].end_line, findings[0].end_column) == (9, 63)


def test_sn107_hook_sn_statement_on_out_proj(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = nn.MultiheadAttention(64, 4)
                spectral_norm(self.attn.out_proj)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN107", 9, 9)]


def test_no_sn107_parametrizations_sn_on_out_proj(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = nn.MultiheadAttention(64, 4)
                self.attn.out_proj = spectral_norm(self.attn.out_proj)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_sn107_hook_sn_modules_loop_reaches_out_proj(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 3)
                self.attn = nn.MultiheadAttention(64, 4)
                for m in self.modules():
                    if isinstance(m, (nn.Conv2d, nn.Linear)):
                        spectral_norm(m)
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN107", 12, 17)]


def test_no_sn107_hook_sn_on_an_ordinary_linear(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(64, 64)
                self.proj = spectral_norm(self.proj)
    ''', select=SOURCE_RULES)
    assert found(findings) == []


# ---------------------------------------------------------------- SN501 legacy-spectral-norm

HOOK_MODULE = '''
import torch.nn as nn
from torch.nn.utils import spectral_norm

class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = spectral_norm(nn.Conv2d(3, 64, 3))
'''


def test_sn501_is_off_by_default(lint):
    assert found(lint(HOOK_MODULE)) == []


def test_sn501_when_selected(lint):
    findings = lint(HOOK_MODULE, select=["SN501"])
    assert found(findings) == [("SN501", 8, 18)]
    assert findings[0].severity == "info"


def test_sn501_with_extend_select(lint):
    assert found(lint(HOOK_MODULE, extend_select=["SN5"])) == [("SN501", 8, 18)]


def test_sn501_at_the_helper_call_for_a_hook_sn_helper(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        def snconv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = snconv2d(3, 64, 3)
                self.b = snconv2d(64, 64, 3)
    ''', select=["SN501"])
    assert found(findings) == [("SN501", 6, 12)]


def test_no_sn501_for_the_parametrizations_api(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = spectral_norm(nn.Conv2d(3, 64, 3))
    ''', select=["SN501"])
    assert found(findings) == []


# ---------------------------------------------------------------- suppression

def test_noqa_with_the_code_suppresses_the_finding_on_its_line(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.BatchNorm2d(64))  # noqa: SN101
                self.b = spectral_norm(nn.BatchNorm2d(64))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 9, 18)]


def test_noqa_with_another_code_does_not_suppress(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.BatchNorm2d(64))  # noqa: SN102
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN101", 8, 18)]


def test_bare_noqa_suppresses(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.BatchNorm2d(64))  # noqa
    ''', select=SOURCE_RULES)
    assert found(findings) == []


def test_file_level_disable_suppresses_that_code_everywhere(lint):
    findings = lint('''
        # snlint: disable=SN101
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.BatchNorm2d(64))
                self.b = spectral_norm(nn.LeakyReLU(0.2))
                self.c = spectral_norm(nn.GroupNorm(4, 64))
    ''', select=SOURCE_RULES)
    assert found(findings) == [("SN102", 10, 18)]


def test_ignore_removes_a_rule(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.BatchNorm2d(64))
                self.b = spectral_norm(nn.LeakyReLU(0.2))
    ''', select=SOURCE_RULES, ignore=["SN101"])
    assert found(findings) == [("SN102", 9, 18)]
