"""Each rule's fix on the spellings real GAN code uses: aliases, helpers, partials,
loops with isinstance filters, multi-line calls with comments.

`fixed(code)` runs the fixes to a fixed point in memory (unsafe ones included unless
asked otherwise) and returns the new text; `fix_of(code, rule)` is the one fix a
finding of that rule carries.
"""

from __future__ import annotations

import textwrap

import pytest
from pathlib import Path

from snlint.config import Config
from snlint.engine import lint_sources
from snlint.engine.fixing import fixed_point


def config(**options) -> Config:
    options.setdefault("select", ["ALL"])
    return Config(root=Path("."), graph=False, **options)


def fixed_project(files: dict[str, str], *, unsafe: bool = True, **options) -> dict[str, str]:
    cfg = config(**options)
    sources = {path: textwrap.dedent(code) for path, code in files.items()}
    problems: list[str] = []
    result = fixed_point(sources, cfg, unsafe=unsafe,
                         report=problems.append)
    assert problems == []
    return result.texts


def fixed(code: str, *, unsafe: bool = True, **options) -> str:
    return fixed_project({"d.py": code}, unsafe=unsafe, **options)["d.py"]


def findings(code: str, **options):
    return lint_sources({"d.py": textwrap.dedent(code)}, config(**options), fixes=True)


def fix_of(code: str, rule: str, **options):
    found = [f for f in findings(code, **options) if f.code == rule]
    assert len(found) == 1, [(f.code, f.line) for f in findings(code, **options)]
    return found[0].fix


def after(code: str, **options) -> list[str]:
    """The codes a fixed text still reports."""
    return sorted(f.code for f in findings(fixed(code, **options), **options))


DISCRIMINATOR = """\
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
    {body}
        def forward(self, x):
            for layer in self.children():  # every layer a test adds runs
                x = layer(x)
            return x
"""


def disc(body: str, header: str = "") -> str:
    text = textwrap.dedent(DISCRIMINATOR).replace("{body}", textwrap.indent(textwrap.dedent(body), " " * 8))
    return header + text


# SN101 / SN102 / SN103: unwrap --------------------------------------------------------

def test_sn101_unwraps_an_aliased_hook_call():
    code = disc("self.bn = SN(nn.GroupNorm(8, 8))\n", "from torch.nn.utils import spectral_norm as SN\n")
    assert "        self.bn = nn.GroupNorm(8, 8)\n" in fixed(code)
    fix = fix_of(code, "SN101")
    assert fix.applicability == "unsafe"  # the GroupNorm's keys change
    assert "`weight_orig`, `weight_u`, `weight_v`" in fix.message
    assert fix.message.endswith("; unsafe: a checkpoint saved before the fix no longer loads with strict=True")


def test_sn101_multiline_call_keeps_its_comment():
    code = disc("""\
        self.bn = spectral_norm(  # scales too?
            nn.GroupNorm(8, 8),
        )
    """)
    assert "        self.bn = (  # scales too?\n            nn.GroupNorm(8, 8)\n        )\n" in fixed(code)


def test_sn101_statement_that_only_applies_sn_goes():
    code = disc("""\
        self.n = nn.LayerNorm(8)
        self.n = spectral_norm(self.n)
        self.head = spectral_norm(nn.Linear(8, 1))
    """)
    out = fixed(code)
    assert "self.n = spectral_norm(self.n)" not in out
    assert "        self.n = nn.LayerNorm(8)\n        self.head = " in out
    assert after(code) == []


def test_sn101_in_a_loop_narrows_the_isinstance_tuple():
    code = disc("""\
        self.n = nn.LayerNorm(8)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.LayerNorm, nn.Linear)):
                spectral_norm(m)
    """)
    out = fixed(code)
    assert "            if isinstance(m, (nn.Conv2d, nn.Linear)):\n" in out
    assert "Remove LayerNorm from the isinstance filter" in fix_of(code, "SN101").message


def test_sn101_filter_naming_only_the_norm_has_no_fix():
    code = disc("""\
        self.n = nn.LayerNorm(8)
        for m in self.modules():
            if isinstance(m, nn.LayerNorm):
                spectral_norm(m)
    """)
    assert fix_of(code, "SN101") is None


def test_sn102_apply_function_with_or_chain_drops_the_operand():
    code = """\
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm


        def add_sn(m):
            if isinstance(m, nn.Conv2d) or isinstance(m, nn.PReLU) or isinstance(m, nn.Linear):
                spectral_norm(m)


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Conv2d(3, 8, 3)
                self.act = nn.PReLU()
                self.apply(add_sn)

            def forward(self, x):
                return self.act(self.a(x))
    """
    fix = fix_of(code, "SN102")
    assert "+    if isinstance(m, nn.Conv2d) or isinstance(m, nn.Linear):\n" in fix.diff
    assert fix.applicability == "unsafe"  # SN accepted the PReLU: its keys change


def test_sn102_prelu_is_unwrapped_and_the_keys_note_given():
    code = disc("self.act = spectral_norm(nn.PReLU())\n")
    assert "        self.act = nn.PReLU()\n" in fixed(code)
    assert "state_dict keys change" in fix_of(code, "SN102").message


def test_sn102_container_of_convs_moves_sn_inside_unsafely():
    code = disc("""\
        self.seq = spectral_norm(nn.Sequential(
            nn.Conv2d(8, 8, 3),  # body
            nn.LeakyReLU(0.2),
            nn.Linear(8, 1),
        ))
    """)
    fix = fix_of(code, "SN102")
    assert fix.applicability == "unsafe"
    assert "onto the 2 Conv/Linear layers" in fix.message
    out = fixed(code)
    assert ("        self.seq = nn.Sequential(\n"
            "            spectral_norm(nn.Conv2d(8, 8, 3)),  # body\n"
            "            nn.LeakyReLU(0.2),\n"
            "            spectral_norm(nn.Linear(8, 1)),\n"
            "        )\n") in out
    # SN201, which wraps the layers inside, is unsafe too: safe fixes alone change nothing.
    assert fixed(code, unsafe=False) == code


def test_sn102_container_without_layers_is_just_unwrapped():
    code = disc("self.act = spectral_norm(nn.Sequential(nn.LeakyReLU(0.2), nn.Dropout(0.1)))\n")
    assert fix_of(code, "SN102").applicability == "safe"
    assert "        self.act = nn.Sequential(nn.LeakyReLU(0.2), nn.Dropout(0.1))\n" in fixed(code)


def test_sn103_post_construction_reapplication_is_removed():
    code = disc("""\
        self.b = spectral_norm(nn.Conv2d(8, 8, 3))
        self.b = spectral_norm(self.b)
    """)
    out = fixed(code)
    assert "self.b = spectral_norm(self.b)" not in out
    assert "        self.b = spectral_norm(nn.Conv2d(8, 8, 3))\n" in out
    assert "parametrizations.weight.1._u" in fix_of(code, "SN103").message


