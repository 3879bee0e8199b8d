"""The definitions-only copy of a training script, for the graph pass to import.

Tutorial collections and many research repositories define the discriminator in the same
file that parses arguments, loads data and trains at module level, with no `__main__`
guard. Importing such a file would train. Its definitions-only copy keeps what a class
needs to be built and nothing that does work:

- imports, `def` and `class` statements, docstrings;
- assignments whose value calls nothing, or only calls on the allow-list below
  (`argparse` setup, `torch.cuda.is_available()`, `os.path.join`, `int(...)`, ...);
- `parser.add_argument(...)`-style statements on an argument parser, `sys.path` edits;
- `parse_args()` / `parse_known_args()` given no command line (`[]`, through a helper
  that falls back to the defaults when an argument is required);
- module-level `if` / `elif` / `else` and `try` bodies, filtered the same way, every
  branch run in turn: `if args.arch == "dcgan": class D ... elif ...: class D ...` defines
  each branch's classes (the worker tells them apart by line);

and leaves out everything else: loops, `with` blocks, data loading, file and network I/O,
models and optimizers built at top level, prints, seeds, `if __name__ == "__main__":`.

Kept statements keep their lines and columns: a dropped statement becomes `pass` or, when
it spans several lines, a string literal spanning exactly those lines. The copy is
compiled under the original file name, so tracebacks and recorded construction sites
point at the user's own lines.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

# Called at import time by a kept statement in place of `parser.parse_args()`.
PARSE_HELPER = "__snlint_parse_args__"

# Calls a kept assignment may make: cheap, side-effect free, and what scripts use to set
# up the values their classes read (`cuda = torch.cuda.is_available()`,
# `img_shape = (opt.channels, int(opt.img_size), ...)`).
_PURE_CALLS = frozenset({
    "int", "float", "str", "bool", "tuple", "list", "dict", "set", "frozenset", "len",
    "range", "min", "max", "abs", "round", "sum", "sorted", "zip", "enumerate", "getattr",
    "isinstance", "hasattr", "type", "vars", "print_function",
    "np.prod", "numpy.prod", "math.prod", "math.sqrt", "math.log2", "math.ceil",
    "math.floor", "np.log2", "np.sqrt", "int.bit_length",
    "os.path.join", "os.path.dirname", "os.path.abspath", "os.path.basename",
    "os.path.realpath", "os.path.expanduser", "os.getcwd", "os.environ.get", "os.getenv",
    "torch.cuda.is_available", "torch.device", "torch.cuda.device_count",
    "torch.backends.mps.is_available",
    "argparse.ArgumentParser", "ArgumentParser", "functools.partial", "partial",
    "collections.namedtuple", "namedtuple", "typing.TypeVar", "TypeVar",
    "logging.getLogger",
})
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


def _pure(node: cst.CSTNode, parsers: set[str]) -> bool:
    for callee in _calls(node):
        if callee is None:
            return False
        if callee in _PURE_CALLS or _is_parse_call(callee, parsers):
            continue
        base, _, method = callee.rpartition(".")
        if base in parsers and method in _PARSER_METHODS:
            continue
        return False
    return True


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


def _tests(stmt: cst.If) -> cst.Tuple:
    """The conditions of an if/elif chain, as one expression to inspect."""
    tests = []
    branch: cst.If | cst.Else | None = stmt
    while isinstance(branch, cst.If):
        tests.append(cst.Element(branch.test))
        branch = branch.orelse
    return cst.Tuple(tests)


def _dispatch_without_default(stmt: cst.If) -> bool:
    """An `if`/`elif` chain with no `else` whose every test compares one subject with
    literals (`opt.dataset == "lsun"`, `args.arch in ("a", "b")`)."""
    tests = [e.value for e in _tests(stmt).elements]
    branch: cst.If | cst.Else | None = stmt
    while isinstance(branch, cst.If):
        branch = branch.orelse
    if branch is not None or len(tests) < 2:
        return False
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


class _ParseArgs(cst.CSTTransformer):
    """`parser.parse_args()` -> `__snlint_parse_args__(parser)`; the helper sees no
    command line."""

    def __init__(self, parsers: set[str]) -> None:
        self.parsers = parsers

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        callee = _dotted(updated.func)
        if not _is_parse_call(callee, self.parsers):
            return updated
        assert isinstance(updated.func, cst.Attribute)
        known = updated.func.attr.value == "parse_known_args"
        args = [cst.Arg(updated.func.value)]
        if known:
            args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("known")))
        # Same node span: the call keeps its line, so nothing after it moves.
        return updated.with_changes(func=cst.Name(PARSE_HELPER), args=args)


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
        self.parsers: set[str] = set()
        self.dropped = 0
        # Names only a left-out statement binds: a kept statement reading one would fail
        # (`steps = len(dataloader)`), so it is left out too.
        self.unbound: set[str] = set()

    def _lines(self, node: cst.CSTNode) -> int:
        pos = self.positions[node]
        return pos.end.line - pos.start.line + 1

    def _placeholder(self, node: cst.BaseStatement) -> cst.SimpleStatementLine:
        self.dropped += 1
        self.unbound |= _names_bound(node)
        lines = self._lines(node)
        body: cst.BaseSmallStatement
        if lines == 1:
            body = cst.Pass()
        else:
            body = cst.Expr(cst.SimpleString('"""' + "\n" * (lines - 1) + '"""'))
        return cst.SimpleStatementLine([body], leading_lines=node.leading_lines)

    def _note_parsers(self, stmt: cst.BaseSmallStatement) -> None:
        value = getattr(stmt, "value", None)
        if not isinstance(value, cst.Call):
            return
        callee = _dotted(value.func) or ""
        base, _, method = callee.rpartition(".")
        if callee in ("argparse.ArgumentParser", "ArgumentParser") or (
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
                return True
            for target in _targets(stmt):
                # `model.x = ...`, `cfg["k"] = ...` on a name the copy has: harmless when pure.
                if not isinstance(target, (cst.Name, cst.Tuple, cst.List, cst.Attribute,
                                           cst.Subscript)):
                    return False
            return _pure(value, self.parsers)
        if isinstance(stmt, cst.Expr):
            value = stmt.value
            if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
                return True
            if isinstance(value, cst.Call):
                callee = _dotted(value.func) or ""
                base, _, method = callee.rpartition(".")
                if base in self.parsers and method in _PARSER_METHODS:
                    return _pure(value, self.parsers)
                if base == "sys.path" and method in _SYS_PATH_METHODS:
                    return _pure(cst.Tuple([cst.Element(a.value) for a in value.args]),
                                 self.parsers)
            return False
        return False

    def statements(self, body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        return [out for stmt in body for out in self.statement(stmt)]

    def statement(self, stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self.unbound.discard(stmt.name.value)
            return [stmt]
        if isinstance(stmt, cst.SimpleStatementLine):
            if all(self._keep_small(s) for s in stmt.body) and not (
                    _names_read(stmt) - _names_bound(stmt)) & self.unbound:
                for s in stmt.body:
                    self._note_parsers(s)
                self.unbound -= _names_bound(stmt)
                return [stmt.visit(_ParseArgs(self.parsers))]  # type: ignore[list-item]
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

    def _suite(self, suite: cst.BaseSuite) -> cst.BaseSuite:
        if isinstance(suite, cst.IndentedBlock):
            return suite.with_changes(body=self.statements(suite.body))
        # `if c: x = f()` on one line: the suite's statements are kept or become `pass`.
        assert isinstance(suite, cst.SimpleStatementSuite)
        if all(self._keep_small(s) for s in suite.body):
            return suite.visit(_ParseArgs(self.parsers))  # type: ignore[return-value]
        self.dropped += 1
        return suite.with_changes(body=[cst.Pass()])

    def _if(self, stmt: cst.If) -> list[cst.BaseStatement]:
        if _is_main_guard(stmt.test):
            return [self._placeholder(stmt)]
        tests = _tests(stmt)
        if not _defines_class(stmt) and _pure(tests, self.parsers) and not (
                _names_read(tests) & self.unbound):
            # `if new_torch: from ... import spectral_norm else: ...`: the script's own
            # choice, made as it would make it.
            test = stmt.test
            if _dispatch_without_default(stmt):
                # `if opt.dataset in ["imagenet", ...]: nc = 3 elif opt.dataset == "mnist":
                # nc = 1` on an option with no default (`required=True`): no branch would
                # run and `nc` would be missing, so the first branch is the default. The
                # test grows on its own line; nothing moves.
                others = tests.elements[1:]
                test = cst.BooleanOperation(
                    left=_parenthesized(test), operator=cst.Or(),
                    right=cst.UnaryOperation(cst.Not(), _parenthesized(
                        _any_of([e.value for e in others]))))
            return [stmt.with_changes(test=test, body=self._suite(stmt.body),
                                      orelse=self._orelse(stmt.orelse))]
        # A class in a branch (`if args.arch == "dcgan": class D ...`): every branch runs
        # in turn, each under `if True:` on its own header line (`elif c:` / `else:` sit
        # at the `if`'s indentation, so a header becomes one line of the same height and
        # nothing below moves), and the worker picks each class by its line.
        return [cst.If(test=cst.Name("True"), body=body, leading_lines=leading)
                for body, leading in self._branches(stmt)]

    def _orelse(self, orelse: cst.If | cst.Else | None) -> cst.If | cst.Else | None:
        if orelse is None:
            return None
        if isinstance(orelse, cst.If):
            return orelse.with_changes(body=self._suite(orelse.body),
                                       orelse=self._orelse(orelse.orelse))
        return orelse.with_changes(body=self._suite(orelse.body))

    def _branches(self, stmt: cst.If) -> list[tuple[cst.BaseSuite, Sequence[cst.EmptyLine]]]:
        branches = [(self._suite(stmt.body), stmt.leading_lines)]
        orelse = stmt.orelse
        while orelse is not None:
            if isinstance(orelse, cst.If):
                branches.append((self._suite(orelse.body), orelse.leading_lines))
                orelse = orelse.orelse
            else:
                branches.append((self._suite(orelse.body), orelse.leading_lines))
                orelse = None
        return branches


def definitions_only(source: str) -> tuple[str, int]:
    """(the definitions-only copy of `source`, how many top-level statements it left
    out). Raises libcst's ParserSyntaxError on text that does not parse."""
    return _copy(MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True))


