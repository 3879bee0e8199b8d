"""Precision both passes keep, seen from the source pass: a layer under weight_norm is
not missing SN (SN201), no fix wraps one in SN, and batch norm in a frozen feature
network kept in eval mode is not SN301. tests/graph/test_one_rule_set.py holds the same
cases through the graph pass."""

from __future__ import annotations

import textwrap

import pytest

from snlint.config import Config
from snlint.checks.fix_data import MissingSN
from snlint.findings import Finding, Span
from snlint.fix import attach_fixes

MIXED = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm, weight_norm
    from torch.nn.utils.parametrizations import weight_norm as p_wn


    class MixedDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = spectral_norm(nn.Conv1d(1, 16, 15, 1, padding=7))
            self.b = weight_norm(nn.Conv1d(16, 16, 15, 1, padding=7))
            self.c = p_wn(nn.Conv1d(16, 16, 15, 1, padding=7))
            self.d = nn.Conv1d(16, 1, 3, 1, padding=1)
'''

MULTI_SCALE = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm, weight_norm


    class DiscriminatorS(nn.Module):
        def __init__(self, use_spectral_norm=False):
            super().__init__()
            norm_f = weight_norm if use_spectral_norm == False else spectral_norm
            self.convs = nn.ModuleList([
                norm_f(nn.Conv1d(1, 16, 15, 1, padding=7)),
                norm_f(nn.Conv1d(16, 16, 41, 4, groups=4, padding=20)),
            ])
            self.conv_post = norm_f(nn.Conv1d(16, 1, 3, 1, padding=1))


    class MultiScaleDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.discriminators = nn.ModuleList([
                DiscriminatorS(use_spectral_norm=True), DiscriminatorS(), DiscriminatorS(),
            ])
'''

FROZEN_FEATURES = '''
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class PerceptualDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
            self.features.requires_grad_(False)
            self.features.eval()
            self.head = spectral_norm(nn.Conv2d(8, 1, 3))
            self.out = spectral_norm(nn.Linear(1, 1))
'''


def test_layers_under_either_weight_norm_api_are_not_missing_sn(lint):
    findings = lint(MIXED, select=["SN2"])
    assert [(f.code, f.line) for f in findings] == [("SN201", 13)]
    # The weight-normalized layers are not counted among the layers SN should cover.
    assert "normalizes 1 of its 2 conv/linear sites" in findings[0].explanation


WEIGHT_NORM_AFTER = '''
    import torch
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class LoopDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = spectral_norm(nn.Conv1d(1, 16, 15, 1, 7))
            self.rest = nn.Sequential(nn.Conv1d(16, 16, 41, 4, 20), nn.LeakyReLU(0.2))
            self.head = nn.Linear(16, 1)
            for m in self.rest.modules():
                if isinstance(m, nn.Conv1d):
                    nn.utils.weight_norm(m)


    class ApplyDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = spectral_norm(nn.Conv1d(1, 16, 15, 1, 7))
            self.rest = nn.Sequential(nn.Conv1d(16, 16, 41, 4, 20), nn.LeakyReLU(0.2))
            self.rest.apply(self._apply_weight_norm)

        @staticmethod
        def _apply_weight_norm(m):
            if isinstance(m, nn.Conv1d):
                torch.nn.utils.parametrizations.weight_norm(m)
'''


def test_weight_norm_applied_by_a_loop_or_apply_is_no_missing_sn_but_the_filter_counts(lint):
    # ParallelWaveGAN's discriminators: `self.apply(_apply_weight_norm)` on every Conv1d.
    findings = lint(WEIGHT_NORM_AFTER, select=["SN2"])
    assert [(f.code, f.line, f.symbol) for f in findings] == [("SN201", 12, "LoopDiscriminator.head")]


def test_multi_scale_discriminator_choosing_weight_norm_or_sn_has_no_sn201(lint):
    assert lint(MULTI_SCALE, select=["SN2"]) == []


def test_no_fix_wraps_a_weight_normalized_layer(tmp_path):
    # A graph finding placed on the conv inside weight_norm / norm_f (as a finding that
    # missed the weight norm would be) gets no fix.
    source = textwrap.dedent(MULTI_SCALE)
    config = Config(root=tmp_path, graph=False)
    inner = Finding("SN201", "missing-sn", "error", "Conv1d has no spectral norm", "d.py",
                    Span(11, 20, 11, 54), pass_="graph", data=MissingSN("Conv1d"))
    text = textwrap.dedent(MIXED)
    direct = Finding("SN201", "missing-sn", "error", "Conv1d has no spectral norm", "m.py",
                     Span(11, 30, 11, 65), pass_="graph", data=MissingSN("Conv1d"))
    fixed = attach_fixes([inner, direct], {"d.py": source, "m.py": text}, config)
    assert [f.fix for f in fixed] == [None, None]


