"""The batch-coupling probe: does one sample's input change another sample's output?

Every forward starts from the model's built state (`pristine.Pristine`) with every
generator seeded, so only real coupling moves the other samples' outputs; the unperturbed
input runs twice, and a forward that does not repeat gives no verdict. Only outputs whose
first dimension is still the batch count (a `view(-1)` head folds positions into it).
Where the outputs couple, hooks find the module that first mixes samples
(`coupling_sources`), and a shifted and scaled input tells whether it standardizes with
batch statistics (SN301's kind) or mixes otherwise (SN302's)."""

from __future__ import annotations

import inspect
import sys
import time
from contextlib import ExitStack
from typing import Any, Callable

import torch
from torch import nn

from snlint.graph import sites
from snlint.graph.budget import Budget
from snlint.graph.facts import Site, empty_probe, one_line
from snlint.graph.pristine import Pristine

# Two samples: the fewest batch norm accepts, and half the memory of four (a large critic
# at 256x256 peaks at 3 GB with four). Sample 1 must not move when sample 0 changes.
PROBE_BATCH = 2
RELATIVE_TOLERANCE = 1e-5
# Smallest first, the first accepted wins: a forward's cost grows with the square of the
# size, and a model that accepts 16x16 (global pooling) tells at 16 what it tells at 256.
IMAGE_SIZES = (16, 28, 32, 48, 64, 96, 128, 256)
# Cubes for a voxel discriminator; before the 64-cube, a 16-frame clip of 64x64 frames: a
# video discriminator (MoCoGAN's) strides only space and needs 64 there, and 16 frames cost a
# quarter of 64 (two seconds a forward at 64 filters on a CPU, and the probe runs several).
VOLUME_SHAPES = ((16, 16, 16), (32, 32, 32), (16, 64, 64), (64, 64, 64))
WAVEFORM_LENGTH = 1024
# A 1-D discriminator after the image sizes: audio ones flatten a fixed length into their
# head (WaveGAN's critic: 16384 samples, `view(-1, 256 * d)`), or pad more than a short
# input holds (reflection padding of a stride-4 stack).
WAVEFORM_LENGTHS = (WAVEFORM_LENGTH, 4096, 16384)

MakeArgs = Callable[[int], tuple]


def tensors(value: Any) -> list[torch.Tensor]:
    """The tensors in a forward's arguments or output (nested in lists, tuples, dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors(item)]
    return []


def _first_tensor(value: Any) -> torch.Tensor | None:
    return next(iter(tensors(value)), None)


def _positional(model: nn.Module) -> list[inspect.Parameter] | None:
    """forward's positional parameters (None: cannot tell)."""
    try:
        params = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in params if p.kind in kinds]


def _first_layer(model: nn.Module) -> nn.Module | None:
    for _, m in model.named_modules():
        if sites.kind_of(m) in ("conv", "conv_transpose", "linear"):
            return m
    return None


def _first_weight(model: nn.Module) -> torch.Tensor | None:
    """The first weight-shaped parameter (out, in, *kernel) or (out, in) of a model with no
    torch conv or linear layer: an equalized-learning-rate layer (StyleGAN2, ProGAN, MSG-GAN)
    holds its weight as a plain parameter and calls `F.conv2d` itself."""
    for _, p in model.named_parameters():
        if p.dim() in (2, 3, 4, 5) and p.is_floating_point():
            return p
    return None


