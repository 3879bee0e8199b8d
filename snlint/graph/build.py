"""Building a discriminator class in the graph-pass worker (child process only).

The arguments come from the `[tool.snlint.models]` entry (used alone when given), else the
project's own construction sites (`GraphTarget.candidates`), the constructor's defaults,
and guesses by the parameters' names. At most `MAX_ATTEMPTS` calls; a failed one leaves no
torch state behind. `Built.built_with` says what built the model, or what was tried."""

from __future__ import annotations

import argparse
import functools
import gc
import inspect
import json
import pkgutil
import re
import types
from dataclasses import field
from typing import Any

from snlint.graph.facts import GraphTarget, Site, one_line
from snlint.graph.loader import error_site
from snlint.records import dataclass

MAX_ATTEMPTS = 8
GUESS_PROFILES = 4

_INPUT_CHANNELS = re.compile(
    r"^(num_?|n_)?((in|input|img|image)_?(ch|c|nc|chans?|channels?|planes|dim)|(c|ch|nc)_?in|nc|"
    r"channels?)$")
_CONFIG = re.compile(r"^(opts?|options?|args?|arguments|cfg|config|conf|configs?|hparams|hps?|h|params|"
                     r"settings|flags|model_?cfg|model_?config)$", re.I)
_FLAG = re.compile(r"^(use|no|is|with|enable|disable|do)_|^(sn|spectral|spectral_?norm|bias|affine)$", re.I)
_LATENT = re.compile(r"latent|z_?dim|^nz$|^z$|noise|code_?dim|style_?dim|w_?dim", re.I)
_NESTED = re.compile(r"^(model|models|net|network|arch|disc|discriminator|d|D|dis|critic|train|data)$")

# Guessed values by what a parameter's name says it is; profile i takes item i (cycling).
GUESSES: dict[str, tuple[Any, ...]] = {
    "classes": (10,),
    "channels": (3, 1, 3, 3),
    "period": (2,),
    "latent": (100, 128),
    "size": (64, 32, 128, 256),
    "layers": (3,),
    "width": (64, 32, 64, 64),
    "flag": (False,),
    "float": (0.2,),
    "other": (1,),
}


def category(name: str, annotation: Any = inspect.Parameter.empty) -> str:
    """What kind of value a parameter (or a config attribute) named so most likely holds."""
    ann = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    if ann in ("bool",):
        return "flag"
    if ann in ("float",):
        return "float"
    if ann in ("Namespace", "dict", "Dict", "DictConfig", "EasyDict", "AttrDict") or _CONFIG.match(name):
        return "config"
    low = name.lower()
    if "class" in low or low in ("n_cls", "num_labels", "nlabels", "n_labels"):
        return "classes"
    if _INPUT_CHANNELS.match(low):
        return "channels"
    if "period" in low:
        return "period"
    if low.endswith("shape"):
        return "shape"
    if _LATENT.search(low):
        return "latent"
    if _FLAG.search(name):
        return "flag"
    if any(k in low for k in ("layer", "depth", "blocks", "n_dis", "num_d")):
        return "layers"
    if any(k in low for k in ("size", "res", "img", "image", "height", "length")):
        return "size"
    if any(k in low for k in ("ch", "nf", "df", "dim", "width", "feat", "hidden", "out", "planes", "nc")):
        return "width"
    return "other"


def _guess_plain(name: str, profile: int, annotation: Any = inspect.Parameter.empty) -> Any:
    kind = category(name, annotation)
    if kind == "shape":
        # `input_shape` / `img_shape` is unpacked as (C, H, W) by the classes that take it.
        size = GUESSES["size"][profile % len(GUESSES["size"])]
        return (GUESSES["channels"][profile % len(GUESSES["channels"])], size, size)
    values = GUESSES["other" if kind == "config" else kind]
    return values[profile % len(values)]


