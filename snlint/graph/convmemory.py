"""Large convolutions run on torch's native kernel while the graph pass measures a model:
oneDNN copies a conv's weights into its own layout at every call (134 MB for a
1024->2048 4x4 conv, the worker's peak); the native kernel needs no copy. Both compute
the same convolution, and each layer uses one kernel on every forward."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import torch
from torch import nn

from snlint.graph import sites

LARGE_WEIGHT_ELEMENTS = 1 << 22  # 16 MB of float32


def _large(module: nn.Module) -> bool:
    if not isinstance(module, nn.modules.conv._ConvNd):
        return False
    # Not `.weight`: that would run a parametrization. SN and weight_norm keep the
    # trainable tensor under another name; `original` finds it.
    weight = sites.original(module, "weight")
    return isinstance(weight, torch.Tensor) and weight.numel() >= LARGE_WEIGHT_ELEMENTS


@contextmanager
def native_large_convs(model: nn.Module) -> Iterator[None]:
    """Inside the block, the model's convs with large weights run without oneDNN."""
    handles = []
    saved: list[bool] = []

    def before(module: nn.Module, inputs: Any) -> None:
        saved.append(torch.backends.mkldnn.enabled)
        torch.backends.mkldnn.enabled = False

    def after(module: nn.Module, inputs: Any, output: Any) -> None:
        if saved:
            torch.backends.mkldnn.enabled = saved.pop()

    enabled = torch.backends.mkldnn.enabled
    try:
        for m in model.modules():
            if _large(m):
                handles.append(m.register_forward_pre_hook(before))
                handles.append(m.register_forward_hook(after))
        yield
    finally:
        for handle in handles:
            handle.remove()
        torch.backends.mkldnn.enabled = enabled
