"""The weight each conv/linear layer really computes with, measured in a forward
(`snlint.graph.weights`): SN that never reaches it (SN107), a layer left raw among
normalized ones (SN201), a ConvTranspose normalized along its input axis (SN105)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from graph_helpers import span_of, write  # noqa: E402
from torch import nn  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402
from snlint.graph import probe, weights  # noqa: E402
from snlint.graph.pristine import Pristine  # noqa: E402


def findings(tmp_path, source: str):
    write(tmp_path, "models.py", source)
    return run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings


def where(findings) -> list[tuple]:
    return [(f.code, f.line, f.column, f.pass_) for f in findings]


WRAPPER = '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class SpectralNorm(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module
            w = module.weight
            self.register_buffer("u", F.normalize(torch.randn(w.shape[0]), dim=0))
            del module._parameters["weight"]
            module.register_parameter("weight_bar", nn.Parameter(w.data))

        def forward(self, x):
            w = self.module.weight_bar
            w_mat = w.view(w.shape[0], -1)
            v = F.normalize(w_mat.t() @ self.u, dim=0)
            self.u = F.normalize(w_mat @ v, dim=0)
            sigma = self.u @ w_mat @ v
            self.module.weight = w / sigma
            return self.module(x)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                SpectralNorm(nn.Conv2d(3, 32, 4, 2, 1)),
                nn.LeakyReLU(0.2),
                SpectralNorm(nn.Conv2d(32, 1, 4, 1, 0)),
            )

        def forward(self, x):
            return self.main(x).view(x.size(0), -1)
'''

# The 2018-era mistake: sigma is computed, `w / sigma` lands in a local, and the layer
# runs with the raw parameter it still holds.
DROPPED = '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class SpectralNorm(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module
            self.register_buffer("u", F.normalize(torch.randn(module.weight.shape[0]), dim=0))

        def forward(self, x):
            w = self.module.weight
            w_mat = w.view(w.shape[0], -1)
            v = F.normalize(w_mat.t() @ self.u, dim=0)
            self.u = F.normalize(w_mat @ v, dim=0)
            sigma = self.u @ w_mat @ v
            w_sn = w / sigma
            return self.module(x)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                SpectralNorm(nn.Conv2d(3, 32, 4, 2, 1)),
                nn.LeakyReLU(0.2),
                SpectralNorm(nn.Conv2d(32, 1, 4, 1, 0)),
            )
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.normal_(m.weight, 0.0, 0.2)

        def forward(self, x):
            return self.main(x).view(x.size(0), -1)
'''


def test_a_wrapper_that_drops_its_normalized_weight_is_sn107_at_each_wrapping(tmp_path):
    found = findings(tmp_path, DROPPED)
    first = span_of(DROPPED, "SpectralNorm(nn.Conv2d(3, 32, 4, 2, 1))")
    second = span_of(DROPPED, "SpectralNorm(nn.Conv2d(32, 1, 4, 1, 0))")
    assert where(found) == [("SN107", first[0], first[1], "graph"), ("SN107", second[0], second[1], "graph")]
    assert found[0].message.startswith(
        "spectral norm on Conv2d `main.0.module` never reaches the weight it uses: it computes "
        "with its raw weight: σ = ")


def test_a_wrapper_that_hands_the_layer_its_normalized_weight_gives_nothing(tmp_path):
    assert findings(tmp_path, WRAPPER) == []


NAME_FILTER = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 32, 4, 2, 1)
            self.conv2 = nn.Conv2d(32, 64, 4, 2, 1)
            self.head = nn.Conv2d(64, 1, 4, 1, 0)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.normal_(m.weight, 0.0, 0.2)
            for name, child in list(self.named_children()):
                if name.startswith("conv"):
                    setattr(self, name, spectral_norm(child))

        def forward(self, x):
            x = nn.functional.leaky_relu(self.conv1(x), 0.2)
            x = nn.functional.leaky_relu(self.conv2(x), 0.2)
            return self.head(x).view(x.size(0), -1)
'''


def test_sn_added_by_a_name_filter_that_misses_the_head_is_sn201_with_its_measured_sigma(tmp_path):
    found = findings(tmp_path, NAME_FILTER)
    head = span_of(NAME_FILTER, "nn.Conv2d(64, 1, 4, 1, 0)")
    assert where(found) == [("SN201", head[0], head[1], "graph")]
    assert found[0].message.endswith("normalizes its other conv/linear layers")
    assert found[0].evidence.startswith("It computes with its raw weight, σ = ")
    assert float(found[0].evidence.split("σ = ")[1].split(" ")[0]) > 1.5


# BigGAN's way: a Conv2d subclass that normalizes its own weight in forward. Only the
# measurement shows the discriminator normalized, and the plain head raw.
OWN_CLASS = '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class SNConv2d(nn.Conv2d):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.register_buffer("u", F.normalize(torch.randn(self.out_channels), dim=0))

        def forward(self, x):
            w = self.weight.view(self.out_channels, -1)
            for _ in range(3):
                v = F.normalize(w.t() @ self.u, dim=0)
                self.u = F.normalize(w @ v, dim=0)
            sigma = self.u @ w @ v
            return F.conv2d(x, self.weight / sigma, self.bias, self.stride, self.padding)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = SNConv2d(3, 32, 4, 2, 1)
            self.conv2 = SNConv2d(32, 64, 4, 2, 1)
            self.head = nn.Linear(64 * 8 * 8, 1)
            nn.init.normal_(self.head.weight, 0.0, 0.2)

        def forward(self, x):
            x = F.leaky_relu(self.conv1(x), 0.2)
            x = F.leaky_relu(self.conv2(x), 0.2)
            return self.head(x.flatten(1))
'''


def test_a_raw_head_beside_layers_measured_normalized_is_sn201_without_a_fix(tmp_path):
    found = findings(tmp_path, OWN_CLASS)
    head = span_of(OWN_CLASS, "nn.Linear(64 * 8 * 8, 1)")
    assert where(found) == [("SN201", head[0], head[1], "graph")]
    assert found[0].evidence == "It computes with its raw weight, σ = 12.8 (measured in a forward)."
    assert found[0].fix is None


def test_one_normalized_layer_among_raw_ones_is_no_premise(tmp_path):
    source = OWN_CLASS.replace("self.conv2 = SNConv2d(", "self.conv2 = nn.Conv2d(").replace(
        "nn.init.normal_(self.head.weight, 0.0, 0.2)",
        "nn.init.normal_(self.head.weight, 0.0, 0.2)\n            nn.init.normal_(self.conv2.weight, 0.0, 0.5)")
    assert findings(tmp_path, source) == []


ATTENTION = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = spectral_norm(nn.Conv2d(3, 16, 4, 2, 1))
            self.attn = nn.MultiheadAttention(16, 2)
            self.attn.out_proj = spectral_norm(self.attn.out_proj)
            self.head = spectral_norm(nn.Linear(16, 1))
            nn.init.normal_(self.attn.out_proj.weight_orig, 0.0, 1.0)

        def forward(self, x):
            h = self.conv(x).flatten(2).permute(2, 0, 1)
            h, _ = self.attn(h, h, h)
            return self.head(h.mean(0))
'''


def test_hook_sn_on_out_proj_is_one_sn107_from_both_passes(tmp_path):
    found = findings(tmp_path, ATTENTION)
    call = span_of(ATTENTION, "spectral_norm(self.attn.out_proj)")
    assert where(found) == [("SN107", call[0], call[1], "source+graph")]


WEIGHT_NORM = '''
    import torch.nn as nn
    from torch.nn.utils import spectral_norm, weight_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = spectral_norm(nn.Conv1d(1, 16, 15, 1, 7))
            self.conv2 = weight_norm(nn.Conv1d(16, 32, 41, 4, 20))
            self.head = weight_norm(nn.Conv1d(32, 1, 3, 1, 1))

        def forward(self, x):
            x = nn.functional.leaky_relu(self.conv1(x), 0.2)
            x = nn.functional.leaky_relu(self.conv2(x), 0.2)
            return self.head(x).flatten(1)
'''


def test_weight_norm_beside_spectral_norm_gives_nothing(tmp_path):
    assert findings(tmp_path, WEIGHT_NORM) == []


# `torch.flatten(w, 1)` is no reshape the source reads: only the measurement sees the
# transposed conv normalized along its input axis.
TRANSPOSED = '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class SpectralNorm(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module
            w = module.weight
            self.register_buffer("u", F.normalize(torch.randn(w.shape[0]), dim=0))
            del module._parameters["weight"]
            module.register_parameter("weight_bar", nn.Parameter(w.data))

        def forward(self, x):
            w = self.module.weight_bar
            w_mat = torch.flatten(w, 1)
            for _ in range(3):
                v = F.normalize(w_mat.t() @ self.u, dim=0)
                self.u = F.normalize(w_mat @ v, dim=0)
            sigma = self.u @ w_mat @ v
            self.module.weight = w / sigma
            return self.module(x)


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = SpectralNorm(nn.ConvTranspose2d(128, 8, 4, 2, 1))
            self.conv = SpectralNorm(nn.Conv2d(8, 1, 4, 2, 1))

        def forward(self, x):
            return self.conv(F.leaky_relu(self.up(x), 0.2)).flatten(1)
'''


def test_a_transposed_conv_normalized_along_its_input_axis_is_sn105_by_measurement(tmp_path):
    found = findings(tmp_path, TRANSPOSED)
    call = span_of(TRANSPOSED, "SpectralNorm(nn.ConvTranspose2d(128, 8, 4, 2, 1))")
    assert where(found) == [("SN105", call[0], call[1], "graph")]
    assert found[0].message.startswith(
        "spectral norm of ConvTranspose2d `up.module` normalizes its weight along dim 0, its input "
        "axis: measured σ = 1.0")
    assert found[0].message.endswith("along its output axis, dim 1")


# What `weights.measure` says of single layers.

def measured(model: nn.Module) -> dict:
    with Pristine(model) as fresh:
        _, make = probe.probe(fresh)
        return {path: use.verdict for path, use in weights.measure(fresh, make).items()}


class _Unused(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 4, 2, 1)
        self.spare = nn.Linear(4, 1)

    def forward(self, x):
        return self.conv(x).flatten(1)


def test_a_layer_the_forward_never_calls_is_not_measured():
    assert "spare" not in measured(_Unused())


class _OwnNorm(nn.Conv2d):
    def forward(self, x):
        w = self.weight
        return self._conv_forward(x, w / torch.linalg.matrix_norm(w.flatten(1), ord=2), self.bias)


def test_a_subclass_that_normalizes_its_own_weight_is_measured_normalized():
    layer = _OwnNorm(3, 1, 4, 2, 1)
    nn.init.normal_(layer.weight, 0.0, 1.0)
    assert measured(nn.Sequential(layer, nn.Flatten())) == {"0": "normalized"}


class _InPlace(nn.Module):
    """Normalizes the parameter itself: the layer computes with its parameter, normalized."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x):
        with torch.no_grad():
            w = self.module.weight
            w /= torch.linalg.matrix_norm(w.flatten(1), ord=2)
        return self.module(x)


