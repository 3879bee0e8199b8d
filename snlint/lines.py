"""Lines as Python counts them: broken at `\r\n`, `\r` or `\n`, and nowhere else (not at
form feeds or the other separators `str.splitlines` knows), so every line number snlint
reports is the one the interpreter and editors show."""

from __future__ import annotations

import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def lines_with_endings(text: str) -> list[tuple[str, str]]:
    """(content, line ending) of each line; a last line without an ending has ""."""
    out, start = [], 0
    for match in LINE_BREAK.finditer(text):
        out.append((text[start:match.start()], match.group()))
        start = match.end()
    if start < len(text):
        out.append((text[start:], ""))
    return out


def split_lines(text: str) -> list[str]:
    """Each line with its ending."""
    return [content + ending for content, ending in lines_with_endings(text)]


def line_texts(text: str) -> list[str]:
    """Each line without its ending; text ending in a break has an empty last line."""
    return LINE_BREAK.split(text)
