"""Which classes a module defines at import: what the link step looks for discriminators in."""

from __future__ import annotations

from typing import Sequence

from snlint import facts as F


def module_classes(body: Sequence[F.Stmt]) -> list[F.ClassFacts]:
    """Classes a module defines at its top level, also under module-level `if` branches
    (`if args.arch == "dcgan": class D ...`, each branch) and `try`/`with` bodies; not
    under the `__main__` guard, which never runs on import."""
    out: list[F.ClassFacts] = []
    for stmt in body:
        if isinstance(stmt, F.ClassStmt):
            out.append(stmt.cls)
        elif isinstance(stmt, F.If) and not _is_main_guard(stmt.test):
            out.extend(module_classes(stmt.body))
            out.extend(module_classes(stmt.orelse))
        elif isinstance(stmt, F.Block):
            out.extend(module_classes(stmt.body))
    return out


def _is_main_guard(test: F.Expr) -> bool:
    if not isinstance(test, F.Compare) or test.op != "==":
        return False
    sides = (test.left, test.right)
    return (any(isinstance(e, (F.Global, F.Local)) and _name_of(e) == "__name__" for e in sides)
            and any(isinstance(e, F.Const) and e.value == "__main__" for e in sides))


def _name_of(e: F.Expr) -> str:
    return e.name if isinstance(e, F.Local) else e.qual.rpartition(".")[2]
