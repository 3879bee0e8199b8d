"""The link step reads a project part by part (snlint.link.groups): files that cannot reach
one another through any name are linked apart, in parallel, and a --fix round links again
only the parts it changed. Every test here holds the findings of the parts to those of
the whole project linked at once."""

from __future__ import annotations

import textwrap
from pathlib import Path

from click.testing import CliRunner

from snlint import engine
from snlint.engine import linking, workers as stealing
from snlint.cli import main
from snlint.config import Config
from snlint.link.groups import groups, uses_registries
from snlint.engine.per_file import PerFile
from projects import lint_in as lint, write_project as write

BN_MODELS = '''
    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 4))

        def forward(self, x):
            return self.main(x)
'''

SN_MODELS = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(spectral_norm(nn.Conv2d(3, 64, 4)), spectral_norm(nn.Conv2d(64, 1, 4)))

        def forward(self, x):
            return self.main(x)
'''

TRAIN = '''
    from models import *


    def train(loader, G):
        netD = Discriminator()
        for real, z in loader:
            fake = G(z)
            loss = netD(real).mean() - netD(fake.detach()).mean()
'''

# A training function that never builds or imports its discriminator: it is "the
# project's only discriminator class", wherever that is.
BARE_TRAIN = '''
    def train(netD, loader, G):
        for real, z in loader:
            fake = G(z)
            loss = netD(real).mean() - netD(fake.detach()).mean()
'''


def whole(monkeypatch):
    """Link every project in one part, as before parts existed."""
    monkeypatch.setattr(linking, "groups", lambda facts, imported: [facts])


def summary(findings):
    return [(f.code, f.path, f.line, f.message) for f in findings]


def parts_of(root: Path, files: dict[str, str]) -> list[list[str]]:
    write(root, files)
    texts = {name: textwrap.dedent(code) for name, code in files.items()}
    extracted = PerFile(Config(root=root, graph=False, jobs=1)).results(texts)
    facts = [e.facts for e in extracted.values() if e.facts is not None]
    return sorted([f.path for f in part] for part in groups(facts, {p: e.modules or () for p, e in extracted.items()}))


COLLECTION = {"a/models.py": BN_MODELS, "a/train.py": TRAIN, "b/models.py": SN_MODELS, "b/train.py": TRAIN}


def test_a_collection_of_separate_models_is_linked_folder_by_folder(tmp_path):
    # `from models import *` in each folder reaches its own models.py (the script's folder
    # is on sys.path), so the two folders are two parts.
    assert parts_of(tmp_path, COLLECTION) == [["a/models.py", "a/train.py"], ["b/models.py", "b/train.py"]]


def test_the_parts_find_what_the_whole_project_finds(tmp_path, monkeypatch):
    by_parts = lint(tmp_path / "parts", COLLECTION)
    whole(monkeypatch)
    at_once = lint(tmp_path / "whole", COLLECTION)
    assert [(c, p, line) for c, p, line, _ in summary(by_parts)] == [
        ("SN301", "a/models.py", 8), ("SN401", "a/train.py", 9)]
    assert summary(by_parts) == summary(at_once)


def test_the_parts_are_shared_with_a_worker_and_find_the_same(tmp_path, monkeypatch):
    monkeypatch.setattr(stealing, "MIN_SHARED_TEXT", 0)
    shared = summary(lint(tmp_path / "shared", COLLECTION))
    monkeypatch.setattr(stealing, "MIN_SHARED_TEXT", 10**9)
    assert summary(lint(tmp_path / "here", COLLECTION)) == shared


def test_an_ambiguous_import_joins_every_file_it_could_mean(tmp_path):
    # c/train.py's `import models` has no models.py beside it and two elsewhere: the index
    # answers with neither, and a part holding only one of them would answer with it.
    files = {"a/models.py": BN_MODELS, "b/models.py": SN_MODELS, "c/train.py": "import models\n"}
    assert parts_of(tmp_path, files) == [["a/models.py", "b/models.py", "c/train.py"]]


def test_a_submodule_is_linked_with_its_package(tmp_path):
    # (`pkg.nets` reached as an attribute of `pkg`, which imports nothing of it)
    files = {"pkg/__init__.py": "import torch.nn as nn\n", "pkg/nets.py": BN_MODELS,
             "other.py": "import torch.nn as nn\n"}
    assert parts_of(tmp_path, files) == [["other.py"], ["pkg/__init__.py", "pkg/nets.py"]]


def test_the_only_discriminator_class_is_the_projects_not_a_parts(tmp_path, monkeypatch):
    # train.py reaches no class by name: its netD is the project's only discriminator,
    # which lives in a part of its own.
    files = {"models.py": BN_MODELS, "train.py": BARE_TRAIN}
    assert parts_of(tmp_path / "p", files) == [["models.py"], ["train.py"]]
    by_parts = lint(tmp_path / "parts", files)
    whole(monkeypatch)
    at_once = lint(tmp_path / "whole", files)
    assert [(c, p) for c, p, _, _ in summary(by_parts)] == [("SN301", "models.py"), ("SN401", "train.py")]
    assert summary(by_parts) == summary(at_once)


def test_a_second_discriminator_elsewhere_means_there_is_no_only_one(tmp_path, monkeypatch):
    # With another discriminator class in another part, the project has two: the bare
    # netD is neither, though its own part (train.py imports models.py) has only one.
    files = {"models.py": BN_MODELS, "train.py": "import models\n" + textwrap.dedent(BARE_TRAIN),
             "other/critic.py": SN_MODELS}
    assert parts_of(tmp_path / "p", files) == [["models.py", "train.py"], ["other/critic.py"]]
    by_parts = lint(tmp_path / "parts", files)
    whole(monkeypatch)
    assert summary(by_parts) == summary(lint(tmp_path / "whole", files))
    assert [c for c, _, _, _ in summary(by_parts)] == ["SN301"]


REGISTERED = '''
    import torch.nn as nn
    from registry import MODELS


    @MODELS.register_module()
    class PatchDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(nn.Conv2d(3, 64, 4), nn.BatchNorm2d(64), nn.Conv2d(64, 1, 4))

        def forward(self, x):
            return self.main(x)
