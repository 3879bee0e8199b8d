"""Which discriminator a forward call reaches when training code does not build it where it
calls it: factories (a class picked by a string), registries, dicts of classes, copies,
attributes of a model or loss class, helpers. SN401/SN303 judge the instance the code
calls, built with the project's own arguments, and say how it was reached.

Each project is small and self-written; real and generated samples are named plainly, so
these tests do not depend on how provenance is decided.
"""

from __future__ import annotations

import json

from projects import lint_in as lint


def found(findings):
    return [(f.code, f.path.rsplit("/", 1)[-1], f.line) for f in findings]


def only(findings, code):
    return [f for f in findings if f.code == code]


# ---------------------------------------------------------------- factories

NETWORKS = '''
    import torch.nn as nn


    class NLayerDiscriminator(nn.Module):
        def __init__(self, input_nc, ndf=64, norm="batch"):
            super().__init__()
            norm_layer = nn.BatchNorm2d if norm == "batch" else nn.InstanceNorm2d
            self.model = nn.Sequential(
                nn.Conv2d(input_nc, ndf, 4, 2, 1),
                norm_layer(ndf),
                nn.LeakyReLU(0.2),
                nn.Conv2d(ndf, 1, 4),
            )

        def forward(self, x):
            return self.model(x)


    class PixelDiscriminator(nn.Module):
        def __init__(self, input_nc, ndf=64, norm="batch"):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(input_nc, ndf, 1), nn.BatchNorm2d(ndf), nn.Conv2d(ndf, 1, 1))

        def forward(self, x):
            return self.net(x)


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.ConvTranspose2d(8, 3, 4)

        def forward(self, z):
            return self.net(z)


    def init_net(net, gpu_ids=()):
        if len(gpu_ids) > 0:
            net.to(gpu_ids[0])
            net = nn.DataParallel(net, gpu_ids)
        return net


    def define_D(input_nc, ndf, netD, norm="batch", gpu_ids=()):
        if netD == "basic":
            net = NLayerDiscriminator(input_nc, ndf, norm=norm)
        elif netD == "pixel":
            net = PixelDiscriminator(input_nc, ndf, norm=norm)
        else:
            raise NotImplementedError(netD)
        return init_net(net, gpu_ids)
'''


def train_script(net_d: str, norm: str) -> str:
    return f'''
        import argparse

        import torch
        from models import networks

        parser = argparse.ArgumentParser()
        parser.add_argument("--netD", {net_d})
        parser.add_argument("--norm", default="{norm}")
        opt = parser.parse_args()

        netG = networks.Generator()
        netD = networks.define_D(3, 64, opt.netD, norm=opt.norm)
        loader = torch.utils.data.DataLoader([])
        for real, _ in loader:
            fake = netG(torch.randn(8, 8, 1, 1))
            pred_real = netD(real)
            pred_fake = netD(fake.detach())
    '''


def test_factory_with_the_argparse_default_builds_a_batch_norm_discriminator(tmp_path):
    findings = lint(tmp_path, {"models/networks.py": NETWORKS,
                               "train.py": train_script('default="basic"', "batch")})
    assert found(findings) == [("SN301", "networks.py", 11), ("SN301", "networks.py", 23),
                               ("SN401", "train.py", 17)]
    sn401 = only(findings, "SN401")[0]
    assert "built by define_D() at train.py:13" in sn401.explanation
    assert "netD='basic' from the argparse default at train.py:8" in sn401.explanation
    assert sn401.discriminator.to_dict() == {
        "class": "models/networks.py:NLayerDiscriminator", "evidence": "training code",
        "via": "built by define_D() at train.py:13 (netD='basic' from the argparse default at "
               "train.py:8, norm='batch' from the argparse default at train.py:9)"}


def test_factory_with_the_default_norm_instance_builds_no_batch_statistics(tmp_path):
    findings = lint(tmp_path, {"models/networks.py": NETWORKS,
                               "train.py": train_script('default="basic"', "instance")})
    # The instance the training code calls has instance norm: neither the class default
    # (norm="batch", line 11) it never trains with nor SN401 is reported. PixelDiscriminator,
    # which the option may pick, has a batch norm in every configuration (line 23).
    assert found(findings) == [("SN301", "networks.py", 23)]


MODEL_WITH_OPTIONS = '''
    import argparse
    import functools

    import torch
    import torch.nn as nn


    def get_norm_layer(norm="instance"):
        if norm == "batch":
            return functools.partial(nn.BatchNorm2d, affine=True)
        elif norm == "instance":
            return functools.partial(nn.InstanceNorm2d, affine=False)
        raise NotImplementedError(norm)


    class NLayerDiscriminator(nn.Module):
        def __init__(self, input_nc, norm_layer=nn.BatchNorm2d):
            super().__init__()
            self.model = nn.Sequential(nn.Conv2d(input_nc, 64, 4, 2, 1), norm_layer(64), nn.Conv2d(64, 1, 4))

        def forward(self, x):
            return self.model(x)


    def define_D(netDs, input_nc, norm, **unused_options):
        nets = {}
        for name in netDs:
            if name == "basic":
                nets[name] = NLayerDiscriminator(input_nc, norm_layer=get_norm_layer(norm))
        return nets


    parser = argparse.ArgumentParser()
    parser.add_argument("--netDs", nargs="+", default=["basic"])
    parser.add_argument("--input_nc", type=int, default=3)
    parser.add_argument("--norm", default="instance")
    opt = parser.parse_args()


    class Model:
        def __init__(self, opt):
            self.netG = nn.Conv2d(3, 3, 3, 1, 1)
            self.netDs = define_D(**vars(opt))

        def step(self, real):
            fake = self.netG(real)
            for name, netD in self.netDs.items():
                (netD(real).mean() - netD(fake.detach()).mean()).backward()


    model = Model(opt)
    for real, _ in torch.utils.data.DataLoader([]):
        model.step(real)
'''


def test_a_method_run_on_its_own_does_not_judge_what_the_script_builds_with_its_options(tmp_path):
    # joliGEN: `Model.step` run on its own reaches the discriminators `Model.__init__` built
    # from an unpassed `opt` (their norm unknown), beside the run of the script, which
    # builds them with the declared instance norm: the second says what trains.
    assert found(lint(tmp_path, {"train.py": MODEL_WITH_OPTIONS})) == []


def test_the_script_built_discriminator_with_batch_norm_is_still_judged(tmp_path):
    findings = lint(tmp_path, {"train.py": MODEL_WITH_OPTIONS.replace('default="instance"', 'default="batch"')})
    assert found(findings) == [("SN301", "train.py", 20), ("SN401", "train.py", 49)]


def test_a_static_method_factory_called_through_its_class(tmp_path):
    # Text-to-Image-Synthesis: `gan_factory.discriminator_factory(type)` is a static method.
    findings = lint(tmp_path, {"models/networks.py": NETWORKS + '''

    class gan_factory(object):
        @staticmethod
        def discriminator_factory(kind):
            if kind == "gan":
                return NLayerDiscriminator(3)
            raise NotImplementedError(kind)
    ''', "train.py": '''
        import torch
        from models import networks

        netG = networks.Generator()
        netD = networks.gan_factory.discriminator_factory("gan")
        for real, _ in torch.utils.data.DataLoader([]):
            fake = netG(torch.randn(8, 8, 1, 1))
            pred_real = netD(real)
            pred_fake = netD(fake.detach())
    '''})
    assert found(only(findings, "SN401")) == [("SN401", "train.py", 9)]
    assert "used as a discriminator by the training code" in only(findings, "SN401")[0].explanation


def test_factory_with_an_unknown_key_names_each_candidate(tmp_path):
    findings = lint(tmp_path, {"models/networks.py": NETWORKS,
                               "train.py": train_script("required=True", "batch")})
    assert found(only(findings, "SN401")) == [("SN401", "train.py", 17)]
    message = only(findings, "SN401")[0].explanation
    assert "NLayerDiscriminator (" in message and " or PixelDiscriminator (" in message
    assert "one of 2 classes define_D() may build at train.py:13" in message
    assert "the batch statistics of each" in message


