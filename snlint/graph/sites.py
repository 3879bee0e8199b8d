"""Construction and SN-application sites, and the per-layer facts of a built model (where
torch is imported: the worker, or `snlint.audit` in-process).

`nn.Module.__init__`, `SpectralNorm.apply` and `parametrize.register_parametrization` are
wrapped to record, from the call stack, where each module was built and each SN applied
(torch looks them up at call time, so names imported earlier are caught). `co_positions()`
at the frame's `f_lasti` gives the call's column range, which tells apart layers on one line."""

from __future__ import annotations

import ast
import functools
import gc
import inspect
import linecache
import os
import sys
import sysconfig
import threading
import types
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator

import torch
from torch import nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import _SpectralNorm, _WeightNorm
from torch.nn.utils.spectral_norm import SpectralNorm
from torch.nn.utils.weight_norm import WeightNorm

from snlint.graph.facts import LeafFacts, Site, SNState
from snlint.torchapi import KINDS

_BUILT = "_snlint_built"  # module.__dict__ key: (site, origin, param_site, via)
_NOT_BUILT = (None, None, None, ())
_KEPT_IN_EVAL = "_snlint_kept_in_eval"  # module.__dict__ key: `.eval()` in an __init__
# On SpectralNorm hooks and _SpectralNorm parametrizations: (SN call site, `dim=` site).
_SN_CALL = "_snlint_sn_call"

# ---------------------------------------------------------------------------------------
# Which frames are the user's


def _dir(path: str | None) -> str | None:
    return os.path.normcase(os.path.abspath(path)) + os.sep if path else None


_TORCH_DIR = _dir(os.path.dirname(torch.__file__))
_SNLINT_DIR = _dir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_LIBRARY_DIRS = tuple(sorted({d for d in (
    _dir(sysconfig.get_paths().get(key)) for key in ("stdlib", "platstdlib", "purelib", "platlib")
) if d}))


@functools.lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """A frame in the user's code: not torch, not snlint, not the standard library or an
    installed package (a block from an installed library is seen at the user's call)."""
    if not filename:
        return False
    if filename.startswith("<"):
        return filename.startswith("<ipython-input")
    path = os.path.normcase(os.path.abspath(filename))
    if path.startswith((_TORCH_DIR, _SNLINT_DIR)):
        return False
    if os.sep + "site-packages" + os.sep in path or os.sep + "dist-packages" + os.sep in path:
        return False
    return not path.startswith(_LIBRARY_DIRS)


# ---------------------------------------------------------------------------------------
# Positions

_Pos = tuple  # (file, line, end_line, byte_col | None, byte_end_col | None)


@functools.lru_cache(maxsize=4096)
def _positions(code: types.CodeType) -> list[tuple]:
    return list(code.co_positions()) if hasattr(code, "co_positions") else []


def code_pos(code: types.CodeType, lasti: int, lineno: int | None) -> _Pos:
    """The source range of the instruction at byte offset `lasti` of `code`."""
    positions = _positions(code)
    index = lasti // 2
    line = end_line = col = end_col = None
    if 0 <= index < len(positions):
        line, end_line, col, end_col = positions[index]
    if line is None:
        line, end_line, col, end_col = lineno or code.co_firstlineno, None, None, None
    return (code.co_filename, line, end_line or line, col, end_col)


def frame_pos(frame: types.FrameType) -> _Pos:
    return code_pos(frame.f_code, frame.f_lasti, frame.f_lineno)


def user_pos(frame: types.FrameType | None) -> _Pos | None:
    """The position in the innermost user frame, from `frame` outwards."""
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame_pos(frame) if frame is not None else None


