"""Moving spectral norm from the hook API to `parametrizations.spectral_norm` (the fix of
SN107 and SN501), with the inits and state-dict keys that move with it. Its
applicability, read without parsing, is `snlint.checks.sn_migration.migratable`."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from snlint.edit.names import HOOK_SN, PARAM_SN, dotted
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import UNSAFE, ImportSpec, Plan
from snlint.edit.syntax import enclosing_function, keyword, module_arg, positional, walk, without
from snlint.findings import Finding
from snlint.torchapi import (
    INIT_FUNCTION, INPLACE_TENSOR_INIT, KEYS_HOOK, KEYS_PARAM, SN_HOOK, SN_PARAM,
)


def init_target(parsed: ParsedFile, call: cst.Call, params: Sequence[str]) -> cst.Attribute | None:
    """The `X.weight` an init call writes (`nn.init.x_(X.weight[.data])`,
    `X.weight[.data].normal_()`)."""
    node: cst.CSTNode | None = None
    qual = parsed.names.qualify(call.func)
    if qual is not None and INIT_FUNCTION.match(qual):
        pos = positional(call)
        node = pos[0].value if pos else (keyword(call, "tensor").value if keyword(call, "tensor") else None)
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value in INPLACE_TENSOR_INIT:
        node = call.func.value
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    if isinstance(node, cst.Attribute) and node.attr.value in params:
        return node
    return None


def original_of(attr: cst.Attribute, param: str) -> cst.Attribute:
    """`X.weight` -> `X.parametrizations.weight.original` (parentheses kept)."""
    inner = cst.Attribute(value=cst.Attribute(value=attr.value, attr=cst.Name("parametrizations")),
                          attr=cst.Name(param))
    return cst.Attribute(value=inner, attr=cst.Name("original"), lpar=attr.lpar, rpar=attr.rpar)


def param_sn_ref(parsed: ParsedFile, plan: Plan) -> cst.BaseExpression | None:
    """An expression for torch.nn.utils.parametrizations.spectral_norm in this file,
    adding an import when the file has no way to name it."""
    names = parsed.names
    for name, api in names.sn_names():
        if api == SN_PARAM:
            return cst.Name(name)
    if names.is_free("spectral_norm"):
        plan.imports.append(ImportSpec("torch.nn.utils.parametrizations", "spectral_norm"))
        return cst.Name("spectral_norm")
    ref = names.binding_for(PARAM_SN)  # `nn.utils.parametrizations.spectral_norm`
    if ref is not None:
        return cst.parse_expression(ref)
    if names.is_free("parametrizations"):
        plan.imports.append(ImportSpec("torch.nn.utils", "parametrizations"))
        return cst.parse_expression("parametrizations.spectral_norm")
    return None


def _param_chain(parsed: ParsedFile, func: cst.Attribute) -> cst.BaseExpression | None:
    """`X.spectral_norm` (X naming torch.nn.utils) -> `X.parametrizations.spectral_norm`."""
    prefix: cst.BaseExpression = func.value
    if parsed.names.qualify(prefix) == HOOK_SN and isinstance(prefix, cst.Attribute):
        prefix = prefix.value  # torch.nn.utils.spectral_norm.spectral_norm
    if parsed.names.qualify(prefix) != "torch.nn.utils":
        return None
    return cst.Attribute(value=cst.Attribute(value=prefix, attr=cst.Name("parametrizations")),
                         attr=cst.Name("spectral_norm"), lpar=func.lpar, rpar=func.rpar)


def _rebind(parsed: ParsedFile, plan: Plan, name: str) -> bool:
    """Point the one binding of `name` (an import from torch.nn.utils, or a module-level
    alias) at the parametrizations API. False when it is bound some other way."""
    alias = parsed.names.import_of(name)
    if alias is not None:
        node = parsed.parent(alias)
        if not isinstance(node, cst.ImportFrom) or dotted(alias.name) != "spectral_norm":
            return False
        if dotted(node.module) not in ("torch.nn.utils", "torch.nn.utils.spectral_norm"):
            return False
        if len(node.names) == 1:  # type: ignore[arg-type]
            plan.replace(node, node.with_changes(
                module=cst.parse_expression("torch.nn.utils.parametrizations")))
        else:
            index = next(i for i, a in enumerate(node.names) if a is alias)  # type: ignore[arg-type]
            plan.replace(node, node.with_changes(names=without(node.names, index)))  # type: ignore[arg-type]
            plan.imports.append(ImportSpec("torch.nn.utils.parametrizations", "spectral_norm",
                                           None if name == "spectral_norm" else name))
        return True
    value = parsed.names.alias_value(name)
    if isinstance(value, cst.Attribute):
        new = _param_chain(parsed, value)
        if new is not None:
            plan.replace(value, new)
            return True
    return False


def _sn_targets(parsed: ParsedFile, call: cst.Call) -> set[str]:
    """The expressions that hold the layer an SN call wraps (`self.conv` in
    `self.conv = spectral_norm(...)`, or the argument `self.conv` of `spectral_norm(self.conv)`)."""
    out = set()
    parent = parsed.parent(call)
    if isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1:
        out.add(parsed.code(parent.targets[0].target).strip())
    arg = module_arg(call)
    if arg is not None and isinstance(arg.value, (cst.Name, cst.Attribute)):
        out.add(parsed.code(arg.value).strip())
    return out


def _migrate_inits(parsed: ParsedFile, plan: Plan, calls: list[cst.Call]) -> int:
    """Inits of `X.weight` / `X.weight_orig` of layers the migration moves to the
    parametrizations API, in the same function: pointed at `parametrizations.weight.original`,
    so the migration never creates an SN106."""
    count = 0
    by_scope: dict[int, tuple[cst.CSTNode, set[str]]] = {}
    for call in calls:
        scope = enclosing_function(parsed, call) or parsed.module
        by_scope.setdefault(id(scope), (scope, set()))[1].update(_sn_targets(parsed, call))
    for scope, targets in by_scope.values():
        if not targets:
            continue
        for node in walk(scope):
            if not isinstance(node, cst.Call) or id(node) in plan.changes:
                continue
            target = init_target(parsed, node, ["weight", "weight_orig"])
            if target is not None and parsed.code(target.value).strip() in targets:
                plan.replace(target, original_of(target, "weight"))
                count += 1
    return count


def migrate(finding: Finding, parsed: ParsedFile, *, whole_file: bool) -> Plan | None:
    """Move an SN call from the hook API to torch.nn.utils.parametrizations.spectral_norm."""
    call = parsed.node(finding.node, cst.Call)
    if call is None or parsed.names.sn_api(call.func) != SN_HOOK:
        return None
    plan = Plan(finding.code, UNSAFE, "")
    func = call.func
    migrated = [call]
    scope = "this call"
    if isinstance(func, cst.Attribute):
        new = _param_chain(parsed, func)
        if new is None:
            return None
        plan.replace(func, new)
    elif isinstance(func, cst.Name):
        name = func.value
        only_use = parsed.names.reads(name) == 1
        if (whole_file or only_use) and _rebind(parsed, plan, name):
            migrated = [n for n in parsed.calls() if isinstance(n.func, cst.Name) and n.func.value == name]
            if len(migrated) > 1:
                scope = f"all {len(migrated)} calls of `{name}` in this file (its import changes)"
            else:
                scope = "this call (the file's only use of the hook API, so its import changes)"
        else:
            ref = param_sn_ref(parsed, plan)
            if ref is None:
                return None
            plan.replace(func, ref.with_changes(lpar=func.lpar, rpar=func.rpar))
    else:
        return None
    inits = _migrate_inits(parsed, plan, migrated)
    init_note = (f"; {inits} init{'s' if inits != 1 else ''} of `.weight` now "
                 f"target{'s' if inits == 1 else ''} `parametrizations.weight.original`" if inits else "")
    plan.message = (f"Use torch.nn.utils.parametrizations.spectral_norm for {scope}{init_note}; "
                    f"checkpoint keys change: {KEYS_HOOK} -> {KEYS_PARAM}")
    return plan