def test_a_parameter_normalized_in_place_is_not_called_raw():
    layer = nn.Conv2d(3, 8, 4, 2, 1)
    nn.init.normal_(layer.weight, 0.0, 1.0)
    # Its parameter's values at σ ≈ 1: raw or normalized in place, no verdict either way.
    assert measured(nn.Sequential(_InPlace(layer), nn.Flatten())) == {"0.module": ""}


def test_a_weight_with_sigma_near_one_gets_no_verdict():
    layer = nn.Linear(16, 16)
    with torch.no_grad():
        layer.weight.copy_(torch.eye(16) * 1.02)
    assert measured(nn.Sequential(layer)) == {"0": ""}


def test_the_sn107_pages_graph_example_is_found_by_the_graph_pass(tmp_path):
    from snlint.catalogue import load_catalogue
    example = load_catalogue()["SN107"].section("Example")
    wrapper = example.split("```py\n", 1)[1].split("```", 1)[0]
    source = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n" + wrapper
              + "\n\nclass Discriminator(nn.Module):\n"
              "    def __init__(self):\n"
              "        super().__init__()\n"
              "        self.conv = SpectralNorm(nn.Conv2d(3, 1, 4, 2, 1))\n"
              "        nn.init.normal_(self.conv.module.weight, 0.0, 1.0)\n\n"
              "    def forward(self, x):\n"
              "        return self.conv(x).flatten(1)\n")
    (tmp_path / "models.py").write_text(source, encoding="utf-8")
    found = run([str(tmp_path)], Config(root=tmp_path, graph=True)).findings
    assert [(f.code, f.pass_) for f in found] == [("SN107", "graph")]


