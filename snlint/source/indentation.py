"""Indentation that mixes tabs and spaces the way CPython accepts and libcst does not.

CPython reads a tab in indentation as a jump to the next multiple of eight columns, so
`15 spaces + tab` indents a statement as far as 16 spaces do. libcst keeps whitespace
exactly and compares indentation as text: the next line with 16 spaces is then a dedent
to no outer block, and the whole file fails to parse (seen in improved-wgan-pytorch's
train.py). For such a file the source pass reads a copy whose statement indentation is
written with the spaces CPython counts, and maps positions back to the file's columns.
No fix can rewrite it: libcst cannot parse the file as it is written.
"""

from __future__ import annotations

import io
import tokenize

from snlint.records import dataclass

TAB_STOP = 8
_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                     tokenize.DEDENT, tokenize.ENCODING})


@dataclass(frozen=True)
class Expanded:
    """The copy libcst reads, and per changed line (1-based) its new indentation's length
    and how many characters longer it is than the file's."""

    text: str
    shifts: dict[int, tuple[int, int]]

    def column(self, line: int, column: int) -> int:
        """A 0-based column of the copy, in the file as written."""
        shift = self.shifts.get(line)
        if shift is None:
            return column
        width, delta = shift
        return column - delta if column >= width else min(column, width - delta)


def expand_tabs(text: str) -> Expanded | None:
    """The copy of `text` with tab indentation expanded (statement lines only: a tab in a
    string or a bracketed continuation line is left as it is); None when no statement is
    indented with a tab, or CPython cannot tokenize the text."""
    starts: dict[int, int] = {}  # line -> column of the statement that starts it
    at_start = True
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NEWLINE:
                at_start = True
            elif token.type not in _LAYOUT and token.type != tokenize.ENDMARKER:
                if at_start:
                    starts[token.start[0]] = token.start[1]
                at_start = False
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    lines = text.splitlines(keepends=True)
    shifts: dict[int, tuple[int, int]] = {}
    for number, column in starts.items():
        line = lines[number - 1]
        indent = line[:column]
        if "\t" not in indent or indent.strip(" \t"):
            continue
        width = 0
        for char in indent:
            width = (width // TAB_STOP + 1) * TAB_STOP if char == "\t" else width + 1
        lines[number - 1] = " " * width + line[column:]
        shifts[number] = (width, width - len(indent))
    if not shifts:
        return None
    return Expanded("".join(lines), shifts)