def candidate_inputs(model: nn.Module) -> tuple[list[tuple[MakeArgs, list[int]]], str]:
    """Ways to call the model, smallest input first, and a reason when there are none."""
    layer = _first_layer(model)
    first_weight = _first_weight(model) if layer is None else None
    if layer is None and first_weight is None:
        return [], "no conv or linear layer to infer an input shape from"
    positional = _positional(model)
    required = None
    if positional is not None:
        required = sum(p.default is inspect.Parameter.empty for p in positional)
    if required is not None and required > 2:
        return [], f"forward needs {required} arguments"
    # A second argument: class labels (a projection discriminator), else a second input
    # like the first (HiFi-GAN's discriminators take real and generated audio at once).
    # An optional one (`forward(x, y=None)`): the labels a projection discriminator may need.
    optional_second = (required == 1 and len(positional) >= 2
                       and positional[1].default is not inspect.Parameter.empty)
    seconds = ("labels", "like") if required == 2 else (
        (None, "labels") if optional_second else (None,))

    if first_weight is not None:
        # Read as a torch layer would be: (out, in) is a linear weight, (out, in, *kernel) a
        # conv's. A guess: a size no forward accepts leaves the model unprobed, with why.
        channels, ndim = int(first_weight.shape[1]), first_weight.dim() - 2
    elif sites.kind_of(layer) == "linear":
        channels, ndim = getattr(layer, "in_features", getattr(layer, "in1_features", 0)), 0
        if not channels:
            return [], f"cannot infer the input of {type(layer).__name__}"
    else:
        channels = getattr(layer, "in_channels", 0)
        if not channels:  # lazy modules
            return [], f"cannot infer the input channels of {type(layer).__name__}"
        ndim = len(getattr(layer, "kernel_size", (0, 0)))
    if ndim == 3:
        shapes = [[channels, *volume] for volume in VOLUME_SHAPES]
    else:
        shapes = [[channels]] if ndim == 0 else [[channels] + [size] * ndim for size in IMAGE_SIZES]
    if ndim == 2 and first_weight is None:  # a waveform a period discriminator folds into 2-D
        shapes.append([channels, WAVEFORM_LENGTH])
    if ndim == 1:
        shapes += [[channels, length] for length in WAVEFORM_LENGTHS]
    if len(shapes[0]) == 3 and channels != 3:
        # Last, an RGB image: a discriminator that folds space into channels before its
        # first conv (lightweight-gan's pixel unshuffle, SWAGAN's wavelets: 3 become 12).
        shapes += [[3, size, size] for size in IMAGE_SIZES]

    weight = first_weight if layer is None else sites.original(layer, "weight")  # not .weight: that would run a parametrization
    dtype = weight.dtype if isinstance(weight, torch.Tensor) and weight.is_floating_point() else None

    def maker(rest: list[int], second: str | None) -> MakeArgs:
        def make(n: int) -> tuple:
            g = torch.Generator().manual_seed(1234)
            x = torch.randn([n] + rest, generator=g)
            if dtype is not None:
                x = x.to(dtype)
            if second == "labels":
                return (x, torch.zeros(n, dtype=torch.long))
            if second == "like":
                return (x, torch.randn(x.shape, generator=g, dtype=x.dtype))
            return (x,)
        return make

    if required == 2:
        # Labels at every size before a second input at any: most two-argument critics
        # are projection discriminators, and a failing size costs most of a forward.
        return [(maker(rest, second), rest) for second in seconds for rest in shapes], ""
    # An optional second argument: the plain call first at each size, labels when it fails.
    return [(maker(rest, second), rest) for rest in shapes for second in seconds], ""


