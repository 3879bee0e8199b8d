"""One built model, brought back to the state it was built in before every forward.

The probe, the shape propagation and the hook recording need forwards that start from one
state with one seed: SN's power iteration, batch norm's running statistics and dropout
must not pass for coupling. A copy does not do: `copy.deepcopy` fails on the old
`weight_norm` and on hook SN after a forward, and rebuilding costs a build per forward.
A snapshot of the model's tensors, attribute dicts and registries (taken once) and the
random generators, put back around each forward, works whatever the model holds; what it
cannot reach (a Python list a forward appends to) the probe catches, as a forward that
does not repeat."""

from __future__ import annotations

import random
import sys
from contextlib import contextmanager
from typing import Any, Iterator

import torch
from torch import nn

_REGISTRIES = ("_parameters", "_buffers", "_modules")
# Trainable parameters from this many elements on are checked, not copied, by a light
# snapshot (`light=True`): forwards do not write trainable weights in practice.
LIGHT_MIN_ELEMENTS = 1 << 16


class Mutated(BaseException):
    """A forward wrote a parameter a light snapshot did not copy: the facts are taken again
    from a fresh build with a full snapshot. A BaseException, so that the probe's `except
    Exception` (a wrong input size) does not swallow it."""


def _checked(t: torch.Tensor) -> bool:
    """Whether a light snapshot checks `t` instead of copying it."""
    return (isinstance(t, nn.Parameter) and t.requires_grad and t.is_floating_point()
            and t.numel() >= LIGHT_MIN_ELEMENTS
            and not isinstance(t, nn.parameter.UninitializedTensorMixin))


def _fingerprint(t: torch.Tensor) -> tuple:
    """Where `t` lives, its sum and norm (float reductions: no copy of `t`): a write through
    `.data` moves them, a rebinding its address. `repr` makes NaN equal to itself."""
    with torch.no_grad():
        sums = (float(t.sum()), float(torch.linalg.vector_norm(t)))
    return (t.data_ptr(), tuple(t.shape), t.dtype, repr(sums))


class Pristine:
    """`with Pristine(model) as fresh:` ... `with fresh.use() as m:` runs on `model` from the
    snapshot's state; leaving either block puts that state back (a module handed to
    `snlint.audit` leaves as it came)."""

    def __init__(self, model: nn.Module, light: bool = False) -> None:
        self.model = model
        self._dicts: list[tuple[nn.Module, dict[str, Any], dict[str, dict]]] = []
        self._values: list[tuple[torch.Tensor, torch.Tensor]] = []
        self._checks: list[tuple[torch.Tensor, tuple]] = []
        seen: set[int] = set()
        for m in model.modules():
            registries = {name: dict(m.__dict__[name]) for name in _REGISTRIES
                          if isinstance(m.__dict__.get(name), dict)}
            self._dicts.append((m, dict(m.__dict__), registries))
            tensors = [t for name in ("_parameters", "_buffers") for t in registries.get(name, {}).values()]
            tensors += [v for v in m.__dict__.values() if isinstance(v, torch.Tensor)]
            for t in tensors:
                if isinstance(t, torch.Tensor) and id(t) not in seen:
                    seen.add(id(t))
                    if light and _checked(t):
                        self._checks.append((t, _fingerprint(t)))
                    elif not isinstance(t, nn.parameter.UninitializedTensorMixin):  # lazy: no values
                        self._values.append((t, t.detach().clone()))
        self._rng: tuple | None = None

    def __enter__(self) -> "Pristine":
        numpy = sys.modules.get("numpy")
        self._rng = (torch.random.get_rng_state(), random.getstate(),
                     numpy.random.get_state() if numpy is not None else None)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()
        if self._rng is not None:
            torch_state, py_state, np_state = self._rng
            torch.random.set_rng_state(torch_state)
            random.setstate(py_state)
            numpy = sys.modules.get("numpy")
            if numpy is not None and np_state is not None:
                numpy.random.set_state(np_state)

    def restore(self) -> None:
        for m, attrs, registries in self._dicts:
            current = m.__dict__
            for key in [k for k in current if k not in attrs]:
                del current[key]
            for key, value in attrs.items():
                if current.get(key) is not value:
                    current[key] = value
            for name, entries in registries.items():
                registry = current[name]
                if list(registry) != list(entries) or any(
                        registry[k] is not v for k, v in entries.items()):
                    registry.clear()
                    registry.update(entries)
        with torch.no_grad():
            for t, print_ in self._checks:
                if _fingerprint(t) != print_:
                    raise Mutated(f"a forward wrote a parameter of shape {list(t.shape)}")
            for t, saved in self._values:
                if t.shape == saved.shape and t.dtype == saved.dtype and t.device == saved.device:
                    t.copy_(saved)
                else:  # a forward rebound `.data` to another shape
                    t.data = saved.clone()

    @contextmanager
    def use(self, seed: int = 0) -> Iterator[nn.Module]:
        self.restore()
        torch.manual_seed(seed)
        random.seed(seed)
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            numpy.random.seed(seed)
        try:
            yield self.model
        finally:
            self.restore()
