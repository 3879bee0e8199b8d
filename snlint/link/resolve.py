"""Which instance a call reaches when training code does not build it where it calls it:
through a factory (`define_D(opt.netD)`), a registry, a dict of classes indexed by a
configuration key, or a copy (`copy.deepcopy(netD)`). What they yield notes how
(`Layer.via`), so that a finding can say which path led to the instance it judged.
"""

from __future__ import annotations

from dataclasses import replace

from snlint import facts as F
from snlint.findings import Location
from snlint.link.configvalues import where
from snlint.link.events import DISCRIMINATOR_CLASS
from snlint.link.syntax import fact_children
from snlint.link.values import ClassV, ConstV, Layer, ModuleV, OneOfV, TupleV, Value

# `copy.deepcopy(netD)`: the copy has the original's layers.
COPIES = frozenset({"copy.deepcopy", "copy.copy"})
# Wrappers whose forward is the wrapped module's.
WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel"})
_REGISTER = ("register", "register_module")


def is_wrapper(qual: str) -> bool:
    return qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in WRAPPERS


def options(value: Value) -> list[Value]:
    return list(value.options) if isinstance(value, OneOfV) else [value]


def layers(value: Value) -> list[Layer]:
    return [v for v in options(value) if isinstance(v, Layer)]


def project_class(value: Value) -> str | None:
    """The qualified name of the project class `value` is an instance of, or is."""
    if isinstance(value, Layer) and value.cls is not None and value.kind not in ("object",):
        return value.cls.qualname
    if isinstance(value, ClassV):
        return value.cls.qualname
    return None


def one_of(a: Value, b: Value) -> Value | None:
    """Two values an undecided `if` leaves for one name: "one of" them when both are
    project modules (or classes) of different classes; None when that does not apply."""
    found = options(a) + options(b)
    if not found or any(project_class(v) is None for v in found):
        return None
    seen: dict[str, Value] = {}
    for v in found:
        seen.setdefault(project_class(v), v)  # type: ignore[arg-type]
    if len(seen) < 2:
        return None
    return OneOfV(tuple(seen.values()), "")


def of_dict(items: dict, text: str, at: Location) -> Value | None:
    """`{"dcgan": DCGAN_D, "resnet": ResNetD}[args.arch]` with an unknown key: one of the
    dict's classes (all project classes)."""
    values = list(items.values())
    if not values or not all(isinstance(v, ClassV) for v in values):
        return None
    names = len({v.cls.qualname for v in values})  # type: ignore[attr-defined]
    if names < 2:
        # Any key that works picks this class.
        only = values[0]
        return ClassV(only.cls, only.file,  # type: ignore[attr-defined]
                      f"the only class in {text or 'a dict'}, indexed at {where(at)}")
    return OneOfV(tuple(values), f"one of {names} classes {text or 'a dict'}[...] may pick")


def built_by(returned: Value, fn: F.FunctionFacts, sub_frame, call: Location,
             strings: list[tuple[str, ConstV]]) -> Value:
    """Note on what a factory returns that it built it, or one of several: `built by
    define_D() at train.py:40 (netD='basic', argparse default at train.py:12)`."""
    parts = [f"{name}={v.value!r}" + (f" from the {v.origin}" if v.origin else "") for name, v in strings]
    chosen = f" ({', '.join(parts)})" if parts else ""
    if isinstance(returned, TupleV):
        # `return d_net, g_net`: each of the networks a factory returns together.
        return TupleV(tuple(built_by(item, fn, sub_frame, call, strings) for item in returned.items))
    if isinstance(returned, OneOfV):
        if not any(layer.frame.is_within(sub_frame) for layer in layers(returned)):
            return returned  # passed through (`init_net(net)`), built elsewhere
        if not returned.why:
            classes = len({project_class(v) for v in returned.options})
            returned = OneOfV(returned.options, f"one of {classes} classes {fn.name}() may build")
        for layer in layers(returned):
            if layer.frame.is_within(sub_frame):
                said = any(v.startswith(returned.why) for v in layer.via)
                layer.via.append(f"{'built by ' + fn.name + '()' if said else returned.why} at {where(call)}{chosen}")
        return returned
    if isinstance(returned, Layer) and returned.cls is not None and returned.frame.is_within(sub_frame):
        returned.via.append(f"built by {fn.name}() at {where(call)}{chosen}")
    return returned


