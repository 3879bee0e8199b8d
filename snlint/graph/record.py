"""The forward's facts without fx, where fx cannot trace (a data-dependent `if`, `int()` of
a proxy): two real forwards from the built state, at batch sizes 2 and 3, seen through
module hooks and a TorchFunctionMode, give the `F.batch_norm` calls with batch statistics
and the batch reductions (calls whose input shape changes with the batch size and whose
output shape does not; matched between the runs by position and count there).

A call counts where fx would have put it in a graph: in the user's code, not inside a
module fx keeps as a leaf (a BatchNorm2d's own `F.batch_norm` is that layer's fact)."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from typing import Any, Callable

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from snlint.graph import sites
from snlint.graph.facts import Site
from snlint.graph.pristine import Pristine
from snlint.graph.probe import tensors
from snlint.graph.trace import SNTracer, data_arguments, selects_samples, uses_batch_statistics
from snlint.records import dataclass


def _shapes(value: Any) -> tuple:
    return tuple(tuple(t.shape) for t in tensors(value))


def _describe_function(func: Any) -> str:
    name = getattr(func, "__name__", str(func))
    if getattr(torch.Tensor, name, None) is func:
        return f"`.{name}()`"
    return f"`{name}()`"


class _Recorder(TorchFunctionMode):
    """One forward's calls, (position, description, count there) -> (input shapes, output
    shapes), and its batch norm calls' positions."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.calls: dict[tuple, tuple[tuple, tuple]] = {}
        self.batch_norm_calls: list[tuple | None] = []
        self._stack: list[tuple[nn.Module, bool]] = []  # (module, is an fx leaf)
        self._counts: dict[tuple, int] = {}
        self._leaf = SNTracer().is_leaf_module
        self._paths = {id(m): path for path, m in model.named_modules()}

    def _visible(self) -> bool:
        """A call made where fx would have traced it: not inside one of its leaves."""
        return not any(leaf for _, leaf in self._stack)

    def _add(self, what: str, pos: tuple | None, inputs: tuple, outputs: tuple) -> None:
        key = (pos, what)
        count = self._counts[key] = self._counts.get(key, 0) + 1
        self.calls[(pos, what, count)] = (inputs, outputs)

    def __torch_function__(self, func: Callable, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if self._visible():
            pos = sites.user_pos(sys._getframe(1))
            if uses_batch_statistics(func, args, kwargs):
                self.batch_norm_calls.append(pos)
            outputs = _shapes(result)
            if outputs and not selects_samples(func):
                self._add(_describe_function(func), pos, _shapes(data_arguments(func, args, kwargs)), outputs)
        return result

    def pre_hook(self, module: nn.Module, inputs: Any) -> None:
        path = self._paths.get(id(module))
        visible = self._visible()
        leaf = path is not None and self._leaf(module, path)
        self._stack.append((module, leaf))
        if visible and leaf:
            module.__dict__["_snlint_call"] = (sites.user_pos(sys._getframe(1)), _shapes(inputs))

    def post_hook(self, module: nn.Module, inputs: Any, output: Any) -> None:
        if self._stack and self._stack[-1][0] is module:
            self._stack.pop()
        call = module.__dict__.pop("_snlint_call", None)
        if call is not None:
            pos, in_shapes = call
            what = f"{sites.type_name(sites.base_class(module))} `{self._paths.get(id(module), '')}`"
            self._add(what, pos, in_shapes, _shapes(output))


def record_once(fresh: Pristine, args: tuple) -> _Recorder:
    """One forward from the built state, with hooks on every module."""
    with fresh.use() as model, ExitStack() as hooks:
        recorder = _Recorder(model)
        for m in model.modules():
            hooks.enter_context(m.register_forward_pre_hook(recorder.pre_hook, prepend=True))
            hooks.enter_context(m.register_forward_hook(recorder.post_hook, always_call=True))
        with recorder, torch.no_grad():
            model(*args)
    return recorder


@dataclass
class ForwardFacts:
    batch_norm_calls: list[Site | None]
    batch_reductions: list[tuple[str, Site | None]]


def record(fresh: Pristine, make_args: Callable[[int], tuple],
           sizes: tuple[int, int] = (2, 3)) -> ForwardFacts:
    """The forward's facts from real runs at two batch sizes."""
    first, second = (record_once(fresh, make_args(n)) for n in sizes)
    reductions: list[tuple[str, tuple | None]] = []
    for (pos, what, count), (inputs, outputs) in first.calls.items():
        other = second.calls.get((pos, what, count))
        if other is None or outputs != other[1] or len(inputs) != len(other[0]):
            continue
        if inputs != other[0] and (what, pos) not in reductions:
            reductions.append((what, pos))
    return ForwardFacts([sites.to_site(p) for p in dict.fromkeys(first.batch_norm_calls)],
                        [(what, sites.to_site(p)) for what, p in reductions])
