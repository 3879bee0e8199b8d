"""Name scopes of one file, read off CPython's `ast` of it: the `Scopes` that
`snlint.source.scan` reads off a libcst tree, the same for the same text.

One recursive walk: names counted by their `ast` context (a load is a *read*; a store, a
parameter, or a `def`/`class`/`except ... as`/match-capture name is a *binding*), imports
in source order, and each function's own bindings, which stop where `scan`'s stop: at
nested definitions (only their name), class bodies, lambdas, comprehensions and imports,
and outside the function's body (its decorators, defaults and annotations).
"""

from __future__ import annotations

import ast

from snlint.source.relative import resolve_relative
from snlint.source.scopes import Scopes

_MODULE = "<module>"
# Nodes whose insides bind in no scope `Scopes.functions` or `module_names` keep.
_OPAQUE = frozenset({ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})
_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
# Nodes with nothing to count under them.
_LEAVES = frozenset({ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue,
                     *(cls for base in (ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
                       for cls in base.__subclasses__())})


def scan_ast(tree: ast.Module, module_name: str, is_package: bool) -> Scopes:
    """The scopes of `tree`. `Scopes.functions` is keyed by the line of `def` (of `async`),
    and `Scopes.function_imports` by the `ast` function node."""
    scopes = Scopes()
    bound, reads, mentioned = scopes.bound, scopes.reads, scopes.mentioned
    local: dict[object, set[str]] = {}
    global_: dict[object, set[str]] = {}
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    imports: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def bind_local(owner: object, name: str) -> None:
        if owner is not None:
            local.setdefault(owner, set()).add(name)

    # Each entry: a node, the scope a binding in it counts for (None: none kept), the
    # innermost function an import in it belongs to (None: module, class or lambda),
    # and whether it is inside an `except` handler. One loop, no recursion: this visits
    # every node of the file.
    stack: list[tuple[ast.AST, object, object, bool]] = [
        (child, _MODULE, None, False) for child in tree.body]
    pop, push = stack.pop, stack.append
    AST, Name, Load, Store = ast.AST, ast.Name, ast.Load, ast.Store
    while stack:
        node, owner, function, in_except = pop()
        kind = type(node)
        if kind is Name:
            ctx = type(node.ctx)
            if ctx is Load:
                reads[node.id] += 1
            elif ctx is Store:
                bound[node.id] += 1
                if owner is not None:
                    bind_local(owner, node.id)
            else:
                mentioned.add(node.id)
            continue
        if kind in _LEAVES:
            continue
        if kind is ast.Import or kind is ast.ImportFrom:
            imports.append((node, in_except))
            if function is not None:
                scopes.function_imports.setdefault(function, []).append(node)
            continue
        if kind in _FUNCTIONS:
            bound[node.name] += 1
            bind_local(owner, node.name)
            functions.append(node)
            scopes.function_imports.setdefault(node, [])
            # Decorators, defaults and annotations bind in no scope kept here.
            for part in (*node.decorator_list, node.args, *([node.returns] if node.returns else [])):
                push((part, None, function, in_except))
            for stmt in node.body:
                push((stmt, node, node, in_except))
            continue
        if kind is ast.ClassDef:
            bound[node.name] += 1
            bind_local(owner, node.name)
            owner = function = None
        elif kind is ast.arg:
            bound[node.arg] += 1
        elif kind is ast.ExceptHandler:
            if node.name:
                bound[node.name] += 1
                bind_local(owner, node.name)
            in_except = True
        elif kind is ast.Global or kind is ast.Nonlocal:
            mentioned.update(node.names)
            if kind is ast.Global and owner is not None:
                global_.setdefault(owner, set()).update(node.names)
        elif kind is ast.MatchAs or kind is ast.MatchStar:
            if node.name:
                bound[node.name] += 1
        elif kind is ast.MatchMapping:
            if node.rest:
                bound[node.rest] += 1
        elif kind is ast.Lambda:
            owner = function = None
        elif kind in _OPAQUE:
            owner = None
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        push((item, owner, function, in_except))
            elif isinstance(value, AST):
                push((value, owner, function, in_except))

    for found in scopes.function_imports.values():
        found.sort(key=_position)
    for function in functions:
        names = set(local.get(function, ()))
        args = function.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None:
                names.add(a.arg)
        scopes.functions[(function.lineno, function.name)] = names - global_.get(function, set())
    _imports(scopes, imports, module_name, is_package)
    scopes.module_names = local.get(_MODULE, set()) - set(scopes.imports)
    return scopes


def _position(node: ast.stmt) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _imports(scopes: Scopes, imports: list, module_name: str, is_package: bool) -> None:
    bind = scopes.bind_import
    modules = scopes.modules
    for node, fallback in sorted(imports, key=lambda pair: _position(pair[0])):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.add(alias.name)
                if alias.asname:
                    bind(alias.asname, alias.name, fallback)
                else:
                    head = alias.name.split(".")[0]
                    bind(head, head, fallback)
            continue
        base = node.module or ""
        if node.level:
            base = resolve_relative(module_name, is_package, node.level, base)
        modules.add(base)
        if node.names[0].name == "*":
            modules.add(f"{base}.*" if base else "*")
            scopes.star.append(base)
            continue
        for alias in node.names:
            full = f"{base}.{alias.name}" if base else alias.name
            modules.add(full)
            bind(alias.asname or alias.name, full, fallback)
