"""Large convolutions run without oneDNN while the graph pass measures a model (its copy
of the weights at every call was the worker's peak); small ones keep it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from snlint.graph.convmemory import LARGE_WEIGHT_ELEMENTS, native_large_convs  # noqa: E402


def _model() -> nn.Sequential:
    large = nn.Conv2d(1024, LARGE_WEIGHT_ELEMENTS // (1024 * 4), 2)
    return nn.Sequential(nn.Conv2d(3, 1024, 3, 1, 1), nn.utils.spectral_norm(large))


def test_only_the_large_conv_runs_without_onednn_and_everything_is_put_back():
    model = _model()
    seen = {}

    def spy(name):
        def hook(module, inputs):
            seen[name] = torch.backends.mkldnn.enabled
        return hook

    before = torch.backends.mkldnn.enabled
    hooks = [len(m._forward_pre_hooks) + 1 for m in model]  # its own (SN's) and a spy
    with native_large_convs(model):
        model[0].register_forward_pre_hook(spy("small"))
        model[1].register_forward_pre_hook(spy("large"))
        with torch.no_grad():
            model(torch.randn(2, 3, 4, 4))
    assert seen == {"small": before, "large": False}
    assert torch.backends.mkldnn.enabled == before
    assert [len(m._forward_pre_hooks) for m in model] == hooks
    assert [len(m._forward_hooks) for m in model] == [0, 0]