def test_factory_with_an_unknown_key_skips_the_candidate_without_batch_statistics(tmp_path):
    networks = NETWORKS.replace("nn.BatchNorm2d(ndf), nn.Conv2d(ndf, 1, 1)",
                                "nn.GroupNorm(1, ndf), nn.Conv2d(ndf, 1, 1)")
    findings = lint(tmp_path, {"models/networks.py": networks,
                               "train.py": train_script("required=True", "batch")})
    assert found(findings) == [("SN301", "networks.py", 11), ("SN401", "train.py", 17)]
    message = only(findings, "SN401")[0].explanation
    assert "NLayerDiscriminator" in message and "PixelDiscriminator" not in message
    assert "one of 2 classes define_D() may build" in message


# A factory of early returns ending in a raise (lama's make_discriminator): what it
# builds is what an `if`/`elif`/`else` assigning the same classes builds.
EARLY_RETURNS = NETWORKS.replace('''
        if netD == "basic":
            net = NLayerDiscriminator(input_nc, ndf, norm=norm)
        elif netD == "pixel":
            net = PixelDiscriminator(input_nc, ndf, norm=norm)
        else:
            raise NotImplementedError(netD)
        return init_net(net, gpu_ids)
''', '''
        if netD == "basic":
            return init_net(NLayerDiscriminator(input_nc, ndf, norm=norm), gpu_ids)
        if netD == "pixel":
            return init_net(PixelDiscriminator(input_nc, ndf, norm=norm), gpu_ids)
        raise NotImplementedError(netD)
''')


def test_factory_of_early_returns_with_an_unknown_key_names_each_candidate(tmp_path):
    findings = lint(tmp_path, {"models/networks.py": EARLY_RETURNS,
                               "train.py": train_script("required=True", "batch")})
    assert found(only(findings, "SN401")) == [("SN401", "train.py", 17)]
    message = only(findings, "SN401")[0].explanation
    assert "NLayerDiscriminator (" in message and " or PixelDiscriminator (" in message
    assert "one of 2 classes define_D() may build at train.py:13" in message


def test_factory_of_early_returns_with_a_known_key_builds_that_class(tmp_path):
    findings = lint(tmp_path / "returns", {"models/networks.py": EARLY_RETURNS,
                                           "train.py": train_script('default="pixel"', "instance")})
    assigned = lint(tmp_path / "assigns", {"models/networks.py": NETWORKS,
                                           "train.py": train_script('default="pixel"', "instance")})
    assert found(findings) == found(assigned) == [("SN301", "networks.py", 11), ("SN301", "networks.py", 23),
                                                  ("SN401", "train.py", 17)]
    message = only(findings, "SN401")[0].explanation
    assert "PixelDiscriminator" in message and "NLayerDiscriminator" not in message


def test_factory_of_one_early_return_and_a_raise_builds_that_class(tmp_path):
    networks = EARLY_RETURNS.replace('''
        if netD == "pixel":
            return init_net(PixelDiscriminator(input_nc, ndf, norm=norm), gpu_ids)
''', "\n")
    findings = lint(tmp_path, {"models/networks.py": networks,
                               "train.py": train_script("required=True", "batch")})
    assert ("SN401", "train.py", 17) in found(findings)
    assert "NLayerDiscriminator" in only(findings, "SN401")[0].explanation


def test_a_function_returning_one_of_several_classes_early_is_not_read_as_choosing_one(tmp_path):
    # gan-compression: `get_netD_cls(netD)` returns a class, and define_D picks by the same
    # key again; one unknown key for both calls would build every class in every branch
    # (NLayerDiscriminator from `Discriminator(opt)`, with its batch norm default).
    networks = NETWORKS + '''

    def get_netD_cls(netD):
        if netD == "n_layers":
            return NLayerDiscriminator
        if netD == "multi_scale":
            return MultiscaleDiscriminator
        raise NotImplementedError(netD)


    class MultiscaleDiscriminator(nn.Module):
        def __init__(self, opt):
            super().__init__()
            self.net = nn.Conv2d(3, 1, 4)

        def forward(self, x):
            return self.net(x)


    def define_D2(netD, input_nc, opt):
        Discriminator = get_netD_cls(netD)
        if netD == "multi_scale":
            net = Discriminator(opt)
        else:
            net = Discriminator(input_nc, norm="instance")
        return net
'''
    script = train_script("required=True", "batch").replace(
        "networks.define_D(3, 64, opt.netD, norm=opt.norm)", "networks.define_D2(opt.netD, 3, opt)")
    findings = lint(tmp_path, {"models/networks.py": networks, "train.py": script})
    assert found(findings) == [("SN301", "networks.py", 11), ("SN301", "networks.py", 23)]
    assert all("training code" not in f.explanation for f in findings)


# uvcgan: a factory joins its own defaults with what it was given, `{**a, **b}`.
JOINED = NETWORKS + '''

    def join_args(a, b):
        return {**a, **b}


    def select_D(model, **kwargs):
        kwargs = join_args(dict(norm="instance", ndf=64), kwargs)
        if model == "basic":
            return NLayerDiscriminator(3, **kwargs)
        raise ValueError(model)
'''


def test_factory_defaults_joined_with_its_keywords_build_the_instance_norm_discriminator(tmp_path):
    script = train_script("required=True", "batch").replace(
        "networks.define_D(3, 64, opt.netD, norm=opt.norm)", "networks.select_D(opt.netD)")
    findings = lint(tmp_path, {"models/networks.py": JOINED, "train.py": script})
    assert found(findings) == [("SN301", "networks.py", 23)]


# uvcgan2: the factory joins `norm="instance"` into the keywords of each class it builds;
# no training code the interpreter follows reaches it (the models come from a registry of
# config dicts).
SELECTED = '''
    import torch.nn as nn


    def get_norm_layer(norm_type):
        if norm_type == "batch":
            return nn.BatchNorm2d
        if norm_type == "instance":
            return nn.InstanceNorm2d
        raise NotImplementedError(norm_type)


    class NLayerDiscriminator(nn.Module):
        def __init__(self, ndf=64, norm="batch"):
            super().__init__()
            norm_layer = get_norm_layer(norm_type=norm)
            self.model = nn.Sequential(nn.Conv2d(3, ndf, 4), norm_layer(ndf), nn.Conv2d(ndf, 1, 4))

        def forward(self, x):
            return self.model(x)


    class PixelDiscriminator(nn.Module):
        def __init__(self, ndf=64):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, ndf, 1), nn.BatchNorm2d(ndf), nn.Conv2d(ndf, 1, 1))

        def forward(self, x):
            return self.net(x)


    def join_args(a, b):
        return {**a, **b}


    def select_base_discriminator(model, **kwargs):
        default_args = dict(norm="instance", ndf=64)
        kwargs = join_args(default_args, kwargs)
        if model == "basic":
            return NLayerDiscriminator(**kwargs)
        raise ValueError(model)
'''


def test_a_class_known_by_its_name_is_judged_as_the_projects_factory_builds_it(tmp_path):
    # PixelDiscriminator, built by nothing, is judged on its own batch norm.
    findings = lint(tmp_path, {"models/networks.py": SELECTED})
    assert found(findings) == [("SN301", "networks.py", 26)]


def test_a_class_known_by_its_name_and_built_with_batch_norm_somewhere_is_judged(tmp_path):
    selected = SELECTED.replace('dict(norm="instance", ndf=64)', "dict(ndf=64)")
    findings = lint(tmp_path, {"models/networks.py": selected})
    assert found(findings) == [("SN301", "networks.py", 17), ("SN301", "networks.py", 26)]


def test_factory_defaults_joined_with_a_batch_norm_keyword_build_batch_norm(tmp_path):
    script = train_script("required=True", "batch").replace(
        "networks.define_D(3, 64, opt.netD, norm=opt.norm)", 'networks.select_D(opt.netD, norm="batch")')
    findings = lint(tmp_path, {"models/networks.py": JOINED, "train.py": script})
    assert found(findings) == [("SN301", "networks.py", 11), ("SN301", "networks.py", 23),
                               ("SN401", "train.py", 17)]


