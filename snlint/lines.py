"""Lines as Python counts them: broken at `\r\n`, `\r` or `\n` only (not at the form
feeds and separators `str.splitlines` knows), as the interpreter and editors number them."""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

from snlint.records import dataclass

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


# What libcst's parser reads and its code leaves out: a form feed in the indentation of a
# statement's line, and a bare `\r` that ends the text.
_LOST = re.compile(r"^[ \t]*\f", re.MULTILINE)


def may_lose_bytes(text: str) -> bool:
    """Whether libcst's code of `text` may leave some of its bytes out (`put_back`)."""
    return text.endswith("\r") or ("\f" in text and _LOST.search(text) is not None)


def put_back(text: str, unchanged: str, fixed: str) -> str | None:
    """`fixed` (libcst's code of a changed tree of `text`) with the bytes libcst left out
    of `text` back on every line the change kept. `unchanged`: libcst's code of the tree
    as parsed, which must be `text` line for line but for those bytes; None when it is
    not (nothing then tells which bytes went where)."""
    original, read = lines_with_endings(text), lines_with_endings(unchanged)
    if len(original) != len(read):
        return None
    for (content, ending), (got, got_ending) in zip(original, read):
        if got_ending != ending and not (got_ending == "" and ending == "\r"):
            return None
        if got == content:
            continue
        indent = len(content) - len(content.lstrip(" \t\f"))
        if content[:indent].replace("\f", "") + content[indent:] != got:
            return None
    if unchanged == fixed:
        return text
    import difflib

    out = [content + ending for content, ending in lines_with_endings(fixed)]
    matcher = difflib.SequenceMatcher(None, [c + e for c, e in read], out, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            out[b + k] = "".join(original[a + k])
    result = "".join(out)
    if text.endswith("\r") and not result.endswith(("\r", "\n")):
        result += "\r"  # the last line was changed: its line ending is still the file's
    return result


@lru_cache(maxsize=16)
def line_starts(text: str) -> tuple[int, ...]:
    """Where each line of `text` after the first starts (Python's lines). With `bisect`,
    the line of any offset without counting the text before it: a file's many fixes
    each ask (a string's hash is computed once, so a cached text is found at once)."""
    return tuple(match.end() for match in LINE_BREAK.finditer(text))


@lru_cache(maxsize=16)
def newline_ends(text: str) -> tuple[int, ...]:
    """Where each `\\n` of `text` ends (the lines of a patch: `snlint.fix.diff`)."""
    return tuple(match.end() for match in re.finditer("\n", text))


def lines_before(text: str, offset: int, patch: bool = False) -> int:
    """How many lines of `text` end before `offset` (`\\n` alone with `patch`)."""
    return bisect_right(newline_ends(text) if patch else line_starts(text), offset)


@dataclass
class LexState:
    """Just enough of Python's lexer to know where a statement can start, and where a
    line's comment does."""

    quote: str | None = None
    depth: int = 0
    continued: bool = False

    @property
    def at_statement_start(self) -> bool:
        return self.quote is None and self.depth == 0 and not self.continued

    def scan(self, line: str) -> int | None:
        """Read `line`; where its comment starts (None when it has none)."""
        body = line.rstrip("\r\n")
        i, n = 0, len(body)
        single: str | None = None
        self.continued = False
        while i < n:
            ch = body[i]
            if self.quote or single:
                if ch == "\\":
                    i += 2
                    continue
                closing = self.quote or single
                if body.startswith(closing, i):
                    i += len(closing)
                    self.quote = single = None
                    continue
                i += 1
                continue
            if ch == "#":
                return i
            if ch in "'\"":
                if body.startswith(ch * 3, i):
                    self.quote = ch * 3
                    i += 3
                else:
                    single = ch
                    i += 1
                continue
            if ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
            elif ch == "\\" and i == n - 1:
                self.continued = True
            i += 1
        return None
