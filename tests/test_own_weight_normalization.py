"""A conv/linear class of the project that normalizes its own weight (SAN's `SANConv2d`:
a unit-norm direction times a learned scale, renormalized after each step) is a
normalization chosen instead of SN, as weight_norm is: no SN201 on it. A subclass that
only changes padding is a plain conv still."""

from __future__ import annotations

from projects import lint_in as lint

MODELS = '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.utils import spectral_norm


    def _normalize(tensor, dim):
        return tensor / tensor.norm(p=2.0, dim=dim, keepdim=True).clamp_min(1e-12)


    class SANConv2d(nn.Conv2d):
        def __init__(self, in_channels, out_channels, kernel_size):
            super().__init__(in_channels, out_channels, kernel_size, bias=False)
            scale = self.weight.norm(p=2.0, dim=[1, 2, 3], keepdim=True).clamp_min(1e-12)
            self.weight = nn.Parameter(self.weight / scale)
            self.scale = nn.Parameter(scale.view(out_channels))

        def forward(self, x):
            weight = _normalize(self.weight, dim=[1, 2, 3])
            return F.conv2d(x, weight) * self.scale.view(-1, 1, 1)


    class SameConv2d(nn.Conv2d):
        def forward(self, x):
            return F.conv2d(F.pad(x, (1, 1, 1, 1)), self.weight, self.bias)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
            self.last_layer = LAST

        def forward(self, x):
            return self.last_layer(self.body(x))
'''


def codes(tmp_path, last: str):
    return [(f.code, f.line) for f in lint(tmp_path, {"models.py": MODELS.replace("LAST", last)})]


def test_a_layer_that_normalizes_its_own_weight_needs_no_sn(tmp_path):
    assert codes(tmp_path, "SANConv2d(64, 1, 4)") == []


def test_a_subclass_that_only_pads_is_a_plain_conv(tmp_path):
    assert codes(tmp_path, "SameConv2d(64, 1, 4)") == [("SN201", 33)]