def test_sn103_through_a_partial_of_a_helper():
    code = disc("self.b = spectral_norm(sn3x3(8, 8))\n", textwrap.dedent("""\
        import functools
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm


        def snconv2d(*args, **kwargs):
            return spectral_norm(nn.Conv2d(*args, **kwargs))


        sn3x3 = functools.partial(snconv2d, kernel_size=3, padding=1)
    """))
    assert "        self.b = sn3x3(8, 8)\n" in fixed(code)


# SN104 / SN105: drop an argument -----------------------------------------------------

def test_sn104_keyword_in_a_multiline_call_with_trailing_comma():
    code = disc("""\
        self.head = spectral_norm(
            nn.Linear(8, 1),  # the head
            name="bias",
        )
    """)
    assert ("        self.head = spectral_norm(\n"
            "            nn.Linear(8, 1),  # the head\n"
            "        )\n") in fixed(code)


def test_sn104_positional_bias_followed_by_more_arguments_names_weight():
    code = disc("self.head = spectral_norm(nn.Linear(8, 1), 'bias', 2)\n")
    assert "        self.head = spectral_norm(nn.Linear(8, 1), 'weight', 2)\n" in fixed(code)


def test_sn105_dim_between_other_keywords():
    code = disc("self.up = spectral_norm(nn.ConvTranspose2d(8, 8, 4), dim=0, eps=1e-6)\n")
    assert "        self.up = spectral_norm(nn.ConvTranspose2d(8, 8, 4), eps=1e-6)\n" in fixed(code)
    assert fix_of(code, "SN105").applicability == "unsafe"  # the u/v shapes change


def test_sn105_hook_api_through_nn_utils():
    code = disc("self.up = nn.utils.spectral_norm(nn.ConvTranspose2d(8, 8, 4), dim=0)\n")
    out = fixed(code, select=["SN105"])
    assert "        self.up = nn.utils.spectral_norm(nn.ConvTranspose2d(8, 8, 4))\n" in out


# SN106 ----------------------------------------------------------------------------------

def test_sn106_init_spellings():
    code = disc("""\
        self.head = spectral_norm(nn.Conv2d(8, 1, 4))
        nn.init.normal_(self.a.weight.data, 0.0, 0.02)
        self.head.weight.data.normal_(0.0, 0.02)
    """)
    out = fixed(code)
    assert "        nn.init.normal_(self.a.parametrizations.weight.original.data, 0.0, 0.02)\n" in out
    assert "        self.head.parametrizations.weight.original.data.normal_(0.0, 0.02)\n" in out
    assert after(code) == []


def test_sn106_multiline_init_keeps_its_comment():
    code = disc("""\
        nn.init.zeros_(
            self.a.weight,  # start at zero
        )
    """)
    assert "            self.a.parametrizations.weight.original,  # start at zero\n" in fixed(code)


def test_sn106_an_init_under_a_type_test_is_made_to_run():
    # `type(m) == nn.Conv2d` is false for a `ParametrizedConv2d`: pointing the init at
    # `original` alone would leave it skipped, the layer at PyTorch's default init.
    code = """\
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm


        def init_weights(m):
            if type(m) == nn.Conv2d:
                nn.init.xavier_uniform_(m.weight)


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(3, 8, 3, 1, 1))
                self.apply(init_weights)

            def forward(self, x):
                return self.conv(x)
    """
    out = fixed(code, unsafe=False)
    assert ("    if nn.utils.parametrize.type_before_parametrizations(m) == nn.Conv2d:\n"
            "        nn.init.xavier_uniform_(m.parametrizations.weight.original)\n") in out
    assert "and the `type(m)` test around it reads `type_before_parametrizations(m)`" in fix_of(code, "SN106").message
    assert after(code) == []


# SN107 / SN501: the parametrizations API -------------------------------------------------

MHA = """\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class SelfAttention(nn.Module):
        def __init__(self, channels=256, heads=4):
            super().__init__()
            self.attn = nn.MultiheadAttention(channels, heads, batch_first=True)
            self.attn.out_proj = spectral_norm(self.attn.out_proj)
    {more}
        def forward(self, x):
            out, _ = self.attn(x, x, x, need_weights=False)
            return x + out
"""


def test_sn107_with_other_hook_uses_rewrites_only_that_call():
    code = MHA.replace("{more}", "        self.proj = spectral_norm(nn.Linear(256, 256))\n")
    out = fixed(code, select=["SN107"])
    assert "from torch.nn.utils import spectral_norm\n" in out
    assert "        self.attn.out_proj = nn.utils.parametrizations.spectral_norm(self.attn.out_proj)\n" in out
    assert "        self.proj = spectral_norm(nn.Linear(256, 256))\n" in out
    fix = fix_of(code, "SN107")
    assert fix.applicability == "unsafe"
    assert "`parametrizations.weight.original`" in fix.message


def test_sn501_migrates_the_import_and_the_inits_that_worked_under_hooks():
    code = """\
        import torch.nn as nn
        from torch.nn.utils import clip_grad_norm_, spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.head = spectral_norm(nn.Conv2d(64, 1, 4, 1, 0))
                nn.init.orthogonal_(self.conv.weight)

            def forward(self, x):
                return self.head(self.conv(x))
    """
    out = fixed(code, select=["SN501", "SN106"])
    assert "from torch.nn.utils import clip_grad_norm_\n" in out
    assert "from torch.nn.utils.parametrizations import spectral_norm\n" in out
    assert "        nn.init.orthogonal_(self.conv.parametrizations.weight.original)\n" in out
    assert after(code, select=["SN501", "SN106"]) == []
    fixes = [f.fix for f in findings(code, select=["SN501"])]
    assert {f.applicability for f in fixes} == {"unsafe"}
    assert all("checkpoint keys change" in f.message and "`weight_orig`" in f.message for f in fixes)


def test_sn501_module_level_alias_and_attribute_calls():
    code = """\
        import torch
        import torch.nn as nn

        SN = nn.utils.spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = SN(nn.Conv2d(3, 8, 3))
                self.b = torch.nn.utils.spectral_norm(nn.Conv2d(8, 1, 3))

            def forward(self, x):
                return self.b(self.a(x))
    """
    out = fixed(code, select=["SN501"])
    assert "SN = nn.utils.parametrizations.spectral_norm\n" in out
    assert "        self.b = torch.nn.utils.parametrizations.spectral_norm(nn.Conv2d(8, 1, 3))\n" in out


SN501_APPLIED_INIT = """\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight, 0.0, 0.02)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                spectral_norm(nn.Conv2d(3, 64, 4, 2, 1)),
                nn.LeakyReLU(0.2),
                spectral_norm(nn.Conv2d(64, 1, 4, 1, 0)),
            )
            self.apply(weights_init)

        def forward(self, x):
            return self.main(x)
"""

