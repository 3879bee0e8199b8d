"""The fix SN101, SN102 and SN103 share: take a spectral norm off the layer it should not
wrap (unwrap the call, narrow the isinstance filter of a loop or `apply()` that lets the
layer through, or remove the statement that applies it). Its applicability, read without
parsing, is `snlint.checks.unwrap_sn.removable`."""

from __future__ import annotations

import ast

import libcst as cst

from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import SAFE, UNSAFE, Plan, SwapNodes
from snlint.edit.syntax import (
    has_comments, has_star, last_name, module_arg, names_in, statement, torch_nn_type, walk,
    without,
)
from snlint.findings import Finding
from snlint.torchapi import KEYS_HOOK, KEYS_PARAM, KINDS, NEEDS_SN, SN_HOOK, SN_PARAM


def keys_note(api: str | None, what: str = "the layer") -> str:
    if api == SN_HOOK:
        return f"{what}'s state_dict keys change (`weight` instead of {KEYS_HOOK})"
    if api == SN_PARAM:
        return f"{what}'s state_dict keys change (`weight` instead of `parametrizations.weight.original` and its `_u`/`_v`)"
    return f"{what}'s state_dict keys change"


def sn_call(finding: Finding, parsed: ParsedFile) -> cst.Call | None:
    """The SN call the finding points at, when it is one (a torch SN function, or the
    project's own SN wrapper the check recognised)."""
    call = parsed.node(finding.node, cst.Call)
    if call is None:
        return None
    if parsed.names.sn_api(call.func) is None and finding.get("api") != "custom":
        return None
    return call


def _filter_var(parsed: ParsedFile, call: cst.Call, arg: cst.Arg | None) -> str | None:
    """The variable SN is applied to when it comes from a loop or an apply() function
    (`for m in self.modules(): ... spectral_norm(m)`), else None."""
    if arg is None or not isinstance(arg.value, cst.Name):
        return None
    name = arg.value.value
    for anc in parsed.ancestors(call):
        if isinstance(anc, (cst.For, cst.CompFor)) and name in names_in(anc.target):
            return name
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            params = anc.params
            if any(p.name.value == name for p in [*params.posonly_params, *params.params]):
                return name
            return None
    return None


def _isinstance_on(parsed: ParsedFile, node: cst.CSTNode, var: str) -> bool:
    return (isinstance(node, cst.Call) and parsed.names.qualify(node.func) in (None, "builtins.isinstance")
            and last_name(node.func) == "isinstance" and len(node.args) == 2
            and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == var)


def _narrow_filter(finding: Finding, parsed: ParsedFile, call: cst.Call, var: str,
                   layer: str | None, why: str) -> Plan | None:
    """Remove `layer` from the isinstance filter that guards `call` (loop or apply fn)."""
    if not layer:
        return None
    checks: list[cst.Call] = []
    prev: cst.CSTNode = call
    for anc in parsed.ancestors(call):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.For)):
            break
        if isinstance(anc, cst.If) and prev is anc.body:
            if any(isinstance(n, cst.UnaryOperation) for n in walk(anc.test)):
                return None
            checks = [n for n in walk(anc.test) if _isinstance_on(parsed, n, var)]
            if checks:
                break
        prev = anc
    for check in checks:
        types = check.args[1].value
        if isinstance(types, cst.Tuple):
            hits = [i for i, el in enumerate(types.elements) if last_name(el.value) == layer]
            if not hits or isinstance(types.elements[hits[0]], cst.StarredElement):
                continue
            if len(types.elements) - len(hits) < 1:
                return None
            elements = list(types.elements)
            for i in reversed(hits):
                elements = without(elements, i)
            if len(elements) == 1 and not isinstance(elements[0], cst.StarredElement):
                new = elements[0].value
            else:
                new = types.with_changes(elements=elements)
            plan = Plan(finding.code, SAFE, "")
            plan.replace(types, new)
        elif last_name(types) == layer:
            parent = parsed.parent(check)
            if not (isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.Or)):
                return None
            other = parent.right if parent.left is check else parent.left
            plan = Plan(finding.code, SAFE, "")
            plan.replace(parent, other.with_changes(lpar=[*parent.lpar, *other.lpar],
                                                     rpar=[*other.rpar, *parent.rpar]))
        else:
            continue
        plan.message = (f"Remove {layer} from the isinstance filter that applies spectral norm "
                        f"({why}); {keys_note(finding.get('api'), f'each {layer}')}")
        return plan
    return None


def _unwrap(finding: Finding, parsed: ParsedFile, call: cst.Call, arg: cst.Arg, message: str,
            applicability: str = SAFE) -> Plan:
    """Remove the SN call around `arg`: `spectral_norm(x)` -> `x`; a statement that only
    re-applies SN (`self.c = spectral_norm(self.c)`, `spectral_norm(self.c)`) goes."""
    plan = Plan(finding.code, applicability, message)
    stmt = statement(parsed, call)
    if stmt is not None and len(call.args) >= 1:
        small, line = stmt
        if isinstance(small, cst.Expr):
            return plan.remove_statement(small, line)
        if (isinstance(small, cst.Assign) and len(small.targets) == 1
                and parsed.code(small.targets[0].target).strip() == parsed.code(arg.value).strip()):
            return plan.remove_statement(small, line)
    return plan.replace(call, _lift(parsed, call, arg))


