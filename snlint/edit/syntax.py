"""Small libcst helpers the rules' fixes share: call arguments, comments, statements and
the commas between items, read and rebuilt without touching other bytes."""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import libcst as cst

from snlint.edit.parsed import ParsedFile


def positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def module_arg(call: cst.Call) -> cst.Arg | None:
    """The module an SN call wraps: its first positional argument or `module=`."""
    if has_star(call):
        return None
    pos = positional(call)
    return pos[0] if pos else keyword(call, "module")


def has_comments(node: cst.CSTNode, skip: cst.CSTNode | None = None) -> bool:
    """Whether `node` holds a comment outside the subtree `skip`."""
    if node is skip:
        return False
    if isinstance(node, cst.Comment):
        return True
    return any(has_comments(child, skip) for child in node.children)


def merge_comma(prev: Any, removed: Any) -> Any:
    """The comma the item before a removed last item keeps: the removed one's (so a
    trailing comma and the line break before the closing bracket stay), with a comment
    that followed the previous item kept."""
    if not isinstance(removed, cst.Comma):
        return cst.MaybeSentinel.DEFAULT
    if (isinstance(prev, cst.Comma) and isinstance(prev.whitespace_after, cst.ParenthesizedWhitespace)
            and isinstance(removed.whitespace_after, cst.ParenthesizedWhitespace)):
        kept, tail = prev.whitespace_after, removed.whitespace_after
        return removed.with_changes(whitespace_after=kept.with_changes(
            indent=tail.indent, last_line=tail.last_line))
    return removed


def without(items: Sequence[Any], index: int) -> list[Any]:
    """`items` (Arg, Element, ImportAlias: things with a `comma`) without one, commas fixed."""
    items = list(items)
    removed = items.pop(index)
    if index == len(items) and index > 0:
        prev = items[index - 1]
        changes = {"comma": merge_comma(prev.comma, removed.comma)}
        if isinstance(prev, cst.Arg):
            changes["whitespace_after_arg"] = removed.whitespace_after_arg
        items[index - 1] = prev.with_changes(**changes)
    return items


def remove_arg(parsed: ParsedFile, arg: cst.Arg) -> tuple[cst.Call, cst.Call]:
    """The call `arg` is an argument of, and that call without it."""
    call = parsed.parent(arg)
    index = next(i for i, a in enumerate(call.args) if a is arg)
    return call, call.with_changes(args=without(call.args, index))


def statement(parsed: ParsedFile, node: cst.CSTNode) -> tuple[cst.BaseSmallStatement, cst.CSTNode] | None:
    """The small statement holding `node` directly (its value), and its line."""
    parent = parsed.parent(node)
    if isinstance(parent, (cst.Expr, cst.Assign)) and parent.value is node:
        line = parsed.parent(parent)
        if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return parent, line
    return None


def enclosing_function(parsed: ParsedFile, node: cst.CSTNode) -> cst.FunctionDef | None:
    return next((a for a in parsed.ancestors(node) if isinstance(a, cst.FunctionDef)), None)


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from walk(child)


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)