# A trainer holding one of two discriminators, each scored in its own branch with the
# arguments its forward takes (Hands-On GANs, chapter 5): a call with a label is the
# conditional one's, whatever the other would have.
TWO_MODELS = '''
    import torch
    import torch.nn as nn


    class InfoD(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8), nn.Conv2d(8, 1, 4))

        def forward(self, x):
            return self.net(x)


    class CondD(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 10)
            self.net = nn.Linear(20, 1)

        def forward(self, image, labels):
            return self.net(torch.cat((image, self.emb(labels)), -1))


    class Gen(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(8, 10)

        def forward(self, z):
            return self.net(z)


    class Model(object):
        def __init__(self, name):
            self.netG = Gen()
            if name == "cgan":
                self.netD = CondD()
            elif name == "infogan":
                self.netD = InfoD()
            self.infogan = name == "infogan"

        def train(self, loader):
            for data, target in loader:
                x_fake = self.netG(torch.randn(8, 8))
                if self.infogan:
                    y_real = self.netD(data)
                    y_fake = self.netD(x_fake.detach())
                else:
                    y_real = self.netD(data, target)
                    y_fake = self.netD(x_fake.detach(), target)
'''


def test_a_call_reaches_only_the_candidates_whose_forward_takes_its_arguments(tmp_path):
    findings = lint(tmp_path, {"models.py": TWO_MODELS,
                               "train.py": "import sys\nfrom models import Model\n\nModel(sys.argv[1]).train([])\n"})
    assert found(only(findings, "SN401")) == [("SN401", "models.py", 47)]


# ---------------------------------------------------------------- registries

REGISTRY = '''
    class Registry:
        def __init__(self, name):
            self._name = name
            self._obj_map = {}

        def register(self, obj=None):
            def deco(cls):
                self._obj_map[cls.__name__] = cls
                return cls
            return deco

        def get(self, name):
            return self._obj_map[name]


    ARCH_REGISTRY = Registry("arch")
'''

ARCHS = '''
    import torch.nn as nn

    from archs.registry import ARCH_REGISTRY


    @ARCH_REGISTRY.register()
    class VGGStyleDiscriminator(nn.Module):
        def __init__(self, num_in_ch=3, num_feat=64):
            super().__init__()
            self.conv0 = nn.Conv2d(num_in_ch, num_feat, 3, 1, 1)
            self.bn0 = nn.BatchNorm2d(num_feat)
            self.linear = nn.Linear(num_feat, 1)

        def forward(self, x):
            return self.linear(self.bn0(self.conv0(x)))


    @ARCH_REGISTRY.register()
    class UNetDiscriminatorSN(nn.Module):
        def __init__(self, num_in_ch=3, num_feat=64):
            super().__init__()
            self.conv0 = nn.Conv2d(num_in_ch, num_feat, 3, 1, 1)
            self.linear = nn.Linear(num_feat, 1)

        def forward(self, x):
            return self.linear(self.conv0(x))


    @ARCH_REGISTRY.register()
    class SRNet(nn.Module):
        def __init__(self, num_feat=64):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3, 1, 1)

        def forward(self, x):
            return self.conv(x)
'''

BUILD = '''
    from copy import deepcopy

    from archs.registry import ARCH_REGISTRY


    def build_network(opt):
        opt = deepcopy(opt)
        network_type = opt.pop("type")
        net = ARCH_REGISTRY.get(network_type)(**opt)
        return net
'''


def srgan_model(network_d: str) -> str:
    return f'''
        from archs import build_network

        OPTIONS = {{"network_g": {{"type": "SRNet"}}, "network_d": {{"type": "{network_d}", "num_feat": 64}}}}


        class SRGANModel:
            def __init__(self, opt=OPTIONS):
                self.net_g = build_network(opt["network_g"])
                self.net_d = build_network(opt["network_d"])

            def optimize_parameters(self, real, noise):
                self.fake = self.net_g(noise)
                self.backward_d(real)

            def backward_d(self, real):
                real_d_pred = self.net_d(real)
                fake_d_pred = self.net_d(self.fake.detach())
                return real_d_pred, fake_d_pred
    '''


def test_registry_built_discriminator_in_a_framework_model(tmp_path):
    findings = lint(tmp_path, {"archs/registry.py": REGISTRY, "archs/discriminator_arch.py": ARCHS,
                               "archs/__init__.py": BUILD,
                               "models/srgan.py": srgan_model("VGGStyleDiscriminator")})
    assert found(findings) == [("SN301", "discriminator_arch.py", 12), ("SN401", "srgan.py", 17)]
    via = only(findings, "SN401")[0].discriminator.via
    assert via == ("built by build_network() at models/srgan.py:10; registry ARCH_REGISTRY key "
                   "'VGGStyleDiscriminator' at archs/__init__.py:10")
    assert "registry ARCH_REGISTRY key 'VGGStyleDiscriminator'" in only(findings, "SN401")[0].explanation


def test_registry_key_naming_a_discriminator_without_batch_norm(tmp_path):
    findings = lint(tmp_path, {"archs/registry.py": REGISTRY, "archs/discriminator_arch.py": ARCHS,
                               "archs/__init__.py": BUILD,
                               "models/srgan.py": srgan_model("UNetDiscriminatorSN")})
    # VGGStyleDiscriminator is still a discriminator by its name (SN301); the model calls
    # the other one.
    assert found(findings) == [("SN301", "discriminator_arch.py", 12)]


# ---------------------------------------------------------------- dicts of classes

def arch_dict(second_norm: str) -> str:
    return f'''
        import argparse

        import torch
        import torch.nn as nn


        class DCGAN_D(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 4))

            def forward(self, x):
                return self.main(x)


        class SNGAN_D(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), {second_norm}, nn.Conv2d(64, 1, 4))

            def forward(self, x):
                return self.main(x)


        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.ConvTranspose2d(8, 3, 4)

            def forward(self, z):
                return self.net(z)


        ARCHS = {{"dcgan": DCGAN_D, "sngan": SNGAN_D}}
        parser = argparse.ArgumentParser()
        parser.add_argument("--arch", choices=list(ARCHS))
        args = parser.parse_args()

        netG = Generator()
        model = ARCHS[args.arch]()
        loader = torch.utils.data.DataLoader([])
        for real, _ in loader:
            fake = netG(torch.randn(8, 8, 1, 1))
            pred_real = model(real)
            pred_fake = model(fake.detach())
    '''


def test_dict_of_classes_with_an_unknown_key_names_both_batch_norm_candidates(tmp_path):
    findings = lint(tmp_path, {"train.py": arch_dict("nn.BatchNorm2d(64)")})
    assert found(findings) == [("SN301", "train.py", 11), ("SN301", "train.py", 20),
                               ("SN401", "train.py", 45)]
    message = only(findings, "SN401")[0].explanation
    assert "DCGAN_D (" in message and " or SNGAN_D (" in message
    assert "one of 2 classes ARCHS[...] may pick at train.py:41" in message
    assert "BatchNorm2d at train.py:11; BatchNorm2d at train.py:20" in message


def test_dict_of_classes_reports_only_the_batch_norm_candidate(tmp_path):
    findings = lint(tmp_path, {"train.py": arch_dict("nn.InstanceNorm2d(64)")})
    assert found(findings) == [("SN301", "train.py", 11), ("SN401", "train.py", 45)]
    message = only(findings, "SN401")[0].explanation
    assert "DCGAN_D" in message and "SNGAN_D" not in message


# ---------------------------------------------------------------- copies, attributes, helpers

PLAYERS = '''
    import copy

    import torch
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self, norm=nn.BatchNorm2d):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), norm(64), nn.Conv2d(64, 1, 4))

        def forward(self, x):
            return self.main(x)


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.ConvTranspose2d(8, 3, 4)

        def forward(self, z):
            return self.net(z)
'''


def test_deepcopy_called_separately_on_real_and_fake(tmp_path):
    findings = lint(tmp_path, {"train.py": PLAYERS + '''
    netG = Generator()
    netD = Discriminator()
    d_copy = copy.deepcopy(netD)
    loader = torch.utils.data.DataLoader([])
    for real, _ in loader:
        fake = netG(torch.randn(8, 8, 1, 1))
        pred_real = d_copy(real)
        pred_fake = d_copy(fake.detach())
    '''})
    assert found(findings) == [("SN301", "train.py", 9), ("SN401", "train.py", 31)]
    assert only(findings, "SN401")[0].discriminator.via == "copied by deepcopy at train.py:27"