def _char_col(text: str, byte_col: int) -> int:
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def to_site(pos: _Pos | None) -> Site | None:
    """Byte offsets (0-based, as code objects and ast count) to a 1-based character Site."""
    if pos is None:
        return None
    file, line, end_line, col, end_col = pos
    text = linecache.getline(file, line)
    if col is None or end_col is None or not text:
        stripped = text.rstrip("\r\n")
        start = len(stripped) - len(stripped.lstrip())
        return Site(file, line, start + 1, line, max(len(stripped), start + 1) + 1)
    end_text = text if end_line == line else linecache.getline(file, end_line)
    return Site(file, line, _char_col(text, col) + 1, end_line, _char_col(end_text, end_col) + 1)


def node_pos(file: str, node: ast.AST) -> _Pos:
    return (file, node.lineno, node.end_lineno, node.col_offset, node.end_col_offset)


# ---------------------------------------------------------------------------------------
# Source trees (to find the `dim=` argument and a `norm_layer=` parameter node)

@functools.cache
def parse(file: str) -> tuple[ast.AST | None, dict]:
    """The parsed file and its calls by exact position."""
    try:
        tree = ast.parse("".join(linecache.getlines(file)))
    except (SyntaxError, ValueError):
        return None, {}
    calls = {(node.lineno, node.end_lineno, node.col_offset, node.end_col_offset): node
             for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return tree, calls


def call_at(pos: _Pos) -> ast.Call | None:
    file, line, end_line, col, end_col = pos
    if col is None:
        return None
    return parse(file)[1].get((line, end_line, col, end_col))


def clear_caches() -> None:
    """Forget parsed files (audit() calls this: files may change between calls)."""
    parse.cache_clear()
    linecache.checkcache()


def _dim_site(pos: _Pos) -> Site | None:
    """The `dim=` argument of the SN call at `pos` (keyword, or the fifth positional)."""
    call = call_at(pos)
    if call is None:
        return None
    for kw in call.keywords:
        if kw.arg == "dim":
            return to_site(node_pos(pos[0], kw))
    if len(call.args) >= 5 and not any(isinstance(a, ast.Starred) for a in call.args[:5]):
        return to_site(node_pos(pos[0], call.args[4]))
    return None


# ---------------------------------------------------------------------------------------
# The stack walk


def _first_arg(frame: types.FrameType) -> Any:
    code = frame.f_code
    if code.co_argcount == 0:
        return None
    return frame.f_locals.get(code.co_varnames[0])


_COMPREHENSIONS = frozenset({"<listcomp>", "<genexpr>", "<setcomp>", "<dictcomp>"})


def _user_frames(built: Any = None) -> tuple[list[types.FrameType], int]:
    """User frames from the innermost outwards, up to the first that is a method of another
    nn.Module (the layer as seen from its owner), and that frame's index or -1. Frames whose
    first argument is `built` (the module's own `__init__` chain) are skipped."""
    frames: list[types.FrameType] = []
    frame = sys._getframe(1)
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            first = _first_arg(frame)
            if built is None or first is not built:
                frames.append(frame)
                if isinstance(first, nn.Module):
                    return frames, len(frames) - 1
        frame = frame.f_back
    return frames, -1


def _function_of(frame: types.FrameType) -> Any:
    code = frame.f_code
    first = _first_arg(frame)
    if first is not None:
        for klass in type(first).__mro__:
            fn = klass.__dict__.get(code.co_name)
            fn = getattr(fn, "__func__", fn)
            if getattr(fn, "__code__", None) is code:
                return fn
    fn = frame.f_globals.get(code.co_name)
    if getattr(fn, "__code__", None) is code:
        return fn
    for ref in gc.get_referrers(code):
        if isinstance(ref, types.FunctionType) and ref.__code__ is code:
            return ref
    return None


def _param_default_site(frame: types.FrameType, pos: _Pos) -> Site | None:
    """The whole parameter node (`norm_layer=nn.BatchNorm2d`) when the call at `pos` calls a
    parameter of the frame holding its default: this function's, or a caller's that handed
    its own on."""
    call = call_at(pos)
    if call is None or not isinstance(call.func, ast.Name):
        return None
    return _default_site(frame, call.func.id, depth=0)


_MAX_HANDED_ON = 8


def _default_site(frame: types.FrameType, name: str, depth: int) -> Site | None:
    """The default of parameter `name` of the frame's function when the value it holds came
    from one: its own, or the caller's handed on as the caller's own parameter
    (`super().__init__(nc, ndf, norm_layer)`). A value the caller wrote itself came from no
    default, even when it is the same object."""
    code = frame.f_code
    if name not in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
        return None
    fn = _function_of(frame)
    if fn is None:
        return None
    try:
        default = inspect.signature(fn).parameters[name].default
    except (KeyError, TypeError, ValueError):
        return None
    if default is inspect.Parameter.empty or frame.f_locals.get(name) is not default:
        return None
    handed = _passed_by_caller(frame, name)
    if handed is not None:
        caller, given = handed
        if isinstance(given, ast.Name) and depth < _MAX_HANDED_ON:
            return _default_site(caller, given.id, depth + 1)
        return None
    file = code.co_filename
    tree = parse(file)[0]
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != code.co_name:
            continue
        if code.co_firstlineno not in {node.lineno, *(d.lineno for d in node.decorator_list)}:
            continue
        a = node.args
        positional = a.posonlyargs + a.args
        pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
        pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        for arg, default_node in pairs:
            if arg.arg == name:
                return to_site((file, arg.lineno, default_node.end_lineno, arg.col_offset,
                                default_node.end_col_offset))
    return None


_FROM_A_CONTAINER = ast.Constant(None)  # passed inside `*args` / `**kwargs`


def _passed_by_caller(frame: types.FrameType, name: str) -> tuple[types.FrameType, ast.expr] | None:
    """(the caller's frame, the expression it passed as `name`) when the call that made this
    frame passed it; None when it did not, or when that cannot be told (a caller outside the
    user's code, a `*args`/`**kwargs` that is not a local list or dict)."""
    caller = frame.f_back
    if caller is None or not is_user_file(caller.f_code.co_filename):
        return None
    call = call_at(frame_pos(caller))
    if call is None:
        return None
    for keyword in call.keywords:
        if keyword.arg == name:
            return caller, keyword.value
        if keyword.arg is None:
            given = _local_value(caller, keyword.value)
            if isinstance(given, dict) and name in given:
                return caller, _FROM_A_CONTAINER
    code = frame.f_code
    positional = list(code.co_varnames[: code.co_argcount])
    if name not in positional:
        return None
    # A method's `self` (`cls`) is not written at the call: `Cls(...)`, `obj.m(...)`,
    # `super().__init__(...)`.
    bound = bool(positional) and positional[0] in ("self", "cls") and _first_arg(frame) is not None
    index = positional.index(name) - (1 if bound else 0)
    written: list[ast.expr] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            given = _local_value(caller, arg.value)
            if not isinstance(given, (list, tuple)):
                return None
            written += [_FROM_A_CONTAINER] * len(given)
        else:
            written.append(arg)
    if 0 <= index < len(written):
        return caller, written[index]
    return None


def _local_value(frame: types.FrameType, node: ast.expr) -> Any:
    return frame.f_locals.get(node.id) if isinstance(node, ast.Name) else None


def _construction_record(module: nn.Module) -> tuple:
    frames, owner = _user_frames(built=module)
    if not frames:
        return _NOT_BUILT
    origin_pos = frame_pos(frames[0])
    owner = max(owner, 0)
    # A comprehension inside the owner's method is part of that method.
    while owner > 0 and frames[owner - 1].f_code.co_name in _COMPREHENSIONS:
        owner -= 1
    site_frame = frames[owner]
    site_pos = origin_pos if owner == 0 else frame_pos(site_frame)
    param_site = _param_default_site(site_frame, site_pos)
    # The calls between the literal and the owner's line (helpers calling helpers): the
    # source pass may report the layer at any of them.
    via = tuple(to_site(frame_pos(f)) for f in frames[1:owner])
    return to_site(site_pos), to_site(origin_pos), param_site, via


def _called_from_init() -> bool:
    """`.eval()` / `.train(False)` called from a module's `__init__`: a frozen part meant
    to stay in eval mode, as the source pass reads it (an `.eval()` in training code is for
    validation)."""
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename.startswith(_TORCH_DIR)
                                 or frame.f_code.co_filename == __file__):
        frame = frame.f_back
    return (frame is not None and frame.f_code.co_name == "__init__"
            and isinstance(frame.f_locals.get("self"), nn.Module))


