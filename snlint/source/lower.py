"""Lower one libcst module to source facts (snlint.facts).

One visit of one file. Global names are qualified through the file's imports here, so
that the link step never needs the syntax tree: `nn.utils.spectral_norm` becomes
`Global("torch.nn.utils.spectral_norm")` and `from .layers import snconv2d` becomes
`Global("pkg.layers.snconv2d")`.
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from snlint import facts as F
from snlint.findings import Span
from snlint.source.indentation import Expanded
from snlint.source.relative import resolve_relative
from snlint.source.lowering import Lowering
from snlint.positions import arg_range, layout, param_range
from snlint.source.scan import scan

_CONSTANTS = {"True": True, "False": False, "None": None}
_COMPARE = {cst.Equal: "==", cst.NotEqual: "!=", cst.In: "in", cst.NotIn: "not in", cst.Is: "is",
            cst.IsNot: "is not", cst.LessThan: "<", cst.LessThanEqual: "<=",
            cst.GreaterThan: ">", cst.GreaterThanEqual: ">="}


def _dotted(node: cst.BaseExpression | cst.ImportFrom | None) -> str:
    if node is None:
        return ""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


class _Bindings(cst.CSTVisitor):
    """Names a scope binds, without descending into nested scopes."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def _target(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            self.names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._target(el.value)
        elif isinstance(node, cst.StarredElement):
            self._target(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        if isinstance(node.name, cst.Name):
            self.names.add(node.name.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return False

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False


class _Imports(cst.CSTVisitor):
    """Every import in the file, wherever it is: local imports in training functions count."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.table: dict[str, str] = {}
        self.star: list[str] = []
        self.in_except = 0

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.in_except += 1

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.in_except -= 1

    def _bind(self, local: str, qual: str) -> None:
        # `try: from new import x / except ImportError: from old import x`: the import
        # that succeeds on a current torch is the first; the fallback does not rebind it.
        if self.in_except and local in self.table:
            return
        self.table[local] = qual

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, full)
            else:
                head = full.split(".")[0]
                self._bind(head, head)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        level = len(node.relative)
        base = _dotted(node.module)
        if level:
            base = resolve_relative(self.module, self.is_package, level, base)
        if isinstance(node.names, cst.ImportStar):
            self.star.append(base)
            return
        for alias in node.names:
            name = _dotted(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._bind(local, f"{base}.{name}" if base else name)


class Lowerer(Lowering):
    def __init__(self, module: cst.Module, module_name: str, is_package: bool,
                 expanded: Expanded | None = None) -> None:
        self.tree = module
        # The file as libcst read it after its tab indentation was expanded: columns are
        # mapped back to the file's.
        self.expanded = expanded
        # One codegen gives the positions and the parents the scan reads.
        self.positions, parents = layout(module)
        positions = self.positions
        super().__init__(scan(module, positions, parents, lambda node: positions.raw(node)[0],
                              module_name, is_package, resolve_relative), module_name, is_package)

    # ------------------------------------------------------------ helpers

    def span(self, node: cst.CSTNode, role: int = F.EXPR) -> Span:
        sl, sc, el, ec, _ = self.positions.raw(node)
        if self.expanded is not None:
            sc, ec = self.expanded.column(sl, sc), self.expanded.column(el, ec)
        return Span(sl, sc + 1, el, ec + 1, F.node_key(sl, sc + 1, el, ec + 1, role))

    # ------------------------------------------------------------ expressions

    def expr(self, node: cst.BaseExpression | None) -> F.Expr:
        if node is None:
            return F.Const(None)
        span = self.span(node)
        # Exact types first: the node classes read most are final in libcst, and
        # `isinstance` on them goes through the ABC machinery of `CSTNode`.
        kind = type(node)
        if kind is cst.Name:
            value = node.value
            if value in _CONSTANTS:
                return F.Const(_CONSTANTS[value], span=span)
            return self.qualify(value, span)
        if kind is cst.Attribute:
            return self.attribute(self.expr(node.value), node.attr.value, span)
        if kind is cst.Call:
            self.site(span, call=True)
            args = tuple(self.arg(a) for a in node.args)
            return F.Call(self.expr(node.func), args, span=span)
        if kind is cst.Integer:
            try:
                return F.Const(int(node.value, 0), span=span)
            except ValueError:
                return F.Const(int(node.value.replace("_", "")), span=span)
        if kind is cst.Float:
            return F.Const(float(node.value.replace("_", "")), span=span)
        if kind is cst.SimpleString or kind is cst.ConcatenatedString:
            try:
                value = node.evaluated_value
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                value = None  # a literal CPython refuses (a null byte in it): no value
            return F.Const(value if isinstance(value, str) else None, span=span)
        if isinstance(node, cst.UnaryOperation):
            inner = self.expr(node.expression)
            if isinstance(node.operator, cst.Not):
                return F.Not(inner, span=span)
            if isinstance(node.operator, cst.Minus) and isinstance(inner, F.Const) and isinstance(inner.value, (int, float)):
                return F.Const(-inner.value, span=span)
            # `-D(real).mean()`: the operand still runs; keep it as arithmetic on it.
            return F.BinOp(F.Const(0), "Subtract", inner, span=span)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            kind = {cst.List: "list", cst.Tuple: "tuple", cst.Set: "set"}[type(node)]
            items = []
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    items.append(F.Starred(self.expr(el.value), span=self.span(el)))
                else:
                    items.append(self.expr(el.value))
            return F.ListE(tuple(items), kind, span=span)
        if isinstance(node, cst.Dict):
            pairs = []
            for el in node.elements:
                if isinstance(el, cst.DictElement):
                    pairs.append((self.expr(el.key), self.expr(el.value)))
                else:  # `**other`: a Starred key, over the unpacked expression
                    unpacked = self.expr(el.value)
                    pairs.append((F.Starred(unpacked, span=self.span(el.value)), unpacked))
            return F.DictE(tuple(pairs), span=span)
        if isinstance(node, cst.Subscript):
            index: F.Expr = F.Unknown("")
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                index = self.expr(node.slice[0].slice.value)
            elif len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                part = node.slice[0].slice
                bounds = [_int_bound(b) for b in (part.lower, part.upper, part.step)]
                if all(b is not _NOT_INT for b in bounds):
                    index = F.Const(slice(*bounds))  # `layers[:-1]`: a slice of constant bounds
            return F.Subscript(self.expr(node.value), index, span=span)
        if isinstance(node, cst.BinaryOperation):
            return F.BinOp(self.expr(node.left), type(node.operator).__name__, self.expr(node.right), span=span)
        if isinstance(node, cst.BooleanOperation):
            op = "and" if isinstance(node.operator, cst.And) else "or"
            return F.BoolOp(op, (self.expr(node.left), self.expr(node.right)), span=span)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            target = node.comparisons[0]
            op = _COMPARE.get(type(target.operator))
            if op is not None:
                return F.Compare(self.expr(node.left), op, self.expr(target.comparator), span=span)
        if isinstance(node, cst.IfExp):
            return F.IfExp(self.expr(node.test), self.expr(node.body), self.expr(node.orelse), span=span)
        if isinstance(node, cst.Lambda):
            params = tuple(p.name.value for p in node.params.params)
            star = node.params.star_arg.name.value if isinstance(node.params.star_arg, cst.Param) else None
            dstar = node.params.star_kwarg.name.value if node.params.star_kwarg is not None else None
            self.scopes.append(set(params) | {n for n in (star, dstar) if n})
            try:
                body = self.expr(node.body)
            finally:
                self.scopes.pop()
            return F.Lambda(params, body, star, dstar, span=span)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self.comprehension(node, span)
        if isinstance(node, cst.NamedExpr):
            return self.expr(node.value)
        if isinstance(node, cst.Await):
            return self.expr(node.expression)
        return F.Unknown(type(node).__name__, span=span)

    def comprehension(self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp, span: Span) -> F.Expr:
        # Each clause's iterable sees the names the clauses before it bind
        # (`[m for block in blocks for m in block]`).
        fors: list[F.CompFor] = []
        pushed = 0
        clause: cst.CompFor | None = node.for_in
        try:
            while clause is not None:
                iter_expr = self.expr(clause.iter)
                names = _Bindings()
                names._target(clause.target)
                self.scopes.append(names.names)
                pushed += 1
                target = self.expr(clause.target)
                ifs = tuple(self.expr(c.test) for c in clause.ifs)
                fors.append(F.CompFor(target, iter_expr, ifs))
                clause = clause.inner_for_in
            elt = self.expr(node.elt)
        finally:
            del self.scopes[len(self.scopes) - pushed:]
        kind = "list" if isinstance(node, cst.ListComp) else "generator"
        return F.Comprehension(elt, tuple(fors), kind, span=span)

    def arg(self, node: cst.Arg) -> F.Arg:
        # The contract's "argument" node is `dim=0` without the trailing comma.
        sl, sc, el, ec = arg_range(self.positions.raw, node)
        if self.expanded is not None:
            sc, ec = self.expanded.column(sl, sc), self.expanded.column(el, ec)
        span = Span(sl, sc + 1, el, ec + 1, F.node_key(sl, sc + 1, el, ec + 1, F.ARG))
        self.site(span)
        return F.Arg(
            self.expr(node.value),
            node.keyword.value if node.keyword is not None else None,
            node.star,
            span,
        )

    # ------------------------------------------------------------ statements

    def block(self, body: Sequence[cst.BaseStatement] | cst.BaseSuite) -> tuple[F.Stmt, ...]:
        if isinstance(body, cst.IndentedBlock):
            statements: Sequence = body.body
        elif isinstance(body, cst.SimpleStatementSuite):
            statements = [body]
        else:
            statements = body  # type: ignore[assignment]
        out: list[F.Stmt] = []
        for stmt in statements:
            out.extend(self.stmt(stmt))
        return tuple(out)

    def stmt(self, node: cst.CSTNode) -> list[F.Stmt]:
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            out: list[F.Stmt] = []
            for small in node.body:
                out.extend(self.small(small))
            return out
        span = self.span(node, F.STMT)
        if isinstance(node, cst.If):
            orelse: tuple[F.Stmt, ...] = ()
            if isinstance(node.orelse, cst.If):
                orelse = tuple(self.stmt(node.orelse))
            elif isinstance(node.orelse, cst.Else):
                orelse = self.block(node.orelse.body)
            return [F.If(self.expr(node.test), self.block(node.body), orelse, span=span)]
        if isinstance(node, cst.For):
            orelse = self.block(node.orelse.body) if node.orelse else ()
            return [F.For(self.expr(node.target), self.expr(node.iter), self.block(node.body), orelse, span=span)]
        if isinstance(node, cst.While):
            return [F.While(self.expr(node.test), self.block(node.body), span=span)]
        if isinstance(node, cst.With):
            pre: list[F.Stmt] = []
            for item in node.items:
                value = self.expr(item.item)
                if item.asname is not None:
                    pre.append(F.Assign((self.expr(item.asname.name),), value, span=span))
                else:
                    pre.append(F.ExprStmt(value, span=span))
            return [F.Block(tuple(pre) + self.block(node.body), span=span)]
        if isinstance(node, cst.Try):
            body = list(self.block(node.body))
            for handler in node.handlers:
                body.append(F.Fallback(self.block(handler.body), span=self.span(handler, F.STMT)))
            if node.orelse:
                body.extend(self.block(node.orelse.body))
            if node.finalbody:
                body.extend(self.block(node.finalbody.body))
            return [F.Block(tuple(body), span=span)]
        if isinstance(node, cst.FunctionDef):
            return [F.DefStmt(self.function(node), span=span)]
        if isinstance(node, cst.ClassDef):
            return [F.ClassStmt(self.cls(node), span=span)]
        return []

    def small(self, node: cst.BaseSmallStatement) -> list[F.Stmt]:
        span = self.span(node, F.STMT)
        kind = type(node)  # small statements are final classes (see `expr`)
        if kind is cst.Import or kind is cst.ImportFrom:
            self._import_sites(node)
        if kind is cst.Assign:
            if not self.scopes and not self.class_stack and len(node.targets) == 1 \
                    and isinstance(node.targets[0].target, cst.Name):
                self.assigned.setdefault(node.targets[0].target.value, []).append(self.span(node.value).node)
            targets = tuple(self.expr(t.target) for t in node.targets)
            return [F.Assign(targets, self.expr(node.value), span=span)]
        if kind is cst.AnnAssign:
            if node.value is None:
                return []
            return [F.Assign((self.expr(node.target),), self.expr(node.value), span=span)]
        if kind is cst.AugAssign:
            op = type(node.operator).__name__.replace("Assign", "")
            return [F.AugAssign(self.expr(node.target), op, self.expr(node.value), span=span)]
        if kind is cst.Expr:
            return [F.ExprStmt(self.expr(node.value), span=span)]
        if kind is cst.Return:
            return [F.Return(self.expr(node.value) if node.value is not None else None, span=span)]
        if kind is cst.Continue or kind is cst.Break:
            return [F.Jump("continue" if kind is cst.Continue else "break", span=span)]
        if (kind is cst.Import or kind is cst.ImportFrom) and self.rebound and self.rebound[-1]:
            return [F.Assign((F.Local(local),), F.Global(qual, text=local), span=span)
                    for local, qual in self._imported(node).items() if local in self.rebound[-1]]
        return []

    # ------------------------------------------------------------ definitions

    def params(self, params: cst.Parameters) -> tuple[F.Param, ...]:
        out: list[F.Param] = []

        def add(p: cst.Param, kind: str) -> None:
            default = self.expr(p.default) if p.default is not None else None
            sl, sc, el, ec = param_range(self.positions.raw, p)
            if self.expanded is not None:
                sc, ec = self.expanded.column(sl, sc), self.expanded.column(el, ec)
            span = Span(sl, sc + 1, el, ec + 1, F.node_key(sl, sc + 1, el, ec + 1, F.PARAM))
            self.site(span)
            annotation = self.expr(p.annotation.annotation) if p.annotation is not None else None
            out.append(F.Param(p.name.value, default, kind, span, annotation))

        for p in params.posonly_params:
            add(p, "posonly")
        for p in params.params:
            add(p, "pos")
        if isinstance(params.star_arg, cst.Param):
            add(params.star_arg, "star")
        for p in params.kwonly_params:
            add(p, "kwonly")
        if params.star_kwarg is not None:
            add(params.star_kwarg, "dstar")
        return tuple(out)

    def function(self, node: cst.FunctionDef) -> F.FunctionFacts:
        name = node.name.value
        # Defaults are evaluated in the enclosing scope.
        params = self.params(node.params)
        decorators = tuple(self.expr(d.decorator) for d in node.decorators)  # so are decorators
        known = self.scopes_info.functions.get((self.positions.raw(node.name)[0], name))
        if known is not None:
            local = set(known) | {p.name for p in params}
        else:
            # `def` and its name on different lines (a backslash between them): the scan
            # keys functions by the line of `def`, so read the body's bindings here.
            scope = _Bindings()
            node.body.visit(scope)
            local = scope.names | {p.name for p in params}
            # `global x` makes x module-level again.
            for stmt in _iter_globals(node.body):
                local.discard(stmt)
        return self.function_facts(name, params, local, self._rebound_imports(node),
                                   lambda: self.block(node.body), self.span(node, F.STMT), decorators)

    def _import_sites(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            else:
                local = _dotted(alias.name).split(".")[0]
            self.import_sites.setdefault(local, []).append(self.span(alias, F.ALIAS).node)

    def _imported(self, node: cst.CSTNode) -> dict[str, str]:
        table = _Imports(self.module, self.is_package)
        node.visit(table)
        return table.table

    def _rebound_imports(self, function: cst.FunctionDef) -> set[str]:
        """A factory's `if kind == "a": from m import A as net` / `elif ...: from m import B
        as net`: the file's import table holds one target per name (the last), so such a
        name is a local of the function instead, and each branch assigns its own class."""
        targets: dict[str, set[str]] = {}
        for node in self.scopes_info.function_imports.get(function, ()):
            for local, qual in self._imported(node).items():
                targets.setdefault(local, set()).add(qual)
        return {local for local, quals in targets.items() if len(quals) > 1}

    def cls(self, node: cst.ClassDef) -> F.ClassFacts:
        name = node.name.value
        bases = tuple(self.expr(b.value) for b in node.bases if b.keyword is None)
        methods: list[tuple[str, F.FunctionFacts]] = []
        body: list[F.Stmt] = []
        self.class_stack = [*self.class_stack, name]
        try:
            for stmt in _suite(node.body):
                if isinstance(stmt, cst.FunctionDef):
                    methods.append((stmt.name.value, self.function(stmt)))
                elif isinstance(stmt, cst.SimpleStatementLine):
                    body.extend(self.stmt(stmt))
        finally:
            self.class_stack = self.class_stack[:-1]
        decorators = tuple(self.expr(d.decorator) for d in node.decorators)
        qualname = self.class_qualname(name, self.span(node.name).line)
        return F.ClassFacts(name, qualname, bases, tuple(methods), self.span(node.name), tuple(body),
                            decorators)

    def file(self, path: str) -> F.FileFacts:
        return self.file_facts(path, self.block(self.tree.body), rewritable=self.expanded is None)


def _suite(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return body.body if isinstance(body, cst.IndentedBlock) else [body]


def _iter_globals(body: cst.BaseSuite) -> list[str]:
    names: list[str] = []

    class V(cst.CSTVisitor):
        def visit_Global(self, node: cst.Global) -> None:
            names.extend(n.name.value for n in node.names)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    body.visit(V())
    return names


def lower_file(module: cst.Module, path: str, module_name: str,
               is_package: bool = False, expanded: Expanded | None = None) -> tuple[F.FileFacts, set[str]]:
    """The facts of a parsed file, and the modules it imports (`Scopes.modules`).
    `expanded`: the file was parsed as that copy (`snlint.source.indentation`)."""
    lowerer = Lowerer(module, module_name, is_package, expanded)
    return lowerer.file(path), lowerer.scopes_info.modules


_NOT_INT = object()


def _int_bound(node: cst.BaseExpression | None):
    """A slice bound that is absent or a literal integer (`-1`), else `_NOT_INT`."""
    if node is None:
        return None
    negative = isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
    value = node.expression if negative else node
    if isinstance(value, cst.Integer):
        number = int(value.value.replace("_", ""), 0)
        return -number if negative else number
    return _NOT_INT
