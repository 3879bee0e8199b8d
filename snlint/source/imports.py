"""What an import statement names, relative imports resolved against the importing module."""

from __future__ import annotations

import ast


def resolve_relative(module: str, is_package: bool, level: int, name: str) -> str:
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if base and name:
        return f"{base}.{name}"
    return base or name


def import_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool
                 ) -> tuple[list[str], list[tuple[str, str]]]:
    """The modules one import statement imports, dotted (`import a.b`: a.b; `from a import
    b, *`: a, a.b, a.*), and the (local name, qualified name) pairs it binds."""
    if type(node) is ast.Import:
        pairs = []
        for a in node.names:
            head = a.name.split(".")[0]
            pairs.append((a.asname, a.name) if a.asname else (head, head))
        return [a.name for a in node.names], pairs
    base = node.module or ""
    if node.level:
        base = resolve_relative(module, is_package, node.level, base)
    if node.names[0].name == "*":
        return [base, f"{base}.*" if base else "*"], []
    quals = [f"{base}.{a.name}" if base else a.name for a in node.names]
    return [base, *quals], [(a.asname or a.name, q) for a, q in zip(node.names, quals)]