def test_sn501_points_an_init_applied_from_another_function_at_the_original():
    # Under hooks `weights_init` writes the weight SN reads; after the migration `.weight`
    # is recomputed on every access, and the init would do nothing (an SN106).
    # It runs on whatever modules it is given, so it chooses per layer: a flag may build
    # some of them without SN.
    out = fixed(SN501_APPLIED_INIT, select=["SN501", "SN106"])
    assert ('        nn.init.normal_((m.parametrizations.weight.original if '
            'nn.utils.parametrize.is_parametrized(m, "weight") else m.weight), 0.0, 0.02)\n') in out
    assert after(SN501_APPLIED_INIT, select=["SN501", "SN106"]) == []
    messages = {f.fix.message for f in findings(SN501_APPLIED_INIT, select=["SN501"])}
    assert all("; 1 init of `.weight` run on these layers from another function now targets "
               "`parametrizations.weight.original` where the layer has it;" in m for m in messages)


def test_sn501_through_an_attribute_chain_points_the_inits_of_an_init_method():
    # `utils.spectral_norm(...)` moves call by call (no import to rebind); the inits
    # `_initialize()` runs after it move with it, or each becomes an SN106.
    code = """\
        import torch.nn as nn
        from torch.nn import init
        from torch.nn import utils


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = utils.spectral_norm(nn.Conv2d(3, 8, 3, 1, 1))
                self.l6 = utils.spectral_norm(nn.Linear(8, 1))
                self._initialize()

            def _initialize(self):
                init.xavier_uniform_(self.c1.weight.data, 2 ** 0.5)
                init.xavier_uniform_(self.l6.weight)

            def forward(self, x):
                return self.l6(self.c1(x).sum(dim=(2, 3)))
    """
    out = fixed(code, select=["SN501"])
    assert ('        init.xavier_uniform_((self.c1.parametrizations.weight.original if '
            'utils.parametrize.is_parametrized(self.c1, "weight") else self.c1.weight).data, 2 ** 0.5)\n'
            '        init.xavier_uniform_((self.l6.parametrizations.weight.original if '
            'utils.parametrize.is_parametrized(self.l6, "weight") else self.l6.weight))\n') in out
    assert after(code, select=["SN501", "SN106"]) == []


def test_sn501_keeps_an_init_under_a_type_test_running():
    # `type(m) == nn.Conv2d` is false for a `ParametrizedConv2d`: left as it is, the
    # migrated layers would skip the init (and the bias fill) and keep PyTorch's default.
    code = """\
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        def init_weights(m):
            if type(m) == nn.Linear or m.__class__ == nn.Conv2d:
                nn.init.xavier_uniform_(m.weight)
                m.bias.data.fill_(0.)


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(nn.Conv2d(3, 8, 3, 1, 1))
                self.head = spectral_norm(nn.Linear(8, 1))
                self.apply(init_weights)

            def forward(self, x):
                return self.head(self.conv(x).sum(dim=(2, 3)))
    """
    out = fixed(code, select=["SN501"])
    assert ("    if nn.utils.parametrize.type_before_parametrizations(m) == nn.Linear or "
            "nn.utils.parametrize.type_before_parametrizations(m) == nn.Conv2d:\n"
            "        nn.init.xavier_uniform_((m.parametrizations.weight.original if "
            'nn.utils.parametrize.is_parametrized(m, "weight") else m.weight))\n') in out
    messages = {f.fix.message for f in findings(code, select=["SN501"])}
    assert all("; 2 `type(...)` tests an init runs under now read `type_before_parametrizations(...)`" in m
               for m in messages)
    assert after(code, select=["SN501", "SN106"]) == []


def test_sn501_imports_parametrize_for_the_guard_where_nothing_spells_it():
    code = """\
        from torch.nn import Conv2d, LeakyReLU, Module, Sequential, init
        from torch.nn.utils import spectral_norm


        def weights_init(m):
            if isinstance(m, Conv2d):
                init.normal_(m.weight, 0.0, 0.02)


        class Discriminator(Module):
            def __init__(self):
                super().__init__()
                self.main = Sequential(spectral_norm(Conv2d(3, 64, 4, 2, 1)), LeakyReLU(0.2),
                                       spectral_norm(Conv2d(64, 1, 4, 1, 0)))
                self.apply(weights_init)

            def forward(self, x):
                return self.main(x)
    """
    out = fixed(code, select=["SN501"])
    assert out.startswith("from torch.nn import Conv2d, LeakyReLU, Module, Sequential, init\n"
                          "from torch.nn.utils.parametrizations import spectral_norm\n"
                          "from torch.nn.utils import parametrize\n")
    assert ('        init.normal_((m.parametrizations.weight.original if '
            'parametrize.is_parametrized(m, "weight") else m.weight), 0.0, 0.02)\n') in out
    assert after(code, select=["SN501", "SN106"]) == []


def test_sn501_names_an_init_in_another_file_it_cannot_point():
    nets = """\
        import torch.nn as nn
        from torch.nn.utils import spectral_norm

        from utils import weights_init


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
                self.b = spectral_norm(nn.Conv2d(64, 1, 4, 1, 0))
                self.apply(weights_init)

            def forward(self, x):
                return self.b(self.a(x))
    """
    utils = """\
        import torch.nn as nn


        def weights_init(m):
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, 0.0, 0.02)
    """
    sources = {"nets.py": textwrap.dedent(nets), "utils.py": textwrap.dedent(utils)}
    found = [f for f in lint_sources(sources, config(select=["SN501"]), fixes=True) if f.code == "SN501"]
    assert [f.line for f in found] == [10, 11]
    assert all("; the init at utils.py:6 still writes `.weight`, which the parametrization "
               "recomputes: it does nothing after this fix (SN106);" in f.fix.message for f in found)



def test_sn501_moves_the_hook_remover_with_the_migration():
    # After the migration the hook API's remover finds no hook and raises ValueError; a
    # `remove_spectral_norm()` method that catches it (for layers without SN) would
    # silently leave every layer normalized.
    code = """\
        import torch
        import torch.nn as nn


        class ScaleDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(nn.Conv1d(1, 16, 15, 1, 7), nn.LeakyReLU(0.1), nn.Conv1d(16, 1, 3, 1, 1))
                self.apply(self._apply_sn)

            @staticmethod
            def _apply_sn(m):
                if isinstance(m, nn.Conv1d):
                    torch.nn.utils.spectral_norm(m)

            def remove_spectral_norm(self):
                def _remove(m):
                    try:
                        torch.nn.utils.remove_spectral_norm(m)
                    except ValueError:
                        return

                self.apply(_remove)

            def forward(self, x):
                return self.layers(x)
    """
    out = fixed(code, select=["SN501"])
    assert "            torch.nn.utils.parametrizations.spectral_norm(m)\n" in out
    assert '                nn.utils.parametrize.remove_parametrizations(m, "weight")\n' in out
    assert ("; 1 call of `remove_spectral_norm` now calls "
            "`parametrize.remove_parametrizations(..., \"weight\")`, which removes the parametrization;"
            in fix_of(code, "SN501", select=["SN501"]).message)


