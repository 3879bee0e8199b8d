"""What the facts say as written, read without running them: the names an expression
mentions, a call's dotted text, the statements of a body and the calls in them.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterator

from snlint import facts as F
from snlint.facts import calls_in  # noqa: F401 - the link step's readers import it from here


def text_of(e: F.Expr) -> str:
    """A name or attribute chain as written (`netD`, `self.D`); "" for anything else."""
    if isinstance(e, F.Global):
        return e.text or e.qual.rsplit(".", 1)[-1]
    if isinstance(e, F.Local):
        return e.name
    if isinstance(e, F.Attr):
        return f"{text_of(e.value)}.{e.attr}"
    if isinstance(e, F.Unknown) and e.unbound:
        return e.text
    return ""


def last_attr(e: F.Expr) -> str:
    """The method a call's callee names (`copy_` of `x.data.copy_`)."""
    if isinstance(e, F.Attr):
        return e.attr
    if isinstance(e, F.Global) and "." in e.qual:
        return e.qual.rpartition(".")[2]
    return ""


def names_in(e: F.Expr | None) -> list[str]:
    """The identifiers an expression mentions (for name-based evidence only)."""
    out: list[str] = []
    _names_into(e, out)
    return out


# Not a closure that calls itself: its cell would hold it in a cycle, and the cycles of
# every call wait for the cyclic collector.
def _names_into(x: F.Expr | None, out: list[str]) -> None:
    if isinstance(x, F.Local):
        out.append(x.name)
    elif isinstance(x, F.Global):
        out.append(x.text or x.qual.rsplit(".", 1)[-1])
    elif isinstance(x, F.Attr):
        out.append(x.attr)
        _names_into(x.value, out)
    elif isinstance(x, F.Call):
        _names_into(x.func, out)
        for a in x.args:
            _names_into(a.value, out)
    elif isinstance(x, (F.ListE,)):
        for i in x.items:
            _names_into(i, out)
    elif isinstance(x, (F.Subscript, F.Starred, F.Not)):
        _names_into(x.value, out)
    elif isinstance(x, F.BinOp):
        _names_into(x.left, out)
        _names_into(x.right, out)


def assignments_to(stmt: F.Stmt, qual: str) -> list[F.Assign]:
    """Assignments to the module-level name `qual` inside top-level if/with/try blocks."""
    out: list[F.Assign] = []
    if isinstance(stmt, F.Assign):
        if any(isinstance(t, F.Global) and t.qual == qual for t in stmt.targets):
            out.append(stmt)
    elif isinstance(stmt, F.If):
        for sub in stmt.body + stmt.orelse:
            out.extend(assignments_to(sub, qual))
    elif isinstance(stmt, F.Block):
        for sub in stmt.body:
            out.extend(assignments_to(sub, qual))
    return out


_FIELDS: dict[type, tuple[str, ...]] = {}  # each type's fields for `fact_children`


def fact_children(x: object) -> list:
    """The values a fact holds (its dataclass fields but its span), for a walk over facts
    without a generator per fact; none for anything else."""
    kind = type(x)
    names = _FIELDS.get(kind)
    if names is None:
        fields = () if kind is F.Span else getattr(kind, "__dataclass_fields__", ())
        names = _FIELDS[kind] = tuple(f for f in fields if f != "span")
    return [getattr(x, name) for name in names]


def fact_nodes(roots) -> Iterator:
    """Every fact under `roots` (facts, and tuples and lists of them), in no set order."""
    stack = list(roots)
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        else:
            yield x
            stack.extend(fact_children(x))


def mentions(roots, out: Counter) -> Counter:
    """Count, in `out`, each qualified name the code under `roots` mentions, by its whole
    and its last part, and each string constant: what says that a class is used somewhere,
    however it is built (called, subclassed, registered, named in a config string)."""
    for x in fact_nodes(roots):
        if isinstance(x, F.Global):
            out[x.qual] += 1
            out[x.qual.rpartition(".")[2]] += 1
        elif isinstance(x, F.Const) and isinstance(x.value, str):
            out[x.value] += 1
    return out