def _sn_call() -> tuple[Site | None, Site | None]:
    """The SN call's site and its `dim=` argument's."""
    try:
        frames, _ = _user_frames()
        if not frames:
            return None, None
        pos = frame_pos(frames[0])
        return to_site(pos), _dim_site(pos)
    except Exception:  # never let site bookkeeping break the user's model
        return None, None


# ---------------------------------------------------------------------------------------
# Recording (install / uninstall the wrappers)

_lock = threading.Lock()
_depth = 0
_originals: dict[str, Any] = {}


def _install() -> None:
    orig_init = nn.Module.__init__
    orig_apply = SpectralNorm.apply
    orig_register = parametrize.register_parametrization
    orig_train = nn.Module.train
    _originals.update(init=orig_init, apply=orig_apply, register=orig_register, train=orig_train)

    @functools.wraps(orig_train)
    def train(self, mode=True):
        result = orig_train(self, mode)
        if not mode:
            try:
                if _called_from_init():
                    for m in self.modules():
                        object.__setattr__(m, _KEPT_IN_EVAL, True)
            except Exception:  # never let bookkeeping break the user's model
                pass
        return result

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        if _BUILT not in self.__dict__:
            try:
                record = _construction_record(self)
            except Exception:  # never let site bookkeeping break the user's model
                record = _NOT_BUILT
            object.__setattr__(self, _BUILT, record)

    @functools.wraps(orig_apply)
    def apply(module, name, n_power_iterations, dim, eps):
        fn = orig_apply(module, name, n_power_iterations, dim, eps)
        setattr(fn, _SN_CALL, _sn_call())
        return fn

    @functools.wraps(orig_register)
    def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
        result = orig_register(module, tensor_name, parametrization, unsafe=unsafe)
        if isinstance(parametrization, _SpectralNorm):
            object.__setattr__(parametrization, _SN_CALL, _sn_call())
        return result

    nn.Module.__init__ = __init__
    nn.Module.train = train
    SpectralNorm.apply = staticmethod(apply)
    parametrize.register_parametrization = register_parametrization