def test_sn501_imports_parametrize_for_an_imported_remover_and_keeps_its_tensor_name():
    code = """\
        from torch.nn import Conv2d, Linear, Module
        from torch.nn.utils import remove_spectral_norm, spectral_norm


        class Discriminator(Module):
            def __init__(self):
                super().__init__()
                self.conv = spectral_norm(Conv2d(3, 8, 3))
                self.head = spectral_norm(Linear(8, 1))

            def export(self):
                remove_spectral_norm(self.conv)
                remove_spectral_norm(module=self.head, name="weight")

            def forward(self, x):
                return self.head(self.conv(x).mean((2, 3)))
    """
    out = fixed(code, select=["SN501"])
    assert out.startswith("from torch.nn import Conv2d, Linear, Module\n"
                          "from torch.nn.utils import parametrize\n"
                          "from torch.nn.utils.parametrizations import spectral_norm\n")
    assert '        parametrize.remove_parametrizations(self.conv, "weight")\n' in out
    assert '        parametrize.remove_parametrizations(module=self.head, tensor_name="weight")\n' in out
    assert after(code, select=["SN501"]) == []


def test_sn107_leaves_the_remover_of_the_hook_calls_it_does_not_move():
    code = MHA.replace("{more}", "        self.proj = spectral_norm(nn.Linear(256, 256))\n"
                                 "            nn.utils.remove_spectral_norm(self.proj)\n")
    out = fixed(code, select=["SN107"])
    assert "        nn.utils.remove_spectral_norm(self.proj)\n" in out


# SN201 ---------------------------------------------------------------------------------

def test_sn201_wraps_with_the_alias_the_file_uses():
    code = disc("self.head = nn.Linear(8, 1)\n", "from torch.nn.utils import spectral_norm as SN\n"
                ).replace("self.a = spectral_norm(", "self.a = SN(")
    out = fixed(code, select=["SN201"])
    assert "        self.head = SN(nn.Linear(8, 1))\n" in out
    assert "`weight_orig`" in fix_of(code, "SN201", select=["SN201"]).message


def test_sn201_attribute_spelling_is_reused():
    code = disc("self.head = nn.Linear(8, 1)\n").replace(
        "self.a = spectral_norm(", "self.a = nn.utils.parametrizations.spectral_norm(")
    code = code.replace("from torch.nn.utils.parametrizations import spectral_norm\n", "")
    out = fixed(code, select=["SN201"])
    assert "        self.head = nn.utils.parametrizations.spectral_norm(nn.Linear(8, 1))\n" in out


def test_sn201_multiline_layer_keeps_its_comment():
    code = disc("""\
        self.head = nn.Linear(  # logits
            8, 1)
    """)
    assert "        self.head = spectral_norm(nn.Linear(  # logits\n            8, 1))\n" in fixed(code)


def test_sn201_in_a_file_with_only_helpers_imports_the_parametrizations_api():
    files = {
        "layers.py": """\
            import torch.nn as nn
            from torch.nn.utils.parametrizations import spectral_norm


            def snconv2d(*args, **kwargs):
                return spectral_norm(nn.Conv2d(*args, **kwargs))


            def conv1x1(i, o):
                return nn.Conv2d(i, o, 1)
        """,
        "d.py": """\
            import torch.nn as nn

            from layers import conv1x1, snconv2d


            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.c = snconv2d(3, 8, 3)
                    self.sc = conv1x1(3, 8)

                def forward(self, x):
                    return self.c(x) + self.sc(x)
        """,
    }
    out = fixed_project(files)
    assert "from torch.nn.utils.parametrizations import spectral_norm\n" in out["d.py"]
    assert "        self.sc = spectral_norm(conv1x1(3, 8))\n" in out["d.py"]
    assert out["layers.py"] == textwrap.dedent(files["layers.py"])


# SN301 ---------------------------------------------------------------------------------

BN = """\
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.n = {norm}

        def forward(self, x):
            return self.n(self.a(x))
"""


def bn(norm: str) -> str:
    return BN.replace("{norm}", norm)


def test_sn301_default_is_groupnorm_keeping_eps_and_affine():
    out = fixed(bn("nn.BatchNorm2d(8, eps=1e-3, momentum=0.01, affine=False, track_running_stats=True)"))
    assert "        self.n = nn.GroupNorm(1, 8, eps=1e-3, affine=False)\n" in out


def test_sn301_positional_arguments_after_a_dropped_momentum_become_keywords():
    out = fixed(bn("nn.BatchNorm2d(8, 1e-3, 0.1, False)"), norm_replacement="instancenorm")
    assert "        self.n = nn.InstanceNorm2d(8, 1e-3, affine=False)\n" in out


def test_sn301_instancenorm_matches_the_dimension_and_turns_affine_on():
    out = fixed(bn("nn.BatchNorm3d(num_features=8)"), norm_replacement="instancenorm")
    assert "        self.n = nn.InstanceNorm3d(num_features=8, affine=True)\n" in out


def test_sn301_instancenorm_falls_back_to_groupnorm_for_batchnorm1d():
    code = bn("nn.BatchNorm1d(8)")
    assert "        self.n = nn.GroupNorm(1, 8)\n" in fixed(code, norm_replacement="instancenorm")
    assert "GroupNorm(1, C) instead" in fix_of(code, "SN301", norm_replacement="instancenorm").message


def test_sn301_identity():
    assert "        self.n = nn.Identity()\n" in fixed(bn("nn.BatchNorm2d(8, momentum=0.2)"),
                                                    norm_replacement="identity")


def test_sn301_multiline_call():
    out = fixed(bn("nn.BatchNorm2d(\n                8,  # width\n                momentum=0.2,  # slow\n            )"))
    assert "        self.n = nn.GroupNorm(\n            1,\n            8,  # width\n        )\n" in out


def test_sn301_bare_name_import_uses_the_files_torch_nn_alias():
    code = "from torch.nn import BatchNorm2d\n" + textwrap.dedent(bn("BatchNorm2d(8)"))
    assert "        self.n = nn.GroupNorm(1, 8)\n" in fixed(code)


def test_sn301_is_unsafe_and_names_the_buffers_that_go():
    fix = fix_of(bn("nn.BatchNorm2d(8)"), "SN301")
    assert fix.applicability == "unsafe"
    assert "`running_mean`" in fix.message


def test_sn301_lazy_batch_norm_has_no_fix():
    assert fix_of(bn("nn.LazyBatchNorm2d()"), "SN301") is None


