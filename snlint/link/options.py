"""Every command-line option a project declares, with its literal default.

Projects that build their `opt` from option classes (`BaseOptions.initialize(parser)`)
are not run for a training script's `opt`. When the graph pass hands a class a guessing
namespace, an option's attribute (`opt.norm_D`) answers with the project's own default.
"""

from __future__ import annotations

from typing import Any, Iterator

from snlint import facts as F
from snlint.findings import Location
from snlint.link.configvalues import option
from snlint.link.syntax import last_attr
from snlint.link.values import UNKNOWN, ConstV, NamespaceV, NameV, UnknownV, Value

# Parameters that receive the parsed options (`def __init__(self, opt)`).
OPTION_PARAMS = frozenset({"opt", "opts", "args", "config"})
DEFAULTS_ORIGIN = "the project's option defaults"

class DeclaredOptions:
    """`option_defaults` of the whole project, read on first use (a part of the project
    that never asks does not pay for reading every file)."""

    def __init__(self, files: list[F.FileFacts]) -> None:
        self.files = files
        self._found: dict[str, dict[str, Any]] | None = None

    def __call__(self) -> dict[str, dict[str, Any]]:
        if self._found is None:
            self._found = option_defaults(self.files)
        return self._found


def keyword_literals(files: list[F.FileFacts]) -> dict[str, set[tuple[type, Any]]]:
    """`{keyword: {(type, literal), ...}}`: the literal values the files' calls pass by each
    keyword (`model(x, step=1)`), read by the source pass (`FileFacts.keyword_literals`)."""
    found: dict[str, set[tuple[type, Any]]] = {}
    for file in files:
        for name, value in file.keyword_literals:
            found.setdefault(name, set()).add((type(value), value))
    return found


def option_defaults(files: list[F.FileFacts]) -> dict[str, dict[str, Any]]:
    """`{dest: {"value": default, "where": "path:line"}}` for each `add_argument` call whose
    default argparse would set to a literal; the first declaration wins."""
    found: dict[str, dict[str, Any]] = {}
    for file in files:
        for call in file.option_calls:  # read by the source pass (snlint.source.configured)
            dest, value = _option(call, file.path)
            if dest is not None and dest not in found and isinstance(value, ConstV) \
                    and isinstance(value.value, (str, int, float)):  # bool is an int
                found[dest] = {"value": value.value, "where": f"{file.path}:{call.span.line}"}
    return found


def undefaulted_options(files: list[F.FileFacts]) -> dict[str, str]:
    """`{dest: "path:line"}` for each `add_argument` call with no default (or `required`):
    the user always gives the value, a path to an option file for some."""
    found: dict[str, str] = {}
    for file in files:
        for call in file.option_calls:
            dest, value = _option(call, file.path)
            unset = (isinstance(value, ConstV) and value.value is None) or \
                (isinstance(value, UnknownV) and value.why.endswith(" is required"))
            if dest is not None and unset:
                found.setdefault(dest, f"{file.path}:{call.span.line}")
    return found


def _option(call: F.Call, path: str) -> tuple[str | None, Value]:
    """(dest, default) of an `add_argument` call as the interpreter reads it
    (`configvalues.option`), on its literal values; (None, UNKNOWN) for another call."""
    if last_attr(call.func) != "add_argument":
        return None, UNKNOWN
    args = [_value(a.value) for a in call.args if a.keyword is None]
    kwargs = {a.keyword: _value(a.value) for a in call.args if a.keyword is not None}
    return option(args, kwargs, Location(path, call.span))


def _value(expr: F.Expr) -> Value:
    if isinstance(expr, F.Const):
        return ConstV(expr.value)
    if isinstance(expr, F.Global):
        return NameV(expr.qual, expr.text)
    return UNKNOWN


def _in(body: tuple[F.Stmt, ...]) -> Iterator[F.Call]:
    for stmt in F.statements(body):
        if isinstance(stmt, (F.ExprStmt, F.Assign)) and isinstance(stmt.value, F.Call):
            yield stmt.value  # `parser.set_defaults(...)`, `action = parser.add_argument(...)`


def namespace(declared: dict[str, dict[str, Any]], overrides: dict[str, tuple[Any, str]]) -> NamespaceV:
    """The namespace `parse_args()` would return with no flag given: each declared default,
    then a class's own `parser.set_defaults(...)` (a model's `modify_commandline_options`)."""
    attrs: dict[str, Value] = {dest: ConstV(d["value"], f"--{dest} default at {d['where']}")
                               for dest, d in declared.items()}
    attrs.update({k: ConstV(v, f"--{k} default set at {where}") for k, (v, where) in overrides.items()})
    return NamespaceV(attrs, parsed=True, origin=DEFAULTS_ORIGIN)


def class_defaults(cls: F.ClassFacts) -> dict[str, tuple[Any, str]]:
    """`parser.set_defaults(norm="batch")` with literal values in a class's own methods."""
    out: dict[str, tuple[Any, str]] = {}
    for _, method in cls.methods:
        for call in _in(method.body):
            if isinstance(call.func, F.Attr) and call.func.attr == "set_defaults":
                for a in call.args:
                    if a.keyword is not None and isinstance(a.value, F.Const) \
                            and isinstance(a.value.value, (str, int, float, bool)):
                        out[a.keyword] = (a.value.value, f"{cls.name}.{method.name} line {call.span.line}")
    return out
