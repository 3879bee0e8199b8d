"""The arguments a project builds its discriminator with, evaluated statically (no torch):
argparse defaults, dicts and attribute dicts, JSON/YAML files loaded by a literal path,
torch names and partials, each with where it came from."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from snlint.link import link
from snlint.link.arguments import candidates_for
from snlint.source import extract

MODELS = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self, opt, ndf=64, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.c = nn.Conv2d(3, ndf, 3)
'''


@pytest.fixture
def candidates(tmp_path, monkeypatch):
    """Candidates for `Discriminator` of a project written into tmp_path (the working
    directory, so display paths are the file names)."""
    monkeypatch.chdir(tmp_path)

    def run(files: dict[str, str], cls: str = "Discriminator") -> list[dict]:
        facts = []
        for name, text in {"models.py": MODELS, **files}.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
            if name.endswith(".py"):
                facts.append(extract(textwrap.dedent(text), name, name))
        project = link(facts)
        d = next(d for d in project.discriminators if d.cls.name == cls)
        return candidates_for(project.instances_of(d.cls.qualname))
    return run


ARGPARSE = '''
    import argparse
    from models import Discriminator

    parser = argparse.ArgumentParser()
    parser.add_argument("--ndf", type=int, default=32)
    parser.add_argument("--img-size", type=int, default="48")
    parser.add_argument("--no-sn", action="store_true")
    opt = parser.parse_args()
'''


def test_argparse_namespace_passed_whole_holds_every_default(candidates):
    found = candidates({"train.py": textwrap.dedent(ARGPARSE) + "netD = Discriminator(opt)\n"})
    assert found == [{
        "source": "as in train.py:10",
        "args": [{"$": "namespace", "attrs": {"ndf": 32, "img_size": 48, "no_sn": False}}],
        "kwargs": {}, "origins": {"0": "argparse defaults from train.py:9"}}]


def test_one_argparse_option_keeps_the_line_of_its_default(candidates):
    found = candidates({"train.py": textwrap.dedent(ARGPARSE) + "netD = Discriminator(None, ndf=opt.ndf)\n"})
    assert found[0]["kwargs"] == {"ndf": 32}
    assert found[0]["origins"] == {"ndf": "argparse default at train.py:6"}


def test_parser_built_in_a_function_and_parsed_in_main(candidates):
    found = candidates({"train.py": '''
        import argparse
        from models import Discriminator


        def get_parser():
            parser = argparse.ArgumentParser()
            group = parser.add_argument_group("model")
            group.add_argument("--ndf", type=int, default=16)
            return parser


        def main():
            opt, _ = get_parser().parse_known_args()
            netD = Discriminator(opt, opt.ndf)
    '''})
    assert found[0]["args"] == [{"$": "namespace", "attrs": {"ndf": 16}}, 16]
    assert found[0]["source"] == "as in train.py:15"


def test_module_level_parser_read_in_a_function(candidates):
    found = candidates({"train.py": textwrap.dedent(ARGPARSE) + textwrap.dedent('''

        def main():
            netD = Discriminator(opt, ndf=opt.ndf * 2)
    ''')})
    assert found[0]["kwargs"] == {"ndf": 64}
    assert found[0]["source"] == "as in train.py:13"


def test_dict_and_attribute_dict_configs(candidates):
    found = candidates({"train.py": '''
        from easydict import EasyDict as edict
        from models import Discriminator

        cfg = edict({"model": {"ndf": 24}})
        plain = {"ndf": 8}
        d1 = Discriminator(cfg.model, ndf=cfg.model.ndf)
        d2 = Discriminator(plain, plain["ndf"])
    '''})
    assert [(c["source"], c["args"], c["kwargs"]) for c in found] == [
        ("as in train.py:7", [{"$": "dict", "attrs": True, "items": [["ndf", 24]]}], {"ndf": 24}),
        ("as in train.py:8", [{"$": "dict", "attrs": False, "items": [["ndf", 8]]}, 8], {}),
    ]
    assert found[1]["origins"] == {"0": "plain at train.py:6"}


def test_a_project_dict_subclass_is_an_attribute_dict(candidates):
    found = candidates({"train.py": '''
        from models import Discriminator


        class AttrDict(dict):
            def __getattr__(self, name):
                return self[name]


        cfg = AttrDict(ndf=40, nc=1)
        netD = Discriminator(cfg, ndf=cfg.ndf)
    '''})
    assert found[0]["args"] == [{"$": "dict", "attrs": True, "items": [["ndf", 40], ["nc", 1]]}]
    assert found[0]["kwargs"] == {"ndf": 40}


def test_json_config_loaded_by_a_literal_path(candidates):
    found = candidates({"configs/d.json": '{"ndf": 96, "norm": "batch"}', "train.py": '''
        import json
        from models import Discriminator

        with open("configs/d.json") as f:
            cfg = json.load(f)
        netD = Discriminator(cfg, ndf=cfg["ndf"])
    '''})
    assert found[0]["kwargs"] == {"ndf": 96}
    assert found[0]["origins"] == {"0": "from configs/d.json", "ndf": "from configs/d.json"}


@pytest.mark.skipif(importlib.util.find_spec("yaml") is None, reason="PyYAML not installed")
def test_yaml_config_loaded_by_a_literal_path(candidates):
    found = candidates({"d.yaml": "model:\n  ndf: 12\n", "train.py": '''
        import yaml
        from models import Discriminator

        cfg = yaml.safe_load(open("d.yaml"))
        netD = Discriminator(cfg["model"], ndf=cfg["model"]["ndf"])
    '''})
    assert found[0]["kwargs"] == {"ndf": 12}
    assert found[0]["origins"]["ndf"] == "from d.yaml"


def test_a_missing_config_file_leaves_the_values_unknown(candidates):
    found = candidates({"train.py": '''
        import json
        from models import Discriminator

        cfg = json.load(open("nowhere.json"))
        netD = Discriminator(cfg, ndf=cfg["ndf"])
    '''})
    assert found == []


def test_torch_types_and_partials_are_named(candidates):
    found = candidates({"train.py": '''
        import functools
        import torch.nn as nn
        from models import Discriminator

        NDF = 8
        netD = Discriminator(None, NDF, norm_layer=functools.partial(nn.InstanceNorm2d, affine=True))
    '''})
    assert found[0]["args"] == [None, 8]
    assert found[0]["kwargs"] == {"norm_layer": {
        "$": "partial", "func": {"$": "torch", "name": "torch.nn.InstanceNorm2d"},
        "args": [], "kwargs": {"affine": True}}}
    assert found[0]["origins"] == {"1": "NDF at train.py:6"}


def test_sites_that_know_more_come_first_and_unknown_only_sites_are_dropped(candidates):
    found = candidates({"train.py": '''
        from models import Discriminator


        def build(opt, ndf):
            return Discriminator(opt, ndf)


        netD = Discriminator(None)
        other = Discriminator(None, 16, norm_layer=None)
    '''})
    assert [c["source"] for c in found] == ["as in train.py:10", "as in train.py:9"]


def test_the_class_built_alone_is_not_a_site(candidates):
    assert candidates({}) == []


def test_a_factory_site_names_the_call_that_reached_it(candidates):
    found = candidates({"train.py": '''
        import argparse
        import torch.nn as nn
        from models import Discriminator

        parser = argparse.ArgumentParser()
        parser.add_argument("--norm", type=str, default="instance")
        opt = parser.parse_args()


        def define_D(norm="batch"):
            norm_layer = nn.InstanceNorm2d if norm == "instance" else nn.BatchNorm2d
            return Discriminator(None, norm_layer=norm_layer)


        netD = define_D(norm=opt.norm)
    '''})
    assert [(c["source"], c["kwargs"]) for c in found] == [
        ("as in train.py:13, called from train.py:16",
         {"norm_layer": {"$": "torch", "name": "torch.nn.InstanceNorm2d"}}),
        ("as in train.py:13", {"norm_layer": {"$": "torch", "name": "torch.nn.BatchNorm2d"}}),
    ]


def test_a_class_a_key_not_known_here_may_pick_with_no_arguments_is_no_site(candidates):
    # `nets.__dict__[arch]()` in an inference helper may build the critic only because
    # it is the module's one discriminator class: not where the project builds it.
    found = candidates({"nets.py": '''
        import torch.nn as nn


        class Critic(nn.Module):
            def __init__(self, ndf=64):
                super().__init__()
                self.c = nn.Conv2d(3, ndf, 3)
    ''', "infer.py": '''
        import nets


        def build(arch):
            model = nets.__dict__[arch]()
            return model
    ''', "train.py": '''
        import nets

        netD = nets.__dict__[cfg_name](ndf=32)
    '''}, cls="Critic")
    assert [(c["source"], c["kwargs"]) for c in found] == [("as in train.py:4", {"ndf": 32})]
