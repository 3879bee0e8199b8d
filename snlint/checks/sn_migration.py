"""Moving spectral norm from the hook API to `parametrizations.spectral_norm`, the fix of
SN107 and SN501, with the inits that move with it: `migration` decides from the file's
facts how the callable is renamed, `migrate` carries that out on the parsed file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.config import Config
from snlint.findings import UNSAFE, Finding, record
from snlint.torchapi import (
    INIT_FUNCTION, INPLACE_TENSOR_INIT, KEYS_HOOK, KEYS_PARAM, SN_FUNCTIONS, SN_HOOK, SN_HOOK_REMOVERS,
    SN_PARAM,
)

if TYPE_CHECKING:
    import libcst as cst

    from snlint.edit.parsed import ParsedFile
    from snlint.edit.plan import Plan

HOOK_SN = "torch.nn.utils.spectral_norm"
PARAMETRIZE = "torch.nn.utils.parametrize"
PARAM_SN = "torch.nn.utils.parametrizations.spectral_norm"
UTILS = "torch.nn.utils"


@record
class Migrate:
    """How a hook-API SN call moves to the parametrizations API. `chain`: the callee is an
    attribute chain, rewritten `X.parametrizations.spectral_norm` where `X`
    (torch.nn.utils) is `chain` `.value` steps up. Else the callee is a name: with
    `rebind`, its one binding ("import", or the module-level "alias" `SN =
    nn.utils.spectral_norm`, `alias_chain` steps from torch.nn.utils) is pointed at the new
    API and every call of it moves; else, or where that import cannot be rewritten, the
    callee becomes `ref` (imported from `ref_module` when given)."""

    call: int
    chain: int = 0
    rebind: str = ""
    alias_chain: int = 0
    ref: str | None = None
    ref_module: str | None = None
    # The inits of `.weight` the linked program runs on the layers it moves, in this file
    # (node key, line) and elsewhere ("utils.py:12"); `guard` spells
    # torch.nn.utils.parametrize (`guard_import`: import it as `parametrize`).
    inits: tuple[tuple[int | None, int], ...] = ()
    elsewhere: tuple[str, ...] = ()
    guard: str | None = None
    guard_import: bool = False
    # Every hook-API call of the file moves: its calls of the hook API's remover
    # (`remove_spectral_norm(m)`) move to `guard`.remove_parametrizations with it.
    removers: bool = False
    applicability = UNSAFE


def migration(finding: Finding, facts: F.FileFacts, config: Config | None = None, *,
              whole_file: bool) -> Migrate | None:
    """How the hook-API SN call at the finding moves (`whole_file`: every call of its name
    in the file with it), or None."""
    _, names, call = at.call_at(finding, facts)
    if call is None or at.sn_api(names, call.func) != SN_HOOK or call.span.node is None:
        return None
    func = call.func
    if isinstance(func, F.Attr) or (isinstance(func, F.Global) and "." in (func.text or "")):
        steps = _steps_to_utils(names, func)
        if not steps:
            return None
        # A chain moves this call alone, and the inits run on its layer from another
        # function (`self._initialize()`) must move with it as with a renamed callable.
        inits, elsewhere, guard, guard_import = _linked_inits(finding, names, own=True)
        if whole_file and guard is None:
            guard, guard_import = _parametrize(names)
        return Migrate(call.span.node, chain=steps, inits=inits, elsewhere=elsewhere, guard=guard,
                       guard_import=guard_import, removers=whole_file)
    if isinstance(func, F.Local):
        name = func.name
    elif isinstance(func, (F.Global, F.Unknown)) and (func.text or "").isidentifier():
        name = func.text
    else:
        return None
    ref, module = param_sn_ref(names)
    rebind, alias_chain = "", 0
    if whole_file or names.reads.get(name, 0) == 1:
        if names.imports.get(name) is not None:
            rebind = "import"
        elif names.aliases.get(name) is not None:
            value = at.FactsAt.of(facts).at(names.aliases[name])
            if isinstance(value, (F.Attr, F.Global)):
                alias_chain = _steps_to_utils(names, value)
                rebind = "alias" if alias_chain else ""
    if not rebind and ref is None:
        return None
    inits, elsewhere, guard, guard_import = _linked_inits(finding, names)
    if whole_file and guard is None:
        guard, guard_import = _parametrize(names)
    return Migrate(call.span.node, rebind=rebind, alias_chain=alias_chain, ref=ref, ref_module=module,
                   inits=inits, elsewhere=elsewhere, guard=guard, guard_import=guard_import,
                   removers=whole_file)


def _linked_inits(finding: Finding, names: F.Names, *, own: bool = False) -> tuple[tuple, tuple, str | None, bool]:
    """What `Migrate` needs of the inits the linked program runs after the SN it moves
    (`own`: it moves the finding's call alone)."""
    from snlint.checks.fix_data import LinkedInits

    if not isinstance(finding.data, LinkedInits):
        return (), (), None, False
    sites = finding.data.own if own else finding.data.sites
    here = tuple((key, line) for key, path, line in sites if path == finding.path)
    elsewhere = tuple(f"{path}:{line}" for _, path, line in sites if path != finding.path)
    return (here, elsewhere, *_parametrize(names))


def _parametrize(names: F.Names) -> tuple[str | None, bool]:
    """A spelling of torch.nn.utils.parametrize in the file, and whether it must be
    imported (as `parametrize`); None where the file can spell it neither way."""
    guard = names.binding_for(PARAMETRIZE)
    if guard is None and names.is_free("parametrize"):
        return "parametrize", True
    return guard, False


def _steps_to_utils(names: F.Names, e) -> int:
    """How many `.value` steps lead from the chain `e` (`nn.utils.spectral_norm`, or
    `...utils.spectral_norm.spectral_norm`) to torch.nn.utils: 1, 2, or 0 for none."""
    prefixes = at.prefix_quals(names, e)
    if prefixes[:1] == [UTILS]:
        return 1
    if prefixes[:1] == [HOOK_SN] and prefixes[1:2] == [UTILS]:
        return 2
    return 0


def param_sn_ref(names: F.Names) -> tuple[str | None, str | None]:
    """A spelling of torch.nn.utils.parametrizations.spectral_norm in the file, and the
    module to import it from when the file has none."""
    for name, qual in sorted(names.scope.items()):
        if SN_FUNCTIONS.get(qual) == SN_PARAM:
            return name, None
    if names.is_free("spectral_norm"):
        return "spectral_norm", "torch.nn.utils.parametrizations"
    ref = names.binding_for(PARAM_SN)  # `nn.utils.parametrizations.spectral_norm`
    if ref is not None:
        return ref, None
    if names.is_free("parametrizations"):
        return "parametrizations.spectral_norm", "torch.nn.utils"
    return None, None


# ---------------------------------------------------------------- the libcst half


def migrate(finding: Finding, payload: Migrate, parsed: ParsedFile) -> Plan | None:
    """Move the SN call from the hook API to torch.nn.utils.parametrizations.spectral_norm."""
    import libcst as cst

    from snlint.edit.plan import ImportSpec, Plan

    call = parsed.node(payload.call, cst.Call)
    if call is None:
        return None
    plan = Plan(finding.code, payload.applicability, "")
    func = call.func
    migrated = [call]
    scope = "this call"
    if payload.chain:
        new = _rechained(func, payload.chain)
        if new is None:
            return None
        plan.replace(func, new)
    elif not isinstance(func, cst.Name):
        return None
    elif payload.rebind and _rebind(parsed, plan, func.value, payload):
        name = func.value
        migrated = [n for n in parsed.calls
                    if isinstance(n.func, cst.Name) and n.func.value == name]
        if len(migrated) > 1:
            scope = f"all {len(migrated)} calls of `{name}` in this file (its import changes)"
        else:
            scope = "this call (the file's only use of the hook API, so its import changes)"
    elif payload.ref is not None:
        if payload.ref_module is not None:
            plan.imports.append(ImportSpec(payload.ref_module, payload.ref.partition(".")[0]))
        ref = cst.parse_expression(payload.ref)
        plan.replace(func, ref.with_changes(lpar=func.lpar, rpar=func.rpar))
    else:
        return None
    inits = _migrate_inits(parsed, plan, migrated)
    carried, retyped, left = _carry_linked_inits(parsed, plan, payload)
    removed, kept = _migrate_removers(parsed, plan, payload) if payload.removers else (0, [])
    init_note = (f"; {inits} init{'s' if inits != 1 else ''} of `.weight` now "
                 f"target{'s' if inits == 1 else ''} `parametrizations.weight.original`" if inits else "")
    if carried:
        one = carried == 1
        init_note += (f"; {carried} init{'' if one else 's'} of `.weight` run on these layers from another "
                      f"function now target{'s' if one else ''} `parametrizations.weight.original` where "
                      f"the layer has it")
    if retyped:
        one = retyped == 1
        init_note += (f"; {retyped} `type(...)` test{'' if one else 's'} an init runs under now "
                      f"read{'s' if one else ''} `type_before_parametrizations(...)` (a parametrized "
                      f"layer's class is `ParametrizedConv2d`, not `Conv2d`)")
    if left:
        one = len(left) == 1
        init_note += (f"; the init{'' if one else 's'} at {', '.join(left)} still write{'s' if one else ''} "
                      f"`.weight`, which the parametrization recomputes: {'it does' if one else 'they do'} "
                      f"nothing after this fix (SN106)")
    if removed:
        one = removed == 1
        init_note += (f"; {removed} call{'' if one else 's'} of `remove_spectral_norm` now "
                      f"call{'s' if one else ''} `parametrize.remove_parametrizations(..., \"weight\")`, which "
                      f"removes the parametrization")
    if kept:
        one = len(kept) == 1
        init_note += (f"; the `remove_spectral_norm` call{'' if one else 's'} at {', '.join(kept)} "
                      f"raise{'s' if one else ''} ValueError on a parametrized layer after this fix")
    plan.message = (f"Use torch.nn.utils.parametrizations.spectral_norm for {scope}{init_note}; "
                    f"checkpoint keys change: {KEYS_HOOK} -> {KEYS_PARAM}")
    return plan


def _carry_linked_inits(parsed: ParsedFile, plan: Plan, payload: Migrate) -> tuple[int, int, list[str]]:
    """Point the inits the linked program runs on the moved layers from elsewhere in this
    file (`netD.apply(weights_init)`) at `parametrizations.weight.original` where the
    layer has the parametrization: such an init runs on whatever modules it is given, and
    which of them have SN depends on how each was built (a flag may leave it out).
    How many it pointed, and where those it could not are."""
    import libcst as cst

    from snlint.edit.plan import ImportSpec

    carried, retyped, left = 0, 0, list(payload.elsewhere)
    for key, line in payload.inits:
        node = parsed.node(key, cst.Call)
        target = init_target(parsed, node, ["weight"]) if node is not None else None
        if target is not None and (id(target) in plan.changes or id(node) in plan.changes):
            continue  # `_migrate_inits` already pointed it
        if target is None or payload.guard is None or not isinstance(target.value, (cst.Name, cst.Attribute)):
            left.append(f"line {line}")
            continue
        # `X.weight` -> `(X.parametrizations.weight.original if
        # parametrize.is_parametrized(X, "weight") else X.weight)`: X is read twice.
        where = parsed.code(target.value)
        plain = target.with_changes(lpar=[], rpar=[])
        test = cst.parse_expression(f'{payload.guard}.is_parametrized({where}, "weight")')
        guarded = cst.IfExp(test=test, body=original_of(plain, "weight"), orelse=plain,
                            lpar=[cst.LeftParen(), *target.lpar], rpar=[*target.rpar, cst.RightParen()])
        plan.replace(target, guarded)
        retyped += retype_tests(parsed, plan, node, where, payload.guard)
        spec = ImportSpec("torch.nn.utils", "parametrize")
        if payload.guard_import and spec not in plan.imports:
            plan.imports.append(spec)
        carried += 1
    return carried, retyped, left


def retype_tests(parsed: ParsedFile, plan: Plan, init: cst.CSTNode, layer: str, parametrize: str) -> int:
    """`if type(m) == nn.Conv2d:` around an init: a parametrized layer's class is
    `ParametrizedConv2d`, so after the migration the test is false and the init it guards
    never runs. `parametrize.type_before_parametrizations(m)` is the class the hook API
    kept (`m.__class__` likewise)."""
    import libcst as cst

    from snlint.edit.syntax import walk

    retyped = cst.parse_expression(f"{parametrize}.type_before_parametrizations({layer})")
    count = 0
    for anc in parsed.ancestors(init):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if not isinstance(anc, (cst.If, cst.IfExp)):
            continue
        for node in walk(anc.test):
            if id(node) in plan.changes:
                continue
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "type" \
                    and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star \
                    and parsed.code(node.args[0].value).strip() == layer \
                    or isinstance(node, cst.Attribute) and node.attr.value == "__class__" \
                    and parsed.code(node.value).strip() == layer:
                plan.replace(node, retyped.with_changes(lpar=node.lpar, rpar=node.rpar))
                count += 1
    return count


def _migrate_removers(parsed: ParsedFile, plan: Plan, payload: Migrate) -> tuple[int, list[str]]:
    """Point the file's calls of the hook API's remover (`remove_spectral_norm(m[, name])`)
    at `parametrize.remove_parametrizations(m, name)`: the hook remover finds no hook on a
    migrated layer and raises ValueError (silently nothing where the code catches it, as
    a `remove_spectral_norm()` method applied to every module does). Both keep the
    normalized weight as the plain parameter. How many it pointed, and the lines of those
    it could not (no spelling of `parametrize`, a `*args` call)."""
    import libcst as cst

    from snlint.edit.plan import ImportSpec
    from snlint.edit.syntax import has_star, keyword, positional

    moved, kept = 0, []
    for call in parsed.calls:
        if id(call) in plan.changes or parsed.names.qualify(call.func) not in SN_HOOK_REMOVERS:
            continue
        if payload.guard is None or has_star(call) or len(positional(call)) > 2:
            kept.append(f"line {parsed.positions.raw(call)[0]}")
            continue
        name = keyword(call, "name")
        if name is not None:
            args = [a.with_changes(keyword=cst.Name("tensor_name")) if a is name else a for a in call.args]
        elif len(positional(call)) == 2:
            args = list(call.args)
        else:
            last = call.args[-1] if call.args else None
            if last is None:
                kept.append(f"line {parsed.positions.raw(call)[0]}")
                continue
            weight = cst.Arg(cst.SimpleString('"weight"'))
            if last.keyword is not None:  # `module=m`
                weight = weight.with_changes(keyword=cst.Name("tensor_name"), equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            comma = last.comma if isinstance(last.comma, cst.Comma) else None
            args = [*call.args[:-1], last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    weight.with_changes(comma=comma) if comma is not None else weight]
        func = cst.parse_expression(f"{payload.guard}.remove_parametrizations")
        plan.replace(call, call.with_changes(func=func.with_changes(lpar=call.func.lpar, rpar=call.func.rpar),
                                             args=args))
        spec = ImportSpec("torch.nn.utils", "parametrize")
        if payload.guard_import and spec not in plan.imports:
            plan.imports.append(spec)
        moved += 1
    return moved, kept


def _rechained(func: cst.BaseExpression, steps: int) -> cst.Attribute | None:
    """`X.spectral_norm` (X: `steps` `.value` steps up, naming torch.nn.utils) ->
    `X.parametrizations.spectral_norm`."""
    import libcst as cst

    prefix = func
    for _ in range(steps):
        if not isinstance(prefix, cst.Attribute):
            return None
        prefix = prefix.value
    return cst.Attribute(value=cst.Attribute(value=prefix, attr=cst.Name("parametrizations")),
                         attr=cst.Name("spectral_norm"), lpar=func.lpar, rpar=func.rpar)


def _rebind(parsed: ParsedFile, plan: Plan, name: str, payload: Migrate) -> bool:
    """Point the one binding of `name` (an import from torch.nn.utils, or a module-level
    alias) at the parametrizations API. False when it is not written so it can be."""
    import libcst as cst

    from snlint.edit.names import dotted
    from snlint.edit.plan import ImportSpec
    from snlint.edit.syntax import without

    if payload.rebind == "import":
        alias = parsed.names.import_of(name)
        node = parsed.parent(alias) if alias is not None else None
        if not isinstance(node, cst.ImportFrom) or dotted(alias.name) != "spectral_norm":
            return False
        if dotted(node.module) not in (UTILS, HOOK_SN):
            return False
        if len(node.names) == 1:  # type: ignore[arg-type]
            plan.replace(node, node.with_changes(module=cst.parse_expression("torch.nn.utils.parametrizations")))
        else:
            index = next(i for i, a in enumerate(node.names) if a is alias)  # type: ignore[arg-type]
            plan.replace(node, node.with_changes(names=without(node.names, index)))  # type: ignore[arg-type]
            plan.imports.append(ImportSpec("torch.nn.utils.parametrizations", "spectral_norm",
                                           None if name == "spectral_norm" else name))
        return True
    value = parsed.names.alias_value(name)
    new = _rechained(value, payload.alias_chain) if isinstance(value, cst.Attribute) else None
    if new is None:
        return False
    plan.replace(value, new)
    return True


def init_target(parsed: ParsedFile, call: cst.Call, params: Sequence[str]) -> cst.Attribute | None:
    """The `X.weight` an init call writes (`nn.init.x_(X.weight[.data])`,
    `X.weight[.data].normal_()`)."""
    import libcst as cst

    from snlint.edit.syntax import keyword, positional

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
    import libcst as cst

    inner = cst.Attribute(value=cst.Attribute(value=attr.value, attr=cst.Name("parametrizations")),
                          attr=cst.Name(param))
    return cst.Attribute(value=inner, attr=cst.Name("original"), lpar=attr.lpar, rpar=attr.rpar)


def _sn_targets(parsed: ParsedFile, call: cst.Call) -> set[str]:
    """The expressions that hold the layer an SN call wraps: its one assignment target
    and its module argument (`self.conv`)."""
    import libcst as cst

    from snlint.edit.syntax import module_arg

    out = set()
    parent = parsed.parent(call)
    if isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1:
        out.add(parsed.code(parent.targets[0].target).strip())
    arg = module_arg(call)
    if arg is not None and isinstance(arg.value, (cst.Name, cst.Attribute)):
        out.add(parsed.code(arg.value).strip())
    return out


def _migrate_inits(parsed: ParsedFile, plan: Plan, calls: list[cst.Call]) -> int:
    """Point the inits of `X.weight` / `X.weight_orig` after an SN call the migration moves,
    in its function and loop, at `parametrizations.weight.original`, so that the migration
    never creates an SN106. An init before the SN call writes a weight with no
    parametrization yet; one outside its loop names another layer."""
    import libcst as cst

    from snlint.edit.syntax import enclosing_function, walk

    count = 0
    # Per function: where each SN call ends, the loop it is in, the layers it wraps.
    by_scope: dict[int, tuple[cst.CSTNode, list[tuple[tuple[int, int], int | None, set[str]]]]] = {}
    for call in calls:
        scope = enclosing_function(parsed, call) or parsed.module
        _, _, el, ec = parsed.positions.raw(call)
        loops = _loops(parsed, call, scope)
        by_scope.setdefault(id(scope), (scope, []))[1].append(
            ((el, ec), loops[0] if loops else None, _sn_targets(parsed, call)))
    for scope, wrapped in by_scope.values():
        if not any(targets for _, _, targets in wrapped):
            continue
        for node in walk(scope):
            if not isinstance(node, cst.Call) or id(node) in plan.changes:
                continue
            target = init_target(parsed, node, ["weight", "weight_orig"])
            if target is None:
                continue
            layer = parsed.code(target.value).strip()
            start = tuple(parsed.positions.raw(node)[:2])
            loops = _loops(parsed, node, scope)
            if any(layer in targets and start >= end and (loop is None or loop in loops)
                   for end, loop, targets in wrapped):
                plan.replace(target, original_of(target, "weight"))
                count += 1
    return count


def _loops(parsed: ParsedFile, node: cst.CSTNode, scope: cst.CSTNode) -> list[int]:
    """id() of each `for` loop around `node` inside `scope`, innermost first."""
    import libcst as cst

    out = []
    for anc in parsed.ancestors(node):
        if anc is scope:
            break
        if isinstance(anc, cst.For):
            out.append(id(anc))
    return out