class _Guesses:
    """What one attempt guessed: `name=value` texts, in the order the class asked."""

    def __init__(self, profile: int, options: dict[str, dict[str, Any]] | None = None) -> None:
        self.profile = profile
        self.options = options or {}
        self.made: list[str] = []
        self.declared: list[str] = []  # "opt.norm_D='x': --norm_D default at o.py:9"
        self.objects = 0  # guessing namespaces/dicts handed out

    def value(self, path: str, name: str) -> Any:
        option = self.options.get(name)
        if option is not None:
            # The project declares this option somewhere (an options class the
            # interpreter did not run for this `opt`): its default, not a guess.
            self.declared.append(f"{path}={option['value']!r}: --{name} default at {option['where']}")
            return option["value"]
        if category(name) == "config" or _NESTED.match(name):
            return self.attr_dict({}, path)
        value = _guess_plain(name, self.profile)
        self.made.append(f"{path}={value!r}")
        return value

    def attr_dict(self, items: dict[str, Any], path: str) -> Any:
        """A dict read by attribute (EasyDict-like) that answers a missing key with a guess."""
        self.objects += 1
        guesses = self

        class AttrDict(dict):
            def __getattr__(self, name: str) -> Any:
                if name.startswith("__"):
                    raise AttributeError(name)
                return self[name]

            def __setattr__(self, name: str, value: Any) -> None:
                self[name] = value

            def __missing__(self, key: Any) -> Any:
                if not isinstance(key, str) or key.startswith("__"):
                    raise KeyError(key)
                value = guesses.value(f"{path}.{key}", key)
                dict.__setitem__(self, key, value)
                return value

        return AttrDict(items)

    def namespace(self, attrs: dict[str, Any], path: str) -> Any:
        self.objects += 1
        guesses = self

        class Namespace(argparse.Namespace):
            def __getattr__(self, name: str) -> Any:  # only for attributes nobody set
                if name.startswith("__"):
                    raise AttributeError(name)
                value = guesses.value(f"{path}.{name}", name)
                setattr(self, name, value)
                return value

        return Namespace(**attrs)


class _Unknown(Exception):
    """A spec the worker cannot turn into an object: the argument counts as not passed."""


def decode(spec: Any, guesses: _Guesses, path: str) -> Any:
    """An object from a value spec (snlint.link.arguments); an untagged dict (a
    [tool.snlint.models] table) becomes an attribute dict."""
    if isinstance(spec, list):
        return [decode(s, guesses, f"{path}[{i}]") for i, s in enumerate(spec)]
    if not isinstance(spec, dict):
        return spec
    kind = spec.get("$")
    if kind is None:
        return guesses.attr_dict({k: decode(v, guesses, f"{path}.{k}") for k, v in spec.items()}, path)
    if kind == "tuple":
        return tuple(decode(s, guesses, f"{path}[{i}]") for i, s in enumerate(spec["items"]))
    if kind == "dict":
        items = {k: decode(v, guesses, f"{path}.{k}") for k, v in spec["items"]}
        return guesses.attr_dict(items, path) if spec.get("attrs") else items
    if kind == "namespace":
        attrs = {k: decode(v, guesses, f"{path}.{k}") for k, v in spec["attrs"].items()}
        return guesses.namespace(attrs, path)
    if kind == "torch":
        return _torch_name(spec["name"])
    if kind == "partial":
        return functools.partial(decode(spec["func"], guesses, path),
                                 *[decode(a, guesses, path) for a in spec["args"]],
                                 **{k: decode(v, guesses, path) for k, v in spec["kwargs"].items()})
    raise _Unknown(kind)


def _torch_name(name: str) -> Any:
    try:
        return pkgutil.resolve_name(name)
    except (ImportError, AttributeError, ValueError):
        raise _Unknown(name) from None


@dataclass
class Plan:
    """One way to call the constructor: what a source gives, the rest filled in."""

    label: str  # "as in train.py:88", "[tool.snlint.models]", "" (defaults and guesses)
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    profile: int = 0
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # GraphTarget.options
    source: str = "defaults"  # "configured", "project" or "defaults": see `Call.arguments`


