"""Source facts: what one read of one file says, before anything is linked.

The source pass lowers each file to a small intermediate form: module-level statements,
functions and classes whose bodies are statements over expressions, with every global
name already qualified through the file's imports (`nn.Conv2d` -> `torch.nn.Conv2d`,
`from .layers import snconv2d` -> `pkg.layers.snconv2d`). Nothing here knows about other
files; the link step resolves names across the project and interprets these bodies.
Everything is a frozen dataclass, so per-file facts can be computed in parallel and cached.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from snlint.findings import Span

# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    span: Span = field(default=Span(0, 0, 0, 0), compare=False, kw_only=True)


@dataclass(frozen=True)
class Const(Expr):
    value: object


@dataclass(frozen=True)
class Global(Expr):
    """A name that is not local to the function: an import or a module-level definition."""

    qual: str
    text: str = ""  # as written in the source (`SN`, `nn.utils.spectral_norm`)


@dataclass(frozen=True)
class Local(Expr):
    name: str


@dataclass(frozen=True)
class Attr(Expr):
    value: Expr
    attr: str


@dataclass(frozen=True)
class Arg:
    value: Expr
    keyword: str | None = None
    star: str = ""  # "", "*" or "**"
    span: Span = Span(0, 0, 0, 0)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class ListE(Expr):
    items: tuple[Expr, ...]
    kind: str = "list"  # "list" | "tuple" | "set"


@dataclass(frozen=True)
class DictE(Expr):
    items: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True)
class Starred(Expr):
    value: Expr


@dataclass(frozen=True)
class Subscript(Expr):
    value: Expr
    index: Expr


@dataclass(frozen=True)
class BinOp(Expr):
    left: Expr
    op: str
    right: Expr


@dataclass(frozen=True)
class Compare(Expr):
    left: Expr
    op: str  # "==", "!=", "in", "not in", "is", "is not", "<", "<=", ">", ">="
    right: Expr


@dataclass(frozen=True)
class Not(Expr):
    value: Expr


@dataclass(frozen=True)
class BoolOp(Expr):
    op: str  # "and" | "or"
    values: tuple[Expr, ...]


@dataclass(frozen=True)
class IfExp(Expr):
    test: Expr
    body: Expr
    orelse: Expr


@dataclass(frozen=True)
class Lambda(Expr):
    params: tuple[str, ...]
    body: Expr
    star: str | None = None  # `*args`
    dstar: str | None = None  # `**kwargs`


@dataclass(frozen=True)
class CompFor:
    """One `for target in iter if ...` clause of a comprehension."""

    target: Expr
    iter: Expr
    ifs: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class Comprehension(Expr):
    """`[elt for a in x if ... for b in a ...]`, evaluated as nested loops that append `elt`."""

    elt: Expr
    fors: tuple[CompFor, ...]
    kind: str = "list"


@dataclass(frozen=True)
class Unknown(Expr):
    text: str = ""


# ---------------------------------------------------------------- statements


@dataclass(frozen=True)
class Stmt:
    span: Span = field(default=Span(0, 0, 0, 0), compare=False, kw_only=True)


@dataclass(frozen=True)
class Assign(Stmt):
    targets: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True)
class AugAssign(Stmt):
    target: Expr
    op: str
    value: Expr


@dataclass(frozen=True)
class ExprStmt(Stmt):
    value: Expr


@dataclass(frozen=True)
class For(Stmt):
    target: Expr
    iter: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class While(Stmt):
    test: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class If(Stmt):
    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class Block(Stmt):
    """`with`/`try` bodies: run in order, nothing conditional about them for us."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Fallback(Block):
    """An `except` handler inside its `try`'s Block: the path taken when the body fails
    (the end of an epoch, a missing package). Readers of the module's definitions see it
    as a block; the interpreter lets it fill in only what the body left unknown."""


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None


@dataclass(frozen=True)
class Jump(Stmt):
    """`continue` or `break`: the rest of the loop body does not run this time."""

    kind: str


@dataclass(frozen=True)
class DefStmt(Stmt):
    """A nested function definition (bound as a local name)."""

    function: "FunctionFacts"


# ---------------------------------------------------------------- definitions


@dataclass(frozen=True)
class Param:
    name: str
    default: Expr | None = None
    kind: str = "pos"  # "pos" | "kwonly" | "star" | "dstar" | "posonly"
    span: Span = Span(0, 0, 0, 0)  # the whole parameter node, `norm_layer=nn.BatchNorm2d`
    annotation: Expr | None = None


@dataclass(frozen=True)
class FunctionFacts:
    name: str
    qualname: str  # module-qualified: `pkg.mod.func`, `pkg.mod.Class.method`
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    span: Span  # the `def` statement
    is_method: bool = False


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class FileFacts:
    path: str  # display path
    module: str  # dotted module name relative to the project root
    body: tuple[Stmt, ...]  # module-level statements (definitions included as DefStmt/ClassStmt)
    functions: tuple[tuple[str, FunctionFacts], ...]
    classes: tuple[tuple[str, ClassFacts], ...]
    is_package: bool = False  # an __init__.py
    star_imports: tuple[str, ...] = ()  # modules of `from x import *`, in order
    imports: tuple[tuple[str, str], ...] = ()  # local name -> qualified name it imports

    def imported(self, name: str) -> str | None:
        for local, qual in self.imports:
            if local == name:
                return qual
        return None

    def function(self, name: str) -> FunctionFacts | None:
        for key, fn in self.functions:
            if key == name:
                return fn
        return None

    def cls(self, name: str) -> ClassFacts | None:
        for key, c in self.classes:
            if key == name:
                return c
        return None


@dataclass(frozen=True)
class ClassStmt(Stmt):
    cls: ClassFacts
