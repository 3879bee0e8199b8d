"""Name scopes of one file, read off the one libcst tree the source pass parsed.

The lowering needs, before it lowers an expression, which names a function binds (locals
shadow globals) and what the file imports; a fix needs how often each name is bound and
read anywhere in the file. Visiting the tree again for that costs a full visitor pass (per
function, for the locals); parsing the text again with `ast` is a second parse. Instead
this reads the position table (every node, in one flat loop) with the parents the same
codegen recorded, and counts names as Python's own `ast` would: a name is *read* where
`ast` has a `Name` in a load context, *bound* where it has one in a store context, a
parameter, or a `def`/`class`/`except ... as`/match-capture name.
"""

from __future__ import annotations

from itertools import compress
from typing import Callable, Iterable, Mapping

import libcst as cst

from snlint.source.scopes import Scopes


# libcst spells these as names; `ast` has constants.
_CONSTANTS = frozenset({"True", "False", "None"})
# What hides a binding from the scope around it: `ast`'s walk of a scope's body stops at
# nested definitions (only their name is bound), lambdas, comprehensions and imports.
_OPAQUE = (cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
           cst.Import, cst.ImportFrom)
_OPAQUE_TYPES = frozenset(_OPAQUE)  # all final classes: `type(node) in` is `isinstance`
_HANDLERS = (cst.ExceptHandler, cst.ExceptStarHandler)
# The node types `scan` reads besides names.
_READ = frozenset({cst.Attribute, cst.Arg, cst.Param, cst.AssignTarget, cst.AnnAssign,
                   cst.AugAssign, cst.For, cst.NamedExpr, cst.CompFor, cst.WithItem, cst.Del,
                   cst.FunctionDef, cst.ClassDef, *_HANDLERS, cst.NameItem, cst.Import,
                   cst.ImportFrom, cst.ImportAlias, cst.MatchAs, cst.MatchStar, cst.MatchMapping,
                   cst.MatchKeywordElement})
_SCANNED = _READ | {cst.Name}
_MODULE = "<module>"


def _dotted(node: cst.BaseExpression | None) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _names_in(node: cst.CSTNode | None) -> Iterable[cst.Name]:
    """The names of a dotted module path (`a.b.c`)."""
    while isinstance(node, cst.Attribute):
        yield node.attr
        node = node.value
    if isinstance(node, cst.Name):
        yield node


def scan(module: cst.Module, table: Iterable[cst.CSTNode], parents: Mapping[cst.CSTNode, cst.CSTNode],
         lines: Callable[[cst.CSTNode], int], module_name: str, is_package: bool,
         resolve_relative) -> Scopes:
    """The scopes of `module`. `table`: every node of it (the position table); `parents`:
    each node's parent; `lines(node)`: the line a node's syntactic range starts on."""
    scopes = Scopes()
    names: list[cst.Name] = []
    skip: set[int] = set()  # ids of names that are not `ast.Name`s (attributes, keywords, ...)
    store: set[int] = set()
    delete: set[int] = set()
    stored: list[cst.Name] = []  # assignment-like targets, for the scopes they bind in
    defs: list[cst.FunctionDef | cst.ClassDef] = []
    handlers: list[cst.ExceptHandler | cst.ExceptStarHandler] = []
    globals_: list[cst.NameItem] = []
    imports: list[cst.Import | cst.ImportFrom] = []
    bound, mentioned = scopes.bound, scopes.mentioned

    def target(node: cst.CSTNode, into: set[int], collect: bool) -> None:
        # A store (or del) context reaches through tuples, lists and starred elements, as
        # `ast` gives their elements the context of the whole.
        if isinstance(node, cst.Name):
            into.add(id(node))
            if collect:
                stored.append(node)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                target(el.value, into, collect)
        elif isinstance(node, cst.StarredElement):
            target(node.value, into, collect)

    nodes = list(table)
    # Only names and the node types above (a quarter of the table): the others are left
    # out at C speed, without a step of this loop each.
    for node in compress(nodes, map(_SCANNED.__contains__, map(type, nodes))):
        kind = type(node)
        if kind is cst.Name:
            names.append(node)
        elif kind is cst.Attribute:
            skip.add(id(node.attr))
        elif kind is cst.Arg:
            if node.keyword is not None:
                skip.add(id(node.keyword))
        elif kind is cst.Param:
            skip.add(id(node.name))
            bound[node.name.value] += 1
        elif kind is cst.AssignTarget or kind is cst.AnnAssign or kind is cst.AugAssign \
                or kind is cst.For or kind is cst.NamedExpr:
            target(node.target, store, True)
        elif kind is cst.CompFor:
            target(node.target, store, False)
        elif kind is cst.WithItem:
            if node.asname is not None:
                target(node.asname.name, store, True)
        elif kind is cst.Del:
            target(node.target, delete, False)
        elif kind is cst.FunctionDef or kind is cst.ClassDef:
            skip.add(id(node.name))
            bound[node.name.value] += 1
            defs.append(node)
        elif kind in _HANDLERS:
            if node.name is not None:
                skip.add(id(node.name.name))
                if isinstance(node.name.name, cst.Name):
                    bound[node.name.name.value] += 1
                handlers.append(node)
        elif kind is cst.NameItem:
            skip.add(id(node.name))
            mentioned.add(node.name.value)
            globals_.append(node)
        elif kind is cst.Import or kind is cst.ImportFrom:
            imports.append(node)
            if kind is cst.ImportFrom:
                skip.update(id(n) for n in _names_in(node.module))
        elif kind is cst.ImportAlias:
            skip.update(id(n) for n in _names_in(node.name))
            if node.asname is not None:
                skip.update(id(n) for n in _names_in(node.asname.name))
        elif kind is cst.MatchAs or kind is cst.MatchStar:
            if node.name is not None:
                skip.add(id(node.name))
                bound[node.name.value] += 1
        elif kind is cst.MatchMapping:
            if node.rest is not None:
                skip.add(id(node.rest))
                bound[node.rest.value] += 1
        elif kind is cst.MatchKeywordElement:
            skip.add(id(node.key))

    reads = scopes.reads
    for name in names:
        key = id(name)
        if key in skip or name.value in _CONSTANTS:
            continue
        if key in store:
            bound[name.value] += 1
        elif key in delete:
            mentioned.add(name.value)
        else:
            reads[name.value] += 1

    _imports(scopes, imports, parents, module_name, is_package, resolve_relative)
    _bindings(scopes, module, parents, lines, stored, defs, handlers, globals_, imports)
    return scopes