@dataclass
class Call:
    args: list[Any]
    kwargs: dict[str, Any]
    guesses: _Guesses
    notes: list[str]  # "ndf=64: argparse default at train.py:12"
    guessed: list[str]  # parameters guessed outright: "in_ch=3"
    label: str
    configs: list[str] = field(default_factory=list)  # config parameters given a guessing dict
    source: str = "defaults"
    unknown: list[str] = field(default_factory=list)  # arguments passed that could not be read

    def arguments(self) -> str:
        """How the arguments were chosen, which decides what the facts may clear
        (`snlint.link.join.may_clear`): "configured", "project" (a construction site, every
        argument read), "defaults", or "guessed" (a value guessed, or an argument unread)."""
        unread_configs = [c for c in self.configs
                          if not any(d.startswith(c + ".") for d in self.guesses.declared)]
        if self.guessed or self.guesses.made or self.unknown or unread_configs:
            return "guessed"
        return self.source

    def key(self) -> str:
        shown = repr((self.args, sorted(self.kwargs.items())))
        return shown + (f"#{self.guesses.profile}" if self.guesses.objects else "")

    def describe(self, built: bool) -> str:
        guessed = self.guessed + self.guesses.made
        guessed += [f"{c}={{}}" for c in self.configs if not any(
            g.startswith(c + ".") for g in guessed + self.guesses.declared)]
        declared = self.guesses.declared[:3] + (
            [f"{len(self.guesses.declared) - 3} more option defaults"]
            if len(self.guesses.declared) > 3 else [])
        if self.label or (declared and not guessed):
            details = list(self.notes) + declared
            if guessed:
                details.append("guessed " + ", ".join(guessed))
            label = self.label or "with the project's option defaults"
            text = label + (f" ({'; '.join(details)})" if details else "")
            return ("built " if built else "") + text
        if guessed:
            shown = f" (and {'; '.join(declared)})" if declared else ""
            return ("built with " if built else "") + "guessed sizes: " + ", ".join(guessed) + shown
        return "built with its defaults" if built else "its defaults"


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _required(params: list[inspect.Parameter]) -> list[inspect.Parameter]:
    return [p for p in params if p.default is inspect.Parameter.empty and p.kind not in _VARIADIC]


def _shown(value: Any) -> str:
    if isinstance(value, (dict, argparse.Namespace)):
        return ""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def resolve(params: list[inspect.Parameter], plan: Plan) -> Call:
    """The call a plan makes: its values bound to the parameters, defaults where it gives
    none, guesses for the required ones."""
    guesses = _Guesses(plan.profile, plan.options)
    values: dict[str, Any] = {}
    notes: list[str] = []
    unknown: list[str] = []
    extra_pos: list[Any] = []
    extra_kw: dict[str, Any] = {}
    positional = [p for p in params if p.kind in _POSITIONAL]
    var_pos = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    by_name = {p.name: p for p in params if p.kind not in _VARIADIC}

    def note(key: str, name: str, value: Any) -> None:
        origin = plan.origins.get(key)
        if origin:
            shown = _shown(value)
            notes.append(f"{name}={shown}: {origin}" if shown else f"{name}: {origin}")

    for i, spec in enumerate(plan.args):
        name = positional[i].name if i < len(positional) else f"*{i}"
        try:
            value = decode(spec, guesses, name)
        except _Unknown:
            if i >= len(positional):
                raise
            unknown.append(name)
            continue
        if i < len(positional):
            values[name] = value
        elif var_pos:
            extra_pos.append(value)
        else:
            raise _Unknown("too many positional arguments")
        note(str(i), name, value)
    for name, spec in plan.kwargs.items():
        try:
            value = decode(spec, guesses, name)
        except _Unknown:
            unknown.append(name)
            continue
        if name in by_name:
            values[name] = value
        elif var_kw:
            extra_kw[name] = value
        else:
            raise _Unknown(f"unexpected argument {name}")
        note(name, name, value)
    guessed: list[str] = []
    configs: list[str] = []
    for p in _required(params):
        if p.name in values:
            continue
        if category(p.name, p.annotation) == "config":
            values[p.name] = guesses.attr_dict({}, p.name)
            configs.append(p.name)
            continue
        values[p.name] = _guess_plain(p.name, plan.profile, p.annotation)
        guessed.append(f"{p.name}={values[p.name]!r}")
    if extra_pos or any(by_name[n].kind is inspect.Parameter.POSITIONAL_ONLY for n in values):
        last = max((i for i, p in enumerate(positional) if p.name in values), default=-1)
        args = [values.pop(p.name, p.default) for p in positional[:last + 1]] + extra_pos
    else:
        args = []
    return Call(args, {**values, **extra_kw}, guesses, notes, guessed, plan.label, configs,
                plan.source, unknown)


def plans(target: GraphTarget, params: list[inspect.Parameter]) -> list[Plan]:
    options = dict(target.options or {})
    if target.kwargs is not None:
        return [Plan("with the [tool.snlint.models] arguments", kwargs=dict(target.kwargs),
                     options=options, source="configured")]
    out = [Plan(c.get("source", "as in the project"), list(c.get("args", [])), dict(c.get("kwargs", {})),
                dict(c.get("origins", {})), options=options, source="project")
           for c in target.candidates or []]
    out.append(Plan("", options=options))
    if _required(params):
        out.extend(Plan("", profile=k, options=options) for k in range(1, GUESS_PROFILES))
    return out


