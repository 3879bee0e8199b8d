"""Name scopes of one file, read off CPython's `ast` of it (`Scopes`), in one walk without
recursion (which makes any depth safe for the rest): reads and bindings by `ast` context,
imports in source order, and each function's own bindings (not those of nested
definitions, class bodies, lambdas and comprehensions, nor its decorators and defaults).

The same walk replaces an expression nested more than `MAX_NESTING` levels inside its
statement by a `TooDeep` constant (recorded in `Scopes.cuts`), so that the lowering, the
interpreter and the reports, which recurse, never meet deeper code than they can follow;
and notes what only CPython's compiler rejects (`Scopes.suspect`).
"""

from __future__ import annotations

import ast

from snlint.source.imports import import_names
from snlint.source.scopes import Scopes

_MODULE = "<module>"
# Levels of expression nesting inside one statement the lowering follows: generous for
# code people write (a chain of 30 method calls is 60 levels).
MAX_NESTING = 100


class TooDeep:
    """The value of an expression nested deeper than `MAX_NESTING` (an `ast.Constant`'s
    value in its place): the lowering reads it as unknown."""

    __slots__ = ()


TOO_DEEP = TooDeep()
# Nodes whose insides bind in no scope `Scopes.functions` or `module_names` keep.
_OPAQUE = frozenset({ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})
_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
# What CPython's compiler (not its parser) rejects outside a function.
_OUTSIDE_FUNCTION = frozenset({ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Nonlocal})
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
    # whether it is inside an `except` handler, and its depth in its statement.
    stack: list[tuple[ast.AST, object, object, bool, int]] = [
        (child, _MODULE, None, False, 0) for child in tree.body]
    pop, push = stack.pop, stack.append
    AST, Name, Load, Store, stmt, expr = ast.AST, ast.Name, ast.Load, ast.Store, ast.stmt, ast.expr
    suspect = False
    while stack:
        node, owner, function, in_except, depth = pop()
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
        if kind in _OUTSIDE_FUNCTION:
            if function is None or (kind is ast.Await and type(function) is not ast.AsyncFunctionDef):
                suspect = True
        elif kind is ast.Call and len(node.keywords) > 1:
            named = [k.arg for k in node.keywords if k.arg is not None]
            suspect = suspect or len(set(named)) < len(named)
        elif kind is ast.arguments:
            named = _parameters(node)
            suspect = suspect or len(set(named)) < len(named)
        if kind in _FUNCTIONS:
            bound[node.name] += 1
            bind_local(owner, node.name)
            functions.append(node)
            scopes.function_imports.setdefault(node, [])
            # Decorators, defaults and annotations bind in no scope kept here.
            for part in (*node.decorator_list, node.args, *([node.returns] if node.returns else [])):
                push((part, None, function, in_except, 1))
            for statement in node.body:
                push((statement, node, node, in_except, 0))
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
        inner = depth + 1
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for i, item in enumerate(value):
                    if isinstance(item, AST):
                        if isinstance(item, stmt):
                            push((item, owner, function, in_except, 0))
                        elif inner > MAX_NESTING and isinstance(item, expr):
                            value[i] = _cut(item, scopes.cuts)
                        else:
                            push((item, owner, function, in_except, inner))
            elif isinstance(value, AST):
                if inner > MAX_NESTING and isinstance(value, expr):
                    setattr(node, field, _cut(value, scopes.cuts))
                else:
                    push((value, owner, function, in_except, inner))
    scopes.suspect = suspect

    for found in scopes.function_imports.values():
        found.sort(key=_position)
    for function in functions:
        names = local.get(function, set()) | set(_parameters(function.args))
        scopes.functions[(function.lineno, function.name)] = names - global_.get(function, set())
    _imports(scopes, imports, module_name, is_package)
    scopes.module_names = local.get(_MODULE, set()) - set(scopes.imports)
    return scopes


def _cut(node: ast.expr, cuts: list[tuple[int, int, int, int]]) -> ast.Constant:
    """The unknown value that stands for `node`, too deep to follow, where it was."""
    cuts.append((node.lineno, node.col_offset + 1, node.end_lineno or node.lineno,
                 (node.end_col_offset or node.col_offset) + 1))
    return ast.copy_location(ast.Constant(TOO_DEEP), node)


def _parameters(args: ast.arguments) -> list[str]:
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
            if a is not None]


def _position(node: ast.stmt) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _imports(scopes: Scopes, imports: list, module_name: str, is_package: bool) -> None:
    for node, fallback in sorted(imports, key=lambda pair: _position(pair[0])):
        modules, bound = import_names(node, module_name, is_package)
        scopes.modules.update(modules)
        if type(node) is ast.ImportFrom and node.names[0].name == "*":
            scopes.star.append(modules[0])
        for local, qual in bound:
            scopes.bind_import(local, qual, fallback)
