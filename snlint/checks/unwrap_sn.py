"""The fix SN101, SN102 and SN103 share: take a spectral norm off the layer it should not
wrap. `removal` decides from the file's facts whether to unwrap the call (or remove the
statement that only applies it), narrow the isinstance filter of a loop or `apply()` that
lets the layer through, or move SN onto the layers inside a container; `remove_sn` carries
that out on the parsed file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.config import Config
from snlint.findings import SAFE, UNSAFE, Finding, record
from snlint.torchapi import KEYS_HOOK, KEYS_PARAM, KINDS, NEEDS_SN, SN_HOOK, SN_PARAM

if TYPE_CHECKING:
    import libcst as cst

    from snlint.edit.parsed import ParsedFile
    from snlint.edit.plan import Plan


@record
class Unwrap:
    """Take the SN call off its module argument: `spectral_norm(x)` -> `x`, or the
    statement that only re-applies SN goes."""

    call: int
    arg: int
    message: str
    applicability: str = SAFE


@record
class Narrow:
    """Take the layer's type out of the `isinstance(m, ...)` call `check` that lets it reach
    SN: the items `hits` of its tuple of `size` types, or, with no `hits`, the whole check
    from its `or`."""

    check: int
    hits: tuple[int, ...]
    size: int
    message: str
    applicability = SAFE


@record
class MoveInside:
    """Move SN from a container literal (`arg` of the SN call) onto the Conv/Linear calls
    inside it (`layers`)."""

    call: int
    arg: int
    layers: tuple[int, ...]
    message: str
    applicability = UNSAFE


def keys_note(api: str | None, what: str = "the layer") -> str:
    if api == SN_HOOK:
        return f"{what}'s state_dict keys change (`weight` instead of {KEYS_HOOK})"
    if api == SN_PARAM:
        return f"{what}'s state_dict keys change (`weight` instead of `parametrizations.weight.original` and its `_u`/`_v`)"
    return f"{what}'s state_dict keys change"


def sn_call_fact(finding: Finding, facts: F.FileFacts) -> tuple[at.FactsAt, F.Names, F.Call | None]:
    """`at.call_at`, the call only when it is an SN call."""
    index, names, call = at.call_at(finding, facts)
    if call is not None and at.sn_api(names, call.func) is None and finding.data.api != "custom":
        call = None
    return index, names, call


def removal(finding: Finding, facts: F.FileFacts, config: Config | None = None) -> Unwrap | Narrow | MoveInside | None:
    """How the fix takes the spectral norm at the finding off its layer, or None."""
    index, names, call = sn_call_fact(finding, facts)
    if call is None:
        return None
    arg = at.module_arg(call)
    if arg is None or call.span.node is None:
        return None
    data = finding.data
    layer, api = data.layer, data.api
    var = _filter_var_of(index, call, arg)
    if var is not None or data.from_filter:
        if finding.code == "SN103" or var is None:
            return None
        return _narrowed(index, names, call, var, layer, api)
    what = layer or "layer"
    unwrap = lambda message: Unwrap(call.span.node, arg.span.node, message)  # noqa: E731
    if finding.code == "SN103":
        apis = (api, data.first_api)
        if apis == (SN_PARAM, SN_PARAM):  # two parametrizations stacked silently
            keys = ("the state_dict loses `parametrizations.weight.1._u` and "
                    "`parametrizations.weight.1._v` (drop them from old checkpoints)")
        elif SN_HOOK in apis:
            keys = "torch raised at construction before, so no checkpoint of it exists"
        else:
            keys = "the state_dict loses the second wrapper's entries"
        return unwrap(f"Remove the second (outer) spectral norm call; {keys}")
    if finding.code == "SN101":
        return unwrap(f"Remove spectral norm from {what} (the layer stays); {keys_note(api, f'the {what}')}")
    kind = data.kind
    if kind == "container" or what in ("Sequential", "ModuleList", "ModuleDict"):
        layers = _container_layers(names, arg)
        if layers is None:
            return None
        if not layers:
            return unwrap(f"Remove spectral norm from the {what} (it holds no Conv/Linear layer)")
        keys = KEYS_HOOK if at.sn_api(names, call.func) == SN_HOOK else KEYS_PARAM
        return MoveInside(call.span.node, arg.span.node, tuple(layer.span.node for layer in layers),
                          f"Move spectral norm from the {what} onto the {len(layers)} Conv/Linear "
                          f"layer{'s' if len(layers) != 1 else ''} inside it; their state_dict keys change "
                          f"(`weight` becomes {keys})")
    if kind == "module":
        return None  # a project module without a weight: SN belongs on its layers, which we cannot see here
    note = keys_note(api, "the PReLU") if what == "PReLU" else (
        "it has no weight, so SN raised at construction and no checkpoint of it exists")
    return unwrap(f"Remove spectral norm from {what} (the module stays); {note}")


def _filter_var_of(index: at.FactsAt, call: F.Call, arg: F.Arg) -> str | None:
    """The loop variable or parameter SN is applied to."""
    if not isinstance(arg.value, F.Local):
        return None
    name = arg.value.name
    for anc in index.ancestors(call):
        if isinstance(anc, (F.For, F.CompFor)) and name in at.names_in(anc.target):
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


def _narrowed(index: at.FactsAt, names: F.Names, call: F.Call, var: str,
              layer: str | None, api: str | None) -> Narrow | None:
    """Take `layer` out of the isinstance filter guarding `call`, when it can leave it."""
    if not layer:
        return None
    checks: list[F.Call] = []
    prev = call
    for anc in index.ancestors(call):
        if isinstance(anc, (F.FunctionFacts, F.Lambda, F.ClassFacts, F.For)):
            break
        if isinstance(anc, F.If) and any(s is prev for s in anc.body):
            found = list(at.walk(anc.test))[::-1]  # the rightmost check is tried first
            if any(isinstance(e, F.Not) for e in found):
                return None
            checks = [e for e in found if _isinstance_check(names, e, var)]
            if checks:
                break
        prev = anc
    message = (f"Remove {layer} from the isinstance filter that applies spectral norm "
               f"(the loop or apply() function); {keys_note(api, f'each {layer}')}")
    for check in checks:
        types = check.args[1].value
        if isinstance(types, F.ListE) and types.kind == "tuple":
            hits = [i for i, item in enumerate(types.items) if at.last_name(item) == layer]
            if not hits or isinstance(types.items[hits[0]], F.Starred):
                continue
            if len(types.items) - len(hits) < 1:
                return None
            return Narrow(check.span.node, tuple(hits), len(types.items), message)
        if at.last_name(types) == layer:
            parent = index.parent.get(id(check))
            if isinstance(parent, F.BoolOp) and parent.op == "or":
                return Narrow(check.span.node, (), 0, message)
            return None
    return None


def _container_layers(names: F.Names, arg: F.Arg) -> list[F.Call] | None:
    """The Conv/Linear layers a Sequential/ModuleList/ModuleDict literal holds; None when
    it is no such literal."""
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
    return [item for item in items if isinstance(item, F.Call)
            and KINDS.get(at.torch_nn_type(names, item.func) or "") in NEEDS_SN]


# ---------------------------------------------------------------- the libcst half


def remove_sn(finding: Finding, payload: Unwrap | Narrow | MoveInside, parsed: ParsedFile) -> Plan | None:
    import libcst as cst

    from snlint.edit.plan import Plan, SwapNodes

    if isinstance(payload, Narrow):
        return _narrow(finding, payload, parsed)
    call = parsed.node(payload.call, cst.Call)
    arg = parsed.node(payload.arg, cst.Arg)
    if call is None or arg is None or not any(a is arg for a in call.args):
        return None
    if isinstance(payload, Unwrap):
        return _unwrap(parsed, Plan(finding.code, payload.applicability, payload.message), call, arg)
    layers = [parsed.node(key, cst.Call) for key in payload.layers]
    if any(layer is None for layer in layers):
        return None
    extra = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace(""))
             for a in call.args if a is not arg]
    inside = {id(layer): (layer, cst.Call(func=call.func, args=[cst.Arg(layer), *extra]))
              for layer in layers}
    moved = arg.value.visit(SwapNodes(inside))
    plan = Plan(finding.code, payload.applicability, payload.message)
    return plan.replace(call, moved.with_changes(lpar=[*call.lpar, *moved.lpar],
                                                 rpar=[*moved.rpar, *call.rpar]))


def _narrow(finding: Finding, payload: Narrow, parsed: ParsedFile) -> Plan | None:
    import libcst as cst

    from snlint.edit.plan import Plan
    from snlint.edit.syntax import without

    check = parsed.node(payload.check, cst.Call)
    if check is None:
        return None
    plan = Plan(finding.code, payload.applicability, payload.message)
    if not payload.hits:  # the check is one side of an `or` (`_narrowed`)
        parent = parsed.parent(check)
        other = parent.right if parent.left is check else parent.left
        return plan.replace(parent, other.with_changes(lpar=[*parent.lpar, *other.lpar],
                                                        rpar=[*other.rpar, *parent.rpar]))
    types = check.args[1].value
    if not isinstance(types, cst.Tuple) or len(types.elements) != payload.size:
        return None
    elements = list(types.elements)
    for i in reversed(payload.hits):
        elements = without(elements, i)
    if len(elements) == 1 and not isinstance(elements[0], cst.StarredElement):
        return plan.replace(types, elements[0].value)
    return plan.replace(types, types.with_changes(elements=elements))


def _unwrap(parsed: ParsedFile, plan: Plan, call: cst.Call, arg: cst.Arg) -> Plan:
    """`spectral_norm(x)` -> `x`; a statement that only re-applies SN
    (`self.c = spectral_norm(self.c)`, `spectral_norm(self.c)`) goes."""
    import libcst as cst

    from snlint.edit.syntax import statement

    stmt = statement(parsed, call)
    if stmt is not None and len(call.args) >= 1:
        small, line = stmt
        if isinstance(small, cst.Expr):
            return plan.remove_statement(small, line)
        if (isinstance(small, cst.Assign) and len(small.targets) == 1
                and parsed.code(small.targets[0].target).strip() == parsed.code(arg.value).strip()):
            return plan.remove_statement(small, line)
    return plan.replace(call, _lift(parsed, call, arg))


def _lift(parsed: ParsedFile, call: cst.Call, arg: cst.Arg) -> cst.BaseExpression:
    """`arg`'s expression in place of `call`, with the call's parentheses and comments."""
    import libcst as cst

    from snlint.edit.syntax import has_comments

    value = arg.value
    others = [a for a in call.args if a is not arg]
    lpar = list(getattr(value, "lpar", ()))
    rpar = list(getattr(value, "rpar", ()))
    if not others and has_comments(call, skip=value):
        close = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else arg.whitespace_after_arg
        lpar = [cst.LeftParen(whitespace_after=call.whitespace_before_args), *lpar]
        rpar = [*rpar, cst.RightParen(whitespace_before=close)]
    elif not lpar and not _standalone(parsed.code(value)):
        lpar, rpar = [cst.LeftParen()], [cst.RightParen()]
    return value.with_changes(lpar=[*call.lpar, *lpar], rpar=[*rpar, *call.rpar])


def _standalone(code: str) -> bool:
    """Whether an expression's text is valid without enclosing brackets."""
    import ast

    try:
        ast.parse(code.strip(), mode="eval")
        return True
    except SyntaxError:
        return False
