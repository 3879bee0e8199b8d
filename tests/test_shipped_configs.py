"""The configurations a project ships (`snlint.shipped_configs`): a finding that holds for
some of the option files the training code loads names them; one finding per mistake."""

from __future__ import annotations

import importlib.util

import pytest

from tests.projects import lint_in

NETWORKS = '''
    import torch.nn as nn


    class NLayerDiscriminator(nn.Module):
        def __init__(self, ndf=64, norm_layer=None):
            super().__init__()
            self.model = nn.Sequential(
                nn.Conv2d(3, ndf, 4, 2, 1),
                nn.LeakyReLU(0.2),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1),
                norm_layer(ndf * 2),
                nn.LeakyReLU(0.2),
                nn.Conv2d(ndf * 2, 1, 4, 1, 1),
            )

        def forward(self, x):
            return self.model(x)


    def define_D(opt):
        norm = opt['netD']['norm']
        if norm == 'batch':
            norm_layer = nn.BatchNorm2d
        else:
            norm_layer = nn.InstanceNorm2d
        return NLayerDiscriminator(opt['netD']['ndf'], norm_layer=norm_layer)
'''

TRAIN = '''
    import argparse
    import json

    import torch

    from models.networks import define_D


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument('--opt', type=str, default=DEFAULT)
        args = parser.parse_args()
        opt = json.load(open(args.opt))
        netD = define_D(opt)
        optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
        real = torch.randn(4, 3, 64, 64)
        fake = torch.randn(4, 3, 64, 64)
        loss = netD(real).mean() - netD(fake).mean()
        optD.zero_grad()
        loss.backward()
        optD.step()


    if __name__ == '__main__':
        main()
'''

BATCH = '{"netD": {"norm": "batch", "ndf": 64}}'
INSTANCE = '{"netD": {"norm": "instance", "ndf": 64}}'


def project(default: str, configs: dict[str, str]) -> dict[str, str]:
    return {"models/__init__.py": "", "models/networks.py": NETWORKS,
            "train.py": TRAIN.replace("DEFAULT", repr(default)), **configs}


def shown(findings) -> list[tuple[str, str, int]]:
    return sorted((f.code, f.path, f.line) for f in findings)


