"""The fixes: one libcst transformation per rule, planned from the node a finding points at.

A *plan* is what one fix does to one file: original nodes mapped to their replacements
(or removed), and imports the file needs. Plans never edit text; `apply_plans` runs one
libcst transformer that swaps the planned nodes (so several plans that do not overlap
can be applied in one pass) and libcst's AddImportsVisitor, and the tree prints every
byte it did not replace exactly as it was read.

Every planner returns None where no mechanical fix exists; the finding then carries no
fix and its message tells the user what to do.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import libcst as cst

from snlint.config import Config
from snlint.findings import Finding
from snlint.fix.context import HOOK_SN, PARAM_SN, FileContext, dotted, scope_bindings
from snlint.torchapi import (
    INIT_FUNCTION, INPLACE_TENSOR_INIT, KINDS, NEEDS_SN, SN_HOOK, SN_PARAM, weight_norm_api,
)

SAFE, UNSAFE = "safe", "unsafe"

KEYS_HOOK = "`weight_orig`, `weight_u`, `weight_v`"
KEYS_PARAM = ("`parametrizations.weight.original`, `parametrizations.weight.0._u`, "
              "`parametrizations.weight.0._v`")


@dataclass(frozen=True)
class ImportSpec:
    module: str
    obj: str | None = None
    asname: str | None = None


@dataclass
class Plan:
    """One fix for one file: node replacements (by identity) and the imports they need."""

    code: str
    applicability: str
    message: str
    changes: dict[int, tuple[cst.CSTNode, Any]] = field(default_factory=dict)
    imports: list[ImportSpec] = field(default_factory=list)

    def replace(self, node: cst.CSTNode, new: Any) -> "Plan":
        self.changes[id(node)] = (node, new)
        return self

    def nodes(self) -> list[cst.CSTNode]:
        return [node for node, _ in self.changes.values()]


# ------------------------------------------------------------------------ applying plans

class _Apply(cst.CSTTransformer):
    """Swaps the planned nodes. A statement a plan removes keeps the comment lines above
    it: they move onto the next statement of its block (or the block's end)."""

    def __init__(self, changes: dict[int, tuple[cst.CSTNode, Any]]) -> None:
        super().__init__()
        self.changes = changes

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        change = self.changes.get(id(original_node))
        if change is not None and change[0] is original_node:
            return change[1]
        if isinstance(original_node, (cst.Module, cst.IndentedBlock)) and \
                type(updated_node) is type(original_node):
            return self._keep_comments(original_node, updated_node)
        return updated_node

    def _removed(self, node: cst.CSTNode) -> bool:
        change = self.changes.get(id(node))
        return change is not None and change[0] is node and isinstance(change[1], cst.RemovalSentinel)

    def _keep_comments(self, original: Any, updated: Any) -> Any:
        if not any(self._removed(child) and _has_comment(child) for child in original.body):
            return updated
        kept = [child for child in original.body if not self._removed(child)]
        if len(kept) != len(updated.body):
            return updated  # not one updated statement per kept one: leave it as it is
        body: list[cst.BaseStatement] = []
        pending: list[cst.EmptyLine] = []
        new_children = iter(updated.body)
        for child in original.body:
            if self._removed(child):
                if _has_comment(child):
                    pending.extend(child.leading_lines)
                continue
            new = next(new_children)
            if pending:
                new = new.with_changes(leading_lines=[*pending, *new.leading_lines])
                pending = []
            body.append(new)
        if pending and isinstance(updated, cst.IndentedBlock) and not body:
            body = [cst.SimpleStatementLine([cst.Pass()], leading_lines=pending)]
        elif pending:
            return updated.with_changes(body=body, footer=[*pending, *updated.footer])
        return updated.with_changes(body=body)


def _has_comment(statement: cst.CSTNode) -> bool:
    return any(line.comment is not None for line in getattr(statement, "leading_lines", ()))


def apply_plans(ctx: FileContext, plans: Sequence[Plan]) -> str:
    """The file's text with `plans` applied together (they must not overlap)."""
    changes: dict[int, tuple[cst.CSTNode, Any]] = {}
    imports: list[ImportSpec] = []
    for plan in plans:
        changes.update(plan.changes)
        imports.extend(i for i in plan.imports if i not in imports)
    tree = ctx.module.visit(_Apply(changes)) if changes else ctx.module
    if imports:
        # libcst.codemod costs a quarter of a second to import: only when a fix needs it.
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import AddImportsVisitor

        context = CodemodContext()
        for spec in imports:
            AddImportsVisitor.add_needed_import(context, spec.module, spec.obj, spec.asname)
        tree = AddImportsVisitor(context).transform_module(tree)
    if changes:
        tree = _prune_imports(ctx, changes, tree)
    return tree.code


# ------------------------------------------------------------------------ imports a fix left unused

def _import_names(node: cst.CSTNode) -> Iterator[str]:
    """Names read or mentioned outside import statements: every Name (attributes too),
    and the words of every string (`__all__`, string annotations)."""
    if isinstance(node, (cst.Import, cst.ImportFrom)):
        return
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, (cst.SimpleString, cst.FormattedStringText)):
        yield from re.findall(r"[A-Za-z_][A-Za-z_0-9]*", node.value)
    for child in node.children:
        yield from _import_names(child)


def _sole_import(bindings: dict[str, list[Any]], name: str) -> Any | None:
    """The assignment of `name` when it is bound exactly once in the whole file, by
    `from m import x [as name]` or `import m as name`; else None."""
    from libcst.metadata import ImportAssignment

    found = bindings.get(name, [])
    if len(found) != 1 or not isinstance(found[0], ImportAssignment):
        return None
    node = found[0].node
    if isinstance(node, cst.ImportFrom):
        if isinstance(node.names, cst.ImportStar) or dotted(node.module) == "__future__":
            return None
    elif not isinstance(node, cst.Import):
        return None
    return found[0]


def _bound_alias(node: cst.Import | cst.ImportFrom, name: str) -> int | None:
    """The index of the alias of `node` that binds `name` (not a bare `import a.b`)."""
    for i, alias in enumerate(node.names):  # type: ignore[arg-type]
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            if alias.asname.name.value == name:
                return i
        elif isinstance(node, cst.ImportFrom) and dotted(alias.name) == name:
            return i
    return None