def _uninstall() -> None:
    nn.Module.__init__ = _originals["init"]
    nn.Module.train = _originals["train"]
    SpectralNorm.apply = staticmethod(_originals["apply"])
    parametrize.register_parametrization = _originals["register"]


def install() -> None:
    global _depth
    with _lock:
        if _depth == 0:
            _install()
        _depth += 1


def uninstall() -> None:
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0:
            _uninstall()


@contextmanager
def recording() -> Iterator[None]:
    """Record construction and SN sites for modules built inside the block."""
    install()
    try:
        yield
    finally:
        uninstall()


def construction(module: nn.Module) -> tuple:
    """(site as seen from the owner, innermost origin, norm_layer-default parameter, the
    user calls between the origin and the site)."""
    return module.__dict__.get(_BUILT) or _NOT_BUILT


# ---------------------------------------------------------------------------------------
# Layer kinds and SN state

_m = nn.modules
_SAMPLE_NORMS = tuple(c for c in (
    _m.instancenorm._InstanceNorm, nn.LayerNorm, nn.GroupNorm, getattr(nn, "RMSNorm", None),
    nn.LocalResponseNorm, nn.CrossMapLRN2d,
) if c is not None)
# The first of these a module is an instance of gives its kind: torch's private bases of
# the public layers (`_ConvNd`, `_InstanceNorm`) catch subclasses the name table
# (`torchapi.KINDS`, the one the source pass uses) does not know; a torch module's own
# file decides the rest.
_KIND_BY_CLASS = (
    (nn.MultiheadAttention, "attention"),
    (_m.conv._ConvTransposeNd, "conv_transpose"),
    (_m.conv._ConvNd, "conv"),
    ((nn.Linear, nn.Bilinear), "linear"),
    (_m.batchnorm._BatchNorm, "batch_norm"),
    (_SAMPLE_NORMS, "sample_norm"),
    ((nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict),
     "container"),
    ((nn.Identity, nn.Flatten, nn.Unflatten), "identity"),
    ((nn.Upsample, nn.PixelShuffle, nn.PixelUnshuffle), "upsample"),
)
_KIND_BY_TORCH_MODULE = {
    "torch.nn.modules.activation": "activation",
    "torch.nn.modules.pooling": "pooling",
    "torch.nn.modules.dropout": "dropout",
    "torch.nn.modules.upsampling": "upsample",
    "torch.nn.modules.padding": "padding",
    "torch.nn.modules.sparse": "embedding",
}
_WRAPPERS_NOT_SN = ("DataParallel", "DistributedDataParallel")


