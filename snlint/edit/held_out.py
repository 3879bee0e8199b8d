"""The part of a file a fix round parses: the top-level statements its fixes can read or
change, each other one held out as a marker statement (`pass  # ...`) and empty lines, so
every kept node keeps its line and column; the fixed part's code with the held-out lines
put back is the fixed file. Kept: the statements of the findings, the first statement and
the import block after it (`add_imports`), the statements the file's names point at
(`Names.imports`, `Names.aliases`), and the first statement with a block (libcst takes
the file's default indent from it). A finding in module-level code and a file with a
lone `\\r` line break are parsed whole, and so is the file when a fix moves a marker
(`NeedsWholeFile`). `tests/test_held_out.py` holds the fixes of `LOCAL_CODES` to those
made on the whole file.
"""

from __future__ import annotations

import ast
import math
import re
from bisect import bisect_right
from typing import Iterable

from snlint import facts as F
from snlint.findings import Finding
from snlint.lines import lines_with_endings
from snlint.records import dataclass

# The rules whose fixes read no more than the statements kept.
LOCAL_CODES = frozenset({"SN101", "SN102", "SN103", "SN104", "SN105", "SN106", "SN107",
                         "SN201", "SN301"})
# Below this many held-out lines, the whole file is parsed.
MIN_HELD_LINES = 8
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Hole:
    marker: str  # the marker statement and the line ending of the statement's first line
    filler: str  # the line endings of its other lines (its empty lines in the parsed part)
    original: str  # the held-out lines, as they are in the file


class NeedsWholeFile(Exception):
    """A fix needs what a held-out statement holds (or moved its marker): parse the file
    whole and plan again."""


@dataclass(frozen=True)
class HeldOut:
    """A file with some top-level statements held out: `text` is what libcst parses."""

    text: str
    holes: tuple[Hole, ...]

    def words(self) -> frozenset[str]:
        """Every identifier-like word of the held-out lines: names they may still read."""
        return frozenset(w for hole in self.holes for w in _WORD.findall(hole.original))

    def restore(self, code: str) -> str | None:
        """The whole file for the parsed part's (fixed) `code`, or None when a marker is not
        there once, on a line of its own, with its empty lines after it."""
        out: list[str] = []
        at = 0
        for hole in self.holes:
            found = code.find(hole.marker, at)
            if found < 0 or code.find(hole.marker, found + 1) >= 0:
                return None
            if found > 0 and code[found - 1] not in "\r\n":
                return None
            end = found + len(hole.marker)
            if not code.startswith(hole.filler, end):
                return None
            out.append(code[at:found])
            out.append(hole.original)
            at = end + len(hole.filler)
        out.append(code[at:])
        return "".join(out)


def held_out(text: str, findings: Iterable[Finding], names: F.Names | None) -> HeldOut | None:
    """The file with the statements `findings`' fixes cannot read held out, or None when
    it is parsed whole."""
    findings = list(findings)
    if not findings or any(f.code not in LOCAL_CODES for f in findings) or "\r" in text.replace("\r\n", ""):
        return None
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(body) < 2:
        return None
    spans = [(min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]), s.end_lineno or s.lineno)
             for s in body]
    keep = _prefix(body)
    for line in _wanted_lines(findings, names):
        i = _statement_at(spans, line)
        if i is None:
            continue
        if not isinstance(body[i], _DEFINITIONS) and any(f.span.line == line for f in findings):
            return None  # a fix in module-level code may read the module's scope
        keep.add(i)
    if any(_statement_at(spans, f.span.line) is None for f in findings):
        return None
    # libcst writes a fix's new blocks with the indent of the first block it parsed.
    lines = lines_with_endings(text)
    indents = [_block_indent(lines, statement) for statement in body]
    blocks = [i for i, indent in enumerate(indents) if indent is not None]
    if blocks and indents[blocks[0]] != next((indents[i] for i in blocks if i in keep), None):
        keep.add(blocks[0])
    kept_lines = {n for i in keep for n in range(spans[i][0], spans[i][1] + 1)}
    held = [i for i in range(len(body)) if i not in keep
            and not any(n in kept_lines for n in range(spans[i][0], spans[i][1] + 1))]
    runs = _runs(held, spans)
    if sum(last - first + 1 for first, last in runs) < MIN_HELD_LINES:
        return None
    return _hold(text, lines, runs)


def _prefix(body: list[ast.stmt]) -> set[int]:
    """The first statement (`add_imports` may skip it) and the imports after it."""
    end = 1
    while end < len(body) and isinstance(body[end], (ast.Import, ast.ImportFrom)):
        end += 1
    return set(range(min(end, len(body))))


def _block_indent(lines: list[tuple[str, str]], statement: ast.stmt) -> str | None:
    """The indent of a compound statement's indented block (its body on a later line), or
    None when it has none."""
    if isinstance(statement, ast.Match):
        first = statement.cases[0].pattern.lineno
    else:
        inner = getattr(statement, "body", None)
        if not (isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt)
                and inner[0].lineno > statement.lineno):
            return None
        first = inner[0].lineno
    if first > len(lines):
        return None
    line = lines[first - 1][0]
    return line[:len(line) - len(line.lstrip(" \t\f"))]


def _wanted_lines(findings: list[Finding], names: F.Names | None) -> Iterable[int]:
    for f in findings:
        yield from range(f.span.line, f.span.end_line + 1)
    if names is None:
        return
    for key in (*names.imports.values(), *names.aliases.values()):
        yield from range(key >> 99, ((key >> 35) & 0xFFFFFFFF) + 1)  # its lines (`F.node_key`)


def _statement_at(spans: list[tuple[int, int]], line: int) -> int | None:
    i = bisect_right(spans, (line, math.inf)) - 1
    return i if i >= 0 and spans[i][1] >= line else None


def _runs(held: list[int], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Consecutive held-out statements joined: (first line, last line) of each run."""
    runs: list[tuple[int, int]] = []
    for n, i in enumerate(held):
        if n and held[n - 1] == i - 1:
            runs[-1] = (runs[-1][0], spans[i][1])
        else:
            runs.append(spans[i])
    return runs


def _hold(text: str, lines: list[tuple[str, str]], runs: list[tuple[int, int]]) -> HeldOut | None:
    unused = 0
    while f"snlint-held{unused}" in text:
        unused += 1
    token = f"snlint-held{unused}"  # in no line of the file
    parts: list[str] = []
    holes: list[Hole] = []
    at = 0  # 0-based index of the next line not yet copied
    for n, (first, last) in enumerate(runs):
        if last > len(lines):
            return None
        parts.extend(c + e for c, e in lines[at:first - 1])
        held = lines[first - 1:last]
        # A statement, as what it holds is, so the import block ends where it ended. The
        # dot ends the number: no marker is the start of another.
        marker = f"pass  #{token}-{n}." + held[0][1]
        filler = "".join(e for _, e in held[1:])
        holes.append(Hole(marker, filler, "".join(c + e for c, e in held)))
        parts.append(marker + filler)
        at = last
    parts.extend(c + e for c, e in lines[at:])
    return HeldOut("".join(parts), tuple(holes))