def _copy(wrapper: MetadataWrapper) -> tuple[str, int]:
    work = _Filter(wrapper)
    body = work.statements(wrapper.module.body)
    return wrapper.module.with_changes(body=body).code, work.dropped


def script_copy(source: str) -> str | None:
    """The definitions-only copy of `source` when it is a script (`looks_like_script`),
    else None; one parse for both."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    except cst.ParserSyntaxError:
        return None
    return _copy(wrapper)[0] if _is_script(wrapper) else None


def parse_args_without_command_line(parser: argparse.ArgumentParser, known: bool = False) -> Any:
    """What `parser.parse_args()` gives with no options; when an argument is required,
    a namespace of every default instead of the exit argparse would take."""
    try:
        if known:
            return parser.parse_known_args([])
        return parser.parse_args([])
    except SystemExit:
        namespace = argparse.Namespace(**{
            a.dest: a.default for a in parser._actions  # noqa: SLF001 - the one way to list them
            if a.dest not in (argparse.SUPPRESS, "help")})
        return (namespace, []) if known else namespace


def looks_like_script(source: str) -> bool:
    """Whether importing `source` would do work beyond defining things: a top-level
    statement the definitions-only copy leaves out, other than the `__main__` guard."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return False
    return _is_script(MetadataWrapper(module, unsafe_skip_copy=True))