def base_class(module: nn.Module) -> type:
    """The user's class, not torch's generated `ParametrizedConv2d`."""
    cls = type(module)
    if parametrize.is_parametrized(module) and cls.__name__.startswith("Parametrized"):
        return cls.__mro__[1]
    return cls


def type_name(cls: type) -> str:
    """The name a user knows: torch's private subclasses by their public base
    (`NonDynamicallyQuantizableLinear`, MultiheadAttention's out_proj, is a Linear)."""
    if not cls.__module__.startswith("torch."):
        return cls.__name__
    for klass in cls.__mro__:
        if getattr(nn, klass.__name__, None) is klass:
            return klass.__name__
    return cls.__name__


def kind_of(module: nn.Module) -> str:
    for classes, kind in _KIND_BY_CLASS:
        if isinstance(module, classes):
            return kind
    for klass in base_class(module).__mro__:
        if getattr(nn, klass.__name__, None) is klass and KINDS.get(klass.__name__, "module") != "module":
            return KINDS[klass.__name__]
        kind = _KIND_BY_TORCH_MODULE.get(getattr(klass, "__module__", ""))
        if kind:
            return kind
    return "other"


def _shape(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, torch.Tensor) and not isinstance(value, nn.parameter.UninitializedParameter):
        return tuple(int(s) for s in value.shape)
    return None


def original(module: nn.Module, name: str) -> Any:
    """The tensor SN (or another reparametrization) works on, without computing it."""
    if parametrize.is_parametrized(module, name):
        plist = module.parametrizations[name]
        return getattr(plist, "original", getattr(plist, "original0", None))
    for suffix in ("_orig", "_bar"):
        value = stored(module, name + suffix, ("_parameters",))
        if isinstance(value, torch.Tensor):
            return value
    return stored(module, name)


def stored(module: nn.Module, name: str, registries: tuple = ("_parameters", "_buffers")) -> Any:
    """`name` from the module's registries, else its plain attribute: nothing computed."""
    for registry in registries:
        value = module.__dict__.get(registry, {}).get(name)
        if value is not None:
            return value
    return module.__dict__.get(name)


def _frozen(module: nn.Module) -> bool:
    params = list(module.parameters())
    return bool(params) and not any(p.requires_grad for p in params)


def weight_norm_api(module: nn.Module) -> str:
    """The weight normalization (not SN) on this module: "hook" for
    torch.nn.utils.weight_norm, "parametrization" for parametrizations.weight_norm."""
    if parametrize.is_parametrized(module):
        for plist in module.parametrizations.values():
            if any(isinstance(p, _WeightNorm) for p in plist):
                return "parametrization"
    if any(isinstance(h, WeightNorm) for h in module._forward_pre_hooks.values()):
        return "hook"
    return ""