def _prune_imports(ctx: FileContext, changes: dict[int, tuple[cst.CSTNode, Any]],
                   tree: cst.Module) -> cst.Module:
    """`tree` without the imports the changes left unused: a name that an import binds
    (once in the file), that the original file read and that the changed nodes held,
    and that the fixed file reads and mentions nowhere. Every other import stays."""
    held: Counter[str] = Counter(n.value for node, _ in changes.values() for n in _walk(node)
                                 if isinstance(n, cst.Name))
    # A name the original file reads more often than the changed nodes hold it is still
    # read: only the others need a look at the whole new tree.
    touched = {name for name in held if name in ctx.names.import_nodes
               and ctx.names.loads[name] <= held[name]}
    if not touched:
        return tree
    gone = touched - set(_import_names(tree))
    if not gone:
        return tree
    from libcst.metadata import MetadataWrapper, ParentNodeProvider

    before = ctx.bindings()
    wrapper = MetadataWrapper(tree)  # a copy: a fix may reuse one node in several places
    tree = wrapper.module
    after = scope_bindings(wrapper)
    statements: dict[int, tuple[Any, list[str]]] = {}  # import statement -> names it loses
    for name in sorted(gone):
        was, now = _sole_import(before, name), _sole_import(after, name)
        if was is None or now is None or not was.references or now.references:
            continue  # unused before the fix (not the fix's doing), or still read
        statements.setdefault(id(now.node), (now.node, []))[1].append(name)
    removals: dict[int, tuple[cst.CSTNode, Any]] = {}
    emptied: dict[int, tuple[Any, list[cst.CSTNode]]] = {}  # statement line -> imports it loses
    parents = None
    for node, names in statements.values():
        new = node
        for name in names:
            index = _bound_alias(new, name)
            if index is not None:
                new = new.with_changes(names=_without(new.names, index)) if len(new.names) > 1 else None
            if new is None:
                break
        if new is not None:
            if new is not node:
                removals[id(node)] = (node, new)
            continue
        if parents is None:
            parents = wrapper.resolve(ParentNodeProvider)
        line = parents.get(node)
        if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            emptied.setdefault(id(line), (line, []))[1].append(node)
    for line, dropped in emptied.values():
        body = [b for b in line.body if not any(b is d for d in dropped)]
        if not body:
            removals[id(line)] = (line, cst.RemoveFromParent() if isinstance(line, cst.SimpleStatementLine)
                                  else line.with_changes(body=[cst.Pass()]))
            continue
        if any(line.body[-1] is d for d in dropped):
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        removals[id(line)] = (line, line.with_changes(body=body))
    return tree.visit(_Apply(removals)) if removals else tree


def overlaps(ctx: FileContext, a: Plan, b: Plan) -> bool:
    for x in a.nodes():
        (xs, xe) = ctx.range(x)
        for y in b.nodes():
            (ys, ye) = ctx.range(y)
            if xs < ye and ys < xe:
                return True
            if x is y:
                return True
    return False


def signature(ctx: FileContext, plan: Plan) -> tuple:
    """What a plan does, comparable across plans (two findings can share one fix)."""
    parts = []
    for node, new in plan.changes.values():
        rendered = "<removed>" if isinstance(new, cst.RemovalSentinel) else _render(ctx, new)
        parts.append((ctx.range(node), rendered))
    return tuple(sorted(parts)), tuple(sorted((i.module, i.obj or "", i.asname or "") for i in plan.imports))


def _render(ctx: FileContext, node: cst.CSTNode) -> str:
    try:
        return ctx.module.code_for_node(node)
    except Exception:  # noqa: BLE001 - a node that cannot print on its own
        return repr(node)


# ------------------------------------------------------------------------ entry point

Planner = Callable[[Finding, FileContext, Config], "Plan | None"]