class _Functional(nn.Module):
    """Reads the layer's raw weight to estimate σ, then calls F.conv2d with its own."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x):
        w = self.module.weight
        sigma = torch.linalg.matrix_norm(w.flatten(1), ord=2)
        return nn.functional.conv2d(x, w / sigma, self.module.bias, 2, 1)


def test_a_layer_whose_weight_is_only_read_by_a_wrapper_is_not_called_raw():
    layer = nn.Conv2d(3, 8, 4, 2, 1)
    nn.init.normal_(layer.weight, 0.0, 1.0)
    assert measured(nn.Sequential(_Functional(layer), nn.Flatten())) == {}


def test_out_proj_under_hook_sn_is_measured_raw():
    from torch.nn.utils import spectral_norm

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 16, 4, 2, 1)
            self.attn = nn.MultiheadAttention(16, 2)
            self.attn.out_proj = spectral_norm(self.attn.out_proj)
            nn.init.normal_(self.attn.out_proj.weight_orig, 0.0, 1.0)

        def forward(self, x):
            h = self.conv(x).flatten(2).permute(2, 0, 1)
            return self.attn(h, h, h)[0].mean(0)

    assert measured(Attention())["attn.out_proj"] == "raw"


READS_WEIGHT = '''
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = spectral_norm(nn.Conv2d(3, 8, 4, 2, 1))
            self.embed = spectral_norm(nn.Linear(8, 8))
            nn.init.normal_(self.embed.weight_orig, 0.0, 1.0)

        def forward(self, x):
            h = self.conv(x).mean((2, 3))
            return F.linear(h, self.embed.weight).sum(1, keepdim=True)
'''


def test_hook_sn_on_a_layer_whose_weight_the_parent_reads_is_sn107(tmp_path):
    found = findings(tmp_path, READS_WEIGHT)
    call = span_of(READS_WEIGHT, "spectral_norm(nn.Linear(8, 8))")
    assert where(found) == [("SN107", call[0], call[1], "graph")]
    assert "computes with its raw weight" in found[0].message


def test_the_parametrization_sn_read_by_the_parent_gives_nothing(tmp_path):
    source = READS_WEIGHT.replace("from torch.nn.utils import spectral_norm",
                                  "from torch.nn.utils.parametrizations import spectral_norm").replace(
        "self.embed.weight_orig", "self.embed.parametrizations.weight.original")
    assert findings(tmp_path, source) == []
