"""The imports a fix needs, added as libcst.codemod's `AddImportsVisitor` adds them
(`tests/test_edit_imports.py` holds it to the codemod's text), decided from the module's
top import block alone: the codemod costs a quarter of a second to import, and rebuilds
the whole tree twice."""

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

    # What is asked for, less what the top block already imports.
    modules = {s.module for s in specs if s.obj is None and s.asname is None}
    module_aliases = {s.module: s.asname for s in specs if s.obj is None and s.asname is not None}
    froms: dict[str, set[tuple[str, str | None]]] = defaultdict(set)  # module -> (name, alias)
    for spec in specs:
        if spec.obj is not None:
            froms[spec.module].add((spec.obj, spec.asname))
    had_aliases: dict[str, str] = {}
    for statement in body[start:end]:
        node = _import_of(statement)
        if isinstance(node, cst.Import):
            for alias in node.names:
                if alias.evaluated_alias is None:
                    modules.discard(alias.evaluated_name)
                else:
                    had_aliases[alias.evaluated_name] = alias.evaluated_alias
        elif _absolute(node) in froms:
            pairs = froms[_absolute(node)]
            if isinstance(node.names, cst.ImportStar):
                pairs -= {p for p in pairs if p[1] is None}
            else:
                pairs -= {(a.evaluated_name, a.evaluated_alias) for a in node.names}
    for m, a in had_aliases.items():
        if module_aliases.get(m) == a:
            del module_aliases[m]

    # New names of a module the block imports from join its first such import.
    for i in range(start, end):
        node = _import_of(body[i])
        if not isinstance(node, cst.ImportFrom) or isinstance(node.names, cst.ImportStar):
            continue
        pairs = froms.pop(_absolute(node), None)
        if not pairs:
            continue
        plain = sorted(o for o, a in pairs if a is None)
        aliased = sorted((o, a) for o, a in pairs if a is not None)
        new = [*(cst.ImportAlias(name=cst.Name(o)) for o in plain),
               *(cst.ImportAlias(name=cst.Name(o), asname=cst.AsName(name=cst.Name(a)))
                 for o, a in aliased)]
        body[i] = body[i].with_changes(body=[node.with_changes(names=[*new, *node.names])])

    froms = {m: pairs for m, pairs in froms.items() if pairs}
    if not (modules or module_aliases or froms):
        return module.with_changes(body=body)

    # The rest as statements at the end of the block.
    after = body[end:]
    if after:
        first = after[0]
        if not first.leading_lines:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(),))
        elif first.leading_lines[0].comment is not None:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(), *first.leading_lines))
    # As the codemod orders them: the modules with an aliased name first. A name may be
    # wanted both plain and aliased (one fix binds it, another re-points it).
    order = sorted(froms, key=lambda m: (all(a is None for _, a in froms[m]), m))
    ordered = {m: sorted(froms[m], key=lambda p: (p[0], p[1] is not None, p[1] or ""))
               for m in order}
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


def _absolute(node: cst.ImportFrom) -> str | None:
    """The module of an absolute `from` import; None for a relative one (as the codemod)."""
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