def test_the_module_of_a_data_parallel_discriminator_called_on_real_and_fake(tmp_path):
    # `.module` of the wrapper is the discriminator it wraps; it was a name nothing knew.
    findings = lint(tmp_path, {"train.py": PLAYERS + '''
    netG = Generator()
    netD = torch.nn.DataParallel(Discriminator())
    loader = torch.utils.data.DataLoader([])
    for real, _ in loader:
        fake = netG(torch.randn(8, 8, 1, 1))
        pred_real = netD.module(real)
        pred_fake = netD.module(fake.detach())
    '''})
    assert found(findings) == [("SN301", "train.py", 9), ("SN401", "train.py", 30)]


def test_a_module_attribute_a_project_class_sets_itself_is_that_attribute(tmp_path):
    # Its own `module` (here the generator), not the holder read as a wrapper.
    findings = lint(tmp_path, {"train.py": PLAYERS + '''
    class Holder(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    holder = Holder(Generator())
    netD = Discriminator()
    loader = torch.utils.data.DataLoader([])
    for real, _ in loader:
        fake = holder.module(torch.randn(8, 8, 1, 1))
        pred_real = netD(real)
        pred_fake = netD(fake.detach())
    '''})
    assert found(findings) == [("SN301", "train.py", 9), ("SN401", "train.py", 35)]


def test_deepcopy_of_a_discriminator_built_with_instance_norm(tmp_path):
    findings = lint(tmp_path, {"train.py": PLAYERS + '''
    netG = Generator()
    netD = Discriminator(norm=nn.InstanceNorm2d)
    d_copy = copy.deepcopy(netD)
    loader = torch.utils.data.DataLoader([])
    for real, _ in loader:
        fake = netG(torch.randn(8, 8, 1, 1))
        pred_real = d_copy(real)
        pred_fake = d_copy(fake.detach())
    '''})
    assert found(findings) == []  # the class's batch-norm default is never trained


def loss_module(args: str) -> str:
    return PLAYERS + f'''

    class GANLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.discriminator = Discriminator({args})

        def forward(self, real, fake, optimizer_idx):
            if optimizer_idx == 0:
                return -torch.mean(self.discriminator(fake))
            logits_real = self.discriminator(real.detach())
            logits_fake = self.discriminator(fake.detach())
            return logits_real, logits_fake
    '''


def test_loss_module_holding_the_discriminator(tmp_path):
    findings = lint(tmp_path, {"losses.py": loss_module("")})
    assert found(findings) == [("SN301", "losses.py", 9), ("SN401", "losses.py", 34)]


def test_loss_module_holding_a_layer_norm_discriminator(tmp_path):
    findings = lint(tmp_path, {"losses.py": loss_module("norm=nn.InstanceNorm2d")})
    assert found(findings) == []  # the class's batch-norm default is never trained


def received_by_a_loss(args: str) -> str:
    return PLAYERS + f'''

    class GANLoss:
        def __init__(self, netD):
            self.netD = netD

        def d_loss(self, real, fake):
            pred_real = self.netD(real)
            pred_fake = self.netD(fake.detach())
            return pred_real.mean() - pred_fake.mean()


    netG = Generator()
    netD = Discriminator({args})
    criterion = GANLoss(netD)
    loader = torch.utils.data.DataLoader([])
    for real, _ in loader:
        fake = netG(torch.randn(8, 8, 1, 1))
        loss = criterion.d_loss(real, fake)
    '''


def test_loss_class_receiving_the_discriminator(tmp_path):
    findings = lint(tmp_path, {"train.py": received_by_a_loss("")})
    assert found(findings) == [("SN301", "train.py", 9), ("SN401", "train.py", 31)]


def test_loss_class_receiving_an_instance_norm_discriminator(tmp_path):
    # The method also runs for GANLoss built alone, where `self.netD` is unknown; the
    # instance the script passes decides.
    findings = lint(tmp_path, {"train.py": received_by_a_loss("norm=nn.InstanceNorm2d")})
    assert found(findings) == []  # the class's batch-norm default is never trained


def helper_script(args: str) -> str:
    return PLAYERS + f'''

    def main():
        netG = Generator()
        disc = Discriminator({args})

        def run_D(img):
            return disc(img)

        loader = torch.utils.data.DataLoader([])
        for real, _ in loader:
            fake = netG(torch.randn(8, 8, 1, 1))
            d_real = run_D(real)
            d_fake = run_D(fake.detach())
    '''


def test_run_d_helper_called_on_real_and_fake(tmp_path):
    findings = lint(tmp_path, {"train.py": helper_script("")})
    assert found(findings) == [("SN301", "train.py", 9), ("SN401", "train.py", 36)]


def test_run_d_helper_over_an_instance_norm_discriminator(tmp_path):
    findings = lint(tmp_path, {"train.py": helper_script("norm=nn.InstanceNorm2d")})
    assert found(findings) == []  # the class's batch-norm default is never trained


# ---------------------------------------------------------------- WGAN-GP through a factory

def wgan_gp(norm: str) -> str:
    return f'''
        import torch
        import torch.nn as nn


        class Critic(nn.Module):
            def __init__(self, norm="batch"):
                super().__init__()
                norm_layer = nn.BatchNorm2d(64) if norm == "batch" else nn.LayerNorm([64, 16, 16])
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), norm_layer, nn.Conv2d(64, 1, 4))

            def forward(self, x):
                return self.main(x)


        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.ConvTranspose2d(8, 3, 4)

            def forward(self, z):
                return self.net(z)


        def build_critic(kind):
            if kind == "dcgan":
                return Critic(norm="{norm}")
            raise ValueError(kind)


        netG = Generator()
        netC = build_critic("dcgan")
        loader = torch.utils.data.DataLoader([])
        for real, _ in loader:
            fake = netG(torch.randn(8, 8, 1, 1)).detach()
            alpha = torch.rand(real.size(0), 1, 1, 1)
            interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
            out = netC(interp)
            grad = torch.autograd.grad(outputs=out.sum(), inputs=interp, create_graph=True)[0]
            penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
            loss = netC(fake).mean() - netC(real).mean() + 10 * penalty
    '''


def test_wgan_gp_critic_built_by_a_factory_with_batch_norm(tmp_path):
    findings = lint(tmp_path, {"train.py": wgan_gp("batch")})
    assert found(findings) == [("SN301", "train.py", 9), ("SN303", "train.py", 38),
                               ("SN401", "train.py", 41)]
    sn303 = only(findings, "SN303")[0]
    assert "built by build_critic() at train.py:32 (kind='dcgan')" in sn303.explanation


def test_wgan_gp_critic_built_by_a_factory_with_layer_norm(tmp_path):
    findings = lint(tmp_path, {"train.py": wgan_gp("layer")})
    assert found(findings) == []  # the class's batch-norm default is never trained


def test_json_output_carries_the_resolution_path(tmp_path):
    findings = lint(tmp_path, {"models/networks.py": NETWORKS,
                               "train.py": train_script('default="basic"', "batch")})
    out = json.loads(json.dumps([f.to_dict() for f in findings]))
    sn401 = next(f for f in out if f["code"] == "SN401")
    assert sn401["discriminator"]["via"].startswith("built by define_D() at train.py:13")
    sn301 = next(f for f in out if f["code"] == "SN301")
    assert "via" not in sn301["discriminator"]


def test_dict_of_one_class_indexed_by_an_unknown_flag(tmp_path):
    findings = lint(tmp_path, {"train.py": arch_dict("nn.BatchNorm2d(64)").replace(
        'ARCHS = {"dcgan": DCGAN_D, "sngan": SNGAN_D}', 'ARCHS = {"dcgan": DCGAN_D}').replace(
        "model = ARCHS[args.arch]()", "model = ARCHS[FLAGS.arch]()")})
    assert found(findings) == [("SN301", "train.py", 11), ("SN401", "train.py", 45)]
    assert only(findings, "SN401")[0].discriminator.via == \
        "the only class in ARCHS, indexed at train.py:41"


# ---------------------------------------------------------------- options classes