def test_plain_layer_still_gets_the_sn_fix(lint):
    (finding,) = lint(MIXED, select=["SN2"], fixes=True)
    assert finding.fix is not None and "spectral_norm(nn.Conv1d(16, 1, 3, 1, padding=1))" in finding.fix.diff


def test_batch_norm_in_a_frozen_feature_network_kept_in_eval_is_not_sn301(lint):
    assert lint(FROZEN_FEATURES, select=["SN3"]) == []


def test_batch_norm_put_in_eval_by_training_code_is_still_sn301(lint):
    findings = lint(FROZEN_FEATURES.replace("            self.features.eval()\n", "") + '''
    D = PerceptualDiscriminator()
    D.features.eval()
    ''', select=["SN3"])
    assert [(f.code, f.line) for f in findings] == [("SN301", 9)]


def test_layers_of_a_frozen_feature_network_are_not_missing_sn(lint):
    assert lint(FROZEN_FEATURES, select=["SN2"]) == []


def test_requires_grad_toggled_by_training_code_does_not_freeze_the_discriminator(lint):
    findings = lint(FROZEN_FEATURES.replace("            self.features.requires_grad_(False)\n", "") + '''
    D = PerceptualDiscriminator()
    D.requires_grad_(False)
    ''', select=["SN2"])
    assert [(f.code, f.line) for f in findings] == [("SN201", 9)]


# Projected GAN: the pretrained features and their fixed random projections stay in eval
# mode through ProjectedDiscriminator.train(); training code freezes their weights.
PROJECTED = '''
    import torch
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class F_RandomProj(nn.Module):
        def __init__(self):
            super().__init__()
            self.pretrained = nn.Conv2d(3, 8, 3)
            self.scratch = nn.Conv2d(8, 8, 1)


    class ProjectedDiscriminator(nn.Module):
        def __init__(self, channels=8):
            super().__init__()
            self.feature_network = F_RandomProj()
            self.head = spectral_norm(nn.Conv2d(channels, 8, 3))
            self.out = spectral_norm(nn.Conv2d(8, 1, 4))

        def train(self, mode=True):
            self.feature_network = self.feature_network.train(False)
            return self
'''


def test_layers_of_a_feature_network_a_train_override_keeps_in_eval_are_not_missing_sn(lint):
    assert lint(PROJECTED, select=["SN2"]) == []


def test_what_a_train_override_holds_in_eval_stays_so_in_every_instance_built(lint):
    # The training loop builds the discriminator too; SN201 judges that instance as well,
    # whose projections its train() override holds in eval as much.
    findings = lint(PROJECTED + '''

    def training_loop(channels):
        D = ProjectedDiscriminator(channels).train()
        for real, _ in torch.utils.data.DataLoader([]):
            D(real)
''', select=["SN2"])
    assert findings == []


@pytest.mark.parametrize("freeze", [
    "for p in self.features.parameters():\n                    p.requires_grad = False",
    "for p in self.features.parameters():\n                    p.requires_grad_(False)",
    "for _, p in self.features.named_parameters():\n                    p.requires_grad = False",
], ids=["attribute", "method", "named"])
def test_a_feature_network_frozen_parameter_by_parameter_is_not_missing_sn(lint, freeze):
    findings = lint(f'''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        class PerceptualDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 3))
                {freeze}
                self.head = spectral_norm(nn.Conv2d(8, 1, 3))
    ''', select=["SN2"])
    assert findings == []


def test_parameters_frozen_by_training_code_do_not_freeze_the_discriminator(lint):
    findings = lint('''
        import torch.nn as nn
        from torch.nn.utils import spectral_norm


        class PerceptualDiscriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())
                self.head = spectral_norm(nn.Conv2d(8, 1, 3))


        D = PerceptualDiscriminator()
        for p in D.parameters():
            p.requires_grad = False
    ''', select=["SN2"])
    assert [(f.code, f.line) for f in findings] == [("SN201", 9)]
