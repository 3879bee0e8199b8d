"""The source facts at a finding's node, what a rule's `fix_input` reads: one file's
facts by node key (`facts.node_key`), with what encloses each, so that a plain lint
marks each fixable finding without parsing its file again."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any, Iterator

from snlint import facts as F
from snlint.torchapi import KINDS, SN_FUNCTIONS

# The last files asked about: a lint marks the findings of one file after another.
_RECENT: list[tuple[F.FileFacts, "FactsAt"]] = []
_KEEP = 4


class FactsAt:
    """The facts of one file by node key, each with what encloses it. A top-level
    statement's facts are read when a key on its lines is first asked for: a lint asks
    about the few statements its fixable findings are in."""

    def __init__(self, file: F.FileFacts) -> None:
        self.by_index: dict[int, Any] = {}
        self._pending: list[F.Stmt] = list(file.body)  # top-level statements not read yet
        # Their last lines, when they follow each other: found by bisection, not by a scan
        # per finding (a file of thousands of statements).
        spans = [s.span for s in self._pending]
        ordered = all(a.line <= b.line and a.end_line <= b.end_line
                      for a, b in zip(spans, spans[1:]))
        self._ends: list[int] | None = [sp.end_line for sp in spans] if ordered else None
        self._tops: set[int] = set()  # id() of each top-level statement read
        self.parent = _Parents(self)  # id(fact) -> the fact enclosing it

    def _read(self, statements: list[F.Stmt]) -> None:
        # Each fact before what it holds (the first at a key is the outermost).
        by_index, parent = self.by_index, self.parent
        self._tops.update(map(id, statements))
        stack: list[tuple[Any, Any]] = [(stmt, None) for stmt in reversed(statements)]
        while stack:
            fact, holder = stack.pop()
            if holder is not None:
                parent[id(fact)] = holder
            span = getattr(fact, "span", None)
            if span is not None and span.node is not None:
                by_index.setdefault(span.node, fact)
            stack.extend((child, fact) for child in reversed(_children(fact)))

    def _read_lines(self, line: int, end_line: int) -> None:
        """Read the top-level statements on these lines (all, when they are out of order)."""
        ends = self._ends
        if ends is None:
            self._read_all()
            return
        start = end = bisect_left(ends, line)
        while end < len(ends) and self._pending[end].span.line <= end_line:
            end += 1
        wanted = self._pending[start:end]
        del self._pending[start:end], ends[start:end]
        self._read(wanted)

    def _read_all(self) -> None:
        wanted, self._pending = self._pending, []
        self._ends = [] if self._ends is not None else None
        self._read(wanted)

    @classmethod
    def of(cls, file: F.FileFacts) -> "FactsAt":
        for known, index in _RECENT:
            if known is file:
                return index
        index = cls(file)
        _RECENT.insert(0, (file, index))
        del _RECENT[_KEEP:]
        return index

    def at(self, index: int | None) -> Any:
        if index is None:
            return None
        found = self.by_index.get(index)
        if found is None and self._pending:
            key = index >> 3
            self._read_lines(key >> 96, (key >> 32) & 0xFFFFFFFF)
            found = self.by_index.get(index)
        return found

    def ancestors(self, fact: Any) -> Iterator[Any]:
        current = self.parent.get(id(fact))
        while current is not None:
            yield current
            current = self.parent.get(id(current))

    def body_of(self, stmt: F.Stmt) -> tuple[F.Stmt, ...] | None:
        """The statements `stmt` is one of (the body or else branch holding it)."""
        parent = self.parent.get(id(stmt))
        for attr in ("body", "orelse"):
            body = getattr(parent, attr, None)
            if isinstance(body, tuple) and any(s is stmt for s in body):
                return body
        return None


class _Parents(dict):
    """`FactsAt.parent`: asked about a fact of a statement not read yet (`b = D(y)` reached
    from `a = D(x)`), it reads every statement first."""

    def __init__(self, owner: FactsAt) -> None:
        super().__init__()
        self._owner = owner

    def get(self, key: int, default: Any = None) -> Any:  # type: ignore[override]
        found = dict.get(self, key)
        if found is None and key not in self._owner._tops and self._owner._pending:
            self._owner._read_all()
            found = dict.get(self, key)
        return default if found is None else found


_FACT_TYPES = (F.Expr, F.Stmt, F.Arg, F.Param, F.CompFor, F.FunctionFacts, F.ClassFacts)


@cache
def _child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a fact type that may hold facts."""
    if not is_dataclass(kind) or kind is F.FileFacts:
        return ()
    return tuple(f.name for f in fields(kind) if f.name != "span")


def _children(fact: Any) -> list[Any]:
    out: list[Any] = []
    for name in _child_fields(type(fact)):
        _collect(getattr(fact, name), out)
    return out


def _collect(value: Any, out: list[Any]) -> None:
    if isinstance(value, _FACT_TYPES):
        out.append(value)
    elif isinstance(value, tuple):
        for item in value:
            _collect(item, out)


# ---------------------------------------------------------------- what fixes ask


