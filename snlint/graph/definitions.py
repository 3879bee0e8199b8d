"""The definitions-only copy of a project module, for the graph pass to import.

Every project module the worker imports runs as this copy (through snlint.graph.loader's
import hook): imports, definitions, assignments and argparse setup that call only the
allow-list (snlint.graph.allowlist) are kept; everything else is left out. What it keeps
is listed for users in docs/graph-pass.md ("What it imports and runs").

Kept statements keep their lines and columns: a dropped statement becomes `pass` or a
string literal spanning its lines, so tracebacks and construction sites point at the
user's own lines. A default value that calls outside the allow-list becomes
`__snlint_later__(lambda: <value>)`, computed at the function's first call (at build)."""

from __future__ import annotations

from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from snlint.graph import allowlist
from snlint.graph.copy_helpers import (  # noqa: F401 - PARSE_HELPER and the parse helper re-exported
    LATER, PARSE_HELPER, UNDECORATED, parse_args_without_command_line)

# Methods of an argument parser or group that only describe arguments.
_PARSER_METHODS = frozenset({
    "add_argument", "add_argument_group", "add_mutually_exclusive_group", "set_defaults",
    "add_subparsers", "add_parser", "register",
})
_PARSE_METHODS = frozenset({"parse_args", "parse_known_args"})
_SYS_PATH_METHODS = frozenset({"append", "insert", "extend"})


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


class _Calls(cst.CSTVisitor):
    """Every call inside an expression, with the dotted name of its callee (or None)."""

    def __init__(self) -> None:
        self.callees: list[str | None] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.callees.append(_dotted(node.func))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # a lambda's body runs later, if ever


def _calls(node: cst.CSTNode) -> list[str | None]:
    visitor = _Calls()
    node.visit(visitor)
    return visitor.callees


def _is_parse_call(callee: str | None, parsers: set[str]) -> bool:
    if callee is None or "." not in callee:
        return False
    base, _, method = callee.rpartition(".")
    return method in _PARSE_METHODS and base in parsers


class _Names:
    """What a module's names mean to the copy: the imports it kept (local name ->
    qualified name), the argument parsers it built, and the names it binds itself (never
    on the allow-list)."""

    def __init__(self) -> None:
        self.imports: dict[str, str] = {}
        self.parsers: set[str] = set()
        self.local: set[str] = set()

    def note_import(self, stmt: cst.Import | cst.ImportFrom) -> None:
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                dotted = _dotted(alias.name) or ""
                if alias.asname is not None:
                    local = _dotted(alias.asname.name) or ""
                    self.imports[local] = dotted
                else:
                    top = dotted.partition(".")[0]
                    self.imports[top] = top
            return
        if isinstance(stmt.names, cst.ImportStar):
            return
        module = "." * len(stmt.relative) + ((_dotted(stmt.module) or "") if stmt.module else "")
        for alias in stmt.names:
            name = _dotted(alias.name) or ""
            local = _dotted(alias.asname.name) if alias.asname is not None else name
            self.imports[local or name] = f"{module}.{name}"

    def qualified(self, dotted: str | None) -> str | None:
        """`nn.Conv2d` -> `torch.nn.Conv2d` under `import torch.nn as nn`; None for a name
        the module binds itself or one it does not bind at all."""
        if dotted is None:
            return None
        head, dot, rest = dotted.partition(".")
        if head in self.imports:
            origin = self.imports[head]
            return None if origin.startswith(".") else origin + dot + rest
        if head in self.local or head in self.parsers:
            return None
        if head in allowlist.BUILTINS:
            return f"builtins.{dotted}"
        return None

    def pure_call(self, callee: str | None) -> bool:
        if callee is None:
            return False
        if _is_parse_call(callee, self.parsers):
            return True
        base, _, method = callee.rpartition(".")
        if base in self.parsers and method in _PARSER_METHODS:
            return True
        # `MODELS = Registry("models")`: the registry the kept registry decorators fill (a
        # dict and a name, by custom); `dnnlib.EasyDict(func=...)`: a dict read by
        # attribute, by custom a dict subclass with no constructor, wherever it is defined.
        if method.endswith("Registry") or method in allowlist.ATTRIBUTE_DICTS:
            return True
        return allowlist.pure(self.qualified(callee))

    def pure(self, node: cst.CSTNode) -> bool:
        """Whether evaluating `node` calls only the allow-list (a lambda's body runs
        later, if ever: not counted)."""
        return all(self.pure_call(callee) for callee in _calls(node))

    def known_decorator(self, decorator: cst.Decorator) -> bool:
        expr = decorator.decorator
        target = expr.func if isinstance(expr, cst.Call) else expr
        if isinstance(expr, cst.Call) and not all(self.pure(a.value) for a in expr.args):
            return False
        dotted = _dotted(target)
        if dotted is None:
            return False
        last = dotted.rpartition(".")[2]
        if "." in dotted and last in ("setter", "getter", "deleter"):
            return not isinstance(expr, cst.Call)  # `@size.setter` of a property
        if last.startswith("register"):
            return True  # a registry: how many projects find their classes
        qualified = self.qualified(dotted)
        return qualified is not None and (qualified in allowlist.KNOWN_DECORATORS or
                                          qualified.startswith(allowlist.KNOWN_DECORATOR_PREFIXES))


