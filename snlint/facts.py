"""Source facts: what one read of one file says, before anything is linked.

Statements over expressions, every global name qualified through the file's imports
(`nn.Conv2d` -> `torch.nn.Conv2d`); the link step resolves names across the project.
Frozen records, so per-file facts can be computed in parallel and cached.
"""

from __future__ import annotations

from dataclasses import field
from typing import Iterator, Mapping

from snlint.findings import Span, record

# ---------------------------------------------------------------- expressions


@record
class Expr:
    span: Span = field(default=Span(0, 0, 0, 0), compare=False, kw_only=True)


@record
class Const(Expr):
    value: object


@record
class Global(Expr):
    """A name that is not local to the function: an import or a module-level definition."""

    qual: str
    text: str = ""  # as written in the source (`SN`, `nn.utils.spectral_norm`)


@record
class Local(Expr):
    name: str


@record
class Attr(Expr):
    value: Expr
    attr: str


@record
class Arg:
    value: Expr
    keyword: str | None = None
    star: str = ""  # "", "*" or "**"
    span: Span = Span(0, 0, 0, 0)


@record
class Call(Expr):
    func: Expr
    args: tuple[Arg, ...] = ()

    def keyword(self, name: str) -> Arg | None:
        for arg in self.args:
            if arg.keyword == name:
                return arg
        return None

    def positional(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.keyword is None and not a.star)


@record
class ListE(Expr):
    items: tuple[Expr, ...]
    kind: str = "list"  # "list" | "tuple" | "set"


@record
class DictE(Expr):
    # (key, value); `**other` is (Starred(other), other)
    items: tuple[tuple[Expr, Expr], ...]


@record
class Starred(Expr):
    value: Expr


@record
class Subscript(Expr):
    value: Expr
    index: Expr


@record
class BinOp(Expr):
    left: Expr
    op: str
    right: Expr


@record
class Compare(Expr):
    left: Expr
    op: str  # "==", "!=", "in", "not in", "is", "is not", "<", "<=", ">", ">="
    right: Expr


@record
class Not(Expr):
    value: Expr


@record
class BoolOp(Expr):
    op: str  # "and" | "or"
    values: tuple[Expr, ...]


@record
class IfExp(Expr):
    test: Expr
    body: Expr
    orelse: Expr


@record
class Lambda(Expr):
    params: tuple[str, ...]
    body: Expr
    star: str | None = None  # `*args`
    dstar: str | None = None  # `**kwargs`


@record
class CompFor:
    """One `for target in iter if ...` clause of a comprehension."""

    target: Expr
    iter: Expr
    ifs: tuple[Expr, ...] = ()


@record
class Comprehension(Expr):
    """`[elt for a in x if ... for b in a ...]`, evaluated as nested loops that append `elt`."""

    elt: Expr
    fors: tuple[CompFor, ...]
    kind: str = "list"


@record
class Unknown(Expr):
    text: str = ""
    unbound: bool = False  # a name nothing in the file binds (`netG` in a notebook's later cell)


# ---------------------------------------------------------------- statements


@record
class Stmt:
    span: Span = field(default=Span(0, 0, 0, 0), compare=False, kw_only=True)


@record
class Assign(Stmt):
    targets: tuple[Expr, ...]
    value: Expr


@record
class AugAssign(Stmt):
    target: Expr
    op: str
    value: Expr


@record
class ExprStmt(Stmt):
    value: Expr


@record
class For(Stmt):
    target: Expr
    iter: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@record
class While(Stmt):
    test: Expr
    body: tuple[Stmt, ...]


@record
class If(Stmt):
    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@record
class Block(Stmt):
    """`with`/`try` bodies: run in order, nothing conditional about them for us."""

    body: tuple[Stmt, ...]


@record
class Fallback(Block):
    """An `except` handler inside its `try`'s Block: the path taken when the body fails
    (the end of an epoch, a missing package). Readers of the module's definitions see it
    as a block; the interpreter lets it fill in only what the body left unknown."""


@record
class Return(Stmt):
    value: Expr | None


@record
class Jump(Stmt):
    """`continue` or `break`: the rest of the loop body does not run this time."""

    kind: str


@record
class DefStmt(Stmt):
    """A nested function definition (bound as a local name)."""

    function: "FunctionFacts"


# ---------------------------------------------------------------- names, for the fixes


# What a node key names at its span: nodes of different roles share spans (an
# expression statement and its call; a keyword argument's value and the argument).
EXPR, ARG, PARAM, ALIAS, STMT = range(5)


def node_key(line: int, column: int, end_line: int, end_column: int, role: int) -> int:
    """The *node key* of the node read at this span in this role: one int, a function of
    the text alone, so the source pass and a fix's libcst parse (`snlint.edit.parsed`)
    compute the same key for the same node."""
    return ((((line << 32 | column) << 32 | end_line) << 32 | end_column) << 3) | role


