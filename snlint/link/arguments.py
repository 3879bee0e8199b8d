"""The arguments a project builds its discriminator with, for the graph pass to reuse.

Parent side, torch-free. For each discriminator the link step found, the construction
sites the interpreter followed (`netD = Discriminator(opt)`, `self.D = Critic(ndf=opt.ndf)`,
a `define_D(...)` factory) give candidate argument sets whose values were evaluated
statically: literals, module constants, argparse defaults, dict / attribute-dict literals
and JSON/YAML files loaded by a literal path.

A candidate crosses the process boundary as JSON:
`{"source": "as in train.py:88", "args": [spec, ...], "kwargs": {name: spec},
  "origins": {"0" | name: "argparse default at train.py:12"}}`, where a spec is a JSON
scalar or list, or a tagged object (`{"$": kind, ...}`) that the worker turns into an
object (`snlint.graph.build.decode`). `{"$": "unknown"}` marks an argument the site passes
but snlint could not evaluate: the worker fills it as if nobody had passed it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from snlint.findings import Location
from snlint.link.resolve import KEY_NOT_KNOWN
from snlint.link.values import (
    ConstV, DictV, Layer, ListV, NameV, NamespaceV, PartialV, SNFuncV, TorchTypeV, TupleV, Value,
)
from snlint.torchapi import SN_HOOK, SN_PARAM

MAX_CANDIDATES = 4
UNKNOWN_SPEC: dict[str, Any] = {"$": "unknown"}
_SN_QUAL = {SN_HOOK: "torch.nn.utils.spectral_norm",
            SN_PARAM: "torch.nn.utils.parametrizations.spectral_norm"}


def spec_of(value: Value, depth: int = 0) -> Any:
    """The JSON spec of an interpreter value, or UNKNOWN_SPEC."""
    if depth > 8:
        return UNKNOWN_SPEC
    if isinstance(value, ConstV):
        v = value.value
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else UNKNOWN_SPEC
        if isinstance(v, tuple):
            return _sequence("tuple", [ConstV(x) for x in v], depth)
        return UNKNOWN_SPEC
    if isinstance(value, TupleV):
        return _sequence("tuple", list(value.items), depth)
    if isinstance(value, ListV) and value.kind == "list":
        return _sequence("list", value.items, depth)
    if isinstance(value, DictV):
        items = [[k, spec_of(v, depth + 1)] for k, v in value.items.items()
                 if isinstance(k, (str, int, bool)) and not isinstance(k, float)]
        # A key nobody could evaluate is left out: an attribute dict answers it with a guess.
        return {"$": "dict", "attrs": value.attrs,
                "items": [kv for kv in items if kv[1] != UNKNOWN_SPEC]}
    if isinstance(value, NamespaceV) and value.parsed:
        attrs = {k: spec_of(v, depth + 1) for k, v in value.attrs.items()}
        return {"$": "namespace", "attrs": {k: v for k, v in attrs.items() if v != UNKNOWN_SPEC}}
    if isinstance(value, TorchTypeV):
        return {"$": "torch", "name": f"torch.nn.{value.name}"}
    if isinstance(value, SNFuncV) and value.api in _SN_QUAL:
        return {"$": "torch", "name": _SN_QUAL[value.api]}
    if isinstance(value, NameV) and value.qual.startswith("torch.") and not value.qual.startswith("torch.<"):
        return {"$": "torch", "name": value.qual}
    if isinstance(value, PartialV):
        func = spec_of(value.func, depth + 1)
        args = [spec_of(a, depth + 1) for a in value.args]
        kwargs = {k: spec_of(v, depth + 1) for k, v in value.kwargs.items()}
        if func == UNKNOWN_SPEC or UNKNOWN_SPEC in args or UNKNOWN_SPEC in kwargs.values():
            return UNKNOWN_SPEC
        return {"$": "partial", "func": func, "args": args, "kwargs": kwargs}
    return UNKNOWN_SPEC


def _sequence(kind: str, items: list[Value], depth: int) -> Any:
    specs = [spec_of(i, depth + 1) for i in items]
    if UNKNOWN_SPEC in specs:
        return UNKNOWN_SPEC
    return specs if kind == "list" else {"$": "tuple", "items": specs}


def origin_of(value: Value) -> str:
    if isinstance(value, (ConstV, DictV, NamespaceV)):
        return value.origin
    return ""


def _is_site(instance: Layer) -> bool:
    """A construction the program performs, not snlint's own build of the class alone
    (`<build X>`) or an instance assumed from a parameter's annotation."""
    frame = instance.frame
    return frame.name != "<annotations>" and not (frame.parent is None and frame.name.startswith("<build "))


def _outermost_call(instance: Layer) -> Location | None:
    """The call in top-level code that led to the construction (`define_D(...)` in
    train.py for a discriminator built inside the factory)."""
    frame, call = instance.frame, None
    while frame.parent is not None:
        if frame.call_site is not None:
            call = frame.call_site
        frame = frame.parent
    return call


def _specs(instance: Layer) -> list[Any]:
    """[args, kwargs] of a construction, as specs."""
    kwargs = {k: spec_of(v) for k, v in instance.kwargs.items()}
    return [[spec_of(a) for a in instance.args], kwargs]


def site_specs(instances: list[Layer]) -> list[tuple[Location, list[Any]]]:
    """(the construction call, [args, kwargs] as specs) for each construction the program
    performs (`_is_site`)."""
    return [(inst.call, _specs(inst)) for inst in instances if _is_site(inst)]


def candidates_for(instances: list[Layer]) -> list[dict[str, Any]]:
    """Argument sets from the construction sites of one class, the best known first."""
    found: list[tuple[int, int, dict[str, Any]]] = []
    seen: set[str] = set()
    for order, inst in enumerate(instances):
        if not _is_site(inst):
            continue
        args, kwargs = _specs(inst)
        specs = args + list(kwargs.values())
        known = sum(1 for s in specs if s != UNKNOWN_SPEC)
        if specs and not known:
            continue  # nothing the site says that a guess would not
        if not known and KEY_NOT_KNOWN in " ".join(inst.via):
            # `sr_model = models.__dict__[arch]()` picked as the only discriminator class
            # for a key not known here: no argument a default build lacks, and no sign
            # the project builds the discriminator there (an inference script).
            continue
        key = json.dumps([args, kwargs], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        origins = {str(i): origin_of(a) for i, a in enumerate(inst.args) if origin_of(a)}
        origins.update({k: origin_of(v) for k, v in inst.kwargs.items() if origin_of(v)})
        source = f"as in {inst.call.path}:{inst.call.span.line}"
        outer = _outermost_call(inst)
        if outer is not None and outer != inst.call:
            source += f", called from {outer.path}:{outer.span.line}"
        found.append((-known, order, {"source": source, "args": args, "kwargs": kwargs,
                                      "origins": origins}))
    found.sort(key=lambda t: (t[0], t[1]))
    return [c for _, _, c in found[:MAX_CANDIDATES]]
