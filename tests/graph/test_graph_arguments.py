"""The graph pass builds a discriminator with the arguments the project uses (argparse
defaults, dict, attribute-dict and JSON configs), else its defaults, else guessed sizes;
`[tool.snlint.models]` overrides; every result says which arguments were used, and an
SN912 lists what was tried."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

from graph_helpers import span_of, write  # noqa: E402

MODELS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self, opt):
            super().__init__()
            self.c1 = spectral_norm(nn.Conv2d(opt.channels, opt.ndf, 4, 2, 1))
            self.bn = nn.BatchNorm2d(opt.ndf)
            self.c2 = spectral_norm(nn.Conv2d(opt.ndf, 1, 4, 1, 0))

        def forward(self, x):
            return self.c2(self.bn(self.c1(x)))


    class Critic(nn.Module):
        def __init__(self, nc, ndf, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.c1 = spectral_norm(nn.Conv2d(nc, ndf, 4, 2, 1))
            self.norm = norm_layer(ndf)
            self.c2 = spectral_norm(nn.Conv2d(ndf, 1, 4, 1, 0))

        def forward(self, x):
            return self.c2(self.norm(self.c1(x)))
'''

ARGPARSE = '''
        import argparse
        from models import Critic, Discriminator

        parser = argparse.ArgumentParser()
        parser.add_argument("--ndf", type=int, default=16)
        parser.add_argument("--channels", type=int, default=1)
        opt = parser.parse_args()
'''


@pytest.fixture
def lint(tmp_path, monkeypatch):
    """Runs snlint on a project written into tmp_path; returns (findings, {class: TargetFacts})."""
    monkeypatch.chdir(tmp_path)  # paths as a user running `snlint .` sees them

    def go(files: dict[str, str], models: dict | None = None):
        write(tmp_path, "models.py", MODELS)
        for name, text in files.items():
            write(tmp_path, name, text)
        config = Config(root=tmp_path, graph=True, models=models or {})
        result = run(["."], config)
        return result.findings, {r.target.class_name: r for r in result.graph}
    return go


def weight(facts, path: str) -> tuple:
    return next(m.weight_shape for m in facts.modules if m.path == path)


def sn301(findings) -> list[tuple]:
    return [(f.code, f.line, f.pass_) for f in findings if f.code == "SN301"]


def test_argparse_namespace_passed_whole(lint):
    findings, facts = lint({"train.py": ARGPARSE + '''

        def main():
            netD = Discriminator(opt)
    '''})
    d = facts["Discriminator"]
    assert d.status == "ok"
    assert d.built_with == "built as in train.py:12 (opt: argparse defaults from train.py:8)"
    assert weight(d, "c1") == (16, 1, 4, 4)
    assert sn301(findings)[0] == ("SN301", span_of(MODELS, "nn.BatchNorm2d(opt.ndf)")[0], "source+graph")


def test_argparse_options_passed_one_by_one(lint):
    _, facts = lint({"train.py": ARGPARSE + '''
        netD = Critic(opt.channels, ndf=opt.ndf)
    '''})
    c = facts["Critic"]
    assert c.built_with == ("built as in train.py:10 (nc=1: argparse default at train.py:7; "
                            "ndf=16: argparse default at train.py:6)")
    assert weight(c, "c1") == (16, 1, 4, 4)


def test_namespace_attribute_nobody_set_is_guessed_and_said(lint):
    _, facts = lint({"train.py": '''
        import argparse
        from models import Discriminator

        parser = argparse.ArgumentParser()
        parser.add_argument("--ndf", type=int, default=8)
        netD = Discriminator(parser.parse_args())
    '''})
    d = facts["Discriminator"]
    assert d.built_with == ("built as in train.py:7 (opt: argparse defaults from train.py:7; "
                            "guessed opt.channels=3)")
    assert weight(d, "c1") == (8, 3, 4, 4)


def test_dict_config_and_a_project_attribute_dict(lint):
    _, facts = lint({"train.py": '''
        from models import Critic, Discriminator


        class AttrDict(dict):
            def __getattr__(self, name):
                return self[name]


        cfg = {"nc": 1, "ndf": 12}
        hparams = AttrDict(channels=1, ndf=24)
        netD = Discriminator(hparams)
        critic = Critic(**cfg)
    '''})
    assert facts["Discriminator"].built_with == "built as in train.py:12 (opt: hparams at train.py:11)"
    assert weight(facts["Discriminator"], "c1") == (24, 1, 4, 4)
    assert facts["Critic"].built_with == "built as in train.py:13"
    assert weight(facts["Critic"], "c1") == (12, 1, 4, 4)


def test_json_config_loaded_by_a_literal_path(lint):
    _, facts = lint({"configs/critic.json": '{"nc": 1, "ndf": 20}', "train.py": '''
        import json
        import torch.nn as nn
        from models import Critic

        with open("configs/critic.json") as f:
            cfg = json.load(f)
        critic = Critic(cfg["nc"], cfg["ndf"], norm_layer=nn.InstanceNorm2d)
    '''})
    c = facts["Critic"]
    assert c.built_with == ("built as in train.py:8 (nc=1: from configs/critic.json; "
                            "ndf=20: from configs/critic.json)")
    assert weight(c, "c1") == (20, 1, 4, 4)
    assert next(m.type_name for m in c.modules if m.path == "norm") == "InstanceNorm2d"


def test_no_site_builds_with_guessed_sizes(lint):
    findings, facts = lint({})
    c = facts["Critic"]
    assert c.built_with == "built with guessed sizes: nc=3, ndf=64"
    assert facts["Discriminator"].built_with == "built with guessed sizes: opt.channels=3, opt.ndf=64"
    assert sn301(findings) == [
        ("SN301", span_of(MODELS, "nn.BatchNorm2d(opt.ndf)")[0], "source+graph"),
        ("SN301", span_of(MODELS, "nn.BatchNorm2d):")[0], "source+graph")]


def test_configured_models_override_the_project_sites(lint):
    _, facts = lint({"train.py": "from models import Critic\ncritic = Critic(1, 16)\n"},
                    models={"models.py:Critic": {"nc": 2, "ndf": 4}})
    c = facts["Critic"]
    assert c.built_with == "built with the [tool.snlint.models] arguments"
    assert weight(c, "c1") == (4, 2, 4, 4)


FAILING = '''
    import torch.nn as nn


    class SizedDiscriminator(nn.Module):
        def __init__(self, in_ch, img_size):
            super().__init__()
            self.c = nn.Conv2d(in_ch, 8, 3)
            raise ValueError(f"unsupported size {img_size}")
'''


def test_sn912_lists_every_argument_set_tried(lint):
    train = "import sys\nfrom sized import SizedDiscriminator\nnetD = SizedDiscriminator(2, int(sys.argv[1]))\n"
    findings, _ = lint({"sized.py": FAILING, "train.py": train})
    [sn912] = [f for f in findings if f.code == "SN912"]
    line = span_of(FAILING, "raise ValueError")[0]
    assert (sn912.path, sn912.line) == ("sized.py", span_of(FAILING, "class SizedDiscriminator")[0])
    assert sn912.message == (
        "graph pass: cannot build SizedDiscriminator: SizedDiscriminator() raised ValueError: "
        f"unsupported size 256 (at sized.py:{line}); tried 5 argument sets: (1) as in train.py:3 (guessed img_size=64); "
        "(2) guessed sizes: in_ch=3, img_size=64; (3) guessed sizes: in_ch=1, img_size=32; "
        "(4) guessed sizes: in_ch=3, img_size=128; (5) guessed sizes: in_ch=3, img_size=256; "
        'add [tool.snlint.models] "sized.py:SizedDiscriminator" = { in_ch = 3, img_size = 64 }')


def test_sn912_with_the_projects_own_arguments_offers_no_entry(lint):
    # The project passes (3, 64), every value read, and its constructor raises with them
    # (a Python 2 `ndf / 2` width): an entry could only repeat those values.
    models = """
        import torch.nn as nn


        class HalfDiscriminator(nn.Module):
            def __init__(self, nc, ndf):
                super().__init__()
                self.c = nn.Conv2d(nc, ndf / 2, 3)
    """
    train = "from half import HalfDiscriminator\nnetD = HalfDiscriminator(3, 64)\n"
    findings, _ = lint({"half.py": models, "train.py": train})
    [sn912] = [f for f in findings if f.code == "SN912"]
    assert sn912.message.startswith(
        "graph pass: cannot build HalfDiscriminator: HalfDiscriminator() raised TypeError: ")
    assert ", an error in the project's code (at " in sn912.message
    assert "tried 2 argument sets: (1) as in train.py:2; (2) guessed sizes: nc=1, ndf=32" in sn912.message
    assert "[tool.snlint.models]" not in sn912.message


@pytest.mark.parametrize("name, guess", [
    ("in_channels", 3), ("input_nc", 3), ("nc", 3), ("num_in_ch", 3), ("n_channels", 3), ("img_size", 64), ("resolution", 64),
    ("num_classes", 10), ("period", 2), ("n_layers", 3), ("n_res_blocks", 3), ("ndf", 64),
    ("z_dim", 100), ("use_sn", False), ("something", 1), ("input_shape", (3, 64, 64)),
])
def test_guesses_by_parameter_name(name, guess):
    from snlint.graph.build import _guess_plain

    assert _guess_plain(name, 0) == guess


def test_a_site_value_snlint_could_not_evaluate_is_filled_like_a_missing_one():
    import inspect

    from snlint.graph.build import Plan, resolve

    def init(in_ch, ndf, norm="batch"):
        pass

    params = list(inspect.signature(init).parameters.values())
    call = resolve(params, Plan("as in t.py:3", [{"$": "unknown"}, 32], {"norm": {"$": "unknown"}}))
    assert (call.args, call.kwargs) == ([], {"ndf": 32, "in_ch": 3})
    assert call.describe(built=True) == "built as in t.py:3 (guessed in_ch=3)"


def test_a_configured_argument_the_constructor_does_not_take_is_sn912(lint):
    findings, _ = lint({}, models={"models.py:Critic": {"nc": 1, "width": 8}})
    [sn912] = [f for f in findings if f.code == "SN912"]
    assert sn912.message == (
        "graph pass: cannot build Critic: no argument set fits Critic's signature (with the "
        "[tool.snlint.models] arguments: unexpected argument width); add [tool.snlint.models] "
        '"models.py:Critic" = { nc = 1, ndf = 64 }')


def test_an_input_shape_tuple_is_guessed_as_channels_height_width(lint):
    findings, facts = lint({"shaped.py": '''
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self, input_shape):
                super().__init__()
                channels, height, width = input_shape
                self.conv = nn.Conv2d(channels, 8, 3, 2, 1)
                self.bn = nn.BatchNorm2d(8)

            def forward(self, img):
                return self.bn(self.conv(img)).mean(dim=(1, 2, 3))
    '''})
    d = facts["Discriminator"]
    assert (d.status, d.built_with) == ("ok", "built with guessed sizes: input_shape=(3, 64, 64)")


def test_every_build_starts_from_the_same_seed():
    import types

    import torch

    from snlint.graph import GraphTarget
    from snlint.graph.build import build

    module = types.ModuleType("seeded")

    class Discriminator(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 1)

    module.Discriminator = Discriminator
    target = GraphTarget("seeded.py", "seeded.py", "Discriminator")
    first = build(module, target).model
    torch.rand(100)  # another target's work moves the global generator
    second = build(module, target).model
    assert torch.equal(first.fc.weight, second.fc.weight)


def test_a_guessing_namespace_answers_with_the_projects_declared_option_defaults(lint):
    _, facts = lint({"options.py": '''
        class BaseOptions:
            def initialize(self, parser):
                parser.add_argument("--norm_D", type=str, default="instance")
                parser.add_argument("--ndf", type=int, default=8)
                return parser
    ''', "nets.py": '''
        import torch.nn as nn


        class PatchDiscriminator(nn.Module):
            def __init__(self, opt):
                super().__init__()
                if not opt.norm_D.startswith("instance"):
                    raise ValueError(opt.norm_D)
                self.conv = nn.Conv2d(3, opt.ndf, 4, 2, 1)
                self.norm = nn.InstanceNorm2d(opt.ndf)

            def forward(self, x):
                return self.norm(self.conv(x)).mean(dim=(1, 2, 3))
    '''})
    d = facts["PatchDiscriminator"]
    assert (d.status, d.built_with) == (
        "ok", "built with the project's option defaults (opt.norm_D='instance': --norm_D "
              "default at options.py:4; opt.ndf=8: --ndf default at options.py:5)")
    assert [m.weight_shape for m in d.modules if m.type_name == "Conv2d"] == [(8, 3, 4, 4)]


UNDEFINED = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self, nc, ndf):
            super().__init__()
            self.c1 = nn.Conv2d(nc, ndf, 4, 2, 1)
            self.act = activation_for(ndf)

        def forward(self, x):
            return self.act(self.c1(x))
'''


def test_sn912_for_an_error_in_the_projects_code_offers_no_models_entry(lint):
    findings, _ = lint({"undefined.py": UNDEFINED})
    [sn912] = [f for f in findings if f.code == "SN912"]
    line = span_of(UNDEFINED, "activation_for(ndf)")[0]
    assert "raised NameError: name 'activation_for' is not defined, an error in the project's " \
        f"code (at undefined.py:{line})" in sn912.message
    assert "[tool.snlint.models]" not in sn912.message


def test_about_constructor_arguments_tells_argument_failures_from_the_projects_errors():
    from snlint.graph.build import about_constructor_arguments

    assert about_constructor_arguments(TypeError("__init__() missing 1 required positional argument: 'ndf'"))
    assert about_constructor_arguments(ValueError("unsupported size 256"))
    assert not about_constructor_arguments(NameError("name 'activation_for' is not defined"))
    assert not about_constructor_arguments(ModuleNotFoundError("No module named 'apex'"))
