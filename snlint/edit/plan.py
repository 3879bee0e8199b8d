"""A fix as data, and how fixes are applied.

A *plan* is what one fix does to one file: original nodes mapped to their replacements
(or removed), and imports the file needs. Plans never edit text; `apply_plans` runs one
libcst transformer that swaps the planned nodes (so several plans that do not overlap
can be applied in one pass) and libcst's AddImportsVisitor, and the tree prints every
byte it did not replace exactly as it was read."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import libcst as cst

from snlint.config import Config
from snlint.edit.parsed import ParsedFile, dotted, scope_bindings
from snlint.edit.syntax import walk, without
from snlint.findings import Finding


SAFE, UNSAFE = "safe", "unsafe"


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

    def remove_statement(self, small: cst.BaseSmallStatement, line: cst.CSTNode) -> "Plan":
        """Remove one small statement from its line (an emptied block gets `pass`)."""
        body = [s for s in line.body if s is not small]  # type: ignore[attr-defined]
        if not body:
            if isinstance(line, cst.SimpleStatementLine):
                return self.replace(line, cst.RemoveFromParent())
            return self.replace(line, line.with_changes(body=[cst.Pass()]))
        if line.body[-1] is small:  # type: ignore[attr-defined]
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return self.replace(line, line.with_changes(body=body))

    def nodes(self) -> list[cst.CSTNode]:
        return [node for node, _ in self.changes.values()]


class SwapNodes(cst.CSTTransformer):
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


def apply_plans(parsed: ParsedFile, plans: Sequence[Plan]) -> str:
    """The file's text with `plans` applied together (they must not overlap)."""
    changes: dict[int, tuple[cst.CSTNode, Any]] = {}
    imports: list[ImportSpec] = []
    for plan in plans:
        changes.update(plan.changes)
        imports.extend(i for i in plan.imports if i not in imports)
    tree = parsed.module.visit(SwapNodes(changes)) if changes else parsed.module
    if imports:
        # libcst.codemod costs a quarter of a second to import: only when a fix needs it.
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import AddImportsVisitor

        context = CodemodContext()
        for spec in imports:
            AddImportsVisitor.add_needed_import(context, spec.module, spec.obj, spec.asname)
        tree = AddImportsVisitor(context).transform_module(tree)
    if changes:
        tree = _prune_imports(parsed, changes, tree)
    return tree.code


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


def _prune_imports(parsed: ParsedFile, changes: dict[int, tuple[cst.CSTNode, Any]],
                   tree: cst.Module) -> cst.Module:
    """`tree` without the imports the changes left unused: a name that an import binds
    (once in the file), that the original file read and that the changed nodes held,
    and that the fixed file reads and mentions nowhere. Every other import stays."""
    held: Counter[str] = Counter(n.value for node, _ in changes.values() for n in walk(node)
                                 if isinstance(n, cst.Name))
    # A name the original file reads more often than the changed nodes hold it is still
    # read: only the others need a look at the whole new tree.
    touched = {name for name in held if name in parsed.names.import_nodes
               and parsed.names.loads[name] <= held[name]}
    if not touched:
        return tree
    gone = touched - set(_import_names(tree))
    if not gone:
        return tree
    from libcst.metadata import MetadataWrapper, ParentNodeProvider

    before = parsed.bindings()
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
                new = new.with_changes(names=without(new.names, index)) if len(new.names) > 1 else None
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
    return tree.visit(SwapNodes(removals)) if removals else tree


def overlaps(parsed: ParsedFile, a: Plan, b: Plan) -> bool:
    for x in a.nodes():
        (xs, xe) = parsed.range(x)
        for y in b.nodes():
            (ys, ye) = parsed.range(y)
            if xs < ye and ys < xe:
                return True
            if x is y:
                return True
    return False


def signature(parsed: ParsedFile, plan: Plan) -> tuple:
    """What a plan does, comparable across plans (two findings can share one fix)."""
    parts = []
    for node, new in plan.changes.values():
        rendered = "<removed>" if isinstance(new, cst.RemovalSentinel) else _render(parsed, new)
        parts.append((parsed.range(node), rendered))
    return tuple(sorted(parts)), tuple(sorted((i.module, i.obj or "", i.asname or "") for i in plan.imports))


def _render(parsed: ParsedFile, node: cst.CSTNode) -> str:
    try:
        return parsed.module.code_for_node(node)
    except Exception:  # noqa: BLE001 - a node that cannot print on its own
        return repr(node)


Planner = Callable[[Finding, ParsedFile, Config], "Plan | None"]
