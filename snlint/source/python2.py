"""Python 2 files read for their facts: a training script that does not parse hides every
training step it holds. Such a file keeps its SN901; the rest of it is read from a Python 3
rendering made line for line (print statements, `except E, e`, `<>`, backquotes, old
octals and longs, tabs expanded as Python 2 did, `async=` as a keyword argument), so every
finding keeps its line. Only a rendering CPython parses is used, and never for a fix.
"""

from __future__ import annotations

import re

__all__ = ["as_python3"]

# `print` as a statement: at a line's start or after a compound statement's colon, not a
# call (`print(...)`), an assignment (`print = log`) or an attribute.
_PRINT = re.compile(r"^(?P<head>\s*(?:[^#'\"]*:\s*)?)print(?=\s|$)(?P<rest>(?!\s*[(=.])[^\n]*?)(?P<end>\s*(?:#[^\n]*)?)$")
_EXCEPT = re.compile(r"^(\s*except\s+)([^:#]+?)\s*,\s*([A-Za-z_]\w*)\s*:")
_RAISE = re.compile(r"^(\s*raise\s+)([A-Za-z_][\w.]*)\s*,\s*(.+?)(\s*(?:#.*)?)$")
_NOT_EQUAL = re.compile(r"<>")
_BACKQUOTE = re.compile(r"`([^`\n]+)`")
_OCTAL = re.compile(r"(?<![\w.])0(\d+)(?![\w.])")
_LONG = re.compile(r"(?<![\w.])(\d+)[lL](?!\w)")
_UNICODE_RAW = re.compile(r"(?<![\w])[uU]([rR]['\"])")
_LEADING = re.compile(r"^[ \t]+")
_ASYNC_KEYWORD = re.compile(r"(?<=[(,])(\s*)async(?=\s*=(?!=))")


def as_python3(text: str, parses) -> str | None:
    """`text` rendered as Python 3 line for line, when `parses(rendering)` says CPython
    reads it; else None."""
    lines = text.split("\n")
    out = [_line(line) for line in lines]
    rendered = "\n".join(out)
    if rendered == text or not parses(rendered):
        return None
    return rendered


def _line(line: str) -> str:
    if not line.strip() or line.lstrip().startswith("#"):
        return line
    line = _LEADING.sub(lambda m: m.group(0).expandtabs(8), line)
    if "'" not in line and '"' not in line:
        line = _NOT_EQUAL.sub("!=", line)
        line = _BACKQUOTE.sub(r"repr(\1)", line)
        line = _OCTAL.sub(r"0o\1", line)
        line = _LONG.sub(r"\1", line)
    line = _UNICODE_RAW.sub(r"\1", line)
    line = _ASYNC_KEYWORD.sub(r"\1_sync", line)
    line = _EXCEPT.sub(r"\1\2 as \3:", line)
    line = _RAISE.sub(r"\1\2(\3)\4", line)
    return _print(line)


def _print(line: str) -> str:
    m = _PRINT.match(line)
    if m is None:
        return line
    rest, end = m.group("rest"), m.group("end")
    if "'" in line or '"' in line:  # a `#` may be in a string: no comment is split off
        rest, end = rest + end.rstrip(), end[len(end.rstrip()):]
    rest = rest.strip()
    target = ""
    if rest.startswith(">>"):
        stream, _, rest = rest[2:].partition(",")
        target = f"file={stream.strip()}"
        rest = rest.strip()
    ending = ""
    if rest.endswith(","):
        rest, ending = rest[:-1].rstrip(), 'end=" "'
    args = ", ".join(a for a in (rest, ending, target) if a)
    return f"{m.group('head')}print({args}){end}"
