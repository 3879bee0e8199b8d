"""SN106's fix: initialize the parametrization's `original`, the trained parameter, not the
weight it recomputes. An init that also reaches layers without the parametrization (a
shared `init_weights`, the generator's too) keeps writing their weight: the new target
is chosen per layer by `parametrize.is_parametrized`."""

from __future__ import annotations

import libcst as cst

from snlint.config import Config
from snlint.edit.names import dotted
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import SAFE, ImportSpec, Plan
from snlint.findings import Finding
from snlint.fixes.sn_migration import init_target, original_of

PARAMETRIZE = "torch.nn.utils.parametrize"


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    call = parsed.node(finding.node, cst.Call)
    if call is None:
        return None
    param = finding.get("param") or "weight"
    target = init_target(parsed, call, [param])
    if target is None:
        return None
    where = parsed.code(target.value)
    if finding.get("shared_init"):
        return _guarded(finding, parsed, target, param, where)
    plan = Plan(finding.code, SAFE,
                f"Initialize `{where}.parametrizations.{param}.original` (the trained parameter) "
                f"instead of `{where}.{param}`, which is recomputed on every access; state_dict "
                f"keys do not change")
    return plan.replace(target, original_of(target, param))


def _guarded(finding: Finding, parsed: ParsedFile, target: cst.Attribute, param: str,
             where: str) -> Plan | None:
    """`X.weight` -> `(X.parametrizations.weight.original if
    parametrize.is_parametrized(X, "weight") else X.weight)`: `X` is read twice, so only a
    name or attribute chain (reading it has no effect)."""
    if dotted(target.value) is None:
        return None
    plan = Plan(finding.code, SAFE, "")
    module = _parametrize_ref(parsed, plan)
    if module is None:
        return None
    plain = target.with_changes(lpar=[], rpar=[])
    test = cst.parse_expression(f'{module}.is_parametrized({where}, "{param}")')
    guarded = cst.IfExp(test=test, body=original_of(plain, param), orelse=plain,
                        lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    plan.message = (f"Initialize `{where}.parametrizations.{param}.original` where `{where}` has "
                    f"the parametrization and `{where}.{param}` elsewhere; state_dict keys do not change")
    return plan.replace(target, guarded.with_changes(lpar=[*target.lpar, *guarded.lpar],
                                                     rpar=[*guarded.rpar, *target.rpar]))


def _parametrize_ref(parsed: ParsedFile, plan: Plan) -> str | None:
    """A name chain for torch.nn.utils.parametrize in this file, importing it when the
    file has none and `parametrize` is free (`snlint.checks.sn106.fixable` agrees)."""
    ref = parsed.names.binding_for(PARAMETRIZE)
    if ref is not None:
        return ref
    if parsed.names.is_free("parametrize"):
        plan.imports.append(ImportSpec("torch.nn.utils", "parametrize"))
        return "parametrize"
    return None
