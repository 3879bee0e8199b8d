"""One rule set over both passes: the precision a rule has in the source pass holds for
the graph pass too (weight_norm layers are not missing SN; batch norm in a frozen
feature network kept in eval mode is not SN301), and graph findings say how the
discriminator was built."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("torch")

from graph_helpers import span_of  # noqa: E402

from snlint.catalogue import load_catalogue  # noqa: E402
from snlint.graph_pass import built_findings  # noqa: E402
from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402
from snlint.findings import Location, Span  # noqa: E402
from snlint.graph import GraphTarget, run_graph  # noqa: E402
from snlint.graph.facts import LeafFacts, Site, TargetFacts  # noqa: E402

MULTI_SCALE = '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.utils import spectral_norm, weight_norm
    from torch.nn.utils.parametrizations import weight_norm as p_wn


    class DiscriminatorS(nn.Module):
        def __init__(self, use_spectral_norm=False):
            super().__init__()
            norm_f = weight_norm if use_spectral_norm == False else spectral_norm
            self.convs = nn.ModuleList([
                norm_f(nn.Conv1d(1, 16, 15, 1, padding=7)),
                norm_f(nn.Conv1d(16, 16, 41, 4, groups=4, padding=20)),
            ])
            self.conv_post = norm_f(nn.Conv1d(16, 1, 3, 1, padding=1))

        def forward(self, x):
            for layer in self.convs:
                x = F.leaky_relu(layer(x), 0.1)
            return self.conv_post(x)


    class MultiScaleDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.discriminators = nn.ModuleList([
                DiscriminatorS(use_spectral_norm=True), DiscriminatorS(), DiscriminatorS(),
            ])

        def forward(self, y):
            return torch.cat([d(y) for d in self.discriminators], dim=-1)


    class ParametrizedMixDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv1d(1, 16, 15, 1, padding=7))
            self.b = p_wn(nn.Conv1d(16, 16, 15, 1, padding=7))
            self.c = nn.Conv1d(16, 1, 3, 1, padding=1)

        def forward(self, x):
            return self.c(self.b(self.a(x)))
'''

FROZEN = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    def vgg_like(n=8):
        return nn.Sequential(nn.Conv2d(3, n, 3, padding=1), nn.BatchNorm2d(n), nn.ReLU())


    class FrozenFeatureDiscriminator(nn.Module):
        """A perceptual feature network frozen in __init__ (requires_grad_(False) + eval)."""

        def __init__(self):
            super().__init__()
            self.features = vgg_like()
            self.features.requires_grad_(False)
            self.features.eval()
            self.head = spectral_norm(nn.Conv2d(8, 1, 3, padding=1))

        def forward(self, x):
            return self.head(self.features(x)).mean(dim=(1, 2, 3))


    class TrainOverrideDiscriminator(nn.Module):
        """Feature network kept in eval mode by a train() override."""

        def __init__(self):
            super().__init__()
            self.features = vgg_like()
            self.head = spectral_norm(nn.Conv2d(8, 1, 3, padding=1))

        def train(self, mode=True):
            super().train(mode)
            self.features.eval()
            return self

        def forward(self, x):
            return self.head(self.features(x)).mean(dim=(1, 2, 3))


    class TrainableBNDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8))
            self.head = spectral_norm(nn.Conv2d(8, 1, 3, padding=1))

        def forward(self, x):
            return self.head(self.features(x)).mean(dim=(1, 2, 3))
'''


def lint_project(tmp_path, name: str, source: str):
    (tmp_path / name).write_text(textwrap.dedent(source))
    return run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings


@pytest.fixture(scope="module")
def multi_scale(tmp_path_factory):
    root = tmp_path_factory.mktemp("audio")
    return root, lint_project(root, "audio.py", MULTI_SCALE)


@pytest.fixture(scope="module")
def frozen(tmp_path_factory):
    root = tmp_path_factory.mktemp("frozen")
    return root, lint_project(root, "frozen.py", FROZEN)


def rule_findings(findings):
    return [(f.code, f.line, f.pass_) for f in findings if not f.is_diagnostic]


def test_weight_normalized_sub_discriminators_have_no_sn201_from_either_pass(multi_scale):
    _, findings = multi_scale
    mixed = span_of(MULTI_SCALE, "class ParametrizedMixDiscriminator")[0]
    assert [f for f in rule_findings(findings) if f[1] < mixed] == []


def test_parametrization_weight_norm_counts_too_and_a_plain_layer_is_still_found(multi_scale):
    _, findings = multi_scale
    plain = span_of(MULTI_SCALE, "nn.Conv1d(16, 1, 3, 1, padding=1)", nth=1)
    assert rule_findings(findings) == [("SN201", plain[0], "source+graph")]
    sn201 = next(f for f in findings if f.code == "SN201")
    assert "1 of its 2 conv/linear sites" in sn201.explanation


def test_the_graph_records_weight_norm_per_leaf_for_both_apis(tmp_path):
    path = tmp_path / "audio.py"
    path.write_text(textwrap.dedent(MULTI_SCALE))
    targets = [GraphTarget(str(path), "audio.py", cls, None, str(tmp_path))
               for cls in ("MultiScaleDiscriminator", "ParametrizedMixDiscriminator")]
    multi, mixed = run_graph(targets, timeout=60)
    assert multi.status == "ok", multi.message
    wn = {m.path: m.weight_norm for m in multi.modules if m.kind == "conv"}
    assert wn["discriminators.0.conv_post"] == "" and wn["discriminators.1.conv_post"] == "hook"
    assert {m.path: m.weight_norm for m in mixed.modules} == {"a": "", "b": "parametrization", "c": ""}


def test_frozen_feature_network_in_eval_is_not_sn301_from_either_pass(frozen):
    _, findings = frozen
    bn = span_of(FROZEN, "nn.BatchNorm2d(8)")[0]
    # Only the trainable one: the frozen and the train()-override discriminators are quiet.
    sn301 = [(f.code, f.line, f.pass_, f.discriminator.cls.rpartition("/")[2])
             for f in findings if f.code == "SN301"]
    assert sn301 == [("SN301", bn, "source+graph", "frozen.py:TrainableBNDiscriminator")]


def test_frozen_feature_layers_are_not_missing_sn_from_either_pass(frozen):
    _, findings = frozen
    # Neither the frozen network's conv nor the one a train() override holds in eval mode
    # (a fixed feature network, as the source pass reads it) needs SN.
    sn201 = sorted(f.discriminator.cls.rpartition(":")[2] for f in findings if f.code == "SN201")
    assert sn201 == ["TrainableBNDiscriminator"]


def test_the_graph_records_eval_set_in_init(tmp_path):
    path = tmp_path / "frozen.py"
    path.write_text(textwrap.dedent(FROZEN))
    targets = [GraphTarget(str(path), "frozen.py", cls, None, str(tmp_path))
               for cls in ("FrozenFeatureDiscriminator", "TrainableBNDiscriminator")]
    kept, trainable = run_graph(targets, timeout=60)
    bn = next(m for m in kept.modules if m.kind == "batch_norm")
    assert bn.kept_in_eval and bn.training  # build.py's train() resets the mode; __init__'s eval is remembered
    # The frozen conv and batch norm; not the ReLU (no parameters) nor the SN head.
    assert {m.path: m.frozen for m in kept.modules} == {
        "features.0": True, "features.1": True, "features.2": False, "head": False}
    bn = next(m for m in trainable.modules if m.kind == "batch_norm")
    assert not bn.kept_in_eval and not bn.frozen


def _facts(built_with: str) -> TargetFacts:
    site = Site("/p/d.py", 5, 9, 5, 27)
    return TargetFacts(
        GraphTarget("/p/d.py", "d.py", "Discriminator"),
        modules=[LeafFacts("bn", "BatchNorm2d", "torch.nn.BatchNorm2d", "batch_norm", site=site,
                           uses_batch_stats=True)],
        built_with=built_with)


@pytest.mark.parametrize("built_with, suffix", [
    ("built with guessed sizes: nc=3, ndf=64", "; graph pass: built with guessed sizes"),
    ("built as in train.py:88", "; graph pass: built as in train.py:88"),
    # The call chain and where each value came from go to the evidence: the message
    # stays one terminal line.
    ("built as in trainer.py:194, called from main.py:38 (batch_size=64: argparse default "
     "at parameter.py:21)", "; graph pass: built as in trainer.py:194"),
    ("built with its defaults", ""),
    ("", ""),
])
def test_graph_findings_say_how_the_discriminator_was_built(built_with, suffix):
    found = built_findings(_facts(built_with), load_catalogue(), display_for=lambda p: "d.py",
                           fallback=Location("d.py", Span(1, 1, 1, 2)))
    (finding,) = [f for f in found if not f.is_diagnostic]
    assert finding.code == "SN301"
    assert finding.message.endswith("the current batch in training mode" + suffix)
    tail = f" Graph pass: {built_with}." if suffix else ""
    assert finding.evidence.endswith("those statistics alone tell them apart." + tail)


def test_a_finding_both_passes_see_carries_the_graph_note(tmp_path, monkeypatch):
    from snlint.graph import runner

    real = runner.run_graph

    def with_note(*args, **kwargs):
        results = real(*args, **kwargs)
        for r in results:
            r.built_with = "built with guessed sizes: nc=3"
        return results

    monkeypatch.setattr(runner, "run_graph", with_note)
    monkeypatch.setattr("snlint.graph_pass.run_graph", with_note)
    findings = lint_project(tmp_path, "frozen.py", FROZEN)
    sn301 = [f for f in findings if f.code == "SN301"]
    assert len(sn301) == 1 and sn301[0].pass_ == "source+graph"
    assert sn301[0].message.endswith("; graph pass: built with guessed sizes")
    assert sn301[0].evidence.endswith(" Graph pass: built with guessed sizes: nc=3.")


SN_THE_SOURCE_CANNOT_FOLLOW = '''
    import importlib

    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm

    SN = importlib.import_module("torch.nn.utils.parametrizations").spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv2d(3, 8, 3))
            self.b = nn.Conv2d(8, 1, 3)
            SN(self.b)

        def forward(self, x):
            return self.b(self.a(x))
'''


def test_a_source_finding_the_built_discriminator_clears_is_not_made(tmp_path):
    (tmp_path / "d.py").write_text(textwrap.dedent(SN_THE_SOURCE_CANNOT_FOLLOW))
    source_only = run([str(tmp_path)], Config(root=tmp_path, graph=False)).findings
    assert [(f.code, f.line) for f in source_only] == [("SN201", 14)]
    result = run([str(tmp_path)], Config(root=tmp_path, graph=True))
    assert result.findings == []
    assert [(f.code, f.line, f.cleared_by.to_dict()) for f in result.cleared] == [
        ("SN201", 14, {"pass": "graph", "evidence": "Conv2d Discriminator.b has spectral norm (added "
                                                    "at run time) in the built Discriminator (built "
                                                    "with no arguments)"})]


# Projected GAN's shape: the feature network (its convs set as attributes of a bare
# nn.Module in a helper, which the source pass does not follow) is held in eval mode by the
# discriminator's train() override, which never calls nn.Module.train for it.
PROJECTED_FEATURES = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    def make_projection(cin, cout):
        scratch = nn.Module()
        scratch.ccm = nn.Conv2d(cin, cout, 1)
        return scratch


    class FeatureNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.pretrained = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
            self.scratch = make_projection(8, 8)

        def forward(self, x):
            return self.scratch.ccm(self.pretrained(x))


    class ProjectedDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.feature_network = FeatureNet()
            self.head = nn.Sequential(spectral_norm(nn.Conv2d(8, 8, 3, padding=1)), nn.LeakyReLU(0.2),
                                      spectral_norm(nn.Conv2d(8, 1, 4)))

        def train(self, mode=True):
            self.feature_network = self.feature_network.train(False)
            self.head = self.head.train(mode)
            return self

        def forward(self, x):
            return self.head(self.feature_network(x))
'''


def test_layers_a_train_override_holds_in_eval_are_not_missing_sn_in_the_graph_pass(tmp_path):
    findings = lint_project(tmp_path, "projected.py", PROJECTED_FEATURES)
    assert rule_findings(findings) == []