OPTIONS = '''
    class BaseOptions:
        def initialize(self, parser):
            parser.add_argument("--gpu_ids", type=str, default="0")
            parser.add_argument("--input_nc", type=int, default=3)
            parser.add_argument("--ndf", type=int, default=64)
            parser.add_argument("--netD", type=str, default="basic")
            parser.add_argument("--norm", type=str, default="instance")
            return parser
'''


def model_class(set_defaults: str) -> str:
    return f'''
        from models import networks


        class GANModel:
            @staticmethod
            def modify_commandline_options(parser, is_train=True):
                {set_defaults}
                return parser

            def __init__(self, opt):
                self.gpu_ids = opt.gpu_ids
                self.netD = networks.define_D(opt.input_nc, opt.ndf, opt.netD, norm=opt.norm)

            def backward_D_basic(self, netD, real, fake):
                pred_real = netD(real)
                pred_fake = netD(fake.detach())
                return pred_real, pred_fake

            def backward_D(self):
                self.loss_D = self.backward_D_basic(self.netD, self.real_B, self.fake_B)
    '''


def test_model_class_whose_options_default_to_batch_norm(tmp_path):
    findings = lint(tmp_path, {"models/networks.py": NETWORKS, "options/base_options.py": OPTIONS,
                               "models/gan_model.py": model_class('parser.set_defaults(norm="batch")')})
    assert found(only(findings, "SN401")) == [("SN401", "gan_model.py", 16)]
    assert only(findings, "SN401")[0].discriminator.via == (
        "built by define_D() at models/gan_model.py:13 (netD='basic' from the --netD default at "
        "options/base_options.py:7, norm='batch' from the --norm default set at "
        "GANModel.modify_commandline_options line 8)")


def test_model_class_whose_options_default_to_instance_norm(tmp_path):
    findings = lint(tmp_path, {"models/networks.py": NETWORKS, "options/base_options.py": OPTIONS,
                               "models/gan_model.py": model_class("pass")})
    assert only(findings, "SN401") == []


# ---------------------------------------------------------------- layer factories on a plain object

BAG_OPS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    def conv2d(i, o, k):
        return nn.Conv2d(i, o, k)


    def snconv2d(i, o, k):
        return spectral_norm(nn.Conv2d(i, o, k))


    def batchnorm_2d(in_features):
        return nn.BatchNorm2d(in_features)
'''

BAG_CONFIG = '''
    import ops


    class make_empty_object(object):
        pass


    class Configurations(object):
        def __init__(self, apply_d_sn=False):
            self.apply_d_sn = apply_d_sn
            self.MODULES = make_empty_object()
            self.define_modules()

        def define_modules(self):
            if self.apply_d_sn:
                self.MODULES.d_conv2d = ops.snconv2d
            else:
                self.MODULES.d_conv2d = ops.conv2d
            if not self.apply_d_sn:
                self.MODULES.d_bn = ops.batchnorm_2d
'''

BAG_MODELS = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self, apply_d_sn, MODULES):
            super().__init__()
            self.apply_d_sn = apply_d_sn
            self.conv = MODULES.d_conv2d(3, 64, 3)
            if not apply_d_sn:
                self.bn = MODULES.d_bn(in_features=64)
            self.out = MODULES.d_conv2d(64, 1, 3)

        def forward(self, x):
            h = self.conv(x)
            if not self.apply_d_sn:
                h = self.bn(h)
            return self.out(h)
'''


def bag_train(arguments: str) -> str:
    return f'''
        from config import Configurations
        from models import Discriminator


        def train(loader, G, opt, z):
            cfgs = Configurations({arguments})
            netD = Discriminator(apply_d_sn=cfgs.apply_d_sn, MODULES=cfgs.MODULES)
            for real in loader:
                fake = G(z).detach()
                d_real = netD(real)
                d_fake = netD(fake)
                loss = d_real.mean() - d_fake.mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
    '''


def test_layer_factories_set_on_an_empty_object_build_the_batch_norm_they_name(tmp_path):
    # StudioGAN's shape: the configuration fills an empty object with the layer factories
    # (`MODULES.d_bn = ops.batchnorm_2d` where the discriminator has no SN) and the
    # discriminator builds its layers through them.
    findings = lint(tmp_path, {"ops.py": BAG_OPS, "config.py": BAG_CONFIG, "models.py": BAG_MODELS,
                               "train.py": bag_train("")})
    assert found(findings) == [("SN301", "models.py", 11), ("SN401", "train.py", 11)]


def test_layer_factories_on_an_empty_object_without_batch_norm_build_none(tmp_path):
    findings = lint(tmp_path, {"ops.py": BAG_OPS, "config.py": BAG_CONFIG, "models.py": BAG_MODELS,
                               "train.py": bag_train("apply_d_sn=True")})
    assert found(findings) == []


def test_a_dataclass_instance_is_not_read_as_an_empty_object(tmp_path):
    # Its fields come from the arguments (`Cfg(norm="instance")`), not from its class
    # body: reading `cfg.norm` as the class default "batch" would report a batch norm the
    # project never trains with.
    train = '''
        from dataclasses import dataclass

        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self, norm):
                super().__init__()
                self.conv = nn.Conv2d(3, 64, 3)
                self.norm = nn.BatchNorm2d(64) if norm == "batch" else nn.InstanceNorm2d(64)

            def forward(self, x):
                return self.norm(self.conv(x))


        @dataclass
        class Cfg:
            norm: str = "batch"


        def train(loader, G, opt, z):
            cfg = Cfg(norm="instance")
            netD = Discriminator(cfg.norm)
            for real in loader:
                fake = G(z).detach()
                loss = netD(real).mean() - netD(fake).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
    '''
    assert only(lint(tmp_path, {"train.py": train}), "SN401") == []


# ---------------------------------------------------------------- imports inside a factory

KAIR_NETS = '''
    import torch.nn as nn


    class Discriminator_VGG(nn.Module):
        def __init__(self, in_nc=3):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(in_nc, 64, 3), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 3))

        def forward(self, x):
            return self.main(x)


    class Discriminator_UNet(nn.Module):
        def __init__(self, in_nc=3):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(in_nc, 64, 3), nn.Conv2d(64, 1, 3))

        def forward(self, x):
            return self.main(x)
'''

KAIR_SELECT = '''
    def define_D(opt):
        opt_net = opt["netD"]
        net_type = opt_net["net_type"]
        if net_type == "discriminator_vgg":
            from models.network_discriminator import Discriminator_VGG as discriminator
            netD = discriminator(in_nc=opt_net["in_nc"])
        elif net_type == "discriminator_unet":
            from models.network_discriminator import Discriminator_UNet as discriminator
            netD = discriminator(in_nc=opt_net["in_nc"])
        else:
            raise NotImplementedError(net_type)
        return netD
'''


def kair_model(net_type: str) -> str:
    return f'''
        from models.select_network import define_D


        class ModelGAN:
            def __init__(self, opt={{"netD": {{"net_type": {net_type}, "in_nc": 3}}}}):
                self.netD = define_D(opt)

            def optimize_parameters(self, real, fake):
                pred_d_real = self.netD(real)
                pred_d_fake = self.netD(fake.detach())
    '''


def test_factory_importing_the_class_in_each_branch(tmp_path):
    # Both branches bind `discriminator`: with the key unknown, the call reaches one of
    # the two classes, and only the batch-norm one is reported.
    findings = lint(tmp_path, {"models/network_discriminator.py": KAIR_NETS,
                               "models/select_network.py": KAIR_SELECT,
                               "models/model_gan.py": kair_model("opt_net_type()")})
    assert found(findings) == [("SN401", "model_gan.py", 10), ("SN301", "network_discriminator.py", 8)]
    assert "one of 2 classes define_D() may build" in only(findings, "SN401")[0].explanation


def test_factory_importing_the_class_in_each_branch_with_a_known_batch_norm_key(tmp_path):
    findings = lint(tmp_path, {"models/network_discriminator.py": KAIR_NETS,
                               "models/select_network.py": KAIR_SELECT,
                               "models/model_gan.py": kair_model('"discriminator_vgg"')})
    assert found(findings) == [("SN401", "model_gan.py", 10), ("SN301", "network_discriminator.py", 8)]
    assert only(findings, "SN401")[0].discriminator.via == "built by define_D() at models/model_gan.py:7"