def test_sn301_norm_layer_default_becomes_a_partial_and_functools_is_imported():
    code = """\
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm


        class PatchDiscriminator(nn.Module):
            def __init__(self, ndf=8, norm_layer=nn.BatchNorm2d):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, ndf, 3))
                self.n = norm_layer(ndf)

            def forward(self, x):
                return self.n(self.a(x))
    """
    out = fixed(code)
    assert "import functools\n" in out
    assert "    def __init__(self, ndf=8, norm_layer=functools.partial(nn.GroupNorm, 1)):\n" in out
    assert after(code) == []


def test_sn301_partial_default_keeps_affine_and_drops_momentum():
    code = """\
        from functools import partial

        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm


        class PatchDiscriminator(nn.Module):
            def __init__(self, norm_layer=partial(nn.BatchNorm2d, momentum=0.1, affine=True)):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 8, 3))
                self.n = norm_layer(8)

            def forward(self, x):
                return self.n(self.a(x))
    """
    out = fixed(code)
    assert "    def __init__(self, norm_layer=partial(nn.GroupNorm, 1, affine=True)):\n" in out
    assert after(code) == []


# VQGAN's NLayerDiscriminator: the class is bound to a local in one branch, then called.
BOUND = """\
    import functools

    import torch
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class ActNorm(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(1, c, 1, 1))


    class PatchDiscriminator(nn.Module):
        def __init__(self, use_actnorm=False):
            super().__init__()
            if not use_actnorm:
                norm_layer = nn.BatchNorm2d
            else:
                norm_layer = ActNorm
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.n = norm_layer(8)
            self.b = spectral_norm(nn.Conv2d(8, 16, 3))
            self.m = norm_layer(16)

        def forward(self, x):
            return self.m(self.b(self.n(self.a(x))))
"""


def test_sn301_class_bound_to_a_local_becomes_a_partial_of_groupnorm():
    out = fixed(BOUND)
    assert "            norm_layer = functools.partial(nn.GroupNorm, 1)\n" in out
    assert "            norm_layer = ActNorm\n" in out
    assert "        self.n = norm_layer(8)\n" in out
    assert after(BOUND) == []
    assert "Bind `norm_layer` to functools.partial(nn.GroupNorm, 1)" in fix_of(BOUND.replace(
        "            self.m = norm_layer(16)\n", ""), "SN301").message


def test_sn301_local_bound_to_two_batch_norms_gives_no_fix():
    code = BOUND.replace("norm_layer = ActNorm", "norm_layer = nn.SyncBatchNorm").replace(
        "            self.m = norm_layer(16)\n", "")
    assert fix_of(code, "SN301") is None


def test_sn301_local_also_bound_by_a_loop_gives_no_fix():
    code = BOUND.replace("        def forward(self, x):", """\
            for norm_layer in (nn.BatchNorm2d, nn.InstanceNorm2d):
                pass

        def forward(self, x):""").replace("            self.m = norm_layer(16)\n", "")
    assert fix_of(code, "SN301") is None


def test_sn301_unknown_replacement_setting_gives_no_fix():
    assert fix_of(bn("nn.BatchNorm2d(8)"), "SN301", norm_replacement="layernorm") is None



# A discriminator made of two (a local one on the crop, a global one on the whole image),
# trained as one: the inner classes are built by the outer one alone.
NESTED = """\
    import torch
    import torch.nn as nn


    class {inner}(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.bn(self.conv(x)).mean((2, 3))


    class ContextDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.local = {inner}()
            self.whole = {inner}()
            self.head = nn.Linear(16, 1)

        def forward(self, x):
            crop, image = x
            return self.head(torch.cat([self.local(crop), self.whole(image)], 1))


    def train(G, loader):
        D = ContextDiscriminator()
        for crop, image in loader:
            fake = G(image).detach()
            loss = D((crop, image)).mean() - D((fake, fake)).mean()
            loss.backward()
"""


def test_sn301_discriminator_inside_the_trained_one_is_replaced_in_its_own_class():
    code = NESTED.replace("{inner}", "LocalDiscriminator")
    found = [(f.code, f.line, f.discriminator.cls) for f in findings(code) if f.code == "SN301"]
    assert found == [("SN301", 9, "d.py:ContextDiscriminator")]
    assert "        self.bn = nn.GroupNorm(1, 8)\n" in fixed(code)


def test_sn301_generic_block_inside_the_trained_discriminator_gives_no_fix():
    assert fix_of(NESTED.replace("{inner}", "Block"), "SN301") is None

# SN401 ---------------------------------------------------------------------------------

TRAIN = """\
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.n = nn.BatchNorm2d(8)  # noqa: SN301

        def forward(self, x):
            return self.n(self.a(x))


    def train_step(netG, netD, real, z):
        netD = Discriminator()
    {step}
        return loss
"""


def train(step: str, header: str = "import torch\n") -> str:
    return header + textwrap.dedent(TRAIN).replace("{step}", textwrap.indent(textwrap.dedent(step), "    "))


def test_sn401_two_assignments_become_one_call_split_after():
    code = train("""\
        fake = netG(z)
        d_real = netD(real)
        d_fake = netD(fake.detach())
        loss = d_fake.mean() - d_real.mean()
    """)
    out = fixed(code)
    assert ("    d_real, d_fake = netD(torch.cat([real, fake.detach()]))"
            ".split([real.size(0), fake.size(0)])\n") in out
    assert after(code) == []
    assert fix_of(code, "SN401").applicability == "unsafe"


def test_sn401_contiguous_detached_inputs_become_one_call():
    code = train("""\
        fake = netG(z)
        d_real = netD(real.contiguous().detach())
        d_fake = netD(fake.contiguous().detach())
        loss = d_fake.mean() - d_real.mean()
    """)
    out = fixed(code)
    assert ("    d_real, d_fake = netD(torch.cat([real.contiguous().detach(), fake.contiguous().detach()]))"
            ".split([real.size(0), fake.size(0)])\n") in out
    assert after(code) == []


def test_sn401_method_with_arguments_on_an_input_gives_no_patch():
    code = train("""\
        fake = netG(z)
        d_real = netD(real.contiguous(memory_format=torch.channels_last))
        d_fake = netD(fake)
        loss = d_fake.mean() - d_real.mean()
    """)
    assert fix_of(code, "SN401") is None


def test_sn401_imports_torch_when_the_file_does_not():
    code = train("""\
        fake = netG(z)
        d_real = netD(real)
        d_fake = netD(fake)
        loss = d_fake.mean() - d_real.mean()
    """, header="")
    out = fixed(code)
    assert "\nimport torch\n" in out
    assert "netD(torch.cat([real, fake]))" in out


def test_sn401_statement_between_the_calls_gives_no_patch():
    code = train("""\
        fake = netG(z)
        d_real = netD(real)
        print(d_real.mean())
        d_fake = netD(fake)
        loss = d_fake.mean() - d_real.mean()
    """)
    assert fix_of(code, "SN401") is None


