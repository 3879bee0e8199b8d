"""With --graph, each shipped configuration's discriminator is built (`snlint.shipped_configs`)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402

from tests.projects import write_project  # noqa: E402
from tests.test_shipped_configs import BATCH, INSTANCE, project  # noqa: E402


def test_the_batch_configuration_is_built_and_named(tmp_path, monkeypatch):
    write_project(tmp_path, project("options/train_instance.json", {
        "options/train_batch.json": BATCH, "options/train_instance.json": INSTANCE}))
    monkeypatch.chdir(tmp_path)
    found = run(["."], Config(root=tmp_path, graph=True)).findings
    assert sorted((f.code, f.path, f.line) for f in found) == [
        ("SN301", os.path.join("models", "networks.py"), 12), ("SN401", "train.py", 19)]
    sn301 = next(f for f in found if f.code == "SN301")
    # The message names the option file it holds for; where each value came from is
    # in the evidence.
    assert sn301.message.endswith("(with options/train_batch.json)")
    assert "(ndf=64: from options/train_batch.json)" in sn301.evidence
    assert sn301.message.endswith(" (with options/train_batch.json)")


def test_each_shipped_configuration_builds_its_discriminator_once(tmp_path, monkeypatch):
    # Each shipped file links the project again; the graph pass of those links reuses what
    # an earlier one built with the same arguments: the default file's link is the first
    # link's, built once, not twice (each file's values name their file, so each is built).
    from snlint.graph.runner import GraphSession

    built = []
    remember = GraphSession._remember
    monkeypatch.setattr(GraphSession, "_remember",
                        lambda self, target, facts, files: (built.append(target.class_name),
                                                            remember(self, target, facts, files)))
    same = '{"netD": {"norm": "batch", "ndf": 64}, "lr": %s}'
    write_project(tmp_path, project("options/train_a.json", {
        "options/train_a.json": same % "0.1", "options/train_b.json": same % "0.2"}))
    monkeypatch.chdir(tmp_path)
    found = run(["."], Config(root=tmp_path, graph=True)).findings
    assert sorted((f.code, f.path, f.line) for f in found) == [
        ("SN301", os.path.join("models", "networks.py"), 12), ("SN401", "train.py", 19)]
    assert built == ["NLayerDiscriminator"] * 2
