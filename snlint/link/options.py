"""Every command-line option a project declares, with its literal default.

Projects in the pix2pix / SPADE tradition build their `opt` from option classes
(`BaseOptions.initialize(parser)`, a model's `modify_commandline_options`), which the
interpreter does not run for a training script's `opt`. When the graph pass hands a
class a guessing namespace, an attribute named like one of these options answers with
the project's own default instead of a guess by name: `opt.norm_D` is
`"spectralinstance"` as `--norm_D` declares it, not a number.
"""

from __future__ import annotations

from typing import Any, Iterator

from snlint import facts as F

_FLAG_ACTIONS = {"store_true": False, "store_false": True}


def option_defaults(files: list[F.FileFacts]) -> dict[str, dict[str, Any]]:
    """`{dest: {"value": default, "where": "path:line"}}` for each `add_argument` call with
    a literal default (or a store_true/store_false flag); the first declaration wins."""
    found: dict[str, dict[str, Any]] = {}
    for file in files:
        for call in _calls(file):
            declared = _declared(call)
            if declared is not None and declared[0] not in found:
                dest, value = declared
                found[dest] = {"value": value, "where": f"{file.path}:{call.span.line}"}
    return found


def _declared(call: F.Call) -> tuple[str, Any] | None:
    if not (isinstance(call.func, F.Attr) and call.func.attr == "add_argument"):
        return None
    names = [a.value.value for a in call.args if a.keyword is None
             and isinstance(a.value, F.Const) and isinstance(a.value.value, str)]
    longs = [n for n in names if n.startswith("--")]
    if not longs:
        return None
    dest_arg = call.keyword("dest")
    dest = (dest_arg.value.value if dest_arg is not None and isinstance(dest_arg.value, F.Const)
            else longs[0][2:].replace("-", "_"))
    action = call.keyword("action")
    if action is not None and isinstance(action.value, F.Const) and action.value.value in _FLAG_ACTIONS:
        return dest, _FLAG_ACTIONS[action.value.value]
    default = call.keyword("default")
    if default is None or not isinstance(default.value, F.Const):
        return None
    value = default.value.value
    if not isinstance(value, (str, int, float, bool)):
        return None
    return dest, value


def _calls(file: F.FileFacts) -> Iterator[F.Call]:
    bodies = [file.body]
    bodies += [fn.body for _, fn in file.functions]
    for _, cls in file.classes:
        bodies += [m.body for _, m in cls.methods]
    for body in bodies:
        yield from _in(body)


def _in(body: tuple[F.Stmt, ...]) -> Iterator[F.Call]:
    for stmt in body:
        if isinstance(stmt, F.ExprStmt) and isinstance(stmt.value, F.Call):
            yield stmt.value
        elif isinstance(stmt, F.Assign) and isinstance(stmt.value, F.Call):
            yield stmt.value  # `action = parser.add_argument(...)`
        if isinstance(stmt, F.DefStmt):
            yield from _in(stmt.function.body)
        for child in ("body", "orelse"):
            inner = getattr(stmt, child, None)
            if isinstance(inner, tuple):
                yield from _in(inner)