def test_factory_importing_the_class_in_each_branch_with_a_known_key(tmp_path):
    findings = lint(tmp_path, {"models/network_discriminator.py": KAIR_NETS,
                               "models/select_network.py": KAIR_SELECT,
                               "models/model_gan.py": kair_model('"discriminator_unet"')})
    assert found(findings) == [("SN301", "network_discriminator.py", 8)]


def test_gradient_penalty_through_one_of_two_batch_norm_critics(tmp_path):
    script = wgan_gp("batch").replace('''def build_critic(kind):
            if kind == "dcgan":
                return Critic(norm="batch")
            raise ValueError(kind)''', '''class Critic2(Critic):
            pass


        def build_critic(kind):
            if kind == "dcgan":
                net = Critic(norm="batch")
            else:
                net = Critic2(norm="batch")
            return net''').replace('netC = build_critic("dcgan")', "netC = build_critic(KIND)")
    findings = lint(tmp_path, {"train.py": script})
    sn303 = only(findings, "SN303")
    assert found(sn303) == [("SN303", "train.py", 44)]
    assert "Critic (" in sn303[0].explanation and " or Critic2 (" in sn303[0].explanation
    assert "one of 2 classes build_critic() may build" in sn303[0].explanation


def namespace_script(norm: str) -> str:
    return f'''
        import argparse

        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self, opt):
                super().__init__()
                norm = nn.BatchNorm2d if opt.norm == "batch" else nn.InstanceNorm2d
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), norm(64), nn.Conv2d(64, 1, 4))

            def forward(self, x):
                return self.main(x)


        parser = argparse.ArgumentParser()
        parser.add_argument("--dataroot", required=True)
        parser.add_argument("--norm", default="{norm}")
        opt = parser.parse_args()

        netD = Discriminator(opt)
        loader = torch.utils.data.DataLoader([])
        for real, _ in loader:
            fake = torch.randn(8, 3, 64, 64)
            pred_real = netD(real)
            pred_fake = netD(fake)
    '''


def test_discriminator_built_from_the_options_namespace_with_batch_norm(tmp_path):
    findings = lint(tmp_path, {"train.py": namespace_script("batch")})
    assert found(only(findings, "SN401")) == [("SN401", "train.py", 27)]


def test_discriminator_built_from_the_options_namespace_with_instance_norm(tmp_path):
    # `--dataroot` is unknown (required), but the class does not read it: the namespace
    # decides its norm, and the class built alone is not what the script calls.
    findings = lint(tmp_path, {"train.py": namespace_script("instance")})
    assert only(findings, "SN401") == []


# ---------------------------------------------------------------- options a script parses

TRAIN_OPTIONS = '''
    import sys

    from options.base_options import BaseOptions


    class TrainOptions(BaseOptions):
        def parse(self):
            self.parser = make_parser(sys.argv)
            self.opt = self.parser.parse_args()
            self.opt.isTrain = True
            return self.opt
'''


def framework_model(set_defaults: str) -> str:
    return f'''
        from models import networks


        class GANModel:
            @staticmethod
            def modify_commandline_options(parser, is_train=True):
                {set_defaults}
                return parser

            def __init__(self, opt):
                self.gpu_ids = [int(i) for i in opt.gpu_ids.split(",")]
                self.netG = networks.Generator()
                self.netD = networks.define_D(opt.input_nc, opt.ndf, opt.netD, opt.norm, self.gpu_ids)

            def set_input(self, input):
                self.real_A = input["A"]
                self.real_B = input["B"]

            def optimize_parameters(self):
                self.fake_B = self.netG(self.real_A)
                pred_a = self.netD(self.real_B)
                pred_b = self.netD(self.fake_B.detach())
    '''


TRAIN_SCRIPT = '''
    from models.gan_model import GANModel
    from options.train_options import TrainOptions


    def create_model(opt):
        return GANModel(opt)


    def train(opt, loader, model):
        for data in loader:
            model.set_input(data)
            model.optimize_parameters()


    opt = TrainOptions().parse()
    train(opt, make_loader(opt), create_model(opt))
'''


def options_project(set_defaults: str) -> dict[str, str]:
    return {"models/networks.py": NETWORKS, "options/base_options.py": OPTIONS,
            "options/train_options.py": TRAIN_OPTIONS, "models/gan_model.py": framework_model(set_defaults),
            "train.py": TRAIN_SCRIPT}


def test_options_a_script_parses_out_of_sight_take_the_declared_defaults(tmp_path):
    # `--norm` defaults to instance; the parser is made where snlint cannot follow, the
    # device list is computed: the discriminator the script trains has no batch norm.
    findings = lint(tmp_path, options_project("pass"))
    assert only(findings, "SN401") == []


def test_options_a_script_parses_out_of_sight_with_a_model_default_of_batch_norm(tmp_path):
    findings = lint(tmp_path, options_project('parser.set_defaults(norm="batch")'))
    assert found(only(findings, "SN401")) == [("SN401", "gan_model.py", 22)]
    message = only(findings, "SN401")[0].explanation
    assert "norm='batch' from the --norm default set at GANModel.modify_commandline_options line 8" \
        in message
    assert "real samples (the data parameter `input`)" in message
    assert "generated samples (returned by self.netG at line 21)" in message


def importlib_model_project(norm: str) -> dict[str, str]:
    """DMIT: the model module is imported by name, and its class's methods run on their
    own read `self.opt`, which the unfollowed `__init__` set."""
    return {
        "options/base_options.py": f'''
            import argparse


            class BaseOptions():
                def __init__(self):
                    self.parser = argparse.ArgumentParser()

                def initialize(self):
                    self.parser.add_argument('--norm_type', type=str, default='{norm}')
                    self.parser.add_argument('--model_name', type=str, default='season_transfer')
                    self.parser.add_argument('--gpu', type=int, default=0)

                def parse(self):
                    self.initialize()
                    return self.parser.parse_args()
        ''',
        "models/network.py": '''
            import functools
            import torch.nn as nn


            def get_norm_layer(layer_type='cbin'):
                if layer_type == 'cbbn':
                    norm_layer = functools.partial(nn.BatchNorm2d, affine=True)
                elif layer_type == 'cbin':
                    norm_layer = functools.partial(nn.InstanceNorm2d, affine=False)
                else:
                    raise NotImplementedError(layer_type)
                return norm_layer


            class StyleDiscriminator(nn.Module):
                def __init__(self, norm_type='cbin'):
                    super().__init__()
                    norm_layer = get_norm_layer(layer_type=norm_type)
                    self.conv = nn.Conv2d(3, 8, 3)
                    self.norm = norm_layer(8)

                def forward(self, x):
                    return self.norm(self.conv(x))


            def get_image_discriminator(opt):
                return StyleDiscriminator(norm_type=opt.norm_type)
        ''',
        "models/base_model.py": '''
            import torch
            import torch.nn as nn
            from abc import ABC
            from models import network


            class BaseModel(ABC):
                def __init__(self, opt):
                    if opt.gpu >= 0:
                        self.device = torch.device('cuda:%d' % opt.gpu)
                    else:
                        self.device = torch.device('cpu')
                    self.opt = opt
                    self.build_models()

                def build_models(self):
                    self.netG = nn.Conv2d(3, 3, 3)
                    self.dis = network.get_image_discriminator(self.opt)

                def update_dis(self, real):
                    fake = self.netG(real).detach()
                    return self.dis(fake).mean() - self.dis(real).mean()
        ''',
        "models/season_transfer_model.py": '''
            from models.base_model import BaseModel


            class SeasonTransferModel(BaseModel):
                def __init__(self, opt):
                    BaseModel.__init__(self, opt)
        ''',
        "models/__init__.py": '''
            import importlib


            def create_model(opt):
                module = importlib.import_module("models." + opt.model_name + "_model")
                return module.SeasonTransferModel(opt)
        ''',
        "train.py": '''
            from options.base_options import BaseOptions
            from models import create_model

            opt = BaseOptions().parse()
            model = create_model(opt)
        ''',
    }


def test_options_a_model_attribute_holds_unset_take_the_declared_defaults(tmp_path):
    # `self.opt` read in a method run for the class built alone: the declared `cbin`, not
    # the first branch of the norm factory's undecided `if`.
    assert found(lint(tmp_path, importlib_model_project("cbin"))) == []


