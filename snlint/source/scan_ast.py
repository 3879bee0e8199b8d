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
_OPAQUE = (ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_HANDLERS = (ast.ExceptHandler,)


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

    def walk(node: ast.AST, owner: object, function: object, in_except: bool) -> None:
        """`owner`: the scope whose bindings a binding here counts for (None: none);
        `function`: the innermost function (`None`: module, class or lambda) whose
        imports an import here is."""
        for child in ast.iter_child_nodes(node):
            kind = type(child)
            if kind is ast.Name:
                ctx = type(child.ctx)
                if ctx is ast.Load:
                    reads[child.id] += 1
                elif ctx is ast.Store:
                    bound[child.id] += 1
                    bind_local(owner, child.id)
                else:
                    mentioned.add(child.id)
                continue
            if kind is ast.Import or kind is ast.ImportFrom:
                imports.append((child, in_except))
                if function is not None:
                    scopes.function_imports.setdefault(function, []).append(child)
                continue
            if kind in _FUNCTIONS:
                bound[child.name] += 1
                bind_local(owner, child.name)
                functions.append(child)
                scopes.function_imports.setdefault(child, [])
                # Decorators, defaults and annotations bind in no scope kept here.
                for part in (*child.decorator_list, child.args, *([child.returns] if child.returns else [])):
                    _visit_one(part, walk, None, function, in_except)
                for stmt in child.body:
                    _visit_one(stmt, walk, child, child, in_except)
                continue
            if kind is ast.ClassDef:
                bound[child.name] += 1
                bind_local(owner, child.name)
                walk(child, None, None, in_except)
                continue
            if kind is ast.arg:
                bound[child.arg] += 1
            elif kind is ast.ExceptHandler:
                if child.name:
                    bound[child.name] += 1
                    bind_local(owner, child.name)
                walk(child, owner, function, True)
                continue
            elif kind is ast.Global or kind is ast.Nonlocal:
                mentioned.update(child.names)
                if kind is ast.Global and owner is not None:
                    global_.setdefault(owner, set()).update(child.names)
            elif kind is ast.MatchAs or kind is ast.MatchStar:
                if child.name:
                    bound[child.name] += 1
            elif kind is ast.MatchMapping:
                if child.rest:
                    bound[child.rest] += 1
            elif kind is ast.Lambda:
                walk(child, None, None, in_except)
                continue
            elif kind in _OPAQUE:
                walk(child, None, function, in_except)
                continue
            walk(child, owner, function, in_except)

    walk(tree, _MODULE, None, False)
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


def _visit_one(node: ast.AST, walk, owner: object, function: object, in_except: bool) -> None:
    """`walk` of a single node (it walks a node's children)."""
    holder = ast.Expr()
    holder.value = node  # type: ignore[assignment]
    # iter_child_nodes(holder) yields `node`: one step of the walk on it, as a child.
    walk(holder, owner, function, in_except)


def _imports(scopes: Scopes, imports: list, module_name: str, is_package: bool) -> None:
    def bind(local: str, qual: str, fallback: bool) -> None:
        scopes.imported.setdefault(local, []).append(qual)
        # `try: from new import x / except ImportError: from old import x`: the first wins.
        if fallback and local in scopes.imports:
            return
        scopes.imports[local] = qual

    modules = scopes.modules
    for node, fallback in sorted(imports, key=lambda pair: (pair[0].lineno, pair[0].col_offset)):
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