def plan_for(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    """The fix for `finding` in the parsed file `ctx`, or None."""
    if finding.cell is not None:
        return None  # notebook cells: positions are within a cell, not the file
    planner = PLANNERS.get(finding.code)
    if planner is None:
        return None
    return planner(finding, ctx, config)


# ------------------------------------------------------------------------ syntax helpers

def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a
    return None


def _has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def _module_arg(call: cst.Call) -> cst.Arg | None:
    """The module an SN call wraps: its first positional argument or `module=`."""
    if _has_star(call):
        return None
    pos = _positional(call)
    return pos[0] if pos else _keyword(call, "module")


def _last_name(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _torch_nn_type(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """`Conv2d` when `node` names torch.nn.Conv2d (through any alias), else None."""
    qual = ctx.qualify(node)
    if qual is None:
        return None
    head, _, name = qual.rpartition(".")
    if head in ("torch.nn",) or head.startswith("torch.nn.modules"):
        return name if name in KINDS else None
    return None


def _comments(node: cst.CSTNode, skip: cst.CSTNode | None = None) -> bool:
    """Whether `node` holds a comment outside the subtree `skip`."""

    class Finder(cst.CSTVisitor):
        found = False

        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is skip:
                return False
            if isinstance(n, cst.Comment):
                Finder.found = True
            return not Finder.found

    finder = Finder()
    node.visit(finder)
    return Finder.found


def _standalone(code: str) -> bool:
    """Whether an expression's text is valid without enclosing brackets."""
    try:
        ast.parse(code.strip(), mode="eval")
        return True
    except SyntaxError:
        return False


def _lift(ctx: FileContext, call: cst.Call, arg: cst.Arg) -> cst.BaseExpression:
    """The expression `arg` of `call`, put where `call` was (the call unwrapped), with
    the call's own parentheses, and the comments inside the call kept."""
    value = arg.value
    others = [a for a in call.args if a is not arg]
    lpar = list(getattr(value, "lpar", ()))
    rpar = list(getattr(value, "rpar", ()))
    if not others and _comments(call, skip=value):
        close = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else arg.whitespace_after_arg
        lpar = [cst.LeftParen(whitespace_after=call.whitespace_before_args), *lpar]
        rpar = [*rpar, cst.RightParen(whitespace_before=close)]
    elif not lpar and not _standalone(ctx.code(value)):
        lpar, rpar = [cst.LeftParen()], [cst.RightParen()]
    return value.with_changes(lpar=[*call.lpar, *lpar], rpar=[*rpar, *call.rpar])


def _merge_comma(prev: Any, removed: Any) -> Any:
    """The comma the item before a removed last item keeps: the removed one's (so a
    trailing comma and the line break before the closing bracket stay), with a comment
    that followed the previous item kept."""
    if not isinstance(removed, cst.Comma):
        return cst.MaybeSentinel.DEFAULT
    if (isinstance(prev, cst.Comma) and isinstance(prev.whitespace_after, cst.ParenthesizedWhitespace)
            and isinstance(removed.whitespace_after, cst.ParenthesizedWhitespace)):
        kept, tail = prev.whitespace_after, removed.whitespace_after
        return removed.with_changes(whitespace_after=kept.with_changes(
            indent=tail.indent, last_line=tail.last_line))
    return removed


def _without(items: Sequence[Any], index: int) -> list[Any]:
    """`items` (Arg, Element, ImportAlias: things with a `comma`) without one, commas fixed."""
    items = list(items)
    removed = items.pop(index)
    if index == len(items) and index > 0:
        prev = items[index - 1]
        changes = {"comma": _merge_comma(prev.comma, removed.comma)}
        if isinstance(prev, cst.Arg):
            changes["whitespace_after_arg"] = removed.whitespace_after_arg
        items[index - 1] = prev.with_changes(**changes)
    return items


def _remove_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    index = next(i for i, a in enumerate(call.args) if a is arg)
    return call.with_changes(args=_without(call.args, index))


def _statement(ctx: FileContext, node: cst.CSTNode) -> tuple[cst.BaseSmallStatement, cst.CSTNode] | None:
    """The small statement holding `node` directly (its value), and its line."""
    parent = ctx.parent(node)
    if isinstance(parent, (cst.Expr, cst.Assign)) and parent.value is node:
        line = ctx.parent(parent)
        if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return parent, line
    return None


def _remove_statement(plan: Plan, small: cst.BaseSmallStatement, line: cst.CSTNode) -> Plan:
    body = [s for s in line.body if s is not small]  # type: ignore[attr-defined]
    if not body:
        if isinstance(line, cst.SimpleStatementLine):
            return plan.replace(line, cst.RemoveFromParent())  # an emptied block gets `pass`
        return plan.replace(line, line.with_changes(body=[cst.Pass()]))
    if line.body[-1] is small:  # type: ignore[attr-defined]
        body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return plan.replace(line, line.with_changes(body=body))


def _enclosing_function(ctx: FileContext, node: cst.CSTNode) -> cst.FunctionDef | None:
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.FunctionDef):
            return anc
    return None


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _keys_note(api: str | None, what: str = "the layer") -> str:
    if api == SN_HOOK:
        return f"{what}'s state_dict keys change (`weight` instead of {KEYS_HOOK})"
    if api == SN_PARAM:
        return f"{what}'s state_dict keys change (`weight` instead of `parametrizations.weight.original` and its `_u`/`_v`)"
    return f"{what}'s state_dict keys change"


def _sn_call(finding: Finding, ctx: FileContext) -> cst.Call | None:
    """The SN call the finding points at, when it is one (a torch SN function, or the
    project's own SN wrapper the check recognised)."""
    call = ctx.at(finding.span, cst.Call)
    if call is None:
        return None
    if ctx.sn_api(call.func) is None and finding.get("api") != "custom":
        return None
    return call


# ------------------------------------------------------------------------ loops and apply()

def _filter_var(ctx: FileContext, call: cst.Call, arg: cst.Arg | None) -> str | None:
    """The variable SN is applied to when it comes from a loop or an apply() function
    (`for m in self.modules(): ... spectral_norm(m)`), else None."""
    if arg is None or not isinstance(arg.value, cst.Name):
        return None
    name = arg.value.value
    for anc in ctx.ancestors(call):
        if isinstance(anc, (cst.For, cst.CompFor)) and name in _names_in(anc.target):
            return name
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            params = anc.params
            if any(p.name.value == name for p in [*params.posonly_params, *params.params]):
                return name
            return None
    return None


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in _walk(node) if isinstance(n, cst.Name)}


def _isinstance_on(ctx: FileContext, node: cst.CSTNode, var: str) -> bool:
    return (isinstance(node, cst.Call) and ctx.qualify(node.func) in (None, "builtins.isinstance")
            and _last_name(node.func) == "isinstance" and len(node.args) == 2
            and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == var)


def _narrow_filter(finding: Finding, ctx: FileContext, call: cst.Call, var: str,
                   layer: str | None, why: str) -> Plan | None:
    """Remove `layer` from the isinstance filter that guards `call` (loop or apply fn)."""
    if not layer:
        return None
    checks: list[cst.Call] = []
    prev: cst.CSTNode = call
    for anc in ctx.ancestors(call):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.For)):
            break
        if isinstance(anc, cst.If) and prev is anc.body:
            if any(isinstance(n, cst.UnaryOperation) for n in _walk(anc.test)):
                return None
            checks = [n for n in _walk(anc.test) if _isinstance_on(ctx, n, var)]
            if checks:
                break
        prev = anc
    for check in checks:
        types = check.args[1].value
        if isinstance(types, cst.Tuple):
            hits = [i for i, el in enumerate(types.elements) if _last_name(el.value) == layer]
            if not hits or isinstance(types.elements[hits[0]], cst.StarredElement):
                continue
            if len(types.elements) - len(hits) < 1:
                return None
            elements = list(types.elements)
            for i in reversed(hits):
                elements = _without(elements, i)
            if len(elements) == 1 and not isinstance(elements[0], cst.StarredElement):
                new = elements[0].value
            else:
                new = types.with_changes(elements=elements)
            plan = Plan(finding.code, SAFE, "")
            plan.replace(types, new)
        elif _last_name(types) == layer:
            parent = ctx.parent(check)
            if not (isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.Or)):
                return None
            other = parent.right if parent.left is check else parent.left
            plan = Plan(finding.code, SAFE, "")
            plan.replace(parent, other.with_changes(lpar=[*parent.lpar, *other.lpar],
                                                     rpar=[*other.rpar, *parent.rpar]))
        else:
            continue
        plan.message = (f"Remove {layer} from the isinstance filter that applies spectral norm "
                        f"({why}); {_keys_note(finding.get('api'), f'each {layer}')}")
        return plan
    return None


# ------------------------------------------------------------------------ SN101, SN102, SN103

def _unwrap(finding: Finding, ctx: FileContext, call: cst.Call, arg: cst.Arg, message: str,
            applicability: str = SAFE) -> Plan:
    """Remove the SN call around `arg`: `spectral_norm(x)` -> `x`; a statement that only
    re-applies SN (`self.c = spectral_norm(self.c)`, `spectral_norm(self.c)`) goes."""
    plan = Plan(finding.code, applicability, message)
    stmt = _statement(ctx, call)
    if stmt is not None and len(call.args) >= 1:
        small, line = stmt
        if isinstance(small, cst.Expr):
            return _remove_statement(plan, small, line)
        if (isinstance(small, cst.Assign) and len(small.targets) == 1
                and ctx.code(small.targets[0].target).strip() == ctx.code(arg.value).strip()):
            return _remove_statement(plan, small, line)
    return plan.replace(call, _lift(ctx, call, arg))