def test_options_a_model_attribute_holds_unset_with_a_batch_norm_default(tmp_path):
    assert found(only(lint(tmp_path, importlib_model_project("cbbn")), "SN401")) == \
        [("SN401", "base_model.py", 23)]


# ---------------------------------------------------------------- a registry key from a YAML file

def yaml_framework(model: str) -> str:
    return f'''
        import yaml

        from archs import build_network


        class BaseModel:
            def __init__(self, opt_path):
                self.opt = yaml.safe_load(open(opt_path))

            def feed_data(self, data):
                self.lq = data["lq"]
                self.gt = data["gt"]


        class {model}(BaseModel):
            def __init__(self, opt_path):
                super().__init__(opt_path)
                self.net_g = build_network(self.opt["network_g"])
                self.net_d = build_network(self.opt["network_d"])

            def optimize_parameters(self, current_iter):
                self.output = self.net_g(self.lq)
                real_d_pred = self.net_d(self.gt)
                fake_d_pred = self.net_d(self.output.detach())
    '''


def test_registry_key_from_a_config_file_names_the_batch_norm_discriminator_it_may_pick(tmp_path):
    # The key comes from a YAML file the command line names: the discriminator is one of
    # the registry's discriminator classes; only the one with batch norm is reported, and
    # `self.net_g`, not a discriminator's binding, is none of them. `self.gt` is set by
    # the base class's `feed_data`.
    findings = lint(tmp_path, {"archs/registry.py": REGISTRY, "archs/discriminator_arch.py": ARCHS,
                               "archs/__init__.py": BUILD, "models/srgan.py": yaml_framework("SRGANModel")})
    assert found(findings) == [("SN301", "discriminator_arch.py", 12), ("SN401", "srgan.py", 24)]
    message = only(findings, "SN401")[0].explanation
    assert "VGGStyleDiscriminator (a discriminator by its name; built by build_network() at " \
           "models/srgan.py:20; one of 2 discriminator classes registry ARCH_REGISTRY holds (key not " \
           "known here) at archs/__init__.py:10)" in message
    assert "real samples (the data parameter `data`)" in message
    assert "generated samples (returned by self.net_g at line 23)" in message


def test_registry_key_from_a_config_file_picks_the_discriminator_named_after_the_model(tmp_path):
    archs = ARCHS.replace("class UNetDiscriminatorSN", "class UNetDiscriminator")
    findings = lint(tmp_path, {"archs/registry.py": REGISTRY, "archs/discriminator_arch.py": archs,
                               "archs/__init__.py": BUILD, "models/unet.py": yaml_framework("UNetModel")})
    assert only(findings, "SN401") == []


def test_a_base_class_finding_names_the_subclass_the_training_code_uses(tmp_path):
    # pytorch-gan-collections: `Discriminator32(Discriminator)` is what train() calls; the
    # batch norm is built by the base's __init__, found by its name too.
    code = '''
        import torch
        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self, M):
                super().__init__()
                self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.BatchNorm2d(64))

            def forward(self, x):
                return self.main(x)


        class Discriminator32(Discriminator):
            def __init__(self):
                super().__init__(M=32)


        def train(net_G, loader):
            net_D = Discriminator32()
            for real in loader:
                a = net_D(real)
                b = net_D(net_G(torch.randn(8, 128)).detach())
    '''
    findings = lint(tmp_path, {"train.py": code})
    assert found(findings) == [("SN301", "train.py", 9), ("SN401", "train.py", 23)]
    sn301 = only(findings, "SN301")[0]
    assert sn301.discriminator.cls == "train.py:Discriminator32"
    assert sn301.message.startswith("BatchNorm2d in Discriminator32 normalizes")
    assert sn301.evidence_of()["discriminator"].startswith("Discriminator32: used as a discriminator by the training code;")


MODULE_OF_MODELS = '''
    import torch.nn as nn


    class SRResNet(nn.Module):
        def __init__(self, channels=64):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, channels, 3), nn.BatchNorm2d(channels))

        def forward(self, x):
            return self.body(x)


    class DiscriminatorForVGG(nn.Module):
        def __init__(self, in_channels=3, channels=64):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(in_channels, channels, 3), nn.BatchNorm2d(channels))

        def forward(self, x):
            return self.features(x)
'''


def module_namespace_script(pick: str) -> str:
    return f'''
        import torch
        import yaml

        import model


        config = yaml.safe_load(open("train.yaml"))
        g_model = model.SRResNet()
        d_model = {pick}
        for lr, gt in torch.utils.data.DataLoader([]):
            sr = g_model(lr)
            gt_output = d_model(gt)
            sr_output = d_model(sr.detach().clone())
    '''


def test_a_class_picked_from_a_module_namespace_by_a_config_key(tmp_path):
    # SRGAN-PyTorch: `model.__dict__[config["MODEL"]["D"]["NAME"]](...)`, the key in YAML.
    script = module_namespace_script('model.__dict__[config["MODEL"]["D"]["NAME"]](in_channels=3)')
    findings = lint(tmp_path, {"model.py": MODULE_OF_MODELS, "train.py": script})
    assert found(findings) == [("SN301", "model.py", 17), ("SN401", "train.py", 13)]
    assert only(findings, "SN401")[0].discriminator.via == (
        "the only discriminator class in model (key not known here) at train.py:10")


def test_a_class_picked_from_a_module_by_getattr(tmp_path):
    script = module_namespace_script('getattr(model, config["d_name"])(in_channels=3)')
    findings = lint(tmp_path, {"model.py": MODULE_OF_MODELS, "train.py": script})
    assert found(findings) == [("SN301", "model.py", 17), ("SN401", "train.py", 13)]


def test_a_known_key_into_a_module_namespace_is_that_class(tmp_path):
    script = module_namespace_script('model.__dict__["DiscriminatorForVGG"]()')
    findings = lint(tmp_path, {"model.py": MODULE_OF_MODELS, "train.py": script})
    assert found(findings) == [("SN301", "model.py", 17), ("SN401", "train.py", 13)]


def test_a_discriminator_inside_another_is_part_of_it_and_a_generators_sub_network_generates(tmp_path):
    # Projected GAN: ProjectedDiscriminator holds MultiScaleD (both named as discriminators);
    # the loss class receives G and D from a config-built factory and generates with
    # self.G.synthesis(self.G.mapping(z)), scoring through a run_D(img) helper.
    models = '''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        class MultiScaleD(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(spectral_norm(nn.Conv2d(3, 64, 4)), nn.BatchNorm2d(64))

            def forward(self, x):
                return self.main(x)


        class ProjectedDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.discriminator = MultiScaleD()

            def forward(self, x, c):
                return self.discriminator(x)
    '''
    loss = '''
        class ProjectedGANLoss:
            def __init__(self, G, D):
                self.G = G
                self.D = D

            def run_G(self, z, c):
                ws = self.G.mapping(z, c)
                return self.G.synthesis(ws, c)

            def run_D(self, img, c):
                return self.D(img, c)

            def accumulate_gradients(self, real_img, real_c, gen_z, gen_c):
                gen_img = self.run_G(gen_z, gen_c)
                gen_logits = self.run_D(gen_img, gen_c)
                real_logits = self.run_D(real_img.detach(), real_c)
                return gen_logits.mean() - real_logits.mean()
    '''
    findings = lint(tmp_path, {"models.py": models, "loss.py": loss})
    assert found(findings) == [("SN401", "loss.py", 16), ("SN301", "models.py", 9)]
    sn401 = only(findings, "SN401")[0]
    assert sn401.discriminator.cls == "models.py:ProjectedDiscriminator"
    assert sn401.message.startswith("generated samples here and real samples at line")
    assert sn401.evidence.startswith("generated samples (returned by self.G at line 9) go through")


TWO_DISCRIMINATORS = '''
    import torch.nn as nn


    class LocalDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 8, 4), nn.BatchNorm2d(8))

        def forward(self, x):
            return self.main(x)


    class GlobalDiscriminator(LocalDiscriminator):
        pass


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Linear(8, 3)

        def forward(self, z):
            return self.main(z)
'''


