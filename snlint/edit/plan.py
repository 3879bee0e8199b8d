"""A fix as data, and how fixes are applied.

A *plan* is what one fix does to one file: original nodes mapped to their replacements
(or removed), and imports the file needs. Plans never edit text; `apply_plans` runs one
libcst transformer that swaps the planned nodes (so several plans that do not overlap
can be applied in one pass) and libcst's AddImportsVisitor, and the tree prints every
byte it did not replace exactly as it was read."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import field
from typing import Any, Iterator, Sequence

import libcst as cst

from snlint.edit.names import dotted
from snlint.edit.imports import add_imports
from snlint.edit.parsed import ParsedFile, Rendered
from snlint.lines import may_lose_bytes
from snlint.edit.syntax import walk, without
from snlint.records import dataclass




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
    it: they move onto the next statement of its block (or the block's end).

    With `parents` (the tree's child -> parent map), only the planned nodes and what
    holds them are visited: every other subtree is kept as it is, unvisited."""

    def __init__(self, changes: dict[int, tuple[cst.CSTNode, Any]],
                 parents: dict[cst.CSTNode, cst.CSTNode] | None = None) -> None:
        super().__init__()
        self.changes = changes
        self.holders: set[int] | None = None
        if parents is not None:
            self.holders = set()
            for node, _ in changes.values():
                current = parents.get(node)
                while current is not None and id(current) not in self.holders:
                    self.holders.add(id(current))
                    current = parents.get(current)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return self.holders is None or id(node) in self.holders

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
    return parsed.whole(_applied(parsed, plans).text)


def apply_in_place(parsed: ParsedFile, plans: Sequence[Plan]) -> Rendered | None:
    """`apply_plans`' text with where it differs from the file's (`Rendered`), for a file
    parsed whole whose code libcst prints as read; None for another."""
    if parsed.held is not None or may_lose_bytes(parsed.text):
        return None
    return _applied(parsed, plans)


def _applied(parsed: ParsedFile, plans: Sequence[Plan]) -> Rendered:
    changes: dict[int, tuple[cst.CSTNode, Any]] = {}
    imports: list[ImportSpec] = []
    for plan in plans:
        changes.update(plan.changes)
        imports.extend(i for i in plan.imports if i not in imports)
    tree = _swapped(parsed, changes) if changes else parsed.module
    if imports:
        tree = add_imports(tree, imports)
    if changes:
        tree = _prune_imports(parsed, changes, tree)
    return parsed.rendered(tree)


def _swapped(parsed: ParsedFile, changes: dict[int, tuple[cst.CSTNode, Any]]) -> cst.Module:
    """The module with the planned nodes swapped: only the top-level statements that hold
    them are visited (a visit of the module would go through every statement of the file
    for each fix). A change of a top-level node itself (a removed statement's comments
    move to the next one) is the module's visit."""
    swap = SwapNodes(changes, parsed.parents)
    module, parents = parsed.module, parsed.parents
    index = parsed.body_index()
    where: set[int] = set()
    for node, _ in changes.values():
        parent = parents.get(node)
        while parent is not None and parent is not module:
            node, parent = parent, parents.get(parent)
        at = index.get(id(node))
        if parent is None or at is None or module.body[at] is not node or id(node) in changes:
            return module.visit(swap)
        where.add(at)
    body = list(module.body)
    for at in where:
        body[at] = body[at].visit(swap)
    return module.with_changes(body=body)


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


def _bound_alias(node: cst.Import | cst.ImportFrom, name: str) -> int | None:
    """The index of the alias of `node` that binds `name` (not a bare `import a.b`)."""
    for i, alias in enumerate(node.names):  # type: ignore[arg-type]
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            if alias.asname.name.value == name:
                return i
        elif isinstance(node, cst.ImportFrom) and dotted(alias.name) == name:
            return i
    return None


def _binds(node: cst.Import | cst.ImportFrom) -> Iterator[str]:
    """The names an import statement binds."""
    if isinstance(node.names, cst.ImportStar):
        return
    for alias in node.names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            yield alias.asname.name.value
        else:
            yield (dotted(alias.name) or "").split(".")[0]


class _Imports(cst.CSTVisitor):
    """Every import statement of a tree, with the line it is on."""

    def __init__(self) -> None:
        self.found: list[tuple[cst.SimpleStatementLine | cst.SimpleStatementSuite,
                               cst.Import | cst.ImportFrom]] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._add(node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._add(node)

    def _add(self, line: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> None:
        self.found.extend((line, small) for small in line.body
                          if isinstance(small, (cst.Import, cst.ImportFrom)))


def _prune_imports(parsed: ParsedFile, changes: dict[int, tuple[cst.CSTNode, Any]],
                   tree: cst.Module) -> cst.Module:
    """`tree` without the imports the changes left unused: a name that one import binds
    (and nothing else in the file), that the original file read and that the changed
    nodes held, and that the fixed file reads and mentions nowhere. Every other import
    stays."""
    held: Counter[str] = Counter(n.value for node, _ in changes.values() for n in walk(node)
                                 if isinstance(n, cst.Name))
    names = parsed.names
    # An import the original file never read is unused, but not by the fix's doing. A
    # name it reads more often than the changed nodes hold it is still read: only the
    # others need a look at the whole new tree.
    touched = {name for name in held if names.import_of(name) is not None
               and 0 < names.reads(name) <= held[name]}
    if not touched:
        return tree
    gone = touched - set(_import_names(tree)) - parsed.held_words()
    if not gone:
        return tree
    # The fixed file mentions a gone name nowhere outside imports, so nothing but an
    # import binds it there; only one that alone binds it goes.
    imports = _Imports()
    tree.visit(imports)
    binders: dict[str, list[tuple[Any, Any]]] = {}
    for line, node in imports.found:
        for name in set(_binds(node)) & gone:
            binders.setdefault(name, []).append((line, node))
    statements: dict[int, tuple[Any, Any, list[str]]] = {}  # import -> its line, names it loses
    for name in sorted(gone):
        found = binders.get(name, [])
        if len(found) != 1:
            continue
        line, node = found[0]
        if isinstance(node, cst.ImportFrom) and dotted(node.module) == "__future__":
            continue
        statements.setdefault(id(node), (line, node, []))[2].append(name)
    removals: dict[int, tuple[cst.CSTNode, Any]] = {}
    emptied: dict[int, tuple[Any, list[cst.CSTNode]]] = {}  # statement line -> imports it loses
    for line, node, lost in statements.values():
        new = node
        for name in lost:
            index = _bound_alias(new, name)
            if index is not None:
                new = new.with_changes(names=without(new.names, index)) if len(new.names) > 1 else None
            if new is None:
                break
        if new is not None:
            if new is not node:
                removals[id(node)] = (node, new)
            continue
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

