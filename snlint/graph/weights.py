"""Which weight each conv/linear layer really computes with, measured in real forwards.

Only a forward shows whether a normalized weight reaches the layer's op (a wrapper that
computes `w / sigma` into a local and calls the layer with its raw weight, hook SN on
`MultiheadAttention.out_proj`). A wrapper of each layer's `forward` keeps the stack of
running layers, and a TorchFunctionMode sees the weight each layer hands to `F.conv*` /
`F.linear` (or, for a layer whose forward never runs, an op handed its `weight` tensor),
beside the raw parameter. Forwards run from the built state until SN's power iteration
settles; then σ of the weight used (output axis first) gives the verdict, with margins
that never call a normalized weight raw:
- "raw": the raw parameter's values, and σ far from 1;
- "normalized": |σ − 1| < 0.1, and not the raw parameter's values;
- "wrong_axis": a ConvTranspose (kernel > 1) normalized along dim 0, not its output axis;
- "": anything in between. A layer no forward calls is not measured."""

from __future__ import annotations

import time
from contextlib import ExitStack, contextmanager
from typing import Any, Callable, Iterator

import torch
from torch import nn
from torch.nn.modules import conv as _conv
from torch.overrides import TorchFunctionMode

from snlint.graph import sites
from snlint.graph.facts import WeightUse
from snlint.graph.pristine import Pristine

F = torch.nn.functional
_OPS = (F.conv1d, F.conv2d, F.conv3d, F.conv_transpose1d, F.conv_transpose2d,
        F.conv_transpose3d, F.linear, torch.conv1d, torch.conv2d, torch.conv3d,
        torch.conv_transpose1d, torch.conv_transpose2d, torch.conv_transpose3d)

# Ops that read a layer's weight without calling the layer (MultiheadAttention's out_proj).
_BYPASSING = (F.multi_head_attention_forward,)

MAX_FORWARDS = 20
SETTLED = 1e-2  # largest relative change of any weight used between two forwards
POWER_ITERATIONS = 100  # for σ of the weight used, at most
SN_ITERATIONS = 30  # per forward of torch's SN while measuring: it settles in one forward
# Wall-clock bound on the measurement (half for forwards, the rest for σ), well inside the
# default --graph-timeout, so that measuring never costs a target its other facts.
SECONDS = 5.0
NORMALIZED = 0.1  # |σ − 1| below this: normalized
RAW = 0.25  # |σ − 1| above this, with the raw parameter's values: raw
WRONG_AXIS = 0.05  # |σ along dim 0 − 1| below this ...
RIGHT_AXIS_OFF = 0.15  # ... and |σ along the output axis − 1| above this: wrong axis


def _measured(module: nn.Module) -> bool:
    return isinstance(module, (nn.Linear, _conv._ConvNd)) and not sites.weight_norm_api(module)


def _plain_weight(module: nn.Module) -> Any:
    """The tensor a caller reading `module.weight` gets without computing anything (None
    for a parametrized weight, computed afresh at each access)."""
    from torch.nn.utils import parametrize
    if parametrize.is_parametrized(module, "weight"):
        return None
    value = sites.stored(module, "weight", ("_parameters",))
    return value if isinstance(value, torch.Tensor) else None


