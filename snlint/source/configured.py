"""What a file configures by name, read once per file so that the link step only gathers
it: the dotted names it gives as a `class_name` (dnnlib's
`EasyDict(class_name='training.networks.Discriminator')`; `snlint.link.named_classes`),
the options it declares (`parser.add_argument(...)`; `snlint.link.options`), and the
literal values its calls pass by keyword (`snlint.link.interpret`)."""

from __future__ import annotations

from typing import Iterator

from snlint import facts as F

# The keyword and attribute dnnlib reads the class from (`construct_class_by_name`).
CLASS_NAME = "class_name"


def configured(body: tuple[F.Stmt, ...], classes: tuple[tuple[str, F.ClassFacts], ...],
               ) -> tuple[tuple[tuple[str, int], ...], tuple[F.Call, ...], tuple[tuple[str, object], ...]]:
    """(name, line) of each dotted `class_name` a keyword argument, an attribute or a dict
    key is given as a constant string; each `x.add_argument(...)` call a statement makes;
    and each (keyword, literal) a call passes (`model(x, step=1)`), once."""
    # A module-level function is walked from its `def` in `body`, as nested ones are.
    bodies = [body, *(m.body for _, cls in classes for _, m in cls.methods)]
    names: list[tuple[str, int]] = []
    options: list[F.Call] = []
    keywords: dict[tuple[str, object], None] = {}
    for stmts in bodies:
        for stmt in F.statements(stmts):
            names.extend(_given(stmt, keywords))
            value = stmt.value if isinstance(stmt, (F.ExprStmt, F.Assign)) else None
            if isinstance(value, F.Call) and _adds_argument(value.func):
                options.append(value)
    return tuple(names), tuple(options), tuple(keywords)


def _adds_argument(func: F.Expr) -> bool:
    """`parser.add_argument`: on a local parser an attribute; on a module-level one (a
    `config.py` that parses at import) the lowered name `config.parser.add_argument`."""
    if isinstance(func, F.Attr):
        return func.attr == "add_argument"
    return isinstance(func, F.Global) and func.qual.endswith(".add_argument")


def _given(stmt: F.Stmt, keywords: dict[tuple[str, object], None]) -> Iterator[tuple[str, int]]:
    if isinstance(stmt, F.Assign) and _dotted(stmt.value):
        for target in stmt.targets:
            if isinstance(target, F.Attr) and target.attr == CLASS_NAME or \
                    isinstance(target, F.Subscript) and isinstance(target.index, F.Const) \
                    and target.index.value == CLASS_NAME:
                yield stmt.value.value, stmt.span.line
    for call in F.calls_in(stmt):
        for a in call.args:
            if a.keyword is not None and isinstance(a.value, F.Const) and _literal(a.value.value):
                keywords[(a.keyword, a.value.value)] = None
        arg = call.keyword(CLASS_NAME)
        if arg is not None and _dotted(arg.value):
            yield arg.value.value, arg.value.span.line or stmt.span.line


def _literal(value: object) -> bool:
    """A value kept as passed: a flag, a number or a short string (a mode, a step)."""
    return value is None or isinstance(value, (bool, int, float)) or isinstance(value, str) and len(value) <= 40


def _dotted(expr: F.Expr) -> bool:
    return isinstance(expr, F.Const) and isinstance(expr.value, str) and "." in expr.value \
        and all(part.isidentifier() for part in expr.value.split("."))