def _placement(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    call = _sn_call(finding, ctx)
    if call is None:
        return None
    arg = _module_arg(call)
    if arg is None:
        return None
    layer = finding.get("layer")
    var = _filter_var(ctx, call, arg)
    if var is not None or finding.get("from_filter"):
        if finding.code == "SN103" or var is None:
            return None
        return _narrow_filter(finding, ctx, call, var, layer, "the loop or apply() function")
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
        return _unwrap(finding, ctx, call, arg,
                       f"Remove the second (outer) spectral norm call; {keys}")
    if finding.code == "SN101":
        return _unwrap(finding, ctx, call, arg,
                       f"Remove spectral norm from {what} (the layer stays); "
                       f"{_keys_note(api, f'the {what}')}")
    # SN102
    kind = finding.get("kind")
    if kind == "container" or what in ("Sequential", "ModuleList", "ModuleDict"):
        return _container(finding, ctx, call, arg, what)
    if kind == "module":
        return None  # a project module without a weight: SN belongs on its layers, which we cannot see here
    note = _keys_note(api, "the PReLU") if what == "PReLU" else "it has no state for SN to change"
    return _unwrap(finding, ctx, call, arg, f"Remove spectral norm from {what} (the module stays); {note}")


def _container(finding: Finding, ctx: FileContext, call: cst.Call, arg: cst.Arg,
               what: str) -> Plan | None:
    """SN on a Sequential/ModuleList/ModuleDict literal: move it onto the Conv/Linear
    layers inside (unsafe), or just remove it when there are none."""
    inner = arg.value
    if not isinstance(inner, cst.Call):
        return None
    kind = _torch_nn_type(ctx, inner.func)
    items: list[cst.BaseExpression] = []
    if kind == "Sequential":
        if _has_star(inner) or inner.args and any(a.keyword for a in inner.args):
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
              and KINDS.get(_torch_nn_type(ctx, item.func) or "") in NEEDS_SN]
    if not layers:
        return _unwrap(finding, ctx, call, arg,
                       f"Remove spectral norm from the {what} (it holds no Conv/Linear layer)")
    extra = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace(""))
             for a in call.args if a is not arg]
    inside = {id(layer): (layer, cst.Call(func=call.func, args=[cst.Arg(layer), *extra]))
              for layer in layers}
    moved = inner.visit(_Apply(inside))
    plan = Plan(finding.code, UNSAFE,
                f"Move spectral norm from the {what} onto the {len(layers)} Conv/Linear "
                f"layer{'s' if len(layers) != 1 else ''} inside it; their state_dict keys change "
                f"(`weight` becomes "
                f"{KEYS_HOOK if ctx.sn_api(call.func) == SN_HOOK else KEYS_PARAM})")
    return plan.replace(call, moved.with_changes(lpar=[*call.lpar, *moved.lpar],
                                                 rpar=[*moved.rpar, *call.rpar]))


# ------------------------------------------------------------------------ SN104, SN105

