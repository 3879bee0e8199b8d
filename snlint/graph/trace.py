"""The torch.fx view of a built discriminator: batch-norm calls and batch reductions.

fx graphs carry no shapes, so batch reductions come from propagating shapes (as fx's
`ShapeProp` does) at two batch sizes: a node whose input shape depends on the batch size
and whose (tensor) output shape does not has reduced over the batch. Propagation runs the
model, so it always runs on a fresh deep copy (hook-based SN cannot be deep-copied after a
forward).
"""

from __future__ import annotations

import copy
import sys
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import fx, nn

from snlint.graph import sites
from snlint.graph.facts import Site, one_line

_BATCH_NORM_FUNCTIONS = (F.batch_norm, torch.batch_norm)


class SNTracer(fx.Tracer):
    """fx's tracer, keeping every module with SN a leaf.

    fx inlines a *user subclass* of Conv2d, and with hook-based SN on it the inlined graph
    reads the un-normalized weight (and fails in training mode); SN modules are leaves here,
    and so are hand-written SN wrappers (their forward mutates module state).
    """

    def create_node(self, *args: Any, **kwargs: Any) -> fx.Node:
        # fx's own record_stack_traces imports torch's profiler (about 1 s); the innermost
        # user frame is all we need, and its position is the exact call being traced.
        node = super().create_node(*args, **kwargs)
        frame = sys._getframe(1)
        while frame is not None and not sites.is_user_file(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is not None:
            node.meta["snlint_pos"] = sites.frame_pos(frame)
        return node

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        if sites.has_sn(m) or sites.custom_sn_inner(m) is not None:
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
    """The user's source range that created `node` (recorded while tracing)."""
    pos = node.meta.get("snlint_pos")
    return sites.to_site(pos) if pos else None


def _arg(node: fx.Node, index: int, name: str, default: Any) -> Any:
    if name in node.kwargs:
        return node.kwargs[name]
    return node.args[index] if len(node.args) > index else default


def batch_norm_calls(gm: fx.GraphModule) -> list[Site | None]:
    """Functional batch norm that uses batch statistics (training, or no running stats)."""
    found = []
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target not in _BATCH_NORM_FUNCTIONS:
            continue
        if node.target is F.batch_norm:
            running_mean = _arg(node, 1, "running_mean", None)
            training = _arg(node, 5, "training", False)
        else:  # torch.batch_norm(input, weight, bias, running_mean, running_var, training, ...)
            running_mean = _arg(node, 3, "running_mean", None)
            training = _arg(node, 5, "training", False)
        # A Node here means the flag is computed at run time: it may be on.
        if training is True or isinstance(training, fx.Node) or running_mean is None:
            found.append(_node_site(node))
    return found


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
    """What ShapeProp records, without it: `torch.fx.passes.shape_prop` imports
    symbolic_shapes and sympy (about 0.4 s) and we need only each tensor result's shape."""

    def __init__(self, gm: fx.GraphModule) -> None:
        super().__init__(gm)
        self.shapes: dict[str, tuple | None] = {}

    def run_node(self, n: fx.Node) -> Any:
        result = super().run_node(n)
        self.shapes[n.name] = tuple(result.shape) if isinstance(result, torch.Tensor) else None
        return result


def batch_reductions(model: nn.Module, make_args: Callable[[int], tuple],
                     sizes: tuple[int, int] = (2, 3)) -> list[tuple[str, Site | None]]:
    """fx nodes whose input depends on the batch size and whose tensor output does not."""
    runs: list[tuple[fx.GraphModule, dict[str, tuple | None]]] = []
    for n in sizes:
        gm, _ = trace(copy.deepcopy(model))
        if gm is None:
            return []
        interpreter = _Shapes(gm)
        torch.manual_seed(0)
        with torch.no_grad():
            interpreter.run(*make_args(n))
        runs.append((gm, interpreter.shapes))
    (gm, first), (_, second) = runs
    found: list[tuple[str, Site | None]] = []
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output", "get_attr"):
            continue
        out_a, out_b = first.get(node.name), second.get(node.name)
        if out_a is None or out_b is None or out_a != out_b:
            continue
        batched = any(first.get(i.name) is not None and first.get(i.name) != second.get(i.name)
                      for i in node.all_input_nodes)
        if batched:
            found.append((_describe(node, gm), _node_site(node)))
    return found
