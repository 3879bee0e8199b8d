"""What keeps the graph-pass worker small: no copy of a large weight while measuring it,
one forward's weights at a time, and no triton compiler loaded by torch's check for it."""

from __future__ import annotations

import functools
import sys
import weakref

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from snlint.graph import memory, weights  # noqa: E402


class _Allocations(TorchDispatchMode):
    """The sizes (in elements) of the tensors aten ops return in new memory (not views)."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = [0]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        given = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
        self.sizes += [t.numel() for t in (out if isinstance(out, (tuple, list)) else [out])
                       if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in given]
        return out


def test_telling_a_weight_still_moving_copies_nothing_the_size_of_the_weight():
    weight = nn.Conv2d(64, 128, 4).weight.detach()
    with _Allocations() as seen:
        norm, magnitudes = weights._fingerprint(weight)
    assert max(seen.sizes) < weight.numel()
    assert norm == pytest.approx(float(weight.norm()), rel=1e-5)
    assert magnitudes == pytest.approx(float(weight.abs().sum()), rel=1e-5)


def test_torch_is_told_triton_is_absent_without_importing_it(tmp_path, monkeypatch):
    from torch.utils import _triton

    fake = tmp_path / "triton"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise RuntimeError('triton was imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    # A fresh check, as a worker that has not asked yet has: it would import the fake.
    check = getattr(_triton.has_triton_package, "__wrapped__", _triton.has_triton_package)
    monkeypatch.setattr(_triton, "has_triton_package", functools.cache(check))

    memory.without_triton()

    assert _triton.has_triton_package() is False
    assert "triton" not in sys.modules


class _HandWrittenSN(nn.Module):
    """2018-era SN: the normalized weight, a new tensor at every forward, is kept as the
    wrapped layer's `weight` attribute."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module
        self.module.weight_bar = nn.Parameter(module.weight.data)
        del self.module._parameters["weight"]

    def forward(self, x):
        w = self.module.weight_bar
        self.module.weight = w / torch.linalg.matrix_norm(w.flatten(1), ord=2)
        return self.module(x)


def test_the_weights_of_one_forward_are_let_go_before_the_next_is_measured(monkeypatch):
    from snlint.graph.pristine import Pristine

    model = nn.Sequential(_HandWrittenSN(nn.Conv2d(3, 8, 3)), _HandWrittenSN(nn.Conv2d(8, 1, 3)))
    real = weights._one_forward
    previous: list[weakref.ref] = []
    kept: list[int] = []

    def counted(*args):
        used = real(*args)
        kept.append(sum(ref() is not None for ref in previous))
        previous[:] = [weakref.ref(w) for w, _ in used.values()]
        return used

    monkeypatch.setattr(weights, "_one_forward", counted)
    with Pristine(model) as fresh:
        measured = weights.measure(fresh, lambda n: (torch.randn(n, 3, 8, 8),))
    assert sorted(measured) == ["0.module", "1.module"]
    assert len(kept) >= 2 and set(kept) == {0}