def from_example(example_input: Any) -> MakeArgs:
    """Batch-size-n arguments built from a user's example (repeating its samples)."""
    args = example_input if isinstance(example_input, tuple) else (example_input,)

    def resize(a: Any, n: int) -> Any:
        if not isinstance(a, torch.Tensor) or a.dim() == 0:
            return a
        reps = -(-n // a.shape[0])
        return a.repeat(reps, *([1] * (a.dim() - 1)))[:n].clone()

    return lambda n: tuple(resize(a, n) for a in args)


def _detached(value: Any) -> Any:
    """Outputs that stay valid after the next restore (a forward may return a buffer)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_detached(v) for v in value]
    return value


def _forward(fresh: Pristine, args: tuple) -> Any:
    with fresh.use() as model, torch.no_grad():
        return _detached(model(*args))


def _perturbed(args: tuple) -> tuple:
    x = args[0].clone()
    g = torch.Generator().manual_seed(4321)
    if x.is_floating_point():
        x[0] = x[0] + torch.randn(x[0].shape, generator=g, dtype=x.dtype) + 1.0
    else:
        x[0] = x[0] + 1
    return (x,) + tuple(args[1:])


# Position weights of a summary: (i + 1) * this, modulo 1, never repeat a pattern.
_GOLDEN = 0.6180339887498949


def _summary(value: Any, n: int) -> list[tuple[float, ...]]:
    """Per tensor, (sum, sum of squares, position-weighted sum) over samples 1..n-1 (all of
    it without a batch dimension): enough to tell whether they moved, without keeping the
    activations. The weighted sum: a batch standardized over two samples is +-1/sqrt(2)
    everywhere, and signs that moved but kept their count leave the other two as they were."""
    out = []
    for t in tensors(value):
        if t.dim() == 1 and t.numel() > n and t.numel() % n == 0:
            t = t.reshape(n, -1)  # a flattened (sample-major) patch map
        part = t[1:] if t.dim() >= 1 and t.shape[0] == n else t
        d = part.detach().double()
        weights = torch.arange(1, d.numel() + 1, dtype=torch.float64).mul_(_GOLDEN).frac_()
        out.append((float(d.sum()), float(d.square().sum()),
                    float((d.flatten() * weights).sum())))
    return out


def _same(a: list[tuple[float, ...]], b: list[tuple[float, ...]]) -> bool:
    return len(a) == len(b) and all(
        abs(x - y) <= RELATIVE_TOLERANCE * max(abs(x), abs(y), 1e-6)
        for pa, pb in zip(a, b) for x, y in zip(pa, pb))


def _recorded(fresh: Pristine, args: tuple, n: int) -> dict[str, list[list]]:
    """Every module call's input and output summaries, by module path."""
    calls: dict[str, list[list]] = {}

    def pre(path: str) -> Callable:
        def hook(module: nn.Module, inputs: Any) -> None:
            calls.setdefault(path, []).append([_summary(inputs, n), None])
        return hook

    def post(path: str) -> Callable:
        def hook(module: nn.Module, inputs: Any, output: Any) -> None:
            calls[path][-1][1] = _summary(output, n)
        return hook

    with fresh.use() as model, ExitStack() as hooks, torch.no_grad():
        for path, m in model.named_modules():
            hooks.enter_context(m.register_forward_pre_hook(pre(path)))
            hooks.enter_context(m.register_forward_hook(post(path)))
        model(*args)
    return calls


def coupling_sources(fresh: Pristine, args: tuple, perturbed: tuple,
                     n: int = PROBE_BATCH) -> list[dict[str, Any]]:
    """Where coupling enters, in execution order: the innermost modules whose output for
    samples 1..n-1 moves when only sample 0 changed while their own input for those samples
    did not. Each with its construction site and whether it `standardizes` (SN301's kind)."""
    clean, moved = _recorded(fresh, args, n), _recorded(fresh, perturbed, n)
    flagged = []
    for path, calls in clean.items():  # first calls in execution order (pre-hooks)
        other = moved.get(path, [])
        if len(other) != len(calls):
            continue
        for (ins, outs), (ins2, outs2) in zip(calls, other):
            if outs is None or outs2 is None or not _same(ins, ins2):
                continue
            if not _same(outs, outs2):
                flagged.append(path)
                break
    innermost = [p for p in flagged
                 if not any(q != p and (p == "" or q.startswith(p + ".")) for q in flagged)]
    sources = []
    for path in innermost:
        module = fresh.model.get_submodule(path)
        cls = sites.base_class(module)
        site = sites.construction(module)[0]
        kind = sites.kind_of(module)
        try:
            # The discriminator itself has no line of the project that builds it: what its
            # own forward does stays SN302's (a reduction the forward records, or the probe's).
            standardizes = kind == "batch_norm" or (path != "" and _standardizes(fresh, args, path))
        except Exception:  # the module refused the shifted input: no verdict, so not SN301
            standardizes = False
        defined = _defined_at(cls)
        called = _called_at(fresh, args, path) if standardizes and kind != "batch_norm" else None
        sources.append({"path": path, "type": sites.type_name(cls), "kind": kind,
                        "site": site.to_dict() if site else None, "standardizes": standardizes,
                        "defined_at": defined.to_dict() if defined else None,
                        "called_at": called.to_dict() if called else None})
    return sources


def _called_at(fresh: Pristine, args: tuple, path: str) -> Site | None:
    """The user's call of module `path` in the forward (the innermost project frame): where
    fx records the operations of a module it inlines from an installed package."""
    module = fresh.model.get_submodule(path)
    found: list[Site] = []

    def pre(m: nn.Module, inputs: Any) -> None:
        pos = sites.user_pos(sys._getframe(1))
        if pos is not None:
            found.append(sites.to_site(pos))
        raise _Captured

    try:
        _forward_until_captured(fresh, args, module, pre=pre)
    except Exception:  # only a location: without it, nothing is decided
        return None
    return found[0] if found else None


class _Captured(Exception):
    """Ends a forward once the module under study has returned: the rest is not needed."""


def _forward_until_captured(fresh: Pristine, args: tuple, module: nn.Module,
                            pre: Callable | None = None, post: Callable | None = None) -> None:
    """A forward from the built state with hooks on `module`; a hook raising `_Captured`
    ends it early."""
    with fresh.use() as model, ExitStack() as hooks, torch.no_grad():
        if pre is not None:
            hooks.enter_context(module.register_forward_pre_hook(pre))
        if post is not None:
            hooks.enter_context(module.register_forward_hook(post))
        try:
            model(*args)
        except _Captured:
            pass


def _output_of(fresh: Pristine, args: tuple, path: str,
               transform: Callable[[torch.Tensor], torch.Tensor] | None = None) -> tuple:
    """(input, output) of the first call of module `path`, the first floating-point tensor
    of each; with `transform`, the module sees `transform(input)` instead."""
    module = fresh.model.get_submodule(path)
    seen: list = []

    def pre(m: nn.Module, inputs: tuple) -> tuple | None:
        for i, value in enumerate(inputs):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                if transform is not None:
                    value = transform(value)
                    inputs = inputs[:i] + (value,) + inputs[i + 1:]
                seen.append(value.detach().clone())
                return inputs
        raise _Captured  # no floating-point input: nothing to shift or scale

    def post(m: nn.Module, inputs: Any, output: Any) -> None:
        out = _first_tensor(output)
        seen.append(out.detach().clone() if out is not None else None)
        raise _Captured

    _forward_until_captured(fresh, args, module, pre=pre, post=post)
    return tuple(seen) if len(seen) == 2 else (None, None)


SHIFT, SCALE = 0.5, 3.0
# Of the output's spread. Not tighter: a hand-written `/ (var + eps).sqrt()` meets
# positions whose batch variance is near eps, while what is not invariant moves by 0.5+.
INVARIANCE_TOLERANCE = 2e-2
INVARIANT_SHARE = 0.95  # of the output's positions


def _standardizes(fresh: Pristine, args: tuple, path: str) -> bool:
    """Whether module `path` normalizes with batch statistics: its output keeps its input's
    shape and stays the same when every sample's input is scaled and shifted alike. A
    statistic concatenated to the features, centering only, or a layer before the
    normalization is not invariant: SN302's kind. Anything in doubt is not this."""
    x, clean = _output_of(fresh, args, path)
    if x is None or clean is None or clean.shape != x.shape or not clean.is_floating_point():
        return False
    _, moved = _output_of(fresh, args, path, lambda t: t * SCALE + SHIFT)
    if moved is None or moved.shape != clean.shape:
        return False
    a, b = clean.double(), moved.double()
    if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
        return False
    spread = float((a - a.mean()).abs().max())
    if spread <= 1e-6:  # a constant output says nothing about how it was normalized
        return False
    # Nearly every position, not every one: over a batch of two, some positions' batch
    # variance is near a hand-written eps; what is not invariant moves almost everywhere.
    moved_by = (a - b).abs().flatten()
    kept = max(1, int(INVARIANT_SHARE * moved_by.numel()))
    return float(moved_by.kthvalue(kept).values) <= INVARIANCE_TOLERANCE * spread


def _defined_at(cls: type) -> Site | None:
    """The lines of the class's definition (a batch reduction written inside a module
    measured as batch normalization is part of that one mistake)."""
    try:
        lines, first = inspect.getsourcelines(cls)
        file = inspect.getsourcefile(cls)
    except Exception:  # built in, defined in a notebook or a string, unreadable
        return None
    if not file or not lines:
        return None
    return Site(file, first, 1, first + len(lines) - 1, len(lines[-1].rstrip("\r\n")) + 1)


def _per_sample(out: Any, n: int) -> torch.Tensor | None:
    out = _first_tensor(out)
    return out if out is not None and out.dim() >= 1 and out.shape[0] == n else None


def _flattened(out: Any, n: int) -> torch.Tensor | None:
    """A 1-D output of n*k values (`.view(-1)` / `.flatten()` of a patch map), as (n, k)."""
    out = _first_tensor(out)
    if out is not None and out.dim() == 1 and out.numel() % n == 0:
        return out.reshape(n, -1)
    return None


def find_input(fresh: Pristine, example_input: Any = None, n: int = PROBE_BATCH,
               budget: Budget | None = None,
               ) -> tuple[MakeArgs | None, torch.Tensor | None, list[int], str, bool]:
    """(make_args, output at batch n, input shape, reason, flattened) for the first input
    whose output is per sample, else the first whose output is a flattened (sample-major)
    patch map, read back as (n, k)."""
    if example_input is not None:
        candidates = [(from_example(example_input), None)]
    else:
        made, reason = candidate_inputs(fresh.model)
        if not made:
            return None, None, [], reason, False
        candidates = made
    last = "no input shape gave a per-sample output"
    # A forward that ran says more than a larger size's error: a critic that averages its
    # scores over the batch (`output.mean(0).view(1)`) runs at its own size and fails at
    # every other, and the reason is its output, not the sizes.
    ran = ""
    fallback = None
    # The reason given is the largest image's: the waveform tried after it fails at the
    # first layer for any image model, which says nothing about why the images failed.
    rank = len(candidates[0][1]) if candidates[0][1] else None
    spent = 0.0  # the last attempt's time: the next, at a larger size, takes no less
    for make, rest in candidates:
        if budget is not None and budget.deadline is not None \
                and time.monotonic() + spent > budget.deadline:
            last = f"the input sizes tried took the time limit ({last})"
            break
        args = make(n)
        started = time.monotonic()
        try:
            out = _forward(fresh, args)
        except Exception as exc:  # wrong size: try the next one
            spent = time.monotonic() - started
            if rank is None or len(rest) == rank or last.startswith("no input shape"):
                last = one_line(exc)
            continue
        shape = list(args[0].shape) if isinstance(args[0], torch.Tensor) else []
        spent = time.monotonic() - started
        if budget is not None:
            budget.forward_seconds = spent
        per_sample = _per_sample(out, n)
        if per_sample is not None:
            return make, per_sample, shape, "", False
        first = _first_tensor(out)
        last = ("forward returned no tensor" if first is None
                else f"output shape {list(first.shape)} is not per sample "
                f"(input {'x'.join(map(str, shape))})")
        ran = ran or last
        if fallback is None and _flattened(out, n) is not None:
            fallback = (make, _flattened(out, n), shape)
    if fallback is not None:
        return (*fallback, "", True)
    return None, None, [], ran or last, False


def _output(out: Any, flattened: bool) -> torch.Tensor | None:
    return _flattened(out, PROBE_BATCH) if flattened else _per_sample(out, PROBE_BATCH)


def probe(fresh: Pristine, example_input: Any = None,
          budget: Budget | None = None) -> tuple[dict[str, Any], MakeArgs | None]:
    """The probe's verdict (the TargetFacts.probe dict) and the input maker it settled on
    (None when the probe found none, or had no time left for its forwards)."""
    result = empty_probe()
    try:
        make, y0, shape, reason, flattened = find_input(fresh, example_input, budget=budget)
    except Exception as exc:  # snlint's own failure on a strange model
        result["reason"] = one_line(exc)
        return result, None
    result["input_shape"] = shape
    if flattened:
        result["flattened_output"] = True
    if make is None or (budget is not None and not budget.allows(2)):
        result["reason"] = reason if make is None else budget.refusal(shape)
        return result, None
    try:
        args = make(PROBE_BATCH)
        again = _output(_forward(fresh, args), flattened)
        y1 = _output(_forward(fresh, _perturbed(args)), flattened)
    except Exception as exc:
        result["reason"] = one_line(exc)
        return result, make
    if again is None or again.shape != y0.shape or not torch.equal(
            torch.nan_to_num(again), torch.nan_to_num(y0)):
        result["reason"] = ("the same input gave another output on a second run (state the "
                            "probe cannot reset, or randomness it cannot seed)")
        return result, make
    if y1 is None or y1.shape != y0.shape:
        result["reason"] = "the output shape changed with the input"
        return result, make
    others0, others1 = y0[1:].double(), y1[1:].double()
    if not (torch.isfinite(others0).all() and torch.isfinite(others1).all()):
        result["reason"] = "non-finite output"
        return result, make
    change = float((others1 - others0).abs().max())
    scale = max(float(others0.abs().max()), 1e-6)
    coupled = change > RELATIVE_TOLERANCE * scale
    result.update(ran=True, coupled=coupled, change=change, scale=scale)
    if coupled:
        try:
            result["sources"] = coupling_sources(fresh, args, _perturbed(args))
        except Exception as exc:
            result["sources_reason"] = one_line(exc)
    return result, make