class _Weights(TorchFunctionMode):
    def __init__(self, layers: dict[int, str], modules: dict[int, nn.Module]) -> None:
        super().__init__()
        self.layers = layers
        self.modules = modules
        self.stack: list[nn.Module] = []
        self.used: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def _take(self, module: nn.Module, weight: Any) -> None:
        path = self.layers.get(id(module))
        if path is None or path in self.used or not isinstance(weight, torch.Tensor):
            return
        raw = sites.original(module, "weight")
        if not isinstance(raw, torch.Tensor) or raw.shape != weight.shape:
            return  # another tensor (a LoRA factor, a projection): not the layer's weight
        # Held, not copied: copies of every weight over two forwards cost a large critic
        # four times its size.
        self.used[path] = (weight.detach(), raw.detach())

    def __torch_function__(self, func: Callable, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in _OPS:
            weight = args[1] if len(args) > 1 else kwargs.get("weight")
            if self.stack:
                self._take(self.stack[-1], weight)
            else:
                self._bypassed((weight,))
        elif func in _BYPASSING:
            self._bypassed((*args, *kwargs.values()))
        return func(*args, **kwargs)

    def _bypassed(self, values: tuple) -> None:
        """A layer whose forward is bypassed: its own weight handed to a layer op (a wrapper
        reading `self.module.weight` to estimate σ is no use of it)."""
        for value in values:
            owner = self.modules.get(id(value)) if isinstance(value, torch.Tensor) else None
            if owner is not None:
                self._take(owner, value)

    def wrap(self, module: nn.Module) -> Callable[[], None]:
        """Put `module` on the stack while its forward runs, however it is called (module
        hooks miss a wrapper calling `self.module.forward(x)`); returns what undoes it."""
        own = module.__dict__.get("forward")
        inner = own if own is not None else module.forward

        def forward(*args: Any, **kwargs: Any) -> Any:
            self.stack.append(module)
            try:
                return inner(*args, **kwargs)
            finally:
                self.stack.pop()

        module.__dict__["forward"] = forward

        def unwrap() -> None:
            if own is not None:
                module.__dict__["forward"] = own
            else:
                module.__dict__.pop("forward", None)
        return unwrap


def _one_forward(model: nn.Module, args: tuple, layers: dict[int, str]) -> dict:
    plain = {id(w): m for m in model.modules() if id(m) in layers
             for w in [_plain_weight(m)] if w is not None}
    recorder = _Weights(layers, plain)
    with ExitStack() as wrapped:
        for m in model.modules():
            if id(m) in layers:
                wrapped.callback(recorder.wrap(m))
        with recorder, torch.no_grad():
            model(*args)
    return recorder.used


def _sigma(matrix: torch.Tensor) -> float:
    """The largest singular value, by power iteration (an SVD of a 1024x9216 weight takes
    tens of seconds); it approaches σ from below, which the margins absorb."""
    matrix = matrix.detach().float()
    if matrix.numel() == 0:
        return 0.0
    if matrix.shape[0] > matrix.shape[1]:
        matrix = matrix.t()
    generator = torch.Generator().manual_seed(0)
    v = torch.randn(matrix.shape[1], generator=generator)
    v /= v.norm().clamp_min(1e-12)
    estimate = 0.0
    for _ in range(POWER_ITERATIONS):
        u = matrix @ v
        norm = float(u.norm())
        if norm == 0.0:
            return 0.0
        v = matrix.t() @ (u / norm)
        previous, estimate = estimate, float(v.norm())
        v /= max(estimate, 1e-12)
        if abs(estimate - previous) <= 1e-4 * estimate:
            break
    return estimate


def _output_first(weight: torch.Tensor, transposed: bool) -> torch.Tensor:
    if transposed:
        weight = weight.transpose(0, 1)
    return weight.reshape(weight.shape[0], -1)


def judge(module: nn.Module, used: torch.Tensor, raw: torch.Tensor) -> WeightUse:
    transposed = isinstance(module, _conv._ConvTransposeNd)
    sigma = _sigma(_output_first(used, transposed))
    dim0 = _sigma(used.reshape(used.shape[0], -1)) if transposed else sigma
    same = torch.equal(used, raw)
    verdict = ""
    if abs(sigma - 1) < NORMALIZED:
        # Its raw parameter at σ ≈ 1 (a default init can be) tells nothing either way.
        verdict = "" if same else "normalized"
    elif same and abs(sigma - 1) > RAW:
        verdict = "raw"
    elif (transposed and used.dim() > 2 and used[0, 0].numel() > 1
          and abs(dim0 - 1) < WRONG_AXIS and abs(sigma - 1) > RIGHT_AXIS_OFF):
        verdict = "wrong_axis"
    return WeightUse(verdict, round(sigma, 4), round(dim0, 4))


def measure(fresh: Pristine, make_args: Callable[[int], tuple]) -> dict[str, WeightUse]:
    """path -> how that layer's weight is used, for every conv/linear layer a forward calls
    whose weight settled (within 1% over the last two forwards); one still moving gets no
    verdict. Bounded by `SECONDS`."""
    start = time.perf_counter()
    model = fresh.model
    layers = {id(m): path for path, m in model.named_modules() if _measured(m)}
    if not layers:
        return {}
    modules = dict(model.named_modules())
    args = make_args(2)
    with fresh.use() as m, _more_power_iterations(m) as relax:
        last: dict[str, tuple[float, float]] = {}  # path -> the previous forward's fingerprint
        settled: set[str] = set()
        used: dict = {}
        for _ in range(MAX_FORWARDS):
            # The last forward's weights go before the next makes its own (only their
            # fingerprints are compared): two sets of them are twice the model.
            used = {}
            used = _one_forward(m, args, layers)
            relax()  # torch's SN has settled; the next forwards show whether the rest has
            prints = {p: _fingerprint(w) for p, (w, _) in used.items()}
            settled = {p for p in used if p in last and _change(prints[p], last[p]) < SETTLED}
            last = prints
            if settled == set(used) and used or time.perf_counter() - start > SECONDS / 2:
                break
        out: dict[str, WeightUse] = {}
        for path in sorted(settled):
            if time.perf_counter() - start > SECONDS:
                break
            weight, raw = used[path]
            out[path] = judge(modules[path], weight, raw)
        return out


@contextmanager
def _more_power_iterations(model: nn.Module) -> Iterator[Callable[[], None]]:
    from torch.nn.utils.parametrizations import _SpectralNorm
    from torch.nn.utils.spectral_norm import SpectralNorm
    changed: list[tuple[Any, int]] = []
    for m in model.modules():
        owners = [h for h in m._forward_pre_hooks.values() if isinstance(h, SpectralNorm)]
        owners += [m] if isinstance(m, _SpectralNorm) else []
        for owner in owners:
            changed.append((owner, owner.n_power_iterations))
            owner.n_power_iterations = max(owner.n_power_iterations, SN_ITERATIONS)

    def relax() -> None:
        for owner, n in changed:
            owner.n_power_iterations = n
    try:
        yield relax
    finally:
        relax()


def _fingerprint(weight: torch.Tensor) -> tuple[float, float]:
    """What tells a weight still moving between forwards without keeping a copy of it: its
    norm and its sum of magnitudes (a power iteration's σ scales both)."""
    w = weight.detach()
    # Reductions of the tensor itself: `w.abs().sum()` or `.float()` would first copy it.
    return (float(torch.linalg.vector_norm(w, dtype=torch.float32)),
            float(torch.linalg.vector_norm(w, ord=1, dtype=torch.float32)))


def _change(now: tuple[float, float], before: tuple[float, float]) -> float:
    return max(abs(a - b) / (abs(b) or 1.0) for a, b in zip(now, before))