def _is_script(wrapper: MetadataWrapper) -> bool:
    work = _Filter(wrapper)
    for stmt in wrapper.module.body:
        if isinstance(stmt, cst.If) and _is_main_guard(stmt.test):
            continue
        if isinstance(stmt, (cst.For, cst.While, cst.With)):
            return True
        if isinstance(stmt, cst.SimpleStatementLine) and not all(work._keep_small(s) for s in stmt.body):
            # Side effects of a plain module (a registry call, `logging.basicConfig`) are
            # cheap; a script is one that loops, reads data or builds models at import.
            if any(_heavy(c) for c in _calls(stmt)):
                return True
        for s in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            work._note_parsers(s)
    return False


# Top-level calls that mark a file as a script: training, data, I/O, parsing a real
# command line.
_HEAVY_SUFFIXES = ("DataLoader", "Dataset", "ImageFolder", "parse_args", "parse_known_args",
                   "makedirs", "mkdir", "load", "save", "save_image", "download", "urlretrieve",
                   "train", "fit", "backward", "step", "cuda", "to", "open", "run",
                   "MNIST", "CIFAR10", "CelebA", "LSUN")


def _heavy(callee: str | None) -> bool:
    if callee is None:
        return False
    last = callee.rpartition(".")[2]
    return last in _HEAVY_SUFFIXES or last.endswith(("Dataset", "Loader"))
