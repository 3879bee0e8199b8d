"""The graph pass only adds (issue 30): a run with `--graph` finds what a run without it
finds, plus what only a built model shows, less what it cleared with the evidence of a
class it built with the project's arguments, which the JSON lists with `cleared_by`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from snlint.cli import main  # noqa: E402
from projects import write_project  # noqa: E402

# Three files in one folder: a critic the training code scores real and fake batches
# through apart, and a discriminator class nothing uses, in a file nothing imports.
NETS = '''
    import torch.nn as nn


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.bn = nn.BatchNorm1d(16)
            self.fc2 = nn.Linear(16, 1)

        def forward(self, x):
            return self.fc2(self.bn(self.fc1(x)))
'''

TRAIN = '''
    import torch
    from nets import Critic

    D = Critic()
    G = torch.nn.Linear(4, 8)
    opt = torch.optim.Adam(D.parameters())
    for step in range(3):
        real = torch.randn(4, 8)
        fake = G(torch.randn(4, 4))
        loss = D(real).mean() - D(fake.detach()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''

OTHER = '''
    import torch.nn as nn


    class PatchDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 4, 2, 1)
            self.bn = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 1, 4, 1, 1)

        def forward(self, x):
            return self.conv2(self.bn(self.conv1(x)))
'''


def lint_json(root, monkeypatch, *args: str) -> list[dict]:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, [".", "--output-format", "json", *args])
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)


def key(obj: dict) -> tuple:
    return obj["code"], obj["path"], obj["line"], obj["symbol"]


def test_a_discriminator_in_a_file_nothing_imports_keeps_its_finding_with_the_graph_pass(tmp_path, monkeypatch):
    write_project(tmp_path, {"nets.py": NETS, "train.py": TRAIN, "other.py": OTHER})
    without = lint_json(tmp_path, monkeypatch, "--no-graph")
    with_graph = lint_json(tmp_path, monkeypatch, "--graph")
    assert [key(o) for o in without] == [
        ("SN301", "nets.py", 9, "Critic.bn"),
        ("SN301", "other.py", 9, "PatchDiscriminator.bn"),
        ("SN401", "train.py", 11, "<module>"),
    ]
    assert [key(o) for o in with_graph] == [key(o) for o in without]
    assert [o["pass"] for o in with_graph] == ["source+graph", "source+graph", "source"]


# A train() override keeps the batch norm in eval mode by a name the source pass cannot
# evaluate (`"bn".split()`): the source finds SN301, the built model shows it wrong, but
# only when built as the project builds it.
FROZEN_BN = '''
    import json
    import sys

    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self, freeze_bn=True):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 4, 2, 1)
            self.bn = nn.BatchNorm2d(8)
            self.out = nn.Conv2d(8, 1, 4)
            self.freeze_bn = freeze_bn

        def train(self, mode=True):
            super().train(mode)
            if self.freeze_bn:
                for name in "bn".split():
                    getattr(self, name).eval()
            return self

        def forward(self, x):
            return self.out(self.bn(self.conv(x)))


    cfg = json.load(open(sys.argv[1]))
    D = Discriminator(BUILT)
'''


def test_a_finding_the_class_built_as_the_project_builds_it_shows_wrong_is_cleared_in_json(tmp_path, monkeypatch):
    write_project(tmp_path, {"d.py": FROZEN_BN.replace("BUILT", "")})
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [".", "--output-format", "json", "--graph"])
    assert result.exit_code == 0, result.output  # a cleared finding changes no exit code
    assert [(o["code"], o["line"], o["pass"], o["cleared_by"]) for o in json.loads(result.stdout)] == [
        ("SN301", 12, "source", {"pass": "graph", "evidence": "BatchNorm2d Discriminator.bn is kept in eval "
                                                              "mode in the built Discriminator (built as in "
                                                              "d.py:28)"})]


# The invariant: with the graph pass, the findings are those without it, less the ones it
# cleared (listed with `cleared_by`), plus its own ("pass": "graph"), compared by code,
# path, line and symbol.

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def keyed(objs) -> set[tuple]:
    return {key(o) for o in objs}


def both_runs(root, monkeypatch) -> tuple[list[dict], list[dict]]:
    monkeypatch.chdir(root)
    runs = []
    for flag in ("--no-graph", "--graph"):
        result = CliRunner().invoke(main, [".", "--output-format", "json", flag])
        assert result.exit_code in (0, 1), result.output
        runs.append(json.loads(result.stdout))
    return runs[0], runs[1]


def assert_only_adds(without: list[dict], with_graph: list[dict]) -> None:
    cleared = [o for o in with_graph if "cleared_by" in o]
    reported = [o for o in with_graph if "cleared_by" not in o]
    added = [o for o in reported if o["pass"] == "graph"]
    assert keyed(cleared) <= keyed(without)
    assert keyed(reported) == (keyed(without) - keyed(cleared)) | keyed(added)


def test_on_the_examples_the_graph_pass_only_adds(tmp_path, monkeypatch):
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    (tmp_path / "examples" / ".git").mkdir()
    without, with_graph = both_runs(tmp_path / "examples", monkeypatch)
    assert_only_adds(without, with_graph)
    # The graph-only example's batch norm, which the source pass cannot see.
    assert ("SN301", "graph_only/discriminator.py") in {(o["code"], o["path"]) for o in with_graph
                                                        if o["pass"] == "graph"}


def test_on_a_folder_of_self_contained_gan_files_the_graph_pass_only_adds(tmp_path, monkeypatch):
    # Each example file flat in one folder, beside the three-file reproducer and a class
    # whose batch norm the built model keeps in eval mode: files no name joins, some with
    # training code, some without.
    files = {f"{folder.name}_{path.name}": path.read_text(encoding="utf-8")
             for folder in sorted(EXAMPLES.iterdir()) if folder.is_dir()
             for path in sorted(folder.glob("*.py")) if not (folder / "__init__.py").exists()
             and len(list(folder.glob("*.py"))) <= 2 and "project" not in folder.name}
    files |= {"nets.py": NETS, "train.py": TRAIN, "other.py": OTHER,
              "frozen.py": FROZEN_BN.replace("BUILT", ""),
              "frozen_unread.py": FROZEN_BN.replace("BUILT", 'freeze_bn=cfg["freeze_bn"]')}
    write_project(tmp_path, files)
    without, with_graph = both_runs(tmp_path, monkeypatch)
    assert_only_adds(without, with_graph)
    assert {(o["path"], o["code"]) for o in with_graph if "cleared_by" in o} == {("frozen.py", "SN301")}
    # The same class where the project passes `cfg["freeze_bn"]`, which snlint cannot read:
    # built with its default (batch norm in eval mode), not as the project builds it.
    assert [(o["code"], o["line"], o["pass"]) for o in with_graph if o["path"] == "frozen_unread.py"] == [
        ("SN301", 12, "source")]