def fact_at(finding: Any, file: F.FileFacts) -> tuple[FactsAt, F.Names, Any]:
    """The file's index, the names the finding was decided with (the link step's, else the
    file's own), and the fact at the finding's node (None: none)."""
    index = FactsAt.of(file)
    names = finding.names if finding.names is not None else file.names
    return index, names, index.at(finding.node)


def call_at(finding: Any, file: F.FileFacts) -> tuple[FactsAt, F.Names, F.Call | None]:
    """`fact_at`, when the fact is a call."""
    index, names, call = fact_at(finding, file)
    return index, names, call if isinstance(call, F.Call) else None


def walk(*facts: Any) -> Iterator[Any]:
    """`facts` and every fact inside them, each before what it holds."""
    stack: list[Any] = list(reversed(facts))
    while stack:
        fact = stack.pop()
        yield fact
        stack.extend(reversed(_children(fact)))


def attribute(e: Any) -> tuple[str, Any] | None:
    """(attribute name, what it is read from) when `e` reads an attribute: `x.weight`, or
    a module-level chain the source pass kept whole (a `Global` with a dot)."""
    if isinstance(e, F.Attr):
        return e.attr, e.value
    if isinstance(e, F.Global) and "." in (e.text or ""):
        head, _, attr = e.text.rpartition(".")
        return attr, head
    return None


def qualified(names: F.Names, e: Any) -> str | None:
    """The qualified name a name or attribute chain refers to (`parsed.names.qualify`)."""
    if isinstance(e, (F.Global, F.Local, F.Attr, F.Unknown)) and e.span.node is not None:
        return names.quals.get(e.span.node)
    return None


def prefix_quals(names: F.Names, e: Any) -> list[str | None]:
    """The qualified names of the chains `e` reads its attributes from, longest first
    (`nn.utils`, then `nn`, for `nn.utils.spectral_norm`), also inside a module-level
    chain the source pass kept whole."""
    if isinstance(e, F.Attr):
        return [qualified(names, e.value), *prefix_quals(names, e.value)]
    if not isinstance(e, F.Global) or e.span.node is None:
        return []
    key = e.span.node >> 3
    start, end = key >> 64, key & 0xFFFFFFFFFFFFFFFF
    line, column = start >> 32, start & 0xFFFFFFFF
    if line == end >> 32 and (end & 0xFFFFFFFF) - column == len(e.text):
        # The chain as written on one line: its prefixes end at its dots, and are looked up
        # rather than searched for among every name of the file (once per fix, in a long
        # file, that search was most of a lint).
        dots = [i for i, c in enumerate(e.text) if c == "."]
        looked = [names.quals.get(F.node_key(line, column, line, column + i, F.EXPR)) for i in reversed(dots)]
        return [qual for qual in looked if qual is not None]
    return _searched(names, start, end)


def _searched(names: F.Names, start: int, end: int) -> list[str | None]:
    """The qualified names of the chains that start at `start` and end before `end`."""
    found = []
    for other, qual in names.quals.items():
        k = other >> 3
        if other & 7 == F.EXPR and k >> 64 == start and (k & 0xFFFFFFFFFFFFFFFF) < end:
            found.append((k & 0xFFFFFFFFFFFFFFFF, qual))
    return [qual for _, qual in sorted(found, reverse=True)]


def sn_api(names: F.Names, e: Any) -> str | None:
    return SN_FUNCTIONS.get(qualified(names, e) or "")


def torch_nn_type(names: F.Names, e: Any) -> str | None:
    """`Conv2d` when `e` names torch.nn.Conv2d (`edit.syntax.torch_nn_type`)."""
    qual = qualified(names, e)
    if qual is None:
        return None
    head, _, name = qual.rpartition(".")
    if head == "torch.nn" or head.startswith("torch.nn.modules"):
        return name if name in KINDS else None
    return None


def dotted(e: Any) -> str | None:
    """`a.b.c` for a name or attribute chain as written, else None."""
    if isinstance(e, F.Global):
        return e.text or None
    if isinstance(e, F.Local):
        return e.name
    if isinstance(e, F.Attr):
        head = dotted(e.value)
        return f"{head}.{e.attr}" if head is not None else None
    return None


def last_name(e: Any) -> str | None:
    text = dotted(e)
    return text.rpartition(".")[2] if text else None


def names_in(e: Any) -> set[str]:
    """Every identifier an expression mentions (`edit.syntax.names_in`)."""
    out: set[str] = set()
    for x in walk(e):
        if isinstance(x, F.Local):
            out.add(x.name)
        elif isinstance(x, F.Global):
            out.update(part for part in (x.text or "").split(".") if part)
        elif isinstance(x, F.Attr):
            out.add(x.attr)
        elif isinstance(x, F.Unknown) and x.text.isidentifier():
            out.add(x.text)
    return out


def has_star(call: F.Call) -> bool:
    return any(a.star for a in call.args)


def module_arg(call: F.Call) -> F.Arg | None:
    """The module an SN call wraps: its first positional argument or `module=`."""
    if has_star(call):
        return None
    pos = call.positional()
    return pos[0] if pos else call.keyword("module")