def deciding(fn: F.FunctionFacts) -> set[str]:
    """Parameters of a factory worth naming in the path: those its body compares (the
    string that picks a class) and norm choices (they decide batch statistics)."""
    names = {p.name for p in fn.params if "norm" in p.name.lower()}
    stack: list = list(fn.body)
    while stack:
        x = stack.pop()
        if type(x) is F.Compare:
            for side in (x.left, x.right):
                if isinstance(side, F.Local):
                    names.add(side.name)
        # The nodes in its fields, or directly in a tuple field (a call's arguments); not a
        # comprehension's clauses, nor a dict display's pairs.
        for value in fact_children(x):
            if isinstance(value, tuple):
                stack.extend(v for v in value if isinstance(v, _NODES))
            elif isinstance(value, _NODES):
                stack.append(value)
    return names


_NODES = (F.Stmt, F.Expr, F.Arg)


def copied(value: Value, how: str, call: Location) -> Value:
    """A copy of a module: an instance with the same layers, noted as a copy."""
    out = []
    for v in options(value):
        if isinstance(v, Layer):
            v = replace(v, via=v.via + [f"copied by {how} at {where(call)}"], bound_names=[])
        out.append(v)
    return out[0] if not isinstance(value, OneOfV) else OneOfV(tuple(out), value.why)


def registries(classes) -> set[str]:
    """Names of the registries the project's class decorators register into."""
    out = set()
    for cls, _ in classes:
        for d in cls.decorators:
            head, _, last = _dotted(d.func if isinstance(d, F.Call) else d).rpartition(".")
            if last in _REGISTER and head:
                out.add(head.rpartition(".")[2])
    return out


def registered(classes, registry: str, key: str) -> tuple[F.ClassFacts, F.FileFacts] | None:
    """The class `@<registry>.register()` (or `.register("key")`) registered under `key`."""
    return next(((cls, file) for cls, file in classes for d in cls.decorators
                 if _registered_as(d, registry, cls.name) == key), None)


def registered_classes(classes, registry: str) -> list[tuple[F.ClassFacts, F.FileFacts]]:
    """Every class `@<registry>.register()` registers."""
    return [(cls, file) for cls, file in classes
            if any(_registered_as(d, registry, cls.name) is not None for d in cls.decorators)]


def _registered_as(d: F.Expr, registry: str, default: str) -> str | None:
    func = d.func if isinstance(d, F.Call) else d
    text = _dotted(func)
    head, _, last = text.rpartition(".")
    if last not in _REGISTER or head.rpartition(".")[2] != registry:
        return None
    if isinstance(d, F.Call):
        for a in d.args:
            if a.keyword in (None, "name") and isinstance(a.value, F.Const) and isinstance(a.value.value, str):
                return a.value.value
    return default


def _dotted(e: F.Expr) -> str:
    if isinstance(e, F.Global):
        return e.text or e.qual
    if isinstance(e, F.Local):
        return e.name
    if isinstance(e, F.Attr):
        return f"{_dotted(e.value)}.{e.attr}"
    return ""


# How a pick among a project's discriminator classes by a key not known here says so.
KEY_NOT_KNOWN = "(key not known here)"


def of_module(module: ModuleV, text: str, at: Location) -> Value | None:
    """`models.__dict__[config["D"]["NAME"]]`, `getattr(models, name)`: a class of a
    project module picked by a key not known here, one of its classes named as
    discriminators (bound only where a discriminator is expected)."""
    found = [ClassV(c, module.file) for _, c in module.file.classes if DISCRIMINATOR_CLASS.search(c.name)]
    if not found:
        return None
    name = module.file.module.rpartition(".")[2]
    if len(found) == 1:
        why = f"the only discriminator class in {name} {KEY_NOT_KNOWN}"
        return OneOfV((ClassV(found[0].cls, found[0].file, via=f"{why} at {where(at)}"),), why,
                      role="discriminator")
    return OneOfV(tuple(found), f"one of {len(found)} discriminator classes in {name} {KEY_NOT_KNOWN}",
                  role="discriminator")