'''


def test_a_project_with_a_class_registry_is_linked_whole(tmp_path):
    files = {"registry.py": "MODELS = Registry('models')\n", "nets.py": REGISTERED, "other.py": "x = 1\n"}
    write(tmp_path, files)
    texts = {name: textwrap.dedent(code) for name, code in files.items()}
    extracted = PerFile(Config(root=tmp_path, graph=False, jobs=1)).results(texts)
    assert uses_registries([e.facts for e in extracted.values() if e.facts is not None])


def test_a_fix_round_links_again_only_the_parts_it_changed(tmp_path, monkeypatch):
    files = dict(COLLECTION)
    files["b/models.py"] = SN_MODELS.replace("spectral_norm(nn.Conv2d(64, 1, 4))",
                                             "spectral_norm(nn.Conv2d(64, 1, 4), dim=1)")
    write(tmp_path, files)
    linked: list[tuple[str, ...]] = []
    link_part = linking._link_part

    def recording(facts, *args, **kwargs):
        linked.append(tuple(f.path for f in facts))
        return link_part(facts, *args, **kwargs)

    monkeypatch.setattr(linking, "_link_part", recording)
    monkeypatch.chdir(tmp_path)
    # SN105's fix changes the u/v shapes: unsafe, so enabled here.
    result = CliRunner().invoke(main, [".", "--fix", "--unsafe-fixes", "--no-graph", "--no-cache",
                                       "--jobs", "1", "--select", "SN1"])
    assert result.stderr == "Fixed 1 finding in 1 file.\n"
    assert "dim=1" not in (tmp_path / "b/models.py").read_text()
    # The first lint links both parts; the lint after the fix only the part with b/.
    assert linked == [("a/models.py", "a/train.py"), ("b/models.py", "b/train.py"),
                      ("b/models.py", "b/train.py")]


def test_a_part_is_linked_again_when_the_options_the_project_declares_change(tmp_path):
    # gan_model.py never imports options/base_options.py (a part of its own), but its
    # `opt.norm` is the project's --norm default: a later lint of the same command (a
    # --fix round) with the option changed must not answer from the model's unchanged
    # facts.
    from test_discriminator_resolution import NETWORKS, OPTIONS, model_class

    reuse = engine.Reuse()
    config = Config(root=tmp_path, graph=False, jobs=1)
    files = {"models/networks.py": textwrap.dedent(NETWORKS),
             "models/gan_model.py": textwrap.dedent(model_class("pass"))}
    instance = textwrap.dedent(OPTIONS)
    batch = instance.replace('"--norm", type=str, default="instance"', '"--norm", type=str, default="batch"')
    assert batch != instance
    first = engine.lint_sources({**files, "options/base_options.py": instance}, config, reuse=reuse)
    second = engine.lint_sources({**files, "options/base_options.py": batch}, config, reuse=reuse)
    assert [f.code for f in first if f.code == "SN401"] == []
    assert [(f.code, f.path) for f in second if f.code == "SN401"] == [("SN401", "models/gan_model.py")]


def test_a_part_is_linked_again_when_a_keyword_its_defaults_read_changes_elsewhere(tmp_path):
    # engine.py only receives the model (a part of its own); what it passes as `step`
    # decides which branch of the model's forward runs on its own.
    from test_coupling import ENGINE, VQ_MODEL

    reuse = engine.Reuse()
    config = Config(root=tmp_path, graph=False, jobs=1)
    model = {"models.py": textwrap.dedent(VQ_MODEL)}
    first = engine.lint_sources({**model, "engine.py": textwrap.dedent(ENGINE.format(step=0))}, config, reuse=reuse)
    second = engine.lint_sources({**model, "engine.py": textwrap.dedent(ENGINE.format(step=1))}, config, reuse=reuse)
    assert [f.code for f in first] == ["SN301"]
    assert [f.code for f in second] == ["SN301", "SN401"]