def sn_states(module: nn.Module) -> list[SNState]:
    """Torch's SN on this module, in application order: parametrizations, then hooks."""
    states: list[SNState] = []
    if parametrize.is_parametrized(module):
        for name, plist in module.parametrizations.items():
            for p in plist:
                if isinstance(p, _SpectralNorm):
                    site, dim_site = p.__dict__.get(_SN_CALL, (None, None))
                    states.append(SNState("parametrization", name, int(p.dim), site,
                                          _shape(original(module, name)), dim_site))
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm):
            site, dim_site = getattr(hook, _SN_CALL, (None, None))
            states.append(SNState("hook", hook.name, int(hook.dim), site,
                                  _shape(original(module, hook.name)), dim_site))
    return states


def custom_sn_inner(wrapper: nn.Module) -> tuple[nn.Module, SNState] | None:
    """A hand-written SN wrapper (SAGAN's `SpectralNorm(module)` with weight_bar/u/v)."""
    inner = wrapper._modules.get("module")
    if not isinstance(inner, nn.Module) or type(wrapper).__name__ in _WRAPPERS_NOT_SN:
        return None
    name = getattr(wrapper, "name", "weight")
    name = name if isinstance(name, str) else "weight"
    has_bar = isinstance(stored(inner, name + "_bar"), torch.Tensor)
    if not has_bar and "spectral" not in type(wrapper).__name__.lower():
        return None
    dim = getattr(wrapper, "dim", 0)
    site = construction(wrapper)[1]  # the SN call: where the wrapper was built
    return inner, SNState("custom", name, dim if isinstance(dim, int) else 0, site,
                          _shape(original(inner, name)))


def module_facts(model: nn.Module) -> list[LeafFacts]:
    """Facts for every leaf module and every SN-wrapped module of `model`."""
    skip: set[int] = set()
    custom: dict[int, list[SNState]] = {}
    named = list(model.named_modules())
    by_path = dict(named)
    for _, m in named:
        if parametrize.is_parametrized(m):
            skip.update(id(x) for x in m.parametrizations.modules())
        found = custom_sn_inner(m)
        if found is not None:
            custom.setdefault(id(found[0]), []).append(found[1])

    leaves: list[tuple[str, nn.Module, list[SNState]]] = []
    for path, m in named:
        if id(m) in skip:
            continue
        states = sn_states(m) + custom.get(id(m), [])
        children = [c for n, c in m.named_children() if id(c) not in skip]
        if children and not states:
            continue
        leaves.append((path, m, states))

    counts = Counter((construction(m)[0], base_class(m)) for _, m, _ in leaves)

    out = []
    for path, m, states in leaves:
        site, origin, param_site, via = construction(m)
        cls = base_class(m)
        kind = kind_of(m)
        parent_path, _, leaf_name = path.rpartition(".")
        parent = by_path.get(parent_path) if path else None
        kernel = getattr(m, "kernel_size", None)
        uses_batch_stats = kind == "batch_norm" and (
            m.training or not getattr(m, "track_running_stats", True)
            or getattr(m, "running_mean", None) is None)
        out.append(LeafFacts(
            path=path,
            type_name=type_name(cls),
            type_qualname=f"{cls.__module__}.{cls.__qualname__}",
            kind=kind,
            kernel_size=tuple(int(k) for k in kernel) if isinstance(kernel, (tuple, list)) else (
                (int(kernel),) if isinstance(kernel, int) else None),
            weight_shape=_shape(original(m, "weight")),
            sn=states,
            site=site,
            instances=counts.get((site, cls), 1) if site is not None else 1,
            training=bool(m.training),
            bypassed_forward=isinstance(parent, nn.MultiheadAttention) and leaf_name == "out_proj",
            origin=origin,
            param_site=param_site,
            via=list(via),
            uses_batch_stats=bool(uses_batch_stats),
            weight_norm=weight_norm_api(m),
            kept_in_eval=bool(m.__dict__.get(_KEPT_IN_EVAL, False)),
            frozen=_frozen(m),
        ))
    return out