def _targets(stmt: cst.BaseSmallStatement) -> list[cst.BaseExpression]:
    if isinstance(stmt, cst.Assign):
        return [t.target for t in stmt.targets]
    if isinstance(stmt, (cst.AnnAssign, cst.AugAssign)):
        return [stmt.target]
    return []


def _defines_class(stmt: cst.If) -> bool:
    found = False

    class Finds(cst.CSTVisitor):
        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            nonlocal found
            found = True
            return False

    stmt.visit(Finds())
    return found


def _chain(stmt: cst.If) -> list[cst.If | cst.Else]:
    """The branches of an if/elif/else chain, in order."""
    branches: list[cst.If | cst.Else] = [stmt]
    while isinstance(branches[-1], cst.If) and branches[-1].orelse is not None:
        branches.append(branches[-1].orelse)
    return branches


def _tests(stmt: cst.If) -> cst.Tuple:
    """The conditions of an if/elif chain, as one expression to inspect."""
    return cst.Tuple([cst.Element(b.test) for b in _chain(stmt) if isinstance(b, cst.If)])


def _dispatch_without_default(stmt: cst.If) -> bool:
    """An `if`/`elif` chain with no `else` whose every test compares one subject with
    literals (`opt.dataset == "lsun"`, `args.arch in ("a", "b")`)."""
    branches = _chain(stmt)
    if isinstance(branches[-1], cst.Else) or len(branches) < 2:
        return False
    tests = [b.test for b in branches]
    subjects = set()
    for test in tests:
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.Equal, cst.In))):
            return False
        literal = test.comparisons[0].comparator
        if not isinstance(literal, (cst.SimpleString, cst.Integer, cst.List, cst.Tuple, cst.Set)):
            return False
        subjects.add(_dotted(test.left))
    return len(subjects) == 1 and None not in subjects


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _any_of(tests: list[cst.BaseExpression]) -> cst.BaseExpression:
    result = _parenthesized(tests[0])
    for test in tests[1:]:
        result = cst.BooleanOperation(left=result, operator=cst.Or(), right=_parenthesized(test))
    return result


def _is_main_guard(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    left, right = test.left, test.comparisons[0].comparator
    names = {_dotted(left), _dotted(right)}
    strings = {n.evaluated_value for n in (left, right) if isinstance(n, cst.SimpleString)}
    return "__name__" in names and "__main__" in strings


def _padding(lines: int) -> cst.SimpleString:
    """A string literal spanning `lines` lines: what keeps the lines after it in place."""
    return cst.SimpleString('"""' + "\n" * (lines - 1) + '"""')


def _same_lines(replacement: cst.BaseExpression, lines: int) -> cst.BaseExpression:
    """`replacement` as an expression spanning `lines` lines, so nothing after it moves."""
    if lines <= 1:
        return replacement
    return cst.IfExp(test=cst.Name("True"), body=replacement, orelse=_padding(lines))


class _ParseArgs(cst.CSTTransformer):
    """`parser.parse_args()` -> `__snlint_parse_args__(parser)`, which sees no command
    line. In `add_argument(...)`, a `type=` that is not a plain conversion becomes `None`
    and an `action=` that is not a string `"store"`: argparse would run the project's code."""

    def __init__(self, names: _Names, lines_of) -> None:
        self.names = names
        self.lines_of = lines_of

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        callee = _dotted(updated.func)
        base, _, method = (callee or "").rpartition(".")
        if base in self.names.parsers and method == "add_argument":
            return updated.with_changes(args=[self._argument(o, u) for o, u in
                                              zip(original.args, updated.args)])
        if base in self.names.parsers and method == "register" and len(updated.args) == 3:
            # `parser.register("type", "bool", str2bool)`: argparse would run str2bool.
            function = updated.args[2]
            if self.names.qualified(_dotted(function.value)) not in allowlist.PURE_TYPES:
                args = list(updated.args)
                args[2] = function.with_changes(value=_same_lines(
                    cst.Name("str"), self.lines_of(original.args[2].value)))
                return updated.with_changes(args=args)
            return updated
        if not _is_parse_call(callee, self.names.parsers):
            return updated
        assert isinstance(updated.func, cst.Attribute)
        known = updated.func.attr.value == "parse_known_args"
        args = [cst.Arg(updated.func.value)]
        if known:
            args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("known")))
        # Same node span: the call keeps its line, so nothing after it moves.
        return updated.with_changes(func=cst.Name(PARSE_HELPER), args=args)

    def _argument(self, original: cst.Arg, arg: cst.Arg) -> cst.Arg:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "type" and not isinstance(arg.value, cst.SimpleString) and (
                self.names.qualified(_dotted(arg.value)) not in allowlist.PURE_TYPES):
            return arg.with_changes(value=_same_lines(cst.Name("None"), self.lines_of(original.value)))
        if keyword == "action" and not isinstance(arg.value, (cst.SimpleString, cst.ConcatenatedString)):
            qualified = self.names.qualified(_dotted(arg.value))
            if qualified != "argparse.BooleanOptionalAction":
                return arg.with_changes(value=_same_lines(cst.SimpleString('"store"'),
                                                          self.lines_of(original.value)))
        return arg