def _suggestion(target: GraphTarget, params: list[inspect.Parameter]) -> str:
    required = _required(params)
    if not required:
        return ""
    names = {p.name for p in params}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    given = {k: v for k, v in (target.kwargs or {}).items() if k in names or takes_any}
    parts = [f"{k} = {json.dumps(v)}" for k, v in given.items()]
    for p in required:
        if p.name not in given:
            value = "{ }" if category(p.name, p.annotation) == "config" else json.dumps(
                _guess_plain(p.name, 0, p.annotation))
            parts.append(f"{p.name} = {value}")
    return (f"; add [tool.snlint.models] \"{target.display}:{target.class_name}\" = "
            f"{{ {', '.join(parts)} }}")


@dataclass
class Built:
    model: Any
    message: str = ""
    site: Site | None = None
    built_with: str = ""
    arguments: str = ""  # `Call.arguments` of the call that built it


def build(module: types.ModuleType, target: GraphTarget) -> Built:
    """The model, or why no attempt built it; either way, which arguments were used."""
    import torch
    from torch import nn

    from snlint.graph import classes

    obj = classes.find(module, target.class_name, target.line)
    if obj is None:
        return Built(None, f"{target.class_name} is not defined in {target.display}")
    if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
        return Built(None, f"{target.class_name} is not an nn.Module class")
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        params = []
    calls: list[Call] = []
    seen: set[str] = set()
    unfit: list[str] = []
    for plan in plans(target, params):
        try:
            call = resolve(params, plan)
        except _Unknown as exc:
            unfit.append(f"{plan.label or 'guesses'}: {exc}")
            continue
        if call.key() not in seen:
            seen.add(call.key())
            calls.append(call)
    calls = calls[:MAX_ATTEMPTS]
    message, site = "", None
    tried: list[str] = []
    # The constructor raised with the arguments the project itself passes, every one read:
    # the failure is the project's code, and its message is that attempt's.
    own_failed = False
    for call in calls:
        rng, dtype, grad = torch.get_rng_state(), torch.get_default_dtype(), torch.is_grad_enabled()
        # Every build starts from one seed: a target's weights (and the probe's verdict on
        # them) do not depend on which targets the worker built before it.
        torch.manual_seed(0)
        try:
            model = obj(*call.args, **call.kwargs)
            if not isinstance(model, nn.Module):
                raise TypeError(f"{target.class_name}() did not return an nn.Module")
            model.train()
        except BaseException as exc:  # noqa: BLE001 - the user's constructor may raise anything
            if not own_failed:
                about_arguments = about_constructor_arguments(exc) and call.arguments() != "project"
                message = f"{target.class_name}() raised {one_line(exc)}" + (
                    "" if about_arguments else ", an error in the project's code")
                site = error_site(exc.__traceback__)
                own_failed = call.arguments() == "project"
            tried.append(call.describe(built=False))
            del exc
            # A failed attempt leaves no torch state behind.
            torch.set_rng_state(rng)
            torch.set_default_dtype(dtype)
            torch.set_grad_enabled(grad)
            gc.collect()
            continue
        return Built(model, built_with="" if not params else call.describe(built=True),
                     arguments=call.arguments())
    if not calls:
        return Built(None, f"no argument set fits {target.class_name}'s signature "
                           f"({'; '.join(unfit)}){_suggestion(target, params)}")
    if not params:
        return Built(None, message, site)
    listed = "; ".join(f"({i}) {t}" for i, t in enumerate(tried, 1))
    count = f"{len(tried)} argument set{'s' if len(tried) != 1 else ''}"
    # A [tool.snlint.models] entry helps where the arguments were wrong, not where the
    # project's own code fails (a NameError, an import inside __init__).
    suggestion = _suggestion(target, params) if about_arguments else ""
    return Built(None, message, site, f"tried {count}: {listed}{suggestion}")


def about_constructor_arguments(exc: BaseException) -> bool:
    """Whether a constructor's failure may be about its arguments: a TypeError or any error
    from guessed values, not one the project's code raises whatever the arguments."""
    return not isinstance(exc, (NameError, ImportError, SyntaxError,
                                NotImplementedError, RecursionError))
