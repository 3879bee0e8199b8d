"""The imports a fix needs, added to a module as libcst.codemod's `AddImportsVisitor`
adds them, for what fixes add (`import m`, `import m as a`, `from m import o`,
`from m import o as a`).

The codemod visits and rebuilds the whole tree twice (a gathering pass, then a
transform) and costs a quarter of a second to import; what it decides reads only the
module's top statements. So the same decisions are taken here on those statements:
the import block at the top of the module (after a docstring or a `__strict__` flag)
is what counts as already imported; a name that block imports is not added again; a
`from m import ...` of the block takes the new names of `m` in front of its own; the
rest goes in new statements at the end of the block, with an empty line before the
first statement after it. `tests/test_edit_imports.py` holds it to the codemod's output.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import libcst as cst
import libcst.helpers



def add_imports(module: cst.Module, specs: Sequence) -> cst.Module:
    """`module` with the imports `specs` name (each with `module`, `obj`, `asname`)."""
    body = list(module.body)
    start = 1 if _skip_first(body) else 0
    end = start
    while end < len(body) and _import_of(body[end]) is not None:
        end += 1

    # What is asked for (AddImportsVisitor.__init__).
    modules = {s.module for s in specs if s.obj is None and s.asname is None}
    module_aliases = {s.module: s.asname for s in specs if s.obj is None and s.asname is not None}
    objects: dict[str, set[str]] = {
        m: {s.obj for s in specs if s.module == m and s.obj is not None and s.asname is None}
        for m in sorted({s.module for s in specs if s.obj is not None and s.asname is None})}
    aliases: dict[str, list[tuple[str, str]]] = {
        m: [(s.obj, s.asname) for s in specs if s.module == m and s.obj is not None and s.asname is not None]
        for m in sorted({s.module for s in specs if s.obj is not None and s.asname is not None})}

    # What the top block already imports (visit_Module).
    have = _Gathered()
    for statement in body[start:end]:
        have.add(_import_of(statement))
    modules -= have.modules
    for m, a in have.module_aliases.items():
        if module_aliases.get(m) == a:
            del module_aliases[m]
    for m, pairs in have.aliases.items():
        for pair in pairs:
            if m in aliases and pair in aliases[m]:
                aliases[m].remove(pair)
                if not aliases[m]:
                    del aliases[m]
    for m, names in have.objects.items():
        if m not in objects:
            continue
        if "*" in names:
            del objects[m]
        else:
            objects[m] -= names
            if not objects[m]:
                del objects[m]

    # New names of a module the block imports from join its first such import (leave_ImportFrom).
    for i in range(start, end):
        node = _import_of(body[i])
        if not isinstance(node, cst.ImportFrom) or isinstance(node.names, cst.ImportStar):
            continue
        name = _absolute(node)
        if name is None or (name not in objects and name not in aliases):
            continue
        new = [*(cst.ImportAlias(name=cst.Name(o)) for o in sorted(objects.pop(name, ()))),
               *(cst.ImportAlias(name=cst.Name(o), asname=cst.AsName(name=cst.Name(a)))
                 for o, a in sorted(aliases.pop(name, ())))]
        line = body[i]
        body[i] = line.with_changes(body=[node.with_changes(names=[*new, *node.names])])

    if not (modules or objects or module_aliases or aliases):
        return module.with_changes(body=body)

    # The rest as statements at the end of the block (leave_Module).
    after = body[end:]
    if after:
        first = after[0]
        if not first.leading_lines:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(),))
        elif first.leading_lines[0].comment is not None:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(), *first.leading_lines))
    wanted: dict[str, list] = defaultdict(list)
    for m, pairs in aliases.items():
        wanted[m].extend(pairs)
    for m, names in objects.items():
        wanted[m].extend((o, None) for o in names)
    # A name may be wanted both plain and aliased (one fix binds it, another re-points it).
    ordered = {m: sorted(pairs, key=lambda p: (p[0], p[1] is not None, p[1] or ""))
               for m, pairs in wanted.items()}
    config = module.config_for_parsing

    def from_import(m: str, pairs: list) -> cst.BaseStatement:
        names = ", ".join(o if a is None else f"{o} as {a}" for o, a in pairs)
        return cst.parse_statement(f"from {m} import {names}", config=config)

    return module.with_changes(body=(
        *body[:start],
        *(from_import(m, pairs) for m, pairs in ordered.items() if m == "__future__"),
        *body[start:end],
        *(cst.parse_statement(f"import {m}", config=config) for m in sorted(modules)),
        *(cst.parse_statement(f"import {m} as {a}", config=config) for m, a in module_aliases.items()),
        *(from_import(m, pairs) for m, pairs in ordered.items() if m != "__future__"),
        *after,
    ))


class _Gathered:
    """The imports of the top block, as libcst's gathering mixin records them."""

    def __init__(self) -> None:
        self.modules: set[str] = set()
        self.module_aliases: dict[str, str] = {}
        self.objects: dict[str, set[str]] = {}
        self.aliases: dict[str, list[tuple[str, str]]] = {}

    def add(self, node: cst.Import | cst.ImportFrom | None) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                if alias.evaluated_alias is not None:
                    self.module_aliases[alias.evaluated_name] = alias.evaluated_alias
                else:
                    self.modules.add(alias.evaluated_name)
            return
        if not isinstance(node, cst.ImportFrom):
            return
        module = _absolute(node)
        if module is None:
            return
        if isinstance(node.names, cst.ImportStar):
            self.objects[module] = {"*"}
            return
        pairs = [(a.evaluated_name, a.evaluated_alias) for a in node.names if a.asname is not None]
        if pairs:
            self.aliases.setdefault(module, []).extend(pairs)
        names = {a.evaluated_name for a in node.names if a.asname is None}
        if names:
            found = self.objects.setdefault(module, set())
            if "*" in found:
                self.objects[module] = {"*"}
                return
            found.update(names)


def _absolute(node: cst.ImportFrom) -> str | None:
    """The module of an absolute `from` import; None for a relative one (the codemod,
    knowing no package, resolves none)."""
    if node.relative or node.module is None:
        return None
    return cst.helpers.get_full_name_for_node(node.module)


def _import_of(statement: cst.CSTNode) -> cst.Import | cst.ImportFrom | None:
    """The import a top-level line is, when it is one import and nothing else."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], (cst.Import, cst.ImportFrom)):
        return statement.body[0]
    return None


def _skip_first(body: list) -> bool:
    """A docstring or a `__strict__` flag first: imports go after it."""
    if not body or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    small = body[0].body[0]
    if isinstance(small, cst.Expr):
        return isinstance(small.value, cst.SimpleString)
    return isinstance(small, cst.Assign) and len(small.targets) == 1 \
        and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == "__strict__"