def test_sn401_input_computed_in_the_call_gives_no_patch():
    code = train("""\
        d_real = netD(real)
        d_fake = netD(netG(z))
        loss = d_fake.mean() - d_real.mean()
    """)
    assert fix_of(code, "SN401") is None


def test_sn401_calls_in_one_expression_give_no_patch():
    code = train("""\
        fake = netG(z)
        loss = netD(fake).mean() - netD(real).mean()
    """)
    found = [f for f in findings(code) if f.code == "SN401"]
    assert found and all(f.fix is None for f in found)


def test_sn401_critic_whose_forward_reduces_over_the_batch_gives_no_patch():
    # WassersteinGAN's DCGAN_D returns `output.mean(0).view(1)`: one score for the whole
    # batch. Scored once on `torch.cat([real, fake])`, it is one number, and
    # `.split([real.size(0), fake.size(0)])` of it raises.
    code = TRAIN.replace("return self.n(self.a(x))", "return self.n(self.a(x)).mean(0).view(1)")
    code = "import torch\n" + textwrap.dedent(code).replace("{step}", textwrap.indent(textwrap.dedent("""\
        fake = netG(z)
        d_real = netD(real)
        d_fake = netD(fake.detach())
        loss = d_fake - d_real
    """), "    "))
    found = [f for f in findings(code) if f.code == "SN401"]
    assert [f.line for f in found] == [19]
    assert fix_of(code, "SN401") is None


@pytest.mark.parametrize("returns", [
    "return [self.n(self.a(x)), self.a(x)]",  # a score per scale (pix2pixHD, MUNIT)
    "out = self.a(x)\n        return self.n(out), out",  # a score and its features
    "outputs = []\n        outputs.append(self.n(self.a(x)))\n        return outputs",
])
def test_sn401_discriminator_returning_several_outputs_gives_no_patch(returns):
    # `.split(...)` of the merged call needs one tensor: a list or tuple has no `.split`.
    code = train("""\
        fake = netG(z)
        d_real = netD(real)
        d_fake = netD(fake.detach())
        loss = d_fake[0].mean() - d_real[0].mean()
    """).replace("return self.n(self.a(x))", returns)
    found = [f for f in findings(code) if f.code == "SN401"]
    assert len(found) == 1 and found[0].fix is None


MULTI_SCALE = """\
    import torch
    import torch.nn as nn


    class MsDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.cnns = nn.ModuleList()
            for _ in range(2):
                self.cnns.append(nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.BatchNorm2d(8)))
            self.down = nn.AvgPool2d(3, stride=2, padding=1)

        def forward(self, x):
    {forward}

        def calc_dis_loss(self, input_fake, input_real):
            outs0 = self.forward(input_fake)
            outs1 = self.forward(input_real)
            return sum(torch.mean(a ** 2) + torch.mean((b - 1) ** 2) for a, b in zip(outs0, outs1))


    def dis_update(dis, gen, x_a, z):
        dis = MsDiscriminator()
        return dis.calc_dis_loss(gen(z).detach(), x_a)
"""


def multi_scale(forward: str) -> str:
    return textwrap.dedent(MULTI_SCALE).replace("{forward}", textwrap.indent(textwrap.dedent(forward), "        ").rstrip("\n"))


def line_of(code: str, text: str) -> int:
    return next(i for i, line in enumerate(code.splitlines(), 1) if text in line)


def test_sn401_discriminator_returning_a_list_per_scale_gives_no_patch():
    # `.split` on the list the forward returns would raise: the finding stands, unfixed.
    code = multi_scale("""\
        outputs = []
        for model in self.cnns:
            outputs.append(model(x))
            x = self.down(x)
        return outputs
    """)
    found = [f for f in findings(code) if f.code == "SN401"]
    assert [(f.line, f.fix) for f in found] == [(line_of(code, "outs0 = "), None)]


def test_sn401_discriminator_returning_score_and_features_gives_no_patch():
    code = multi_scale("""\
        h = self.cnns[0](x)
        return h.mean(1), h
    """)
    found = [f for f in findings(code) if f.code == "SN401"]
    assert [(f.line, f.fix) for f in found] == [(line_of(code, "outs0 = "), None)]


def test_sn401_forward_concatenating_its_list_keeps_the_patch():
    code = multi_scale("""\
        outputs = []
        for model in self.cnns:
            outputs.append(model(x).flatten(1))
        outputs = torch.cat(outputs, 1)
        return outputs
    """)
    assert ("        outs0, outs1 = self.forward(torch.cat([input_fake, input_real]))"
            ".split([input_fake.size(0), input_real.size(0)])\n") in fixed(code, select=["SN401"])


def test_sn201_reuses_a_partial_of_the_sn_function():
    code = """\
        import functools

        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm

        SN = functools.partial(spectral_norm, n_power_iterations=2)


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = SN(nn.Conv2d(3, 8, 3))
                self.head = nn.Linear(8, 1)

            def forward(self, x):
                return self.head(self.a(x))
    """
    assert "        self.head = SN(nn.Linear(8, 1))\n" in fixed(code, select=["SN201"])


def test_sn101_inside_a_helper_is_unwrapped_there():
    code = """\
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm


        def sn_norm(c):
            return spectral_norm(nn.GroupNorm(8, c))


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 8, 3))
                self.n = sn_norm(8)

            def forward(self, x):
                return self.n(self.a(x))
    """
    out = fixed(code, select=["SN101"])
    assert "    return nn.GroupNorm(8, c)\n" in out
    assert after(code, select=["SN101"]) == []


# The fixes read the checks' data keys, never their messages ----------------------------

def plan_with(code: str, rule: str, message: str = "", **data):
    """The plan for the one `rule` finding of `code`, its message replaced and its data
    keys overridden, so a test shows what the fix reads."""
    import dataclasses

    found = [f for f in findings(code) if f.code == rule]
    assert len(found) == 1
    finding = dataclasses.replace(found[0], message=message,
                                  data=dataclasses.replace(found[0].data, **data))
    return marked_plan(finding, code)


def marked_plan(finding, code: str):
    """The plan for `finding`, marked again from the facts of `code`: the mark's payload
    is what a fix is built from."""
    from snlint.checks.registry import fixers
    from snlint.edit.parsed import ParsedFile
    from snlint.fix.planning import mark, plan_for
    from snlint.source import extract_file

    code = textwrap.dedent(code)
    facts, _ = extract_file(code, "d.py", "d.py")
    marked = mark(finding.with_(fix=None), facts, config(), fixers())
    if marked is None:
        return None
    return plan_for(finding.with_(fix=marked), ParsedFile("d.py", code, finding.names), config())


def test_sn101_from_filter_comes_from_the_data_not_the_message():
    code = disc("self.n = spectral_norm(nn.LayerNorm(8))\n")
    assert plan_with(code, "SN101", "applied by a loop whose isinstance filter lets it through") is not None
    assert plan_with(code, "SN101", "", from_filter=True) is None