def _imports(scopes: Scopes, imports: list, parents: Mapping, module_name: str,
             is_package: bool, resolve_relative) -> None:
    def in_except(node: cst.CSTNode) -> bool:
        parent = parents.get(node)
        while parent is not None:
            if isinstance(parent, _HANDLERS):
                return True
            parent = parents.get(parent)
        return False

    bind = scopes.bind_import
    modules = scopes.modules
    for node in imports:  # statements: the table has them in source order
        fallback = in_except(node)
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _dotted(alias.name)
                modules.add(full)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    bind(alias.asname.name.value, full, fallback)
                else:
                    head = full.split(".")[0]
                    bind(head, head, fallback)
            continue
        base = _dotted(node.module)
        if node.relative:
            base = resolve_relative(module_name, is_package, len(node.relative), base)
        modules.add(base)
        if isinstance(node.names, cst.ImportStar):
            modules.add(f"{base}.*" if base else "*")
            scopes.star.append(base)
            continue
        for alias in node.names:
            name = _dotted(alias.name)
            modules.add(f"{base}.{name}" if base else name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            bind(local, f"{base}.{name}" if base else name, fallback)


def _bindings(scopes: Scopes, module: cst.Module, parents: Mapping, lines: Callable,
              stored: list, defs: list, handlers: list, globals_: list, imports: list) -> None:
    """Each scope's own bindings, as `ast`'s walk of a scope's body finds them: not in
    nested definitions (only their name), lambdas, comprehensions or imports, nor in a
    function's decorators, defaults and annotations (they are outside its body, and the
    scope around it stops at the `def`)."""

    # The owner of a node is its parent's, unless the parent is a scope: names of one
    # statement share their ancestors, so each node's answer is kept (by id: the tree
    # outlives this call).
    owners: dict[int, object | None] = {}
    get = parents.get

    def owner(node: cst.CSTNode) -> object | None:
        path = []
        child, parent = node, get(node)
        while True:
            found = owners.get(id(child), owners)
            if found is not owners:
                break
            path.append(id(child))
            if parent is None:
                found = _MODULE
                break
            kind = type(parent)
            if kind is cst.FunctionDef:
                found = parent if child is parent.body else None
                break
            if kind in _OPAQUE_TYPES:
                found = None
                break
            child, parent = parent, get(parent)
        for key in path:
            owners[key] = found
        return found

    local: dict[object, set[str]] = {}
    global_: dict[object, set[str]] = {}
    for name in stored:
        scope = owner(name)
        if scope is not None:
            local.setdefault(scope, set()).add(name.value)
    for node in defs:
        scope = owner(node)
        if scope is not None:
            local.setdefault(scope, set()).add(node.name.value)
    for node in handlers:
        scope = owner(node)
        if scope is not None and isinstance(node.name.name, cst.Name):
            local.setdefault(scope, set()).add(node.name.name.value)
    for item in globals_:
        statement = parents.get(item)
        if isinstance(statement, cst.Global):
            scope = owner(statement)
            if scope is not None:
                global_.setdefault(scope, set()).add(item.name.value)

    for node in defs:
        if not isinstance(node, cst.FunctionDef):
            continue
        names = set(local.get(node, ()))
        params = node.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params,
                  params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                names.add(p.name.value)
        scopes.functions[(lines(node), node.name.value)] = names - global_.get(node, set())
        scopes.function_imports[node] = []
    for node in imports:
        parent = parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            parent = parents.get(parent)
        if isinstance(parent, cst.FunctionDef):
            scopes.function_imports[parent].append(node)
    scopes.module_names = local.get(_MODULE, set()) - set(scopes.imports)