def test_batch_and_instance_configs_give_the_finding_for_the_batch_one_only(tmp_path):
    found = lint_in(tmp_path, project("options/train_instance.json", {
        "options/train_batch.json": BATCH, "options/train_instance.json": INSTANCE}))
    assert shown(found) == [("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]
    assert all(f.message.endswith(" (with options/train_batch.json)") for f in found)


def test_the_default_config_choosing_batch_is_named_too(tmp_path):
    found = lint_in(tmp_path, project("options/train_batch.json", {
        "options/train_batch.json": BATCH, "options/train_instance.json": INSTANCE}))
    assert shown(found) == [("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]
    assert all(f.message.endswith(" (with options/train_batch.json)") for f in found)


def test_two_configs_choosing_batch_give_one_finding_naming_both(tmp_path):
    found = lint_in(tmp_path, project("options/a.json", {
        "options/a.json": BATCH, "options/b.json": BATCH, "options/c.json": INSTANCE}))
    assert shown(found) == [("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]
    assert all(f.message.endswith(" (with options/a.json, options/b.json)") for f in found)


def test_every_config_choosing_batch_names_none(tmp_path):
    found = lint_in(tmp_path, project("options/a.json", {"options/a.json": BATCH, "options/b.json": BATCH}))
    assert shown(found) == [("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]
    assert not any("(with " in f.message for f in found)


def test_only_instance_configs_give_nothing(tmp_path):
    found = lint_in(tmp_path, project("options/a.json", {"options/a.json": INSTANCE, "options/b.json": INSTANCE}))
    assert found == []


def test_a_config_outside_the_default_folder_is_not_read(tmp_path):
    # options/test/ holds inference options: the training code's default is in options/.
    found = lint_in(tmp_path, project("options/train/a.json", {
        "options/train/a.json": INSTANCE, "options/train/b.json": INSTANCE,
        "options/test/batch.json": BATCH}))
    assert found == []


def test_a_default_the_training_code_never_opens_is_no_configuration(tmp_path):
    files = project("options/a.json", {"options/a.json": INSTANCE, "options/b.json": BATCH})
    files["train.py"] = files["train.py"].replace("json.load(open(args.opt))",
                                                  "json.load(open('options/a.json'))")
    assert lint_in(tmp_path, files) == []


def required(files: dict[str, str], flag: str = "--opt") -> dict[str, str]:
    files["train.py"] = files["train.py"].replace("'--opt', type=str, default=None", f"'{flag}', type=str, required=True") \
        .replace("args.opt", f"args.{flag.lstrip('-')}")
    return files


def test_no_default_reads_the_options_folder_and_names_the_batch_config(tmp_path):
    found = lint_in(tmp_path, required(project(None, {
        "options/train_batch.json": BATCH, "options/train_instance.json": INSTANCE})))
    assert shown(found) == [("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]
    assert all(f.message.endswith(" (with options/train_batch.json)") for f in found)


def test_no_default_and_only_instance_configs_give_nothing(tmp_path):
    found = lint_in(tmp_path, required(project(None, {
        "options/a.json": INSTANCE, "options/b.json": INSTANCE})))
    assert found == []


def test_no_default_with_no_config_folder_keeps_every_norm_the_code_may_choose(tmp_path):
    found = lint_in(tmp_path, required(project(None, {"settings/a.json": INSTANCE, "settings/b.json": INSTANCE})))
    assert shown(found) == [("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]
    assert not any("(with " in f.message for f in found)


def test_no_default_under_another_name_reads_no_folder(tmp_path):
    found = lint_in(tmp_path, required(project(None, {
        "options/a.json": INSTANCE, "options/b.json": INSTANCE}), flag="--dataroot"))
    assert shown(found) == [("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]


def test_a_sibling_named_for_another_script_is_not_read(tmp_path):
    # test_batch.json is the inference script's: the training default is a train_ file.
    found = lint_in(tmp_path, project("options/train_instance.json", {
        "options/train_instance.json": INSTANCE, "options/train_other.json": INSTANCE,
        "options/test_batch.json": BATCH}))
    assert found == []


LEGACY = '''
    import torch
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 4))

        def forward(self, x):
            return self.main(x)


    netD = Discriminator()
    optD = torch.optim.Adam(netD.parameters())
    real = torch.randn(4, 3, 64, 64)
    fake = torch.randn(4, 3, 64, 64)
    loss = netD(real).mean() - netD(fake).mean()
    loss.backward()
    optD.step()
'''


def test_a_script_apart_from_the_option_file_keeps_its_findings_unnamed(tmp_path):
    files = required(project(None, {"options/a.json": INSTANCE, "options/b.json": BATCH}))
    found = lint_in(tmp_path, {**files, "legacy/dcgan.py": LEGACY})
    assert [(f.code, f.path, f.line, "(with " in f.message) for f in sorted(found, key=lambda f: (f.path, f.line))] == [
        ("SN301", "legacy/dcgan.py", 9, False), ("SN401", "legacy/dcgan.py", 19, False),
        ("SN301", "models/networks.py", 12, True), ("SN401", "train.py", 19, True)]


@pytest.mark.skipif(importlib.util.find_spec("yaml") is None, reason="PyYAML not installed")
def test_yaml_configs_beside_a_yaml_default(tmp_path):
    files = project("configs/train_instance.yml", {
        "configs/train_instance.yml": "netD:\n  norm: instance\n  ndf: 64\n",
        "configs/train_batch.yaml": "netD:\n  norm: batch\n  ndf: 64\n"})
    files["train.py"] = files["train.py"].replace("import json", "import yaml") \
        .replace("json.load(open(args.opt))", "yaml.safe_load(open(args.opt))")
    found = lint_in(tmp_path, files)
    assert shown(found) == [("SN301", "models/networks.py", 12), ("SN401", "train.py", 19)]
    assert all(f.message.endswith(" (with configs/train_batch.yaml)") for f in found)