def test_sn103_keys_note_comes_from_first_api():
    code = disc("""\
        self.b = spectral_norm(nn.Conv2d(8, 8, 3))
        self.b = spectral_norm(self.b)
    """)
    assert "parametrizations.weight.1._u" in plan_with(code, "SN103").message
    assert "torch raised at construction" in plan_with(code, "SN103", "stack silently",
                                                       first_api="hook").message


def test_sn103_mixing_the_apis_says_no_checkpoint_exists():
    code = disc("self.b = spectral_norm(hook_sn(nn.Conv2d(8, 8, 3)))\n",
                "from torch.nn.utils import spectral_norm as hook_sn\n")
    fix = fix_of(code, "SN103")
    assert "torch raised at construction before" in fix.message
    assert "        self.b = hook_sn(nn.Conv2d(8, 8, 3))\n" in fixed(code, select=["SN103"])


def test_sn201_names_the_layer_from_the_data():
    code = disc("self.head = nn.Linear(8, 1)\n")
    assert plan_with(code, "SN201", "Conv3d is missing").message.startswith("Wrap the Linear in ")


# Imports a fix leaves unused ------------------------------------------------------------

def test_sn301_removes_the_batch_norm_import_it_left_unused():
    code = "from torch.nn import BatchNorm2d\n" + textwrap.dedent(bn("BatchNorm2d(8)"))
    assert fixed(code) == textwrap.dedent(bn("nn.GroupNorm(1, 8)"))


def test_sn301_keeps_the_other_names_of_that_import_and_their_comments():
    code = ("from torch.nn import (\n    BatchNorm2d,\n    LeakyReLU,  # slope 0.2\n)\n"
            + textwrap.dedent(bn("BatchNorm2d(8)")).replace("return self.n(", "return LeakyReLU(0.2)(self.n("
                                                            ).replace("self.a(x))", "self.a(x)))"))
    out = fixed(code)
    assert out.startswith("from torch.nn import (\n    LeakyReLU,  # slope 0.2\n)\nimport torch.nn as nn\n")
    assert "        self.n = nn.GroupNorm(1, 8)\n" in out


def test_sn301_keeps_an_import_still_used_or_mentioned_elsewhere():
    still_used = ("from torch.nn import BatchNorm2d\n"
                  + textwrap.dedent(bn("BatchNorm2d(8)")) + "\n\nKINDS = (BatchNorm2d,)\n")
    exported = ("from torch.nn import BatchNorm2d\n__all__ = ['BatchNorm2d']\n"
                + textwrap.dedent(bn("BatchNorm2d(8)")))
    for code in (still_used, exported):
        out = fixed(code)
        assert out.startswith("from torch.nn import BatchNorm2d\n")
        assert "        self.n = nn.GroupNorm(1, 8)\n" in out


def test_an_import_unused_before_the_fix_stays():
    code = ("from torch.nn import BatchNorm1d, BatchNorm2d\n"
            + textwrap.dedent(bn("BatchNorm2d(8)")))
    assert fixed(code).startswith("from torch.nn import BatchNorm1d\nimport torch.nn as nn\n")


def test_sn107_per_call_rewrites_remove_the_hook_import():
    code = """\
        import torch.nn as nn
        from torch.nn.utils import spectral_norm as hook_sn


        class SelfAttention(nn.Module):
            def __init__(self, channels=256, heads=4):
                super().__init__()
                self.attn = nn.MultiheadAttention(channels, heads, batch_first=True)
                self.attn.out_proj = hook_sn(self.attn.out_proj)
                self.attn2 = nn.MultiheadAttention(channels, heads, batch_first=True)
                self.attn2.out_proj = hook_sn(self.attn2.out_proj)

            def forward(self, x):
                out, _ = self.attn(x, x, x, need_weights=False)
                out, _ = self.attn2(out, out, out, need_weights=False)
                return x + out
    """
    out = fixed(code, select=["SN107"])
    assert "hook_sn" not in out
    assert out.startswith("import torch.nn as nn\n"
                          "from torch.nn.utils.parametrizations import spectral_norm\n\n\n")
    assert "        self.attn2.out_proj = spectral_norm(self.attn2.out_proj)\n" in out


# A deleted statement keeps the comment lines above it -----------------------------------

def test_sn101_deleted_statement_keeps_the_comment_above_it():
    code = disc("""\
        self.n = nn.LayerNorm(8)

        # SN on every layer, as in the paper
        self.n = spectral_norm(self.n)
        self.b = nn.Conv2d(8, 8, 1)
    """)
    out = fixed(code, select=["SN101"])
    assert ("        self.n = nn.LayerNorm(8)\n\n"
            "        # SN on every layer, as in the paper\n"
            "        self.b = nn.Conv2d(8, 8, 1)\n") in out


def test_deleted_last_statement_of_a_block_keeps_its_comment():
    code = disc("""\
        self.n = nn.LayerNorm(8)
        # SN on every layer
        self.n = spectral_norm(self.n)
    """)
    out = fixed(code, select=["SN101"])
    assert ("        self.n = nn.LayerNorm(8)\n"
            "        # SN on every layer\n\n"
            "    def forward(self, x):\n") in out


def test_deleted_only_statement_of_a_block_leaves_pass_under_its_comment():
    code = """\
        import torch.nn as nn
        from torch.nn.utils.parametrizations import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 8, 3))
                self.n = nn.LayerNorm(8)
                if True:
                    # SN on the norm too
                    spectral_norm(self.n)

            def forward(self, x):
                return self.n(self.a(x))
    """
    out = fixed(code, select=["SN101"])
    assert "        if True:\n            # SN on the norm too\n            pass\n" in out


def test_sn401_comment_above_the_merged_call_stays():
    code = train("""\
        fake = netG(z)
        d_real = netD(real)
        # generated batch
        d_fake = netD(fake.detach())
        loss = d_fake.mean() - d_real.mean()
    """)
    out = fixed(code)
    assert "split([real.size(0), fake.size(0)])\n    # generated batch\n    loss = " in out


# Shared construction sites and loops: no fix ---------------------------------------------

FACTORY = """\
    import functools

    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    def get_norm_layer(norm_type="instance"):
        if norm_type == "batch":
            return functools.partial(nn.BatchNorm2d, affine=True)
        return functools.partial(nn.InstanceNorm2d, affine=True)


    def down(c, w):
        return nn.Sequential(spectral_norm(nn.Conv2d(c, w, 3)), nn.BatchNorm2d(w))


    class Discriminator(nn.Module):
        def __init__(self, norm_layer=get_norm_layer("batch")):
            super().__init__()
            self.b = down(3, 8)
            self.n = norm_layer(8)
            self.m = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.m(self.n(self.b(x)))
"""