@record(eq=False)
class Names:
    """What the names of one file mean, as a fix asks, resolved across the project by the
    link step (`snlint.link.names`). Keyed by node key where a node is meant, by name
    where a spelling is."""

    # The span of each call, argument and parameter -> its node key: where a position the
    # graph pass reports is in the file.
    sites: Mapping[Span, int] = field(default_factory=dict)
    # Node index of each name or attribute chain read as a global -> the qualified name
    # (`nn.BatchNorm2d` -> `torch.nn.BatchNorm2d`); a local variable has none.
    quals: Mapping[int, str] = field(default_factory=dict)
    # A module-level name bound one way only (one import target and nothing else, or one
    # module-level binding and no import) -> the qualified name.
    scope: Mapping[str, str] = field(default_factory=dict)
    # A name one import alias binds and nothing else -> the node key of that alias.
    imports: Mapping[str, int] = field(default_factory=dict)
    # A module-level name assigned once and bound nothing else -> the node key of the
    # value (`SN = nn.utils.spectral_norm`).
    aliases: Mapping[str, int] = field(default_factory=dict)
    # The qualified name of a module-level `functools.partial(f, ...)` -> that of `f`;
    # the link step fills it in.
    partials: Mapping[str, str] = field(default_factory=dict)
    # How often each name is read (not counting attribute names, keywords and imports).
    reads: Mapping[str, int] = field(default_factory=dict)
    # Every name the file binds, imports or reads, in any scope: a fix may add one outside
    # it once every binding was counted (`complete`).
    used: frozenset[str] = frozenset()
    complete: bool = False

    def is_free(self, name: str) -> bool:
        return self.complete and name not in self.used

    def binding_for(self, qualified: str) -> str | None:
        """A local name chain that refers to `qualified`: a name bound to it, or to a module
        above it plus the attribute path (`nn` for torch.nn -> `nn.GroupNorm`)."""
        best: tuple[int, str] | None = None
        for local, full in sorted(self.scope.items()):
            if full == qualified:
                return local
            if qualified.startswith(full + "."):
                rest = qualified[len(full) + 1:]
                candidate = (rest.count("."), f"{local}.{rest}")
                if best is None or candidate < best:
                    best = candidate
        return best[1] if best else None


# ---------------------------------------------------------------- definitions


@record
class Param:
    name: str
    default: Expr | None = None
    kind: str = "pos"  # "pos" | "kwonly" | "star" | "dstar" | "posonly"
    span: Span = Span(0, 0, 0, 0)  # the whole parameter node, `norm_layer=nn.BatchNorm2d`
    annotation: Expr | None = None


@record
class FunctionFacts:
    name: str
    qualname: str  # module-qualified: `pkg.mod.func`, `pkg.mod.Class.method`
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    span: Span  # the `def` statement
    is_method: bool = False
    decorators: tuple[Expr, ...] = ()  # as written (`@torch.no_grad()`), read where the `def` is


@record
class ClassFacts:
    name: str
    qualname: str
    bases: tuple[Expr, ...]
    methods: tuple[tuple[str, FunctionFacts], ...]
    span: Span  # the class name
    body: tuple[Stmt, ...] = ()  # class-level assignments
    decorators: tuple[Expr, ...] = ()  # `@ARCH_REGISTRY.register()`, as written

    def method(self, name: str) -> FunctionFacts | None:
        for key, fn in self.methods:
            if key == name:
                return fn
        return None

    @property
    def method_names(self) -> frozenset[str]:
        return frozenset(k for k, _ in self.methods)


@record
class FileFacts:
    path: str  # display path
    module: str  # dotted module name relative to the project root
    body: tuple[Stmt, ...]  # module-level statements (definitions included as DefStmt/ClassStmt)
    functions: tuple[tuple[str, FunctionFacts], ...]
    classes: tuple[tuple[str, ClassFacts], ...]
    is_package: bool = False  # an __init__.py
    star_imports: tuple[str, ...] = ()  # modules of `from x import *`, in order
    imports: tuple[tuple[str, str], ...] = ()  # local name -> qualified name it imports
    names: Names = field(default_factory=Names, compare=False)
    # Each dotted name given as a `class_name`, with its line; each `x.add_argument(...)`
    # call a statement makes (`snlint.source.configured`).
    class_names: tuple[tuple[str, int], ...] = ()
    option_calls: tuple[Call, ...] = ()
    # Each (keyword, literal value) a call here passes: `model(x, step=1)`.
    keyword_literals: tuple[tuple[str, object], ...] = ()
    # False: libcst does not read the file back byte for byte: no fix rewrites it.
    rewritable: bool = True

    def imported(self, name: str) -> str | None:
        for local, qual in self.imports:
            if local == name:
                return qual
        return None


@record
class ClassStmt(Stmt):
    cls: ClassFacts


def calls_in(stmt: Stmt) -> Iterator[Call]:
    """The calls in one statement's own expressions (not its nested statements)."""
    roots = []
    for attr in ("value", "test", "iter"):
        e = getattr(stmt, attr, None)
        if isinstance(e, Expr):
            roots.append(e)
    stack = roots
    while stack:
        e = stack.pop()
        if isinstance(e, Call):
            yield e
            stack.append(e.func)
            stack.extend(a.value for a in e.args)
        elif isinstance(e, (Attr, Starred, Not)):
            stack.append(e.value)
        elif isinstance(e, Subscript):
            stack.extend((e.value, e.index))
        elif isinstance(e, BinOp):
            stack.extend((e.left, e.right))
        elif isinstance(e, ListE):
            stack.extend(e.items)


def statements(body: tuple[Stmt, ...], functions: bool = True) -> Iterator[Stmt]:
    """Every statement of a body: those in its blocks, and in the functions it defines
    unless `functions` is False."""
    for stmt in body:
        yield stmt
        if functions and isinstance(stmt, DefStmt):
            yield from statements(stmt.function.body)
        for attr in ("body", "orelse"):
            inner = getattr(stmt, attr, None)
            if isinstance(inner, tuple):
                yield from statements(inner, functions)