def _names_read(node: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class Reads(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            names.add(name.value)

        def visit_Attribute(self, attr: cst.Attribute) -> bool:
            attr.value.visit(self)  # `x.attr`: `attr` is not a name read
            return False

    node.visit(Reads())
    return names


def _names_read_by(stmt: cst.CSTNode) -> set[str]:
    """The names `stmt` reads, less the plain names it assigns to: `x = x + 1` reads `x`,
    `x = 1` does not (an augmented assignment's target is read, and stays)."""
    stored: set[int] = set()

    def store(target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            stored.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                store(element.value)
        elif isinstance(target, cst.StarredElement):
            store(target.value)

    class Targets(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            store(target.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            store(node.target)

    names: set[str] = set()

    class Reads(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            if id(name) not in stored:
                names.add(name.value)

        def visit_Attribute(self, attr: cst.Attribute) -> bool:
            attr.value.visit(self)
            return False

    stmt.visit(Targets())
    stmt.visit(Reads())
    return names


def _names_bound(stmt: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class Binds(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            names.update(_target_names(target.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            names.update(_target_names(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            names.update(_target_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            names.update(_target_names(node.target))

        def visit_WithItem(self, node: cst.WithItem) -> None:
            if node.asname is not None:
                names.update(_target_names(node.asname.name))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    stmt.visit(Binds())
    return names


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


class _Filter:
    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.positions = wrapper.resolve(PositionProvider)
        self.names = _Names()
        self.parsers = self.names.parsers  # the names of argument parsers and their groups
        self.dropped = 0
        # Names only a left-out statement binds: a kept statement reading one would fail
        # (`steps = len(dataloader)`), so it is left out too.
        self.unbound: set[str] = set()

    def _lines(self, node: cst.CSTNode) -> int:
        try:
            pos = self.positions[node]
            # A def's or class's position starts at its keyword, after its decorators.
            decorators = getattr(node, "decorators", ())
            start = self.positions[decorators[0]].start.line if decorators else pos.start.line
        except KeyError:  # a node the copy made
            return 1
        return pos.end.line - start + 1

    def _bind(self, names: set[str]) -> None:
        self.names.local |= names
        for name in names:
            self.names.imports.pop(name, None)

    def _placeholder(self, node: cst.BaseStatement) -> cst.SimpleStatementLine:
        self.dropped += 1
        bound = _names_bound(node)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            bound.add(node.name.value)
        self.unbound |= bound
        self._bind(bound)
        lines = self._lines(node)
        body = cst.Pass() if lines == 1 else cst.Expr(_padding(lines))
        return cst.SimpleStatementLine([body], leading_lines=node.leading_lines)

    def _note_parsers(self, stmt: cst.BaseSmallStatement) -> None:
        value = getattr(stmt, "value", None)
        if not isinstance(value, cst.Call):
            return
        callee = _dotted(value.func) or ""
        base, _, method = callee.rpartition(".")
        if self.names.qualified(callee) == "argparse.ArgumentParser" or (
                base in self.parsers and method in ("add_argument_group",
                                                    "add_mutually_exclusive_group",
                                                    "add_subparsers", "add_parser")):
            for target in _targets(stmt):
                if isinstance(target, cst.Name):
                    self.parsers.add(target.value)

    def _keep_small(self, stmt: cst.BaseSmallStatement) -> bool:
        if isinstance(stmt, (cst.Import, cst.ImportFrom, cst.Pass, cst.Global, cst.Nonlocal)):
            return True
        if isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            value = stmt.value
            if value is None:
                return not isinstance(stmt, cst.AnnAssign) or self.names.pure(stmt.annotation)
            for target in _targets(stmt):
                # `model.x = ...`, `cfg["k"] = ...` on a name the copy has: harmless when pure.
                if not isinstance(target, (cst.Name, cst.Tuple, cst.List, cst.Attribute,
                                           cst.Subscript)):
                    return False
                if not self.names.pure(target):  # `d[f()] = 1`
                    return False
            return self.names.pure(value)
        if isinstance(stmt, cst.Expr):
            value = stmt.value
            if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
                return True
            if isinstance(value, cst.Call):
                callee = _dotted(value.func) or ""
                base, _, method = callee.rpartition(".")
                if base in self.parsers and method in _PARSER_METHODS:
                    return self.names.pure(value)
                if self.names.qualified(base) == "sys.path" and method in _SYS_PATH_METHODS:
                    return self.names.pure(cst.Tuple([cst.Element(a.value) for a in value.args]))
            return False
        return False

    def statements(self, body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        return [out for stmt in body for out in self.statement(stmt)]

    def statement(self, stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
        if isinstance(stmt, cst.FunctionDef):
            return [self._function(stmt)]
        if isinstance(stmt, cst.ClassDef):
            return [self._class(stmt)]
        if isinstance(stmt, cst.SimpleStatementLine):
            if all(self._keep_small(s) for s in stmt.body) and not (
                    _names_read_by(stmt) & self.unbound):
                for s in stmt.body:
                    self._note_parsers(s)
                    if isinstance(s, (cst.Import, cst.ImportFrom)):
                        self._import(s)
                bound = _names_bound(stmt)
                self.unbound -= bound
                self._bind(bound - set(self.parsers))
                return [stmt.visit(_ParseArgs(self.names, self._lines))]  # type: ignore[list-item]
            return [self._placeholder(stmt)]
        if isinstance(stmt, cst.If):
            return self._if(stmt)
        if isinstance(stmt, cst.Try):
            return [stmt.with_changes(
                body=self._suite(stmt.body),
                handlers=[h.with_changes(body=self._suite(h.body)) for h in stmt.handlers],
                orelse=stmt.orelse.with_changes(body=self._suite(stmt.orelse.body))
                if stmt.orelse else None,
                finalbody=stmt.finalbody.with_changes(body=self._suite(stmt.finalbody.body))
                if stmt.finalbody else None)]
        return [self._placeholder(stmt)]

    def _import(self, stmt: cst.Import | cst.ImportFrom) -> None:
        before = set(self.names.imports)
        self.names.note_import(stmt)
        self.names.local -= set(self.names.imports) - before
        for alias in stmt.names if not isinstance(stmt.names, cst.ImportStar) else ():
            name = alias.asname.name if alias.asname is not None else alias.name
            dotted = (_dotted(name) or "").partition(".")[0]
            self.names.local.discard(dotted)
            self.unbound.discard(dotted)

    def _decorators(self, node: cst.FunctionDef | cst.ClassDef) -> list[cst.Decorator]:
        """Known decorators as written; any other one's expression becomes
        `__snlint_undecorated__(...)` on the same lines (the definition undecorated)."""
        kept = []
        for decorator in node.decorators:
            if self.names.known_decorator(decorator) and not (
                    _names_read(decorator) & self.unbound):
                kept.append(decorator)
                continue
            lines = self._lines(decorator.decorator)
            pad = [cst.Arg(_padding(lines))] if lines > 1 else []
            kept.append(decorator.with_changes(
                decorator=cst.Call(func=cst.Name(UNDECORATED), args=pad)))
        return kept

    def _deferred(self, expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
        """`expr` as `__snlint_later__(lambda: expr)` when it calls outside the allow-list
        or reads a name only a left-out statement binds (`num_workers=NUM_WORKERS` after
        `NUM_WORKERS = int(os.cpu_count() / 2)`): evaluated at the function's first call,
        not at import, so a class that never calls it still builds."""
        if expr is None or (self.names.pure(expr) and not _names_read(expr) & self.unbound):
            return expr
        self.dropped += 1
        return cst.Call(func=cst.Name(LATER), args=[cst.Arg(cst.Lambda(
            params=cst.Parameters(), body=_parenthesized(expr)))])

    def _param(self, param: cst.Param) -> cst.Param:
        changes = {}
        if param.default is not None:
            changes["default"] = self._deferred(param.default)
        if param.annotation is not None:
            changes["annotation"] = param.annotation.with_changes(
                annotation=self._deferred(param.annotation.annotation))
        return param.with_changes(**changes) if changes else param

    def _function(self, node: cst.FunctionDef) -> cst.BaseStatement:
        name = node.name.value
        self.unbound.discard(name)
        self._bind({name})
        params = node.params
        star_arg = params.star_arg
        if isinstance(star_arg, cst.Param):
            star_arg = self._param(star_arg)
        params = params.with_changes(
            posonly_params=[self._param(p) for p in params.posonly_params],
            params=[self._param(p) for p in params.params],
            kwonly_params=[self._param(p) for p in params.kwonly_params],
            star_arg=star_arg,
            star_kwarg=self._param(params.star_kwarg) if params.star_kwarg else None)
        returns = node.returns
        if returns is not None:
            returns = returns.with_changes(annotation=self._deferred(returns.annotation))
        return node.with_changes(decorators=self._decorators(node), params=params,
                                 returns=returns)

    def _class(self, node: cst.ClassDef) -> cst.BaseStatement:
        header = [a.value for a in (*node.bases, *node.keywords)]
        if not all(self.names.pure(expr) for expr in header):
            return self._placeholder(node)  # `class D(make_base()):` runs the project
        self.unbound.discard(node.name.value)
        # What the class body binds stays in the class: the module's names are as before.
        saved = (set(self.unbound), set(self.names.local), dict(self.names.imports))
        decorators = self._decorators(node)
        body = self._suite(node.body)
        self.unbound, self.names.local, self.names.imports = saved
        self._bind({node.name.value})
        return node.with_changes(decorators=decorators, body=body)

    def _suite(self, suite: cst.BaseSuite) -> cst.BaseSuite:
        if isinstance(suite, cst.IndentedBlock):
            return suite.with_changes(body=self.statements(suite.body))
        # `if c: x = f()` on one line: the suite's statements are kept or become `pass`.
        assert isinstance(suite, cst.SimpleStatementSuite)
        if all(self._keep_small(s) for s in suite.body):
            return suite.visit(_ParseArgs(self.names, self._lines))  # type: ignore[return-value]
        self.dropped += 1
        return suite.with_changes(body=[cst.Pass()])

    def _if(self, stmt: cst.If) -> list[cst.BaseStatement]:
        if _is_main_guard(stmt.test):
            return [self._placeholder(stmt)]
        tests = _tests(stmt)
        if not _defines_class(stmt) and self.names.pure(tests) and not (
                _names_read(tests) & self.unbound):
            # `if new_torch: from ... import spectral_norm else: ...`: the script's own
            # choice, made as it would make it.
            test = stmt.test
            if _dispatch_without_default(stmt):
                # `if opt.dataset in [...]: nc = 3 elif opt.dataset == "mnist": nc = 1` on
                # an option with no default: no branch would run, so the first is the
                # default. The test grows on its own line; nothing moves.
                others = tests.elements[1:]
                test = cst.BooleanOperation(
                    left=_parenthesized(test), operator=cst.Or(),
                    right=cst.UnaryOperation(cst.Not(), _parenthesized(
                        _any_of([e.value for e in others]))))
            return [stmt.with_changes(test=test, body=self._suite(stmt.body),
                                      orelse=self._orelse(stmt.orelse))]
        # A class in a branch (`if args.arch == "dcgan": class D ...`): every branch runs
        # in turn under `if True:` on its own header line (nothing below moves), and the
        # worker picks each class by its line.
        return [cst.If(test=cst.Name("True"), body=self._suite(b.body),
                       leading_lines=b.leading_lines) for b in _chain(stmt)]

    def _orelse(self, orelse: cst.If | cst.Else | None) -> cst.If | cst.Else | None:
        if orelse is None:
            return None
        if isinstance(orelse, cst.If):
            return orelse.with_changes(body=self._suite(orelse.body),
                                       orelse=self._orelse(orelse.orelse))
        return orelse.with_changes(body=self._suite(orelse.body))



def definitions_only(source: str) -> tuple[str, int]:
    """(the definitions-only copy of `source`, how many top-level statements it left
    out). Raises libcst's ParserSyntaxError on text that does not parse."""
    return _copy(MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True))


def _copy(wrapper: MetadataWrapper) -> tuple[str, int]:
    work = _Filter(wrapper)
    body = work.statements(wrapper.module.body)
    return wrapper.module.with_changes(body=body).code, work.dropped