def test_sn301_built_by_a_helper_function_outside_the_discriminator_has_no_fix():
    found = {f.line: f for f in findings(FACTORY) if f.code == "SN301"}
    assert found[14].fix is None  # nn.BatchNorm2d(w) inside down()
    assert found[22].fix is not None  # built by the discriminator itself
    out = fixed(FACTORY)
    assert "    return nn.Sequential(spectral_norm(nn.Conv2d(c, w, 3)), nn.BatchNorm2d(w))\n" in out
    assert "        return functools.partial(nn.BatchNorm2d, affine=True)\n" in out
    assert "        self.m = nn.GroupNorm(1, 8)\n" in out


def test_sn301_at_the_construction_inside_a_norm_factory_has_no_fix():
    import dataclasses

    import libcst as cst

    from snlint.findings import Span
    from snlint.edit.parsed import ParsedFile

    text = textwrap.dedent(FACTORY)
    reported = next(f for f in findings(FACTORY) if f.code == "SN301" and f.line == 22)
    line, call = 9, "functools.partial(nn.BatchNorm2d, affine=True)"
    start = text.splitlines()[line - 1].index(call) + 1
    # A position, as the graph pass reports one: the fix finds the node the source pass
    # read there.
    in_factory = dataclasses.replace(reported, span=Span(line, start, line, start + len(call)))
    ctx = ParsedFile("d.py", text, reported.names)
    index = reported.names.sites[in_factory.span]
    assert ctx.code(ctx.node(index, cst.Call)) == call
    assert marked_plan(in_factory, FACTORY) is None
    assert marked_plan(reported, FACTORY) is not None


def test_sn103_applied_by_a_loop_has_no_fix():
    # The loop's SN is the second one on self.a, but it is the only one on self.b:
    # narrowing its filter or removing it would leave self.b without SN.
    code = disc("""\
        self.b = nn.Conv2d(8, 8, 3)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                spectral_norm(m)
    """)
    found = [f for f in findings(code) if f.code == "SN103"]
    assert len(found) == 1 and found[0].data.from_filter is True
    assert found[0].fix is None
    assert fixed(code) == textwrap.dedent(code)


# Names the link step resolves across files ----------------------------------------------

REEXPORT = {
    "models/__init__.py": "",
    "models/sn.py": """\
        from torch.nn.utils import spectral_norm
    """,
    "models/d.py": """\
        import torch.nn as nn

        {import_line}


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = spectral_norm(nn.Conv2d(3, 8, 3))
                self.bn = spectral_norm(nn.BatchNorm2d(8))

            def forward(self, x):
                return self.bn(self.a(x))
    """,
}


def reexport(import_line: str) -> dict[str, str]:
    return {path: code.replace("{import_line}", import_line) for path, code in REEXPORT.items()}


@pytest.mark.parametrize("import_line", ["from .sn import spectral_norm",
                                         "from models.sn import spectral_norm"])
def test_sn101_fix_follows_a_reexported_spectral_norm(import_line):
    files = reexport(import_line)
    found = [f for f in lint_sources({p: textwrap.dedent(c) for p, c in files.items()}, config())
             if f.code == "SN101"]
    assert [(f.path, f.line) for f in found] == [("models/d.py", 10)]
    assert found[0].fix is not None and found[0].fix.applicability == "unsafe"
    out = fixed_project(files, select=["SN101"])
    assert "        self.bn = nn.BatchNorm2d(8)\n" in out["models/d.py"]
    assert "        self.a = spectral_norm(nn.Conv2d(3, 8, 3))\n" in out["models/d.py"]
    assert out["models/sn.py"] == textwrap.dedent(files["models/sn.py"])


def test_sn501_fix_follows_a_reexported_spectral_norm():
    files = reexport("from .sn import spectral_norm")
    files["models/d.py"] = files["models/d.py"].replace("nn.BatchNorm2d(8)", "nn.Conv2d(8, 8, 3)")
    out = fixed_project(files, select=["SN501"])["models/d.py"]
    assert "        self.a = nn.utils.parametrizations.spectral_norm(nn.Conv2d(3, 8, 3))\n" in out
    assert "        self.bn = nn.utils.parametrizations.spectral_norm(nn.Conv2d(8, 8, 3))\n" in out
    assert "= spectral_norm(" not in out


def test_sn201_wraps_with_a_partial_the_project_defines_in_another_module():
    files = {
        "layers.py": """\
            import functools

            from torch.nn.utils.parametrizations import spectral_norm

            SN = functools.partial(spectral_norm, eps=1e-6)
        """,
        "d.py": """\
            import torch.nn as nn

            from layers import SN


            class Discriminator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = SN(nn.Conv2d(3, 8, 3))
                    self.head = nn.Conv2d(8, 1, 3)

                def forward(self, x):
                    return self.head(self.a(x))
        """,
    }
    out = fixed_project(files, select=["SN201"])
    assert "        self.head = SN(nn.Conv2d(8, 1, 3))\n" in out["d.py"]
    assert "import spectral_norm" not in out["d.py"]


def test_a_position_where_the_source_pass_read_no_node_has_no_fix():
    import dataclasses

    from snlint.findings import Span

    code = textwrap.dedent(disc("self.head = nn.Linear(8, 1)\n"))
    reported = next(f for f in findings(code) if f.code == "SN201")
    at_layer = dataclasses.replace(reported, span=dataclasses.replace(reported.span, node=None))
    assert marked_plan(at_layer, code) is not None  # the call, through the span table
    line = reported.line
    at_name = dataclasses.replace(reported, span=Span(line, 14, line, 18))  # `head`
    assert marked_plan(at_name, code) is None


def test_sn501_leaves_an_init_that_runs_before_the_sn_call():
    # The layer's own `weight` is initialized, then wrapped: after the migration there
    # is no parametrization yet at the init, so it must still write `m.weight`.
    code = """\
        import torch.nn as nn
        import torch.nn.init as init
        from torch.nn.utils.spectral_norm import spectral_norm


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 3), nn.LeakyReLU(0.1), nn.Conv2d(64, 1, 3))
                self.initialize()

            def initialize(self):
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        init.normal_(m.weight, std=0.02)
                        spectral_norm(m)
                        init.zeros_(m.weight_orig)
                # Another loop: its `m` is another layer, initialized before its own SN.
                for m in self.main.modules():
                    if isinstance(m, nn.Linear):
                        init.xavier_uniform_(m.weight)
                        spectral_norm(m)

            def forward(self, x):
                return self.main(x)
    """
    out = fixed(code, select=["SN501"])
    assert "from torch.nn.utils.parametrizations import spectral_norm\n" in out
    assert "                init.normal_(m.weight, std=0.02)\n" in out
    assert "                init.zeros_(m.parametrizations.weight.original)\n" in out
    assert "                init.xavier_uniform_(m.weight)\n" in out