def _wrong_parameter(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    call = _sn_call(finding, ctx)
    if call is None or _has_star(call):
        return None
    name_arg = _keyword(call, "name")
    pos = _positional(call)
    if name_arg is None and len(pos) >= 2:
        name_arg = pos[1]
    if name_arg is None:
        return None
    old = ctx.code(name_arg.value)
    api = finding.get("api")
    keys = ("`weight_orig`, `weight_u`, `weight_v` instead of `bias_orig`, `bias_u`, `bias_v`"
            if api == SN_HOOK else
            "`bias`, `parametrizations.weight.original`, `parametrizations.weight.0._u` and `._v` "
            "instead of `weight` and `parametrizations.bias.original`")
    message = f"Drop name={old} so spectral norm normalizes `weight`, its default; state_dict keys change ({keys})"
    plan = Plan(finding.code, SAFE, message)
    if name_arg.keyword is None and pos.index(name_arg) < len(pos) - 1:
        # Positional, with more positional arguments after it: name the weight instead.
        value = name_arg.value
        quote = value.value[0] if isinstance(value, cst.SimpleString) and value.value[0] in "'\"" else '"'
        new = cst.SimpleString(f"{quote}weight{quote}", lpar=value.lpar, rpar=value.rpar)
        plan.message = f"Normalize `weight` instead of {old}; state_dict keys change ({keys})"
        return plan.replace(value, new)
    return plan.replace(call, _remove_arg(call, name_arg))


def _wrong_dim(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    arg = ctx.at(finding.span, cst.Arg)
    if arg is None:
        return None
    call = ctx.parent(arg)
    if not isinstance(call, cst.Call):
        return None
    pos = _positional(call)
    if arg.keyword is None and (arg not in pos or pos.index(arg) != len(pos) - 1):
        return None
    if arg.keyword is not None and arg.keyword.value != "dim":
        return None
    plan = Plan(finding.code, SAFE,
                f"Drop {ctx.code(arg).strip().rstrip(',')} so the API's default, the layer's output "
                f"axis, applies; state_dict keys stay, the u/v vectors change shape (drop them "
                f"from old checkpoints)")
    return plan.replace(call, _remove_arg(call, arg))


# ------------------------------------------------------------------------ SN106

def _init_target(ctx: FileContext, call: cst.Call, params: Sequence[str]) -> cst.Attribute | None:
    """The `X.weight` an init call writes (`nn.init.x_(X.weight[.data])`,
    `X.weight[.data].normal_()`)."""
    node: cst.CSTNode | None = None
    qual = ctx.qualify(call.func)
    if qual is not None and INIT_FUNCTION.match(qual):
        pos = _positional(call)
        node = pos[0].value if pos else (_keyword(call, "tensor").value if _keyword(call, "tensor") else None)
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value in INPLACE_TENSOR_INIT:
        node = call.func.value
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    if isinstance(node, cst.Attribute) and node.attr.value in params:
        return node
    return None


def _original(attr: cst.Attribute, param: str) -> cst.Attribute:
    """`X.weight` -> `X.parametrizations.weight.original` (parentheses kept)."""
    inner = cst.Attribute(value=cst.Attribute(value=attr.value, attr=cst.Name("parametrizations")),
                          attr=cst.Name(param))
    return cst.Attribute(value=inner, attr=cst.Name("original"), lpar=attr.lpar, rpar=attr.rpar)


def _init_of_derived(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    call = ctx.at(finding.span, cst.Call)
    if call is None:
        return None
    param = finding.get("param") or "weight"
    target = _init_target(ctx, call, [param])
    if target is None:
        return None
    where = ctx.code(target.value)
    plan = Plan(finding.code, SAFE,
                f"Initialize `{where}.parametrizations.{param}.original` (the trained parameter) "
                f"instead of `{where}.{param}`, which is recomputed on every access; state_dict "
                f"keys do not change")
    return plan.replace(target, _original(target, param))


# ------------------------------------------------------------------------ SN107, SN501

def _param_sn_ref(ctx: FileContext, plan: Plan) -> cst.BaseExpression | None:
    """An expression for torch.nn.utils.parametrizations.spectral_norm in this file,
    adding an import when the file has no way to name it."""
    for name in ctx.sn_names():
        if ctx.sn_api(cst.Name(name)) == SN_PARAM:
            return cst.Name(name)
    if ctx.is_free("spectral_norm"):
        plan.imports.append(ImportSpec("torch.nn.utils.parametrizations", "spectral_norm"))
        return cst.Name("spectral_norm")
    ref = ctx.binding_for(PARAM_SN)  # `nn.utils.parametrizations.spectral_norm`
    if ref is not None:
        return cst.parse_expression(ref)
    if ctx.is_free("parametrizations"):
        plan.imports.append(ImportSpec("torch.nn.utils", "parametrizations"))
        return cst.parse_expression("parametrizations.spectral_norm")
    return None


def _param_chain(ctx: FileContext, func: cst.Attribute) -> cst.BaseExpression | None:
    """`X.spectral_norm` (X naming torch.nn.utils) -> `X.parametrizations.spectral_norm`."""
    prefix: cst.BaseExpression = func.value
    if ctx.qualify(prefix) == HOOK_SN and isinstance(prefix, cst.Attribute):
        prefix = prefix.value  # torch.nn.utils.spectral_norm.spectral_norm
    if ctx.qualify(prefix) != "torch.nn.utils":
        return None
    return cst.Attribute(value=cst.Attribute(value=prefix, attr=cst.Name("parametrizations")),
                         attr=cst.Name("spectral_norm"), lpar=func.lpar, rpar=func.rpar)


def _rebind(ctx: FileContext, plan: Plan, name: str) -> bool:
    """Point the one binding of `name` (an import from torch.nn.utils, or a module-level
    alias) at the parametrizations API. False when it is bound some other way."""
    entry = ctx.names.import_nodes.get(name)
    if entry is not None:
        node, alias = entry
        if not isinstance(node, cst.ImportFrom) or dotted(alias.name) != "spectral_norm":
            return False
        if dotted(node.module) not in ("torch.nn.utils", "torch.nn.utils.spectral_norm"):
            return False
        if len(node.names) == 1:  # type: ignore[arg-type]
            plan.replace(node, node.with_changes(
                module=cst.parse_expression("torch.nn.utils.parametrizations")))
        else:
            index = next(i for i, a in enumerate(node.names) if a is alias)  # type: ignore[arg-type]
            plan.replace(node, node.with_changes(names=_without(node.names, index)))  # type: ignore[arg-type]
            plan.imports.append(ImportSpec("torch.nn.utils.parametrizations", "spectral_norm",
                                           None if name == "spectral_norm" else name))
        return True
    value = ctx.names.aliases.get(name)
    if isinstance(value, cst.Attribute):
        new = _param_chain(ctx, value)
        if new is not None:
            plan.replace(value, new)
            return True
    return False


def _sn_targets(ctx: FileContext, call: cst.Call) -> set[str]:
    """The expressions that hold the layer an SN call wraps (`self.conv` in
    `self.conv = spectral_norm(...)`, or the argument `self.conv` of `spectral_norm(self.conv)`)."""
    out = set()
    parent = ctx.parent(call)
    if isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1:
        out.add(ctx.code(parent.targets[0].target).strip())
    arg = _module_arg(call)
    if arg is not None and isinstance(arg.value, (cst.Name, cst.Attribute)):
        out.add(ctx.code(arg.value).strip())
    return out


def _migrate_inits(ctx: FileContext, plan: Plan, calls: list[cst.Call]) -> int:
    """Inits of `X.weight` / `X.weight_orig` of layers the migration moves to the
    parametrizations API, in the same function: pointed at `parametrizations.weight.original`,
    so the migration never creates an SN106."""
    count = 0
    by_scope: dict[int, tuple[cst.CSTNode, set[str]]] = {}
    for call in calls:
        scope = _enclosing_function(ctx, call) or ctx.module
        by_scope.setdefault(id(scope), (scope, set()))[1].update(_sn_targets(ctx, call))
    for scope, targets in by_scope.values():
        if not targets:
            continue
        for node in _walk(scope):
            if not isinstance(node, cst.Call) or id(node) in plan.changes:
                continue
            target = _init_target(ctx, node, ["weight", "weight_orig"])
            if target is not None and ctx.code(target.value).strip() in targets:
                plan.replace(target, _original(target, "weight"))
                count += 1
    return count


def _migrate(finding: Finding, ctx: FileContext, *, whole_file: bool) -> Plan | None:
    """Move an SN call from the hook API to torch.nn.utils.parametrizations.spectral_norm."""
    call = ctx.at(finding.span, cst.Call)
    if call is None or ctx.sn_api(call.func) != SN_HOOK:
        return None
    plan = Plan(finding.code, UNSAFE, "")
    func = call.func
    migrated = [call]
    scope = "this call"
    if isinstance(func, cst.Attribute):
        new = _param_chain(ctx, func)
        if new is None:
            return None
        plan.replace(func, new)
    elif isinstance(func, cst.Name):
        name = func.value
        only_use = ctx.names.loads[name] == 1
        if (whole_file or only_use) and _rebind(ctx, plan, name):
            migrated = [n for n in ctx.positions if isinstance(n, cst.Call)
                        and isinstance(n.func, cst.Name) and n.func.value == name]
            if len(migrated) > 1:
                scope = f"all {len(migrated)} calls of `{name}` in this file (its import changes)"
            else:
                scope = "this call (the file's only use of the hook API, so its import changes)"
        else:
            ref = _param_sn_ref(ctx, plan)
            if ref is None:
                return None
            plan.replace(func, ref.with_changes(lpar=func.lpar, rpar=func.rpar))
    else:
        return None
    inits = _migrate_inits(ctx, plan, migrated)
    init_note = (f"; {inits} init{'s' if inits != 1 else ''} of `.weight` now "
                 f"target{'s' if inits == 1 else ''} `parametrizations.weight.original`" if inits else "")
    plan.message = (f"Use torch.nn.utils.parametrizations.spectral_norm for {scope}{init_note}; "
                    f"checkpoint keys change: {KEYS_HOOK} -> {KEYS_PARAM}")
    return plan


def _never_applied(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    plan = _migrate(finding, ctx, whole_file=False)
    if plan is not None:
        plan.message = ("Use the parametrizations API, which normalizes the layer even though "
                        "its owner reads the weight directly (the layer's output changes). "
                        + plan.message)
    return plan


def _legacy(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    return _migrate(finding, ctx, whole_file=True)


# ------------------------------------------------------------------------ SN201

def _sn_wrapper(finding: Finding, ctx: FileContext, plan: Plan) -> tuple[cst.BaseExpression, str | None] | None:
    """The SN callable to wrap a layer with: the spelling the discriminator uses when this
    file calls it so, else the one this file calls most (an alias, a partial with its
    settings), else the discriminator's if this file can name it, else
    parametrizations.spectral_norm (imported). A helper that builds a layer
    (`snconv2d`) cannot wrap one, so only SN functions and partials of them count."""
    wanted = finding.get("sn_callee") or ""
    counts = ctx.sn_callees()
    if counts:
        text = wanted if wanted in counts else sorted(
            counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        expr = cst.parse_expression(text)
        return expr, ctx.sn_api(expr) or ctx.sn_partial_api(expr)
    if wanted:
        try:
            expr = cst.parse_expression(wanted)
        except cst.ParserSyntaxError:
            expr = None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            api = ctx.sn_api(expr) or ctx.sn_partial_api(expr)
            if api is not None:
                return expr, api
    if finding.get("sn_api") == "custom" and wanted.isidentifier() and _binds(ctx.module, wanted):
        # The project's own SN wrapper (`SpectralNorm(module)`): mixing it with torch's
        # SN in one model would normalize layers two different ways.
        return cst.Name(wanted), "custom"
    names = ctx.sn_names()
    if names:
        return cst.Name(names[0]), ctx.sn_api(cst.Name(names[0]))
    ref = _param_sn_ref(ctx, plan)
    return (ref, SN_PARAM) if ref is not None else None


def _weight_normalized(ctx: FileContext, call: cst.Call) -> bool:
    """The layer this call builds goes straight into weight_norm (either API), or into a
    callable that may be it (`norm_f = weight_norm if ... else spectral_norm`): it has
    its own weight normalization, and wrapping it in SN would stack two."""
    wrappers = [call]
    parent = ctx.parent(call)
    if isinstance(parent, cst.Arg):
        outer = ctx.parent(parent)
        if isinstance(outer, cst.Call):
            wrappers.append(outer)
    for node in wrappers:
        if weight_norm_api(ctx.qualify(node.func) or ""):
            return True
        if "weight_norm" in ctx.code(node.func):
            return True
        if isinstance(node.func, cst.Name) and node is not call:
            scope = next((a for a in ctx.ancestors(node) if isinstance(a, cst.FunctionDef)), ctx.module)
            if _assigned_weight_norm(ctx, scope, node.func.value):
                return True
    return False


def _assigned_weight_norm(ctx: FileContext, scope: cst.CSTNode, name: str) -> bool:
    found = False

    class Assignments(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets) \
                    and "weight_norm" in ctx.code(node.value):
                found = True

    scope.visit(Assignments())
    return found


def _missing_sn(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    call = ctx.at(finding.span, cst.Call)
    if call is None or _weight_normalized(ctx, call):
        return None
    plan = Plan(finding.code, SAFE, "")
    chosen = _sn_wrapper(finding, ctx, plan)
    if chosen is None:
        return None
    func, api = chosen
    keys = KEYS_HOOK if api == SN_HOOK else KEYS_PARAM
    layer = finding.get("layer") or "layer"
    plan.message = (f"Wrap the {layer} in `{_code(func)}`"
                    f"{' (imported)' if plan.imports else ''}; its state_dict keys change "
                    f"(`weight` becomes {keys})")
    return plan.replace(call, cst.Call(func=func, args=[cst.Arg(call)]))


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


# ------------------------------------------------------------------------ SN301

BATCH_NORMS = {"BatchNorm1d": 1, "BatchNorm2d": 2, "BatchNorm3d": 3, "SyncBatchNorm": 0}
BN_POSITIONS = ("num_features", "eps", "momentum", "affine", "track_running_stats")
BN_ONLY = frozenset({"momentum", "track_running_stats", "process_group"})


def _nn_ref(ctx: FileContext, plan: Plan, name: str, like: cst.CSTNode | None) -> cst.BaseExpression | None:
    """An expression naming torch.nn.<name>: through the alias `like` used (`nn.`),
    else any alias of torch.nn in the file, else an added `from torch.nn import name`."""
    if isinstance(like, cst.Attribute) and ctx.qualify(like.value) == "torch.nn":
        return cst.Attribute(value=like.value, attr=cst.Name(name))
    ref = ctx.binding_for(f"torch.nn.{name}")
    if ref is not None:
        return cst.parse_expression(ref)
    if ctx.is_free(name):
        plan.imports.append(ImportSpec("torch.nn", name))
        return cst.Name(name)
    return None


def _partial_ref(ctx: FileContext, plan: Plan) -> cst.BaseExpression | None:
    ref = ctx.binding_for("functools.partial")
    if ref is not None:
        return cst.parse_expression(ref)
    if ctx.is_free("functools"):
        plan.imports.append(ImportSpec("functools"))
        return cst.parse_expression("functools.partial")
    return None


def _replacement(bn: str, choice: str) -> tuple[str, str]:
    """(torch.nn class, note) replacing batch norm `bn` under `norm-replacement`."""
    if choice == "identity":
        return "Identity", ""
    if choice == "instancenorm":
        dims = BATCH_NORMS[bn]
        if dims in (2, 3):
            return f"InstanceNorm{dims}d", ""
        return "GroupNorm", (f" (norm-replacement is instancenorm, but {bn} may normalize "
                             f"(N, C) features, where InstanceNorm does not apply: GroupNorm(1, C) instead)")
    return "GroupNorm", ""


_NO_SPACE = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                           whitespace_after=cst.SimpleWhitespace(""))
_SPACE_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _affine_true() -> cst.Arg:
    return cst.Arg(cst.Name("True"), keyword=cst.Name("affine"), equal=_NO_SPACE)


def _lead_comma(whitespace: cst.BaseParenthesizableWhitespace) -> cst.Comma:
    """A comma after an argument inserted first: on its own line when the call puts its
    arguments on lines of their own."""
    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        return cst.Comma(whitespace_after=whitespace)
    return _SPACE_COMMA


def _norm_args(call_args: Sequence[cst.Arg], new: str, in_partial: bool,
               lead: cst.Comma) -> tuple[list[cst.Arg], list[str]] | None:
    """The arguments of the replacement norm from a batch norm's arguments (after the
    class itself, for a partial), and the names of the arguments dropped. `lead` is the
    comma after an inserted leading argument (GroupNorm's `1`)."""
    named: list[tuple[str, cst.Arg]] = []
    index = 0
    for a in call_args:
        if a.star:
            return None
        if a.keyword is None:
            if index >= len(BN_POSITIONS):
                return None
            named.append((BN_POSITIONS[index], a))
            index += 1
        else:
            named.append((a.keyword.value, a))
    names = [n for n, _ in named]
    if "num_features" not in names and not in_partial:
        return None
    if new == "Identity":
        return [], [n for n in names if n != "num_features"]
    dropped = [n for n in names if n in BN_ONLY]
    last_original = call_args[-1] if call_args else None
    # (argument, the comma it keeps when it is not last, or None for a separator)
    kept: list[tuple[cst.Arg, Any]] = []
    positional_ok = True
    for name, a in named:
        if name in BN_ONLY:
            positional_ok = False  # what followed a dropped positional becomes a keyword
            continue
        own = a.comma if isinstance(a.comma, cst.Comma) and a is not last_original else None
        if a.keyword is None and not positional_ok:
            a = a.with_changes(keyword=cst.Name(name), equal=_NO_SPACE)
        if new == "GroupNorm" and name == "num_features" and a.keyword is not None:
            a = a.with_changes(keyword=cst.Name("num_channels"))
        kept.append((a, own))
    if new == "GroupNorm":
        kept.insert(0, (cst.Arg(cst.Integer("1")), lead))
    if new.startswith("InstanceNorm") and "affine" not in names:
        kept.append((_affine_true(), None))
    separators = [a.comma for a in call_args[:-1] if isinstance(a.comma, cst.Comma)]
    sep = separators[0] if separators else _SPACE_COMMA
    # The last argument takes the original last one's comma (a trailing comma and the
    # line break before `)` stay).
    last_comma = last_original.comma if last_original is not None else cst.MaybeSentinel.DEFAULT
    last_ws = (last_original.whitespace_after_arg if last_original is not None
               else cst.SimpleWhitespace(""))
    out = []
    for i, (a, own) in enumerate(kept):
        if i == len(kept) - 1:
            # A comment after the dropped last argument was about it; one after this
            # argument stays.
            comma = last_comma if own is None else _merge_comma(own, last_comma)
            out.append(a.with_changes(comma=comma, whitespace_after_arg=last_ws))
        else:
            out.append(a.with_changes(comma=own or sep, whitespace_after_arg=cst.SimpleWhitespace("")))
    return out, dropped


def _batch_norm(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    choice = (config.norm_replacement or "groupnorm").lower()
    if choice not in ("groupnorm", "instancenorm", "identity"):
        return None
    call = ctx.at(finding.span, cst.Call)
    param = ctx.at(finding.span, cst.Param) if call is None else None
    site = call or param
    if site is None or not _in_discriminator_class(finding, ctx, site):
        return None
    if call is not None:
        return _replace_norm_call(finding, ctx, call, choice)
    if param is not None and param.default is not None:
        return _replace_norm_default(finding, ctx, param.default, choice)
    return None


def _in_discriminator_class(finding: Finding, ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether `node` is inside the class of the finding's discriminator (in its body or
    its methods). A batch norm built elsewhere (a `get_norm_layer("batch")` factory, a
    helper function, another class) is shared: replacing it there would change it for
    every caller, the generator included."""
    ref = finding.discriminator
    if ref is None:
        return False
    path, _, name = ref.cls.rpartition(":")
    if path != finding.path:
        return False
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.ClassDef):
            return anc.name.value == name.rpartition(".")[2]
    return False


def _state_note(new: str) -> str:
    if new == "Identity":
        return ("the layer's state_dict entries (`weight`, `bias`, `running_mean`, `running_var`, "
                "`num_batches_tracked`) are gone")
    return ("the layer's `running_mean`, `running_var` and `num_batches_tracked` buffers leave "
            "the state_dict (`weight` and `bias` stay)")


def _replace_norm_call(finding: Finding, ctx: FileContext, call: cst.Call, choice: str) -> Plan | None:
    bn = _torch_nn_type(ctx, call.func)
    if bn in BATCH_NORMS:
        plan = Plan(finding.code, UNSAFE, "")
        new, note = _replacement(bn, choice)
        ref = _nn_ref(ctx, plan, new, call.func)
        built = _norm_args(call.args, new, False, _lead_comma(call.whitespace_before_args))
        if ref is None or built is None:
            return None
        args, dropped = built
        if not args and new == "Identity":
            new_call = call.with_changes(func=ref, args=[], whitespace_before_args=cst.SimpleWhitespace(""))
        else:
            new_call = call.with_changes(func=ref, args=args)
        plan.message = (f"Replace {bn} with {_code(new_call)}, a per-sample norm{note}"
                        + (f"; batch-norm-only {', '.join(dropped)} dropped" if dropped else "")
                        + f"; {_state_note(new)}")
        return plan.replace(call, new_call)
    if ctx.qualify(call.func) == "functools.partial":
        return _replace_norm_partial(finding, ctx, call, choice)
    return None


def _replace_norm_partial(finding: Finding, ctx: FileContext, call: cst.Call, choice: str) -> Plan | None:
    pos = _positional(call)
    if not pos or _has_star(call):
        return None
    bn = _torch_nn_type(ctx, pos[0].value)
    if bn not in BATCH_NORMS:
        return None
    plan = Plan(finding.code, UNSAFE, "")
    new, note = _replacement(bn, choice)
    ref = _nn_ref(ctx, plan, new, pos[0].value)
    if ref is None:
        return None
    rest = [a for a in call.args if a is not pos[0]]
    if new == "Identity":
        replacement: cst.BaseExpression = ref
        dropped = [a.keyword.value if a.keyword else "argument" for a in rest]
    else:
        first_comma = pos[0].comma if isinstance(pos[0].comma, cst.Comma) else _SPACE_COMMA
        if rest:
            built = _norm_args(rest, new, True, first_comma)
            if built is None:
                return None
            args, dropped = built
        else:
            args = [cst.Arg(cst.Integer("1")) if new == "GroupNorm" else _affine_true()]
            dropped = []
        first = pos[0].with_changes(value=ref, comma=first_comma if args else pos[0].comma)
        replacement = call.with_changes(args=[first, *args])
    plan.message = (f"Replace {bn} with {_code(replacement)}, a per-sample norm, so that "
                    f"calling it with the channel count still works{note}"
                    + (f"; batch-norm-only {', '.join(dropped)} dropped" if dropped else "")
                    + f"; {_state_note(new)}")
    return plan.replace(call, replacement)


def _replace_norm_default(finding: Finding, ctx: FileContext, default: cst.BaseExpression,
                          choice: str) -> Plan | None:
    if isinstance(default, cst.Call):
        return _replace_norm_partial(finding, ctx, default, choice) if (
            ctx.qualify(default.func) == "functools.partial") else None
    bn = _torch_nn_type(ctx, default)
    if bn not in BATCH_NORMS:
        return None
    plan = Plan(finding.code, UNSAFE, "")
    new, note = _replacement(bn, choice)
    ref = _nn_ref(ctx, plan, new, default)
    if ref is None:
        return None
    if new == "Identity":
        replacement: cst.BaseExpression = ref
    else:
        partial = _partial_ref(ctx, plan)
        if partial is None:
            return None
        extra = cst.Arg(cst.Integer("1")) if new == "GroupNorm" else _affine_true()
        replacement = cst.Call(func=partial, args=[cst.Arg(ref, comma=_SPACE_COMMA), extra])
    replacement = replacement.with_changes(lpar=default.lpar, rpar=default.rpar)
    plan.message = (f"Make the norm_layer default {_code(replacement)}, a per-sample norm that "
                    f"`norm_layer(C)` still builds{note}; {_state_note(new)}")
    return plan.replace(default, replacement)


# ------------------------------------------------------------------------ SN401

def _pure(ctx: FileContext, node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`node` when evaluating it twice is harmless (a name, an attribute chain, or
    `.detach()` of one); returns the expression whose size equals it."""
    if isinstance(node, cst.Name) or (isinstance(node, cst.Attribute) and dotted(node) is not None):
        return node
    if (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "detach"):
        inner = _pure(ctx, node.func.value)
        return inner
    return None


def _forward_assign(ctx: FileContext, call: cst.Call) -> tuple[cst.Assign, cst.SimpleStatementLine] | None:
    assign = ctx.parent(call)
    if not isinstance(assign, cst.Assign) or assign.value is not call or len(assign.targets) != 1:
        return None
    line = ctx.parent(assign)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    target = assign.targets[0].target
    if not isinstance(target, (cst.Name, cst.Attribute)) or dotted(target) is None:
        return None
    return assign, line


def _one_input(call: cst.Call) -> cst.BaseExpression | None:
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value


def _separate_batches(finding: Finding, ctx: FileContext, config: Config) -> Plan | None:
    first = ctx.at(finding.span, cst.Call)
    second_at = finding.get("second")
    if first is None or not second_at or second_at[0] != finding.path:
        return None
    one = _forward_assign(ctx, first)
    if one is None:
        return None
    assign1, line1 = one
    block = ctx.parent(line1)
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or line1 not in body:
        return None
    index = list(body).index(line1)
    if index + 1 >= len(body):
        return None
    line2 = body[index + 1]
    if not isinstance(line2, cst.SimpleStatementLine) or len(line2.body) != 1:
        return None
    assign2 = line2.body[0]
    if not isinstance(assign2, cst.Assign) or not isinstance(assign2.value, cst.Call):
        return None
    second = assign2.value
    start = ctx.positions[second].start
    if (start.line, start.column + 1) != tuple(second_at[1:3]):
        return None
    if _forward_assign(ctx, second) is None:
        return None
    if ctx.code(first.func).strip() != ctx.code(second.func).strip():
        return None
    x1, x2 = _one_input(first), _one_input(second)
    if x1 is None or x2 is None:
        return None
    s1, s2 = _pure(ctx, x1), _pure(ctx, x2)
    if s1 is None or s2 is None:
        return None
    t1, t2 = assign1.targets[0].target, assign2.targets[0].target
    head1 = dotted(t1).split(".")[0]  # type: ignore[union-attr]
    if dotted(t1) == dotted(t2) or head1 in _names_in(second) or head1 in _names_in(x1):
        return None
    plan = Plan(finding.code, UNSAFE, "")
    torch_cat = ctx.binding_for("torch.cat")
    if torch_cat is None:
        if not ctx.is_free("torch"):
            return None
        plan.imports.append(ImportSpec("torch"))
        torch_cat = "torch.cat"
    from libcst.helpers import parse_template_expression

    value = parse_template_expression(
        "{d}({cat}([{a}, {b}])).split([{sa}.size(0), {sb}.size(0)])",
        d=first.func, cat=cst.parse_expression(torch_cat), a=x1, b=x2, sa=s1, sb=s2)
    targets = cst.Tuple(elements=[
        cst.Element(t1, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Element(t2)], lpar=[], rpar=[])
    plan.replace(assign1, assign1.with_changes(
        targets=[assign1.targets[0].with_changes(target=targets)], value=value))
    plan.replace(line2, cst.RemoveFromParent())
    plan.message = (f"Score both batches in one call, `{ctx.code(t1)}, {ctx.code(t2)} = "
                    f"{_code(value)}`, so the batch statistics cover real and generated samples "
                    f"alike (the two calls become one)")
    return plan


PLANNERS: dict[str, Planner] = {
    "SN101": _placement,
    "SN102": _placement,
    "SN103": _placement,
    "SN104": _wrong_parameter,
    "SN105": _wrong_dim,
    "SN106": _init_of_derived,
    "SN107": _never_applied,
    "SN201": _missing_sn,
    "SN301": _batch_norm,
    "SN401": _separate_batches,
    "SN501": _legacy,
}


def _binds(module: cst.Module, name: str) -> bool:
    """The file defines or imports `name` at module level."""
    for stmt in module.body:
        if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)) and stmt.name.value == name:
            return True
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        if isinstance(bound, cst.Name) and bound.value == name:
                            return True
    return False
