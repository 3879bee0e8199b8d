"""A fix as data (a `Plan`: original nodes mapped to their replacements, and the imports
they need), and how plans that do not overlap are applied together in one pass."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right, insort
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
        return self.replace(line, _line_without(line, [small]))

    def nodes(self) -> list[cst.CSTNode]:
        return [node for node, _ in self.changes.values()]


def _line_without(line: Any, dropped: list[cst.CSTNode]) -> Any:
    """What replaces a statement line without its small statements `dropped`."""
    body = [s for s in line.body if not any(s is d for d in dropped)]
    if not body:
        if isinstance(line, cst.SimpleStatementLine):
            return cst.RemoveFromParent()
        return line.with_changes(body=[cst.Pass()])
    if any(line.body[-1] is d for d in dropped):
        body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return line.with_changes(body=body)


class SwapNodes(cst.CSTTransformer):
    """Swaps the planned nodes; the comment lines above a removed statement move onto the
    next statement of its block (or the block's end). With `parents`, only the planned
    nodes and what holds them are visited."""

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
            if not self._removed(child):
                new = next(new_children)
                if pending:
                    new = new.with_changes(leading_lines=[*pending, *new.leading_lines])
                body.append(new)
                pending = []
            elif _has_comment(child):
                pending.extend(child.leading_lines)
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


def apply_in_place(parsed: ParsedFile, plans: Sequence[Plan]) -> Rendered:
    """`apply_plans`' text as where it differs from the file's."""
    done = _applied(parsed, plans)
    if parsed.held is None and not may_lose_bytes(parsed.text):
        return done
    return Rendered(parsed.text, 0, len(parsed.text), parsed.whole(done.text), None)


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
    """The module with the planned nodes swapped, visiting only the top-level statements
    that hold them (the module, when a change is of a top-level node itself)."""
    swap = SwapNodes(changes, parsed.parents)
    module, parents = parsed.module, parsed.parents
    index = parsed.body_index
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


def _bound_by(alias: cst.ImportAlias) -> str:
    """The name an import alias binds."""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return (dotted(alias.name) or "").split(".")[0]


def _bound_alias(node: cst.Import | cst.ImportFrom, name: str) -> int | None:
    """The index of the alias of `node` that binds `name` (not a bare `import a.b`)."""
    bare = isinstance(node, cst.Import)
    for i, alias in enumerate(node.names):  # type: ignore[arg-type]
        if _bound_by(alias) == name and (alias.asname is not None or not bare):
            return i
    return None


def _imports(tree: cst.Module) -> Iterator[tuple[Any, cst.Import | cst.ImportFrom]]:
    """Every import statement of a tree, with the line it is on."""
    for line in walk(tree):
        if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in line.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield line, small


def _prune_imports(parsed: ParsedFile, changes: dict[int, tuple[cst.CSTNode, Any]],
                   tree: cst.Module) -> cst.Module:
    """`tree` without the imports the changes left unused: a name that one import alone
    binds, that the original file read and the changed nodes held, and that the fixed
    file reads and mentions nowhere."""
    held: Counter[str] = Counter(n.value for node, _ in changes.values() for n in walk(node)
                                 if isinstance(n, cst.Name))
    names = parsed.names
    # A name the file never read is unused, but not by the fix's doing; one it reads more
    # often than the changed nodes hold it is still read.
    touched = {name for name in held if names.import_of(name) is not None
               and 0 < names.reads(name) <= held[name]}
    if not touched:
        return tree
    gone = touched - set(_import_names(tree)) - parsed.held_words
    if not gone:
        return tree
    # Only an import that alone binds a gone name goes.
    binders: dict[str, list[tuple[Any, Any]]] = {}
    for line, node in _imports(tree):
        if isinstance(node.names, cst.ImportStar):
            continue
        for name in {_bound_by(alias) for alias in node.names} & gone:
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
        removals[id(line)] = (line, _line_without(line, dropped))
    return tree.visit(SwapNodes(removals)) if removals else tree


class Taken:
    """The nodes of the plans chosen so far, to tell whether another plan overlaps them (a
    node in common, or ranges that overlap): their ranges kept merged into sorted runs, so
    that a file with a thousand fixes checks each plan in log time, not against every other."""

    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self.ids: set[int] = set()
        self.starts: list[tuple] = []  # runs: ranges that overlap merged, sorted, disjoint
        self.ends: list[tuple] = []
        self.points: list[tuple] = []  # empty ranges, sorted: inside a range, never runs

    def overlaps(self, plan: Plan) -> bool:
        for node in plan.nodes():
            if id(node) in self.ids:
                return True
            start, end = self.parsed.range(node)
            k = bisect_left(self.starts, end)  # the runs that start before `node` ends
            if k and self.ends[k - 1] > start:
                return True
            p = bisect_right(self.points, start)
            if p < len(self.points) and self.points[p] < end:
                return True
        return False

    def add(self, plan: Plan) -> None:
        for node in plan.nodes():
            self.ids.add(id(node))
            start, end = self.parsed.range(node)
            if start == end:
                insort(self.points, start)
                continue
            k = bisect_left(self.starts, end)
            j = k
            while j and self.ends[j - 1] > start:
                j -= 1
            if j < k:
                start, end = min(start, self.starts[j]), max(end, self.ends[k - 1])
            self.starts[j:k] = [start]
            self.ends[j:k] = [end]


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

