"""Name scopes of one file, read with Python's own `ast` (C speed).

The lowering needs, before it lowers an expression, which names a function binds (locals
shadow globals) and what the file imports. Walking the libcst tree for that costs a full
visitor pass per function; the `ast` of the same text answers in a fraction of the time.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Scopes:
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    star: list[str] = field(default_factory=list)
    module_names: set[str] = field(default_factory=set)  # bound at module level
    # (line of `def`, name) -> names the function binds, less its `global` names
    functions: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    # The whole file, every scope at once (what a fix may rely on or add):
    imported: dict[str, list[str]] = field(default_factory=dict)  # local name -> each import's target
    bound: Counter = field(default_factory=Counter)  # bindings of each name other than imports
    reads: Counter = field(default_factory=Counter)  # loads of each name
    mentioned: set[str] = field(default_factory=set)  # `global`, `nonlocal` and `del` names


def _targets(node: ast.AST, out: set[str]) -> None:
    if isinstance(node, ast.Name):
        out.add(node.id)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for el in node.elts:
            _targets(el, out)
    elif isinstance(node, ast.Starred):
        _targets(node.value, out)


def bound_names(body: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """Names a scope binds (not descending into nested scopes), and its `global` names."""
    names: set[str] = set()
    globals_: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue  # its body is another scope (decorators/defaults are rare binders)
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                             ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Global):
            globals_.update(node.names)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                _targets(t, names)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            _targets(node.target, names)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _targets(node.target, names)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            _targets(node.optional_vars, names)
        elif isinstance(node, ast.NamedExpr):
            _targets(node.target, names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return names, globals_


# Nodes that bind their `name` (None for a bare `except:` or a `case _:`).
_NAMED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                    ast.MatchAs, ast.MatchStar})


def scan(text: str, module: str, is_package: bool, resolve_relative) -> Scopes | None:
    """The scopes of `text`, or None when `ast` cannot parse what libcst did."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    scopes = Scopes()

    def bind(local: str, qual: str, in_except: bool) -> None:
        scopes.imported.setdefault(local, []).append(qual)
        # `try: from new import x / except ImportError: from old import x`: the first wins.
        if in_except and local in scopes.imports:
            return
        scopes.imports[local] = qual

    bound, reads, mentioned = scopes.bound, scopes.reads, scopes.mentioned

    def walk(node: ast.AST, in_except: bool) -> None:
        for child in ast.iter_child_nodes(node):
            kind = type(child)
            if kind is ast.Name:
                if type(child.ctx) is ast.Load:
                    reads[child.id] += 1
                elif type(child.ctx) is ast.Store:
                    bound[child.id] += 1
                else:
                    mentioned.add(child.id)
                continue
            if kind is ast.arg:
                bound[child.arg] += 1
            elif kind in _NAMED:
                if child.name:
                    bound[child.name] += 1
            elif kind is ast.Global or kind is ast.Nonlocal:
                mentioned.update(child.names)
            elif kind is ast.MatchMapping and child.rest:
                bound[child.rest] += 1
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.asname:
                        bind(alias.asname, alias.name, in_except)
                    else:
                        head = alias.name.split(".")[0]
                        bind(head, head, in_except)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = resolve_relative(module, is_package, child.level, base)
                for alias in child.names:
                    if alias.name == "*":
                        scopes.star.append(base)
                    else:
                        bind(alias.asname or alias.name,
                             f"{base}.{alias.name}" if base else alias.name, in_except)
            else:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names, globals_ = bound_names(child.body)
                    args = child.args
                    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                        if a is not None:
                            names.add(a.arg)
                    scopes.functions[(child.lineno, child.name)] = names - globals_
                walk(child, in_except or isinstance(child, ast.ExceptHandler))

    walk(tree, False)
    top, _ = bound_names(tree.body)
    scopes.module_names = top - set(scopes.imports)
    return scopes