def test_models_handed_back_by_accelerate_prepare(tmp_path):
    script = '''
        import torch
        from accelerate import Accelerator

        from nets import Generator, GlobalDiscriminator, LocalDiscriminator

        accelerator = Accelerator()
        local_d, global_d, netG = LocalDiscriminator(), GlobalDiscriminator(), Generator()
        loader = torch.utils.data.DataLoader([])
        local_d, global_d, netG, loader = accelerator.prepare(local_d, global_d, netG, loader)
        for real in loader:
            fake = netG(torch.randn(4, 8)).detach()
            l_real, l_fake = local_d(real), local_d(fake)
            g_real, g_fake = global_d(real), global_d(fake)
    '''
    findings = lint(tmp_path, {"nets.py": TWO_DISCRIMINATORS, "train.py": script})
    assert found(findings) == [("SN301", "nets.py", 8), ("SN401", "train.py", 13), ("SN401", "train.py", 14)]


def test_models_handed_back_by_apex_amp_initialize(tmp_path):
    script = '''
        import torch
        from apex import amp

        from nets import Generator, GlobalDiscriminator, LocalDiscriminator

        local_d, global_d, netG = LocalDiscriminator(), GlobalDiscriminator(), Generator()
        opts = [torch.optim.Adam(local_d.parameters()), torch.optim.Adam(global_d.parameters())]
        [local_d, global_d], opts = amp.initialize([local_d, global_d], opts, opt_level="O1")
        for real in torch.utils.data.DataLoader([]):
            fake = netG(torch.randn(4, 8)).detach()
            l_real, l_fake = local_d(real), local_d(fake)
            g_real, g_fake = global_d(real), global_d(fake)
    '''
    findings = lint(tmp_path, {"nets.py": TWO_DISCRIMINATORS, "train.py": script})
    assert found(findings) == [("SN301", "nets.py", 8), ("SN401", "train.py", 12), ("SN401", "train.py", 13)]


def test_a_generator_picked_from_a_module_namespace_is_not_its_discriminator(tmp_path):
    # SRGAN-PyTorch builds both players from `model.__dict__[...]`: the unknown key that
    # builds `g_model` picks the generator, whatever the module's discriminator classes are.
    script = '''
        import torch
        import yaml

        import model


        config = yaml.safe_load(open("train.yaml"))
        g_model = model.__dict__[config["MODEL"]["G"]["NAME"]]()
        d_model = model.__dict__[config["MODEL"]["D"]["NAME"]](in_channels=3)
        for lr, gt in torch.utils.data.DataLoader([]):
            sr = g_model(lr)
            adversarial_loss = d_model(sr).mean()
            g_optimizer.step()
            gt_output = d_model(gt)
            sr_output = d_model(sr.detach().clone())
    '''
    findings = lint(tmp_path, {"model.py": MODULE_OF_MODELS, "train.py": script})
    assert found(findings) == [("SN301", "model.py", 17), ("SN401", "train.py", 15)]


# pytorch-GANs: `get_gan(GANType.VANILLA.name)` compares enum members' names, and returns
# the discriminator and the generator together.
GET_GAN = {"models.py": '''
    import enum
    import torch.nn as nn

    class GANType(enum.Enum):
        VANILLA = 0,
        DCGAN = 1

    class DiscriminatorNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(784, 1)

        def forward(self, x):
            return self.fc(x)

    class ConvolutionalDiscriminativeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 64, 4, 2, 1)
            self.bn = nn.BatchNorm2d(64)

        def forward(self, x):
            return self.bn(self.conv(x))

    class GeneratorNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(100, 784)

        def forward(self, z):
            return self.fc(z)

    def get_gan(gan_type_name):
        if gan_type_name == GANType.VANILLA.name:
            d_net = DiscriminatorNet().train()
            g_net = GeneratorNet().train()
        elif gan_type_name == GANType.DCGAN.name:
            d_net = ConvolutionalDiscriminativeNet().train()
            g_net = GeneratorNet().train()
        else:
            raise Exception(gan_type_name)
        return d_net, g_net
'''}


def get_gan_script(key: str) -> str:
    return f'''
        import sys
        import torch
        from models import GANType, get_gan

        d, g = get_gan({key})
        for real, _ in torch.utils.data.DataLoader([]):
            fake = g(torch.randn(8, 100))
            loss = d(real).mean() - d(fake.detach()).mean()
    '''


def test_an_enum_members_name_picks_the_factory_branch(tmp_path):
    findings = lint(tmp_path, {**GET_GAN, "train_vanilla_gan.py": get_gan_script("GANType.VANILLA.name"),
                               "train_dcgan.py": get_gan_script("GANType.DCGAN.name")})
    assert found(only(findings, "SN401")) == [("SN401", "train_dcgan.py", 9)]


def test_a_factory_returning_networks_together_says_its_key_is_not_known(tmp_path):
    findings = lint(tmp_path, {**GET_GAN, "train.py": get_gan_script("sys.argv[1]")})
    assert found(only(findings, "SN401")) == [("SN401", "train.py", 9)]
    assert "one of 2 classes get_gan() may build at train.py:6" in only(findings, "SN401")[0].explanation



def test_a_score_name_does_not_decide_for_one_of_a_registrys_discriminators(tmp_path):
    # VQFR, Real-ESRGAN: `self.net_d` is one of the registry's discriminators (its key is in
    # a YAML file); a score named `fake_pred` is then no evidence enough for SN401.
    model = '''
        from archs import build_network


        class VQFRModel:
            def __init__(self, opt):
                self.net_sr = build_network(opt["network_sr"])
                self.net_d = build_network(opt["network_d"])

            def optimize_parameters(self, data):
                self.gt = data["gt"]
                out = self.net_sr(data["lq"])
                fake_pred = self.net_d(out.detach())
                real_pred = self.net_d(self.gt)
                return fake_pred, real_pred
    '''
    findings = lint(tmp_path, {"archs/registry.py": REGISTRY, "archs/discriminator_arch.py": ARCHS,
                               "archs/__init__.py": BUILD, "models/vqfr.py": model})
    assert found(findings) == [("SN301", "discriminator_arch.py", 12)]


# ---------------------------------------------------------------- a progressive discriminator

def growing_project(flag_bn: str, grow: bool = True) -> dict[str, str]:
    # PGGAN's layout: `config.py` parses at import; the discriminator takes `config`, builds
    # its blocks with a `bn` flag from it, and a growing method re-packs its children
    # under their names into a new Sequential.
    network = NETWORK_THAT_GROWS if grow else NETWORK_THAT_GROWS.replace(FLUSH_NETWORK, "")
    return {"config.py": f'''
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--flag_bn", type=bool, default={flag_bn})
        config, _ = parser.parse_known_args()
    ''', "network.py": network}


NETWORK_THAT_GROWS = '''
        import torch.nn as nn


        def conv(layers, c_in, c_out, bn=False):
            layers.append(nn.Conv2d(c_in, c_out, 3, 1, 1))
            layers.append(nn.LeakyReLU(0.2))
            if bn:
                layers.append(nn.BatchNorm2d(c_out))
            return layers


        class Discriminator(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.flag_bn = config.flag_bn
                layers = conv([], 3, 16, self.flag_bn)
                layers = conv(layers, 16, 1, self.flag_bn)
                self.model = nn.Sequential(*layers)

{flush}            def forward(self, x):
                return self.model(x)
'''
FLUSH_NETWORK = '''            def flush_network(self):
                new_model = nn.Sequential()
                for name, module in self.model.named_children():
                    new_model.add_module(name, module)
                self.model = new_model

'''
NETWORK_THAT_GROWS = NETWORK_THAT_GROWS.replace("{flush}", FLUSH_NETWORK)


def test_options_of_a_config_parameter_parsed_at_import_decide_the_blocks(tmp_path):
    assert only(lint(tmp_path, growing_project("False", grow=False)), "SN301") == []
    assert only(lint(tmp_path, growing_project("False")), "SN301") == []


def test_a_growing_method_that_repacks_the_children_keeps_their_batch_norm(tmp_path):
    findings = only(lint(tmp_path, growing_project("True")), "SN301")
    assert found(findings) == [("SN301", "network.py", 9)]