def remove_sn(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    call = sn_call(finding, parsed)
    if call is None:
        return None
    arg = module_arg(call)
    if arg is None:
        return None
    layer = finding.get("layer")
    var = _filter_var(parsed, call, arg)
    if var is not None or finding.get("from_filter"):
        if finding.code == "SN103" or var is None:
            return None
        return _narrow_filter(finding, parsed, call, var, layer, "the loop or apply() function")
    api = finding.get("api")
    what = layer or "layer"
    if finding.code == "SN103":
        apis = (api, finding.get("first_api"))
        if apis == (SN_PARAM, SN_PARAM):  # two parametrizations stacked silently
            keys = ("the state_dict loses `parametrizations.weight.1._u` and "
                    "`parametrizations.weight.1._v` (drop them from old checkpoints)")
        elif SN_HOOK in apis:
            keys = "torch raised at construction before, so no checkpoint of it exists"
        else:
            keys = "the state_dict loses the second wrapper's entries"
        return _unwrap(finding, parsed, call, arg,
                       f"Remove the second (outer) spectral norm call; {keys}")
    if finding.code == "SN101":
        return _unwrap(finding, parsed, call, arg,
                       f"Remove spectral norm from {what} (the layer stays); "
                       f"{keys_note(api, f'the {what}')}")
    # SN102
    kind = finding.get("kind")
    if kind == "container" or what in ("Sequential", "ModuleList", "ModuleDict"):
        return _container(finding, parsed, call, arg, what)
    if kind == "module":
        return None  # a project module without a weight: SN belongs on its layers, which we cannot see here
    note = keys_note(api, "the PReLU") if what == "PReLU" else (
        "it has no weight, so SN raised at construction and no checkpoint of it exists")
    return _unwrap(finding, parsed, call, arg, f"Remove spectral norm from {what} (the module stays); {note}")


def _container(finding: Finding, parsed: ParsedFile, call: cst.Call, arg: cst.Arg,
               what: str) -> Plan | None:
    """SN on a Sequential/ModuleList/ModuleDict literal: move it onto the Conv/Linear
    layers inside (unsafe), or just remove it when there are none."""
    inner = arg.value
    if not isinstance(inner, cst.Call):
        return None
    kind = torch_nn_type(parsed, inner.func)
    items: list[cst.BaseExpression] = []
    if kind == "Sequential":
        if has_star(inner) or inner.args and any(a.keyword for a in inner.args):
            return None
        items = [a.value for a in inner.args]
    elif kind in ("ModuleList", "ModuleDict") and len(inner.args) == 1 and not inner.args[0].star:
        seq = inner.args[0].value
        if isinstance(seq, (cst.List, cst.Tuple)):
            if any(isinstance(el, cst.StarredElement) for el in seq.elements):
                return None
            items = [el.value for el in seq.elements]
        elif isinstance(seq, cst.Dict):
            if any(not isinstance(el, cst.DictElement) for el in seq.elements):
                return None
            items = [el.value for el in seq.elements]  # type: ignore[union-attr]
        else:
            return None
    else:
        return None
    layers = [item for item in items if isinstance(item, cst.Call)
              and KINDS.get(torch_nn_type(parsed, item.func) or "") in NEEDS_SN]
    if not layers:
        return _unwrap(finding, parsed, call, arg,
                       f"Remove spectral norm from the {what} (it holds no Conv/Linear layer)")
    extra = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace(""))
             for a in call.args if a is not arg]
    inside = {id(layer): (layer, cst.Call(func=call.func, args=[cst.Arg(layer), *extra]))
              for layer in layers}
    moved = inner.visit(SwapNodes(inside))
    plan = Plan(finding.code, UNSAFE,
                f"Move spectral norm from the {what} onto the {len(layers)} Conv/Linear "
                f"layer{'s' if len(layers) != 1 else ''} inside it; their state_dict keys change "
                f"(`weight` becomes "
                f"{KEYS_HOOK if parsed.names.sn_api(call.func) == SN_HOOK else KEYS_PARAM})")
    return plan.replace(call, moved.with_changes(lpar=[*call.lpar, *moved.lpar],
                                                 rpar=[*moved.rpar, *call.rpar]))


def _lift(parsed: ParsedFile, call: cst.Call, arg: cst.Arg) -> cst.BaseExpression:
    """The expression `arg` of `call`, put where `call` was (the call unwrapped), with
    the call's own parentheses, and the comments inside the call kept."""
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
    try:
        ast.parse(code.strip(), mode="eval")
        return True
    except SyntaxError:
        return False
