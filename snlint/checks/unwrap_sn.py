"""What the fix SN101, SN102 and SN103 share (`snlint.fixes.unwrap_sn.remove_sn`: take a
spectral norm off the layer it should not wrap) needs without parsing: the SN call a
finding points at, and the applicability of the plan, read from the file's facts."""

from __future__ import annotations

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.config import Config
from snlint.findings import SAFE, UNSAFE, Finding
from snlint.torchapi import KINDS, NEEDS_SN


def sn_call_fact(finding: Finding, facts: F.FileFacts) -> tuple[at.FactsAt, F.Names, F.Call | None]:
    """`sn_call` read from the facts: the file's index, its names, and the SN call the
    finding points at, when it is one."""
    index = at.FactsAt.of(facts)
    names = at.names_of(finding, facts)
    call = index.at(finding.node)
    if not isinstance(call, F.Call):
        return index, names, None
    if at.sn_api(names, call.func) is None and finding.get("api") != "custom":
        return index, names, None
    return index, names, call


def removable(finding: Finding, facts: F.FileFacts, config: Config) -> str | None:
    """The applicability of the plan `remove_sn` makes for `finding`, read from the
    file's facts (`snlint.checks.at_node`), or None when it makes none."""
    index, names, call = sn_call_fact(finding, facts)
    if call is None:
        return None
    arg = at.module_arg(call)
    if arg is None:
        return None
    layer = finding.get("layer")
    var = _filter_var_of(index, call, arg)
    if var is not None or finding.get("from_filter"):
        if finding.code == "SN103" or var is None:
            return None
        return _narrowable(index, names, call, var, layer)
    if finding.code in ("SN101", "SN103"):
        return SAFE
    what = layer or "layer"
    kind = finding.get("kind")
    if kind == "container" or what in ("Sequential", "ModuleList", "ModuleDict"):
        return _container_applicability(names, arg)
    return None if kind == "module" else SAFE


def _filter_var_of(index: at.FactsAt, call: F.Call, arg: F.Arg) -> str | None:
    """`_filter_var`: the loop variable or parameter SN is applied to."""
    if not isinstance(arg.value, F.Local):
        return None
    name = arg.value.name
    for anc in index.ancestors(call):
        if isinstance(anc, F.For) and name in at.names_in(anc.target):
            return name
        if isinstance(anc, F.CompFor) and name in at.names_in(anc.target):
            return name
        if isinstance(anc, F.FunctionFacts):
            params = [p.name for p in anc.params if p.kind in ("pos", "posonly")]
            return name if name in params else None
        if isinstance(anc, F.Lambda):
            return name if name in anc.params else None
    return None


def _isinstance_check(names: F.Names, e, var: str) -> bool:
    return (isinstance(e, F.Call) and at.qualified(names, e.func) in (None, "builtins.isinstance")
            and at.last_name(e.func) == "isinstance" and len(e.args) == 2
            and isinstance(e.args[0].value, F.Local) and e.args[0].value.name == var)


def _narrowable(index: at.FactsAt, names: F.Names, call: F.Call, var: str,
                layer: str | None) -> str | None:
    """`_narrow_filter`: whether `layer` can leave the isinstance filter guarding `call`."""
    if not layer:
        return None
    checks: list[F.Call] = []
    prev = call
    for anc in index.ancestors(call):
        if isinstance(anc, (F.FunctionFacts, F.Lambda, F.ClassFacts, F.For)):
            break
        if isinstance(anc, F.If) and any(s is prev for s in anc.body):
            stack = [anc.test]
            found: list = []
            while stack:
                e = stack.pop()
                found.append(e)
                stack.extend(at._children(e))
            if any(isinstance(e, F.Not) for e in found):
                return None
            checks = [e for e in found if _isinstance_check(names, e, var)]
            if checks:
                break
        prev = anc
    for check in checks:
        types = check.args[1].value
        if isinstance(types, F.ListE) and types.kind == "tuple":
            hits = [i for i, item in enumerate(types.items) if at.last_name(item) == layer]
            if not hits or isinstance(types.items[hits[0]], F.Starred):
                continue
            return SAFE if len(types.items) - len(hits) >= 1 else None
        if at.last_name(types) == layer:
            parent = index.parent.get(id(check))
            return SAFE if isinstance(parent, F.BoolOp) and parent.op == "or" else None
    return None


def _container_applicability(names: F.Names, arg: F.Arg) -> str | None:
    """`_container`: SN moves onto the Conv/Linear layers inside (unsafe), or, with
    none inside, just goes (safe)."""
    inner = arg.value
    if not isinstance(inner, F.Call):
        return None
    kind = at.torch_nn_type(names, inner.func)
    if kind == "Sequential":
        if at.has_star(inner) or any(a.keyword for a in inner.args):
            return None
        items = [a.value for a in inner.args]
    elif kind in ("ModuleList", "ModuleDict") and len(inner.args) == 1 and not inner.args[0].star:
        seq = inner.args[0].value
        if isinstance(seq, F.ListE) and seq.kind in ("list", "tuple"):
            if any(isinstance(item, F.Starred) for item in seq.items):
                return None
            items = list(seq.items)
        elif isinstance(seq, F.DictE):
            if any(isinstance(key, F.Starred) for key, _ in seq.items):
                return None  # `ModuleDict({**blocks, ...})`: the fix rewrites only literal entries
            items = [value for _, value in seq.items]
        else:
            return None
    else:
        return None
    layers = [item for item in items if isinstance(item, F.Call)
              and KINDS.get(at.torch_nn_type(names, item.func) or "") in NEEDS_SN]
    return UNSAFE if layers else SAFE
