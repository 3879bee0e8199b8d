"""SN106 sn-init-of-derived-weight: an init that writes a weight the parametrization
recomputes (source only: the runtime keeps no record of inits)."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.checks.fix_data import InitParam
from snlint.config import Config
from snlint.checks import at_node as at
from snlint.facts import FileFacts
from snlint import facts as F
from snlint.findings import SAFE, Finding, record
from snlint.torchapi import INIT_FUNCTION, INPLACE_TENSOR_INIT, SN_PARAM


CODE = "SN106"


def check(model, emit: Emitter) -> Iterator[Finding]:
    shared = _shared_inits(model)
    for init in model.inits:
        if _parametrized(init):
            others = shared.get((init.call, init.param))
            yield emit.finding(
                CODE, init.call,
                f"this init writes {init.layer.short_type}.{init.param}, which spectral_norm "
                f"recomputes: initialize parametrizations.{init.param}.original",
                evidence=f"parametrizations.spectral_norm recomputes {init.param} on every "
                "access: the write lands in a temporary and does nothing.",
                data=InitParam(init.param, others or ""))


def _parametrized(init) -> bool:
    return any(a.api == SN_PARAM and a.name == init.param for a in init.sn)


def _shared_inits(model) -> dict[tuple, str]:
    """(init call, parameter) -> the classes whose layers it also initializes without the
    parametrization (an `apply(weights_init)` run on the generator too), where pointing it
    at `parametrizations.weight.original` alone would raise."""
    wrapped = {(init.call, init.param) for init in model.inits if _parametrized(init)}
    plain: dict[tuple, list] = {}
    for init in model.inits:
        if (init.call, init.param) in wrapped and not _parametrized(init):
            plain.setdefault((init.call, init.param), []).append(init.layer)
    if not plain:
        return {}
    builders: dict[tuple, set[str]] = {}  # construction site -> the classes that build it
    for root in model.roots.values():
        for m in model.members(root):
            builders.setdefault((m.layer.call.path, m.layer.call.span), set()).add(m.owner.short_type)
    named: dict[tuple, str] = {}
    for key, layers in plain.items():
        names = sorted(set().union(*(builders.get((l.call.path, l.call.span), set()) for l in layers)))
        named[key] = ", ".join(names[:3]) if names else "layers without it"
    return named


@record
class InitOriginal:
    """SN106's fix: the init's target `X.<param>` (`depth` `.value` steps from `expr`:
    `.normal_`, `.data`) becomes `X.parametrizations.<param>.original`; with `guard` (a
    spelling of torch.nn.utils.parametrize), only where `X` has the parametrization."""

    expr: int
    depth: int
    param: str
    guard: str | None = None
    imports: bool = False
    # A spelling of torch.nn.utils.parametrize for the `type(X)` tests around the init
    # (`retype_import`: import it as `parametrize` where one is rewritten).
    retype: str | None = None
    retype_import: bool = False
    applicability = SAFE


PARAMETRIZE = "torch.nn.utils.parametrize"


def fix_input(finding: Finding, facts: FileFacts, config: Config) -> InitOriginal | None:
    """The `X.<param>` the init call writes: `nn.init.x_(X.weight[.data])` or
    `X.weight[.data].normal_()`."""
    _, names, call = at.call_at(finding, facts)
    if call is None:
        return None
    qual = at.qualified(names, call.func)
    if qual is not None and INIT_FUNCTION.match(qual):
        pos = call.positional()
        arg = pos[0] if pos else call.keyword("tensor")
        if arg is None:
            return None
        expr, depth = arg.value, 0
    else:
        expr, depth = call.func, 1
    attrs, named = _read_attributes(expr)
    if depth == 1 and (not attrs or attrs[0] not in INPLACE_TENSOR_INIT):
        return None
    if len(attrs) > depth and attrs[depth] == "data":
        depth += 1
    param = finding.data.param
    if len(attrs) <= depth or attrs[depth] != param or expr.span.node is None:
        return None
    spelled = names.binding_for(PARAMETRIZE)
    retype, retype_import = (spelled, False) if spelled is not None else \
        ("parametrize", True) if names.is_free("parametrize") else (None, False)
    if not finding.data.shared_init:
        return InitOriginal(expr.span.node, depth, param, retype=retype, retype_import=retype_import)
    # Guarded per layer, `X` is read twice: only a name or attribute chain (reading it
    # has no effect).
    if not named or retype is None:
        return None
    return InitOriginal(expr.span.node, depth, param, retype, imports=retype_import, retype=retype,
                        retype_import=retype_import)


def _read_attributes(e) -> tuple[list[str], bool]:
    """The attributes `e` reads, outermost first, and whether `e` is a name chain."""
    attrs: list[str] = []
    while isinstance(e, F.Attr):
        attrs.append(e.attr)
        e = e.value
    if isinstance(e, F.Global):
        parts = (e.text or "").split(".")
        attrs.extend(reversed(parts[1:]))
        return attrs, bool(e.text)
    return attrs, isinstance(e, F.Local)


def fix(finding: Finding, payload: InitOriginal, parsed):
    """Initialize the parametrization's `original`, the trained parameter; an init that
    also reaches layers without it chooses per layer by `parametrize.is_parametrized`."""
    import libcst as cst

    from snlint.edit.plan import ImportSpec, Plan
    from snlint.checks.sn_migration import original_of

    target = parsed.node(payload.expr, cst.BaseExpression)
    for _ in range(payload.depth):
        target = target.value if isinstance(target, cst.Attribute) else None
    param = payload.param
    if not isinstance(target, cst.Attribute) or target.attr.value != param:
        return None
    where = parsed.code(target.value)
    if payload.guard is None:
        plan = Plan(finding.code, payload.applicability,
                    f"Initialize `{where}.parametrizations.{param}.original` (the trained parameter) "
                    f"instead of `{where}.{param}`, which is recomputed on every access{{}}; state_dict "
                    f"keys do not change")
        _retyped(plan, parsed, target, where, payload)
        return plan.replace(target, original_of(target, param))
    # `X.weight` -> `(X.parametrizations.weight.original if
    # parametrize.is_parametrized(X, "weight") else X.weight)`
    plan = Plan(finding.code, payload.applicability,
                f"Initialize `{where}.parametrizations.{param}.original` where `{where}` has "
                f"the parametrization and `{where}.{param}` elsewhere{{}}; state_dict keys do not change")
    _retyped(plan, parsed, target, where, payload)
    if payload.imports and ImportSpec("torch.nn.utils", "parametrize") not in plan.imports:
        plan.imports.append(ImportSpec("torch.nn.utils", "parametrize"))
    plain = target.with_changes(lpar=[], rpar=[])
    test = cst.parse_expression(f'{payload.guard}.is_parametrized({where}, "{param}")')
    guarded = cst.IfExp(test=test, body=original_of(plain, param), orelse=plain,
                        lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return plan.replace(target, guarded.with_changes(lpar=[*target.lpar, *guarded.lpar],
                                                     rpar=[*guarded.rpar, *target.rpar]))


def _retyped(plan, parsed, target, where: str, payload: InitOriginal) -> None:
    """`if type(m) == nn.Conv2d:` around the init is false for a `ParametrizedConv2d`: the
    init would not run at all. The test reads `parametrize.type_before_parametrizations(m)`
    instead, and the message says so."""
    from snlint.checks.sn_migration import retype_tests
    from snlint.edit.plan import ImportSpec

    count = retype_tests(parsed, plan, target, where, payload.retype) if payload.retype else 0
    note = ""
    if count:
        one = count == 1
        note = (f", and {'the' if one else count} `type({where})` test{'' if one else 's'} around it "
                f"read{'s' if one else ''} `type_before_parametrizations({where})` (a parametrized layer's "
                f"class is `ParametrizedConv2d`, not `Conv2d`: the init did not run)")
        if payload.retype_import and ImportSpec("torch.nn.utils", "parametrize") not in plan.imports:
            plan.imports.append(ImportSpec("torch.nn.utils", "parametrize"))
    plan.message = plan.message.replace("{}", note)
