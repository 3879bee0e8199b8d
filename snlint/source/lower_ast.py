"""Lower one file's CPython `ast` to source facts, with libcst's spans: a fix finds its
node in libcst's tree by the key the facts hold (`facts.node_key`). Where the two trees
differ (columns, parentheses, n-ary nodes, argument order, a class name's position:
docs/architecture.md), this says what libcst would; it also names what a fact names as
libcst's node types do (`Unknown("Imaginary")`, `Subtract`), and reads an f-string
joined to other strings as a libcst `ConcatenatedString` (no value).
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from functools import cached_property
from typing import Sequence

from snlint import facts as F
from snlint.findings import Span
from snlint.source.configured import configured
from snlint.source.imports import import_names
from snlint.source.module_classes import module_classes
from snlint.source.names import file_names
from snlint.source.scan_ast import scan_ast

_node_key = F.node_key
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
            ast.IsNot: "is not", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
# libcst's operator class names, which the facts use.
_OPERATORS = {ast.Add: "Add", ast.Sub: "Subtract", ast.Mult: "Multiply", ast.Div: "Divide",
              ast.FloorDiv: "FloorDivide", ast.Mod: "Modulo", ast.Pow: "Power",
              ast.LShift: "LeftShift", ast.RShift: "RightShift", ast.BitOr: "BitOr",
              ast.BitAnd: "BitAnd", ast.BitXor: "BitXor", ast.MatMult: "MatrixMultiply"}
# libcst's names of the expressions the facts keep as `Unknown`.
_UNKNOWN = {ast.Yield: "Yield", ast.YieldFrom: "Yield", ast.DictComp: "DictComp",
            ast.Compare: "Comparison", ast.Starred: "StarredElement", ast.Slice: "Slice"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CLASS_NAME = re.compile(r"class(?:[ \t\f]|\\\r?\n|\\\r)*([^\W\d]\w*)")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BUILTINS = frozenset(dir(builtins))
_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                     tokenize.DEDENT, tokenize.ENDMARKER})


class AstLowerer:
    def __init__(self, tree: ast.Module, text: str, module_name: str, is_package: bool) -> None:
        self.tree = tree
        self.text = text
        self.ascii = text.isascii()
        self.scopes_info = scan_ast(tree, module_name, is_package)
        self.module = module_name
        self.is_package = is_package
        # What a fix reads of the file besides the facts (`facts.Names`).
        self.sites: dict[Span, int] = {}
        self.quals: dict[int, str] = {}
        self.import_sites: dict[str, list[int]] = {}
        self.assigned: dict[str, list[int]] = {}  # module-level `name = value`: value nodes
        self.class_qualnames: set[str] = set()
        self.scopes: list[set[str]] = []
        self.class_stack: list[str] = []
        # Per function being lowered: names it imports more than once with different
        # targets, lowered as assignments where each import runs.
        self.rebound: list[set[str]] = []

    # ------------------------------------------------------------ names

    def site(self, span: Span, call: bool = False) -> None:
        """Record where a call, argument or parameter is. An argument that is nothing but a
        call has the call's span: the call is what a location there means."""
        if call or span not in self.sites:
            self.sites[span] = span.node  # type: ignore[assignment]

    def qualify(self, name: str, span: Span) -> F.Expr:
        """A name read at `span`: local, global (its qualified name recorded for the fixes
        by node), or unbound."""
        for scope in reversed(self.scopes):
            if name in scope:
                return F.Local(name, span=span)
        info = self.scopes_info
        if name in info.imports:
            qual = info.imports[name]
        elif name in info.module_names:
            qual = f"{self.module}.{name}" if self.module else name
        elif name in _BUILTINS:
            qual = f"builtins.{name}"
        elif info.star:
            # Which `from x import *` it comes from is decided in the link step.
            qual = f"*.{name}"
        else:
            return F.Unknown(name, unbound=True, span=span)
        self.quals[span.node] = qual  # type: ignore[index]
        return F.Global(qual, text=name, span=span)

    def attribute(self, value: F.Expr, attr: str, span: Span) -> F.Expr:
        """`value.attr` at `span`: a global chain stays one qualified name (recorded by
        node), its text built from the parts (no codegen for every dotted name)."""
        if type(value) is F.Global:
            qual = f"{value.qual}.{attr}"
            self.quals[span.node] = qual  # type: ignore[index]
            return F.Global(qual, text=f"{value.text or value.qual}.{attr}", span=span)
        return F.Attr(value, attr, span=span)

    # ------------------------------------------------------------ helpers

    def span(self, node: ast.AST, role: int = F.EXPR) -> Span:
        sl, el = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        if self.ascii:  # most files: bytes are characters
            sc, ec = node.col_offset + 1, node.end_col_offset + 1  # type: ignore[attr-defined]
        else:
            sc = self.column(sl, node.col_offset) + 1  # type: ignore[attr-defined]
            ec = self.column(el, node.end_col_offset) + 1  # type: ignore[attr-defined]
        return Span(sl, sc, el, ec, _node_key(sl, sc, el, ec, role))

    def compound(self, node: ast.stmt | ast.excepthandler) -> Span:
        """A compound statement's span: `ast` ends it after a `;` that ends its last line,
        libcst at the statement before it."""
        span = self.span(node, F.STMT)
        raw = self.lines[node.end_lineno - 1]  # type: ignore[attr-defined]
        end = node.end_col_offset  # type: ignore[attr-defined]
        if raw[end - 1:end] != b";":
            return span
        end -= 1
        while end > 0 and raw[end - 1:end] in (b" ", b"\t", b"\f", b";"):
            end -= 1
        el, ec = span.end_line, self.column(span.end_line, end) + 1
        return _keyed(span.line, span.column, el, ec, F.STMT)

    def inner(self, node: ast.AST) -> Span:
        """The span inside a node's own parentheses (a tuple's, a generator's), from the
        first token after `(` to the end of the last before `)`, as libcst has it."""
        sl, el = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        sc = self.column(sl, node.col_offset)  # type: ignore[attr-defined]
        ec = self.column(el, node.end_col_offset)  # type: ignore[attr-defined]
        if sl == el:
            body = self.lines[sl - 1].decode("utf-8", errors="replace")[sc + 1:ec - 1]
            start = sc + 1 + len(body) - len(body.lstrip())
            end = ec - 1 - (len(body) - len(body.rstrip()))
            return _keyed(sl, start + 1, el, end + 1)
        segment = self._segment(node).decode("utf-8", errors="replace")
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(segment).readline)
                  if t.type not in _LAYOUT]
        (l1, c1), (l2, c2) = tokens[1].start, tokens[-2].end
        start, end = (c1 + sc if l1 == 1 else c1), (c2 + sc if l2 == 1 else c2)
        l1, l2 = l1 + sl - 1, l2 + sl - 1
        return _keyed(l1, start + 1, l2, end + 1)

    def expr_span(self, node: ast.expr) -> Span:
        kind = type(node)
        if kind is ast.GeneratorExp or (kind is ast.Tuple and self._own_parens(node)):
            return self.inner(node)
        return self.span(node)

    def _own_parens(self, node: ast.Tuple) -> bool:
        """Whether `ast`'s span of a tuple is its own parentheses: the `(` it starts with
        closes at its end. Between the elements there are only brackets, commas,
        comments and line continuations; strings are inside elements."""
        lines = self.lines
        start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
        if lines[node.lineno - 1][node.col_offset:node.col_offset + 1] != b"(":
            return False
        skips = sorted(((e.lineno, e.col_offset), (e.end_lineno, e.end_col_offset)) for e in node.elts)
        depth = 0
        line, col = start
        i = 0
        while (line, col) < end:
            while i < len(skips) and skips[i][1] <= (line, col):
                i += 1
            if i < len(skips) and skips[i][0] <= (line, col):
                line, col = skips[i][1]
                continue
            raw = lines[line - 1] if line <= len(lines) else b""
            if col >= len(raw):
                line, col = line + 1, 0
                continue
            char = raw[col:col + 1]
            if char == b"#":
                line, col = line + 1, 0
                continue
            if char == b"(":
                depth += 1
            elif char == b")":
                depth -= 1
                if depth == 0:
                    return (line, col + 1) == end
            col += 1
        return False

    def _closed(self, node: ast.expr) -> tuple[int, int]:
        """Where a node ends with the parentheses around it (line, 1-based column): libcst
        gives an expression's parentheses to the node, so they end its parent's parts."""
        s = self.expr_span(node)
        line = node.end_lineno
        raw = self.lines[line - 1]
        at = end = node.end_col_offset
        while at < len(raw) and raw[at:at + 1] in b" \t\f)":
            at += 1
            if raw[at - 1:at] == b")":
                end = at
        if end == node.end_col_offset:
            return s.end_line, s.end_column
        return line, self.column(line, end) + 1

    @cached_property
    def lines(self) -> list[bytes]:
        return [line.encode("utf-8") for line in _LINE_BREAK.split(self.text)]

    def column(self, line: int, column: int) -> int:
        """An `ast` column (UTF-8 bytes) as characters, as libcst counts them."""
        if self.ascii:
            return column
        raw = self.lines[line - 1] if 0 < line <= len(self.lines) else b""
        return column if raw.isascii() else len(raw[:column].decode("utf-8", errors="replace"))

    def _segment(self, node: ast.expr) -> bytes:
        """The text of an expression, its line breaks as `\\n`."""
        lines, sl, el = self.lines, node.lineno, node.end_lineno or node.lineno
        if sl == el:
            return lines[sl - 1][node.col_offset:node.end_col_offset]
        return b"\n".join([lines[sl - 1][node.col_offset:], *lines[sl:el - 1],
                           lines[el - 1][:node.end_col_offset]])

    # ------------------------------------------------------------ expressions

    def expr(self, node: ast.expr) -> F.Expr:
        kind = type(node)
        if kind is ast.Name:
            span = self.span(node)
            return self.qualify(node.id, span)
        if kind is ast.Attribute:
            span = self.span(node)
            return self.attribute(self.expr(node.value), node.attr, span)
        if kind is ast.Call:
            span = self.span(node)
            self.site(span, call=True)
            args = tuple(self.arg(a) for a in _in_source_order(node))
            return F.Call(self.expr(node.func), args, span=span)
        if kind is ast.Constant:
            return self.constant(node)
        span = self.expr_span(node)
        if kind is ast.UnaryOp:
            inner = self.expr(node.operand)
            if type(node.op) is ast.Not:
                return F.Not(inner, span=span)
            if type(node.op) is ast.USub and isinstance(inner, F.Const) \
                    and isinstance(inner.value, (int, float)):
                return F.Const(-inner.value, span=span)
            return F.BinOp(F.Const(0), "Subtract", inner, span=span)
        if kind is ast.List or kind is ast.Tuple or kind is ast.Set:
            items = []
            for el in node.elts:
                if type(el) is ast.Starred:
                    items.append(F.Starred(self.expr(el.value), span=self.span(el)))
                else:
                    items.append(self.expr(el))
            return F.ListE(tuple(items), {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}[kind],
                           span=span)
        if kind is ast.Dict:
            pairs = []
            for key, value in zip(node.keys, node.values):
                if key is not None:
                    pairs.append((self.expr(key), self.expr(value)))
                else:  # `**other`: a Starred key, over the unpacked expression
                    unpacked = self.expr(value)
                    pairs.append((F.Starred(unpacked, span=self.span(value)), unpacked))
            return F.DictE(tuple(pairs), span=span)
        if kind is ast.Subscript:
            index: F.Expr = F.Unknown("")
            slice_ = node.slice
            if type(slice_) is ast.Slice:
                bounds = [_int_bound(b) for b in (slice_.lower, slice_.upper, slice_.step)]
                if all(b is not _NOT_INT for b in bounds):
                    index = F.Const(slice(*bounds))  # `layers[:-1]`: a slice of constant bounds
            elif not (type(slice_) is ast.Tuple and not self._own_parens(slice_)):
                index = self.expr(slice_)
            return F.Subscript(self.expr(node.value), index, span=span)
        if kind is ast.BinOp:
            return F.BinOp(self.expr(node.left), _OPERATORS[type(node.op)], self.expr(node.right), span=span)
        if kind is ast.BoolOp:
            op = "and" if type(node.op) is ast.And else "or"
            # Nested as libcst nests them: ((a and b) and c), each part its own span.
            first = node.values[0]
            result = self.expr(first)
            for value in node.values[1:]:
                right = self.expr(value)
                if value is node.values[-1]:
                    part = span
                else:
                    el, ec = self._closed(value)
                    part = _keyed(span.line, span.column, el, ec)
                result = F.BoolOp(op, (result, right), span=part)
            return result
        if kind is ast.Compare and len(node.ops) == 1:
            op = _COMPARE.get(type(node.ops[0]))
            if op is not None:
                return F.Compare(self.expr(node.left), op, self.expr(node.comparators[0]), span=span)
        if kind is ast.IfExp:
            return F.IfExp(self.expr(node.test), self.expr(node.body), self.expr(node.orelse), span=span)
        if kind is ast.Lambda:
            args = node.args
            params = tuple(a.arg for a in args.args)
            star = args.vararg.arg if args.vararg is not None else None
            dstar = args.kwarg.arg if args.kwarg is not None else None
            self.scopes.append(set(params) | {n for n in (star, dstar) if n})
            try:
                body = self.expr(node.body)
            finally:
                self.scopes.pop()
            return F.Lambda(params, body, star, dstar, span=span)
        if kind is ast.ListComp or kind is ast.GeneratorExp or kind is ast.SetComp:
            return self.comprehension(node, span)
        if kind is ast.NamedExpr or kind is ast.Await:
            return self.expr(node.value)
        if kind is ast.JoinedStr:
            if self._strings(node) > 1:
                return F.Const(None, span=span)
            return F.Unknown("FormattedString", span=span)
        return F.Unknown(_UNKNOWN.get(kind, kind.__name__), span=span)

    def constant(self, node: ast.Constant) -> F.Expr:
        span = self.span(node)
        value = node.value
        if value is None or value is True or value is False or type(value) in (int, float, str):
            return F.Const(value, span=span)
        if type(value) is bytes:
            return F.Const(None, span=span)
        if type(value) is complex:
            return F.Unknown("Imaginary", span=span)
        if value is Ellipsis:
            return F.Unknown("Ellipsis", span=span)
        return F.Unknown(type(value).__name__, span=span)

    def _strings(self, node: ast.JoinedStr) -> int:
        """How many string literals make up an f-string expression."""
        count = 0
        try:
            # In parentheses: the lines after the first are continuation lines.
            for token in tokenize.tokenize(io.BytesIO(b"(" + self._segment(node) + b")").readline):
                if token.type == tokenize.STRING:
                    count += 1
        except (tokenize.TokenError, SyntaxError):
            return 1
        return count

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp, span: Span) -> F.Expr:
        fors: list[F.CompFor] = []
        pushed = 0
        try:
            for clause in node.generators:
                iter_expr = self.expr(clause.iter)
                names: set[str] = set()
                _targets(clause.target, names)
                self.scopes.append(names)
                pushed += 1
                target = self.expr(clause.target)
                ifs = tuple(self.expr(c) for c in clause.ifs)
                fors.append(F.CompFor(target, iter_expr, ifs))
            elt = self.expr(node.elt)
        finally:
            del self.scopes[len(self.scopes) - pushed:]
        kind = "list" if type(node) is ast.ListComp else "generator"
        return F.Comprehension(elt, tuple(fors), kind, span=span)

    def arg(self, node: ast.expr | ast.keyword) -> F.Arg:
        keyword: str | None = None
        if type(node) is ast.keyword:
            value, keyword = node.value, node.arg
            star = "" if keyword is not None else "**"
        elif type(node) is ast.Starred:
            value, star = node.value, "*"
        else:
            value, star = node, ""
        at = self.expr_span(value)
        if keyword is not None:
            sl, sc = node.lineno, self.column(node.lineno, node.col_offset) + 1
        else:
            sl, sc = at.line, at.column - len(star)
        el, ec = at.end_line, at.end_column
        span = _keyed(sl, sc, el, ec, F.ARG)
        self.site(span)
        return F.Arg(self.expr(value), keyword, star, span)

    # ------------------------------------------------------------ statements

    def block(self, body: Sequence[ast.stmt]) -> tuple[F.Stmt, ...]:
        out: list[F.Stmt] = []
        for stmt in body:
            out.extend(self.stmt(stmt))
        return tuple(out)

    def stmt(self, node: ast.stmt) -> list[F.Stmt]:
        kind = type(node)
        span = self.span(node, F.STMT) if kind in _SIMPLE else self.compound(node)
        if kind is ast.Assign:
            if not self.scopes and not self.class_stack and len(node.targets) == 1 \
                    and type(node.targets[0]) is ast.Name:
                self.assigned.setdefault(node.targets[0].id, []).append(self.expr_span(node.value).node)
            targets = tuple(self.expr(t) for t in node.targets)
            return [F.Assign(targets, self.expr(node.value), span=span)]
        if kind is ast.Expr:
            return [F.ExprStmt(self.expr(node.value), span=span)]
        if kind is ast.Import or kind is ast.ImportFrom:
            self._import_sites(node)
            if not (self.rebound and self.rebound[-1]):
                return []
            bound = dict(import_names(node, self.module, self.is_package)[1])
            return [F.Assign((F.Local(local),), F.Global(qual, text=local), span=span)
                    for local, qual in bound.items() if local in self.rebound[-1]]
        if kind is ast.If:
            orelse = self.block(node.orelse)
            return [F.If(self.expr(node.test), self.block(node.body), orelse, span=span)]
        if kind is ast.For or kind is ast.AsyncFor:
            orelse = self.block(node.orelse)
            return [F.For(self.expr(node.target), self.expr(node.iter), self.block(node.body), orelse, span=span)]
        if kind is ast.While:
            return [F.While(self.expr(node.test), self.block(node.body), span=span)]
        if kind is ast.With or kind is ast.AsyncWith:
            pre: list[F.Stmt] = []
            for item in node.items:
                value = self.expr(item.context_expr)
                if item.optional_vars is not None:
                    pre.append(F.Assign((self.expr(item.optional_vars),), value, span=span))
                else:
                    pre.append(F.ExprStmt(value, span=span))
            return [F.Block(tuple(pre) + self.block(node.body), span=span)]
        if kind is ast.Try:
            body = list(self.block(node.body))
            for handler in node.handlers:
                body.append(F.Fallback(self.block(handler.body), span=self.compound(handler)))
            body.extend(self.block(node.orelse))
            body.extend(self.block(node.finalbody))
            return [F.Block(tuple(body), span=span)]
        if kind in _FUNCTIONS:
            return [F.DefStmt(self.function(node), span=span)]
        if kind is ast.ClassDef:
            return [F.ClassStmt(self.cls(node), span=span)]
        if kind is ast.AnnAssign:
            if node.value is None:
                return []
            return [F.Assign((self.expr(node.target),), self.expr(node.value), span=span)]
        if kind is ast.AugAssign:
            return [F.AugAssign(self.expr(node.target), _OPERATORS[type(node.op)], self.expr(node.value), span=span)]
        if kind is ast.Return:
            return [F.Return(self.expr(node.value) if node.value is not None else None, span=span)]
        if kind is ast.Continue or kind is ast.Break:
            return [F.Jump("continue" if kind is ast.Continue else "break", span=span)]
        return []

    # ------------------------------------------------------------ definitions

    def params(self, args: ast.arguments) -> tuple[F.Param, ...]:
        out: list[F.Param] = []
        column = self.column

        def add(p: ast.arg, default: ast.expr | None, kind: str) -> None:
            lowered = self.expr(default) if default is not None else None
            sl, sc = p.lineno, column(p.lineno, p.col_offset) + 1
            if default is not None:
                last = self.expr_span(default)
                el, ec = last.end_line, last.end_column
            else:
                el, ec = p.end_lineno, column(p.end_lineno, p.end_col_offset) + 1
            span = _keyed(sl, sc, el, ec, F.PARAM)
            self.site(span)
            annotation = self.expr(p.annotation) if p.annotation is not None else None
            out.append(F.Param(p.arg, lowered, kind, span, annotation))

        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for i, p in enumerate(positional):
            add(p, defaults[i], "posonly" if i < len(args.posonlyargs) else "pos")
        if args.vararg is not None:
            add(args.vararg, None, "star")
        for p, default in zip(args.kwonlyargs, args.kw_defaults):
            add(p, default, "kwonly")
        if args.kwarg is not None:
            add(args.kwarg, None, "dstar")
        return tuple(out)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> F.FunctionFacts:
        name = node.name
        params = self.params(node.args)  # defaults are evaluated in the enclosing scope
        decorators = tuple(self.expr(d) for d in node.decorator_list)  # so are decorators
        rebound = self._rebound_imports(node)
        local = set(self.scopes_info.functions.get((node.lineno, name), ())) | {p.name for p in params}
        # The body is lowered with the function's own names in scope, and no class around it.
        prefix = ".".join(filter(None, [self.module, *self.class_stack]))
        self.scopes.append(local | rebound)
        self.rebound.append(rebound)
        classes, self.class_stack = self.class_stack, []
        try:
            body = self.block(node.body)
        finally:
            self.scopes.pop()
            self.rebound.pop()
            self.class_stack = classes
        return F.FunctionFacts(name, f"{prefix}.{name}" if prefix else name, params, body,
                               self.compound(node), is_method=bool(classes), decorators=decorators)

    def _import_sites(self, node: ast.Import | ast.ImportFrom) -> None:
        if node.names[0].name == "*":
            return
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            self.import_sites.setdefault(local, []).append(self.span(alias, F.ALIAS).node)

    def _rebound_imports(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
        targets: dict[str, set[str]] = {}
        for node in self.scopes_info.function_imports.get(function, ()):
            for local, qual in dict(import_names(node, self.module, self.is_package)[1]).items():
                targets.setdefault(local, set()).add(qual)
        return {local for local, quals in targets.items() if len(quals) > 1}

    def cls(self, node: ast.ClassDef) -> F.ClassFacts:
        name = node.name
        bases = tuple(self.expr(b) for b in node.bases)
        methods: list[tuple[str, F.FunctionFacts]] = []
        body: list[F.Stmt] = []
        self.class_stack = [*self.class_stack, name]
        try:
            for stmt in node.body:
                if type(stmt) in _FUNCTIONS:
                    methods.append((stmt.name, self.function(stmt)))
                elif type(stmt) in _SIMPLE:
                    body.extend(self.stmt(stmt))
        finally:
            self.class_stack = self.class_stack[:-1]
        decorators = tuple(self.expr(d) for d in node.decorator_list)
        name_span = self.class_name(node)
        qualname = ".".join(filter(None, [self.module, *self.class_stack, name]))
        if qualname in self.class_qualnames:
            # The same name defined again (the other branch of a module-level `if`): a key
            # of its own, so that the link step analyses both and neither hides the other.
            qualname = f"{qualname}@{name_span.line}"
        self.class_qualnames.add(qualname)
        return F.ClassFacts(name, qualname, bases, tuple(methods), name_span, tuple(body), decorators)

    def class_name(self, node: ast.ClassDef) -> Span:
        lines = self.lines
        line = node.lineno
        text = lines[line - 1][node.col_offset:]
        # `class` and its name on one line but for a backslash continuation (rare): join
        # the lines a continuation carries on to.
        while text.rstrip(b"\r\n").endswith(b"\\") and line < len(lines):
            line += 1
            text += b"\n" + lines[line - 1]
        match = _CLASS_NAME.match(text.decode("utf-8", errors="replace"))
        start = node.col_offset
        if match is None:
            column = self.column(node.lineno, start) + 1
            return _keyed(node.lineno, column, node.lineno, column)
        before = match.string[:match.start(1)]
        name_line = node.lineno + before.count("\n")
        if name_line == node.lineno:
            column = self.column(node.lineno, start) + len(before) + 1
        else:
            column = len(before) - before.rfind("\n")
        end = column + len(node.name)
        return _keyed(name_line, column, name_line, end)

    def file(self, path: str, rewritable: bool = True) -> F.FileFacts:
        """The file's facts; `rewritable`: whether libcst reads the text back (a fix needs it)."""
        body = self.block(self.tree.body)
        functions = tuple((s.function.name, s.function) for s in body if isinstance(s, F.DefStmt))
        classes = tuple((c.name, c) for c in module_classes(body))
        info = self.scopes_info
        names = file_names(self.module, self.sites, self.quals, self.import_sites, self.assigned, info)
        return F.FileFacts(path, self.module, body, functions, classes, self.is_package,
                           tuple(info.star), tuple(sorted(info.imports.items())), names,
                           *configured(body, classes), rewritable=rewritable)


_SIMPLE = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return, ast.Pass,
                     ast.Break, ast.Continue, ast.Delete, ast.Raise, ast.Assert, ast.Global,
                     ast.Nonlocal, ast.Import, ast.ImportFrom})


def _in_source_order(node: ast.Call) -> list:
    args = [*node.args, *node.keywords]
    if node.keywords and node.args:
        args.sort(key=lambda a: (a.lineno, a.col_offset))
    return args


def _targets(node: ast.AST, out: set[str]) -> None:
    if type(node) is ast.Name:
        out.add(node.id)
    elif type(node) is ast.Tuple or type(node) is ast.List:
        for el in node.elts:
            _targets(el, out)
    elif type(node) is ast.Starred:
        _targets(node.value, out)


_NOT_INT = object()


def _keyed(line: int, column: int, end_line: int, end_column: int, role: int = F.EXPR) -> Span:
    return Span(line, column, end_line, end_column, _node_key(line, column, end_line, end_column, role))


def _int_bound(node: ast.expr | None):
    """A slice bound that is absent or a literal integer (`-1`), else `_NOT_INT`."""
    if node is None:
        return None
    negative = type(node) is ast.UnaryOp and type(node.op) is ast.USub
    value = node.operand if negative else node
    if type(value) is ast.Constant and type(value.value) is int:
        return -value.value if negative else value.value
    return _NOT_INT
