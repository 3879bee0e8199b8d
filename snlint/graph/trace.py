"""The torch.fx view of a built discriminator: batch-norm calls and batch reductions.

fx graphs carry no shapes: propagating them (as `ShapeProp` does) at two batch sizes finds
the nodes whose input shape depends on the batch size and whose output shape does not.
Propagation runs the model's own modules, from the built state (`pristine.Pristine`).
Where fx cannot trace, `record.py` finds the same facts from real forwards."""

from __future__ import annotations

import sys
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import fx, nn

from snlint.graph import sites
from snlint.graph.facts import Site, one_line
from snlint.graph.pristine import Pristine

class SNTracer(fx.Tracer):
    """fx's tracer, keeping every module with SN a leaf (fx inlines a user subclass of Conv2d,
    and with hook SN the inlined graph reads the un-normalized weight), and hand-written SN
    wrappers too (their forward mutates module state)."""

    def create_node(self, *args: Any, **kwargs: Any) -> fx.Node:
        # fx's own record_stack_traces imports torch's profiler (about 1 s); the innermost
        # user frame is all we need, and its position is the exact call being traced.
        node = super().create_node(*args, **kwargs)
        node.meta["snlint_pos"] = sites.user_pos(sys._getframe(1))
        return node

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        if sites.sn_states(m) or sites.custom_sn_inner(m) is not None:
            return True
        return super().is_leaf_module(m, module_qualified_name)


def trace(model: nn.Module) -> tuple[fx.GraphModule | None, str]:
    """(graph module, "") or (None, the one-line reason fx could not trace)."""
    tracer = SNTracer()
    try:
        graph = tracer.trace(model)
        return fx.GraphModule(tracer.root, graph), ""
    except Exception as exc:  # fx raises TraceError, TypeError, NotImplementedError, ...
        return None, one_line(exc)


def _node_site(node: fx.Node) -> Site | None:
    return sites.to_site(node.meta.get("snlint_pos"))


# Calls that pick samples out of the batch and compute nothing: a fixed number of them
# comes out at any batch size, yet each output element is one sample's (WaveGAN's phase
# shuffle pads `x[idxs]`, the samples drawn the same shift, per group). The coupling probe
# measures what really mixes samples.
_SELECTIONS = frozenset({"getitem", "__getitem__", "index_select", "select", "narrow"})


def selects_samples(function: Any) -> bool:
    """Whether `function` (a torch function, a Tensor method, `operator.getitem`, or an fx
    call_method's name) only selects elements."""
    name = function if isinstance(function, str) else getattr(function, "__name__", "")
    return name in _SELECTIONS


# Methods whose tensor arguments but the first only lend a dtype and device
# (`torch.zeros(1).to(x)`), and those whose receiver only does (`x.new_zeros(1)`): a
# batch-sized donor beside a fixed-size result reduces nothing.
_TAKES_DEVICE_OF = frozenset({"to", "type_as"})


def data_arguments(function: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The arguments whose values (not only dtype or device) go into `function`'s result;
    `function` as `selects_samples` takes it."""
    name = function if isinstance(function, str) else getattr(function, "__name__", "")
    if name in _TAKES_DEVICE_OF:
        return args[:1], {}
    if name.startswith("new_"):
        return args[1:], kwargs
    return args, kwargs


def uses_batch_statistics(function: Any, args: tuple, kwargs: dict) -> bool:
    """A call of F.batch_norm / torch.batch_norm that normalizes with the batch's own
    statistics (training, or no running statistics). A traced flag (an fx Node) is computed
    at run time: it may be on."""
    if function is F.batch_norm:
        mean_at = 1
    elif function is torch.batch_norm:  # (input, weight, bias, running_mean, ...)
        mean_at = 3
    else:
        return False
    running_mean = kwargs.get("running_mean", args[mean_at] if len(args) > mean_at else None)
    training = kwargs.get("training", args[5] if len(args) > 5 else False)
    return training is True or isinstance(training, fx.Node) or running_mean is None


def batch_norm_calls(gm: fx.GraphModule) -> list[Site | None]:
    """Functional batch norm that uses batch statistics (training, or no running stats)."""
    return [_node_site(node) for node in gm.graph.nodes
            if node.op == "call_function"
            and uses_batch_statistics(node.target, node.args, dict(node.kwargs))]


def _describe(node: fx.Node, gm: fx.GraphModule) -> str:
    """Words for the message."""
    if node.op == "call_method":
        return f"`.{node.target}()`"
    if node.op == "call_module":
        sub = gm.get_submodule(str(node.target))
        return f"{type(sub).__name__} `{node.target}`"
    name = getattr(node.target, "__name__", str(node.target))
    return f"`{name}()`"


class _Shapes(fx.Interpreter):
    """What ShapeProp records, without its import of sympy (about 0.4 s)."""

    def __init__(self, gm: fx.GraphModule) -> None:
        super().__init__(gm)
        self.shapes: dict[str, tuple | None] = {}

    def run_node(self, n: fx.Node) -> Any:
        result = super().run_node(n)
        self.shapes[n.name] = tuple(result.shape) if isinstance(result, torch.Tensor) else None
        return result


def batch_reductions(gm: fx.GraphModule, fresh: Pristine, make_args: Callable[[int], tuple],
                     sizes: tuple[int, int] = (2, 3)) -> list[tuple[str, Site | None]]:
    """fx nodes whose input depends on the batch size and whose tensor output does not.
    `gm` is the trace of `fresh.model`."""
    runs: list[dict[str, tuple | None]] = []
    for n in sizes:
        interpreter = _Shapes(gm)
        with fresh.use(), torch.no_grad():
            interpreter.run(*make_args(n))
        runs.append(interpreter.shapes)
    first, second = runs
    found: list[tuple[str, Site | None]] = []
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output", "get_attr") or selects_samples(node.target):
            continue
        out_a, out_b = first.get(node.name), second.get(node.name)
        if out_a is None or out_b is None or out_a != out_b:
            continue
        args, kwargs = data_arguments(node.target, tuple(node.args), dict(node.kwargs)) \
            if node.op == "call_method" else (node.args, node.kwargs)
        inputs: list[fx.Node] = []
        fx.node.map_arg((args, kwargs), inputs.append)
        batched = any(first.get(i.name) is not None and first.get(i.name) != second.get(i.name)
                      for i in inputs)
        if batched:
            found.append((_describe(node, gm), _node_site(node)))
    return found
