"""The part of a file a fix round parses: the top-level statements its fixes can read or
change, with every other one held out, line for line.

libcst's parse is most of a fix's cost (it builds a Python object for every node), and a
fix reads a few statements of a file: the one its finding is in, the import block, and
those the file's names point at. A held-out statement's lines become one marker statement
(`pass` and a comment) and empty lines, so every kept node is at the line and column it has in the file (the
findings' node keys name it), and the parsed part is fixed as libcst transformations,
like the whole file. The fixed file is the fixed part's code with each statement's own
lines back in place of its marker: bytes a fix never parsed are bytes it cannot change.

What is kept (the fixes of `LOCAL_CODES` read nothing else: `tests/test_held_out.py`
holds each rule's fixes to those made on the whole file):
- each statement a finding's span is in;
- the first statement and the import block after it: what
  `snlint.edit.imports.add_imports` reads and changes (a held-out statement's marker is a
  statement, `pass  # ...`: the block ends where it ended, and an empty line put before
  the statement after it goes before the marker as before what it holds);
- the statement of each import alias and module-level alias the file's names point at
  (`Names.imports`, `Names.aliases`): what `_prune_imports` may remove, and a fix reads;
- the first statement with an indented block: libcst takes the file's default indent
  from its first indent, and a fix's new code is written with it.
The file is parsed whole when a fix moved a marker (`NeedsWholeFile`).
A finding in module-level code (outside a `def` and a `class`: a fix may read the whole
module's scope) and a file with a lone `\\r` line break (CPython and libcst may count its
lines apart) are parsed whole.
"""

from __future__ import annotations

import ast
import re
from typing import Collection, Iterable

from snlint import facts as F
from snlint.findings import Finding
from snlint.lines import lines_with_endings
from snlint.records import dataclass

# The rules whose fixes read no more than the statements above (SN401's reads a second
# call by position, SN501's every call of the file: they parse it whole).
LOCAL_CODES = frozenset({"SN101", "SN102", "SN103", "SN104", "SN105", "SN106", "SN107",
                         "SN201", "SN301"})
# Below this many held-out lines, the whole file is parsed: not worth the bookkeeping.
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
        """Every identifier-like word of the held-out lines: names they may still read or
        mention (in strings, `__all__`) after a fix, which the parsed part cannot show."""
        return frozenset(w for hole in self.holes for w in _WORD.findall(hole.original))

    def restore(self, code: str) -> str | None:
        """The whole file for the parsed part's (fixed) `code`: each marker and its empty
        lines replaced by the statements they hold. None when a marker is not there once,
        on a line of its own, with its empty lines after it (a fix moved or dropped it)."""
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
    it is parsed whole (a rule outside `LOCAL_CODES`, a finding in module-level code, a
    file CPython cannot parse, nothing worth holding out)."""
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
            return None  # a finding in module-level code: its fix may read the module's scope
        keep.add(i)
    if any(_statement_at(spans, f.span.line) is None for f in findings):
        return None
    # libcst takes the file's default indent from its first indented block, and writes a
    # fix's new blocks with it: the parsed part's first one must have the same indent.
    lines = lines_with_endings(text)
    blocks = [i for i, s in enumerate(body) if _has_block(s)]
    if blocks and _indent(lines, body[blocks[0]]) != next(
            (_indent(lines, body[i]) for i in blocks if i in keep), None):
        keep.add(blocks[0])
    kept_lines = {n for i in keep for n in range(spans[i][0], spans[i][1] + 1)}
    held = [i for i in range(len(body)) if i not in keep
            and not any(n in kept_lines for n in range(spans[i][0], spans[i][1] + 1))]
    runs = _runs(held, spans)
    if sum(last - first + 1 for first, last in runs) < MIN_HELD_LINES:
        return None
    return _hold(text, lines, runs)


def _prefix(body: list[ast.stmt]) -> set[int]:
    """The first statement (a docstring, a `__strict__` flag: `add_imports` skips it) and
    the imports after it."""
    end = 1
    while end < len(body) and isinstance(body[end], (ast.Import, ast.ImportFrom)):
        end += 1
    return set(range(min(end, len(body))))


def _has_block(statement: ast.stmt) -> bool:
    """Whether a compound statement has an indented block (its body on a later line)."""
    if isinstance(statement, ast.Match):
        return True
    inner = getattr(statement, "body", None)
    return isinstance(inner, list) and bool(inner) and isinstance(inner[0], ast.stmt) \
        and inner[0].lineno > statement.lineno


def _indent(lines: list[tuple[str, str]], statement: ast.stmt) -> str | None:
    """The indent of the first line of a compound statement's block (its INDENT token).
    `lines`: the file's (content, line ending) pairs."""
    if isinstance(statement, ast.Match):
        first = statement.cases[0].pattern.lineno if statement.cases else None
    else:
        first = statement.body[0].lineno  # type: ignore[attr-defined]
    if first is None or first > len(lines):
        return None
    line = lines[first - 1][0]
    return line[:len(line) - len(line.lstrip(" \t\f"))]


def _wanted_lines(findings: list[Finding], names: F.Names | None) -> Iterable[int]:
    for f in findings:
        yield from range(f.span.line, f.span.end_line + 1)
    if names is None:
        return
    for key in (*names.imports.values(), *names.aliases.values()):
        yield from _key_lines(key)


def _key_lines(key: int) -> range:
    """The lines of the node a node key names (`facts.node_key`)."""
    key >>= 3
    end_line = (key >> 32) & 0xFFFFFFFF
    line = key >> 96
    return range(line, end_line + 1)


def _statement_at(spans: list[tuple[int, int]], line: int) -> int | None:
    lo, hi = 0, len(spans) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        first, last = spans[mid]
        if line < first:
            hi = mid - 1
        elif line > last:
            lo = mid + 1
        else:
            return mid
    return None


def _runs(held: Collection[int], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Consecutive held-out statements joined: (first line, last line) of each run."""
    runs: list[tuple[int, int]] = []
    previous = None
    for i in sorted(held):
        first, last = spans[i]
        if previous is not None and i == previous + 1:
            runs[-1] = (runs[-1][0], last)
        else:
            runs.append((first, last))
        previous = i
    return runs


def _hold(text: str, lines: list[tuple[str, str]], runs: list[tuple[int, int]]) -> HeldOut | None:
    token = _unused_token(text)
    parts: list[str] = []
    holes: list[Hole] = []
    at = 0  # 0-based index of the next line not yet copied
    for n, (first, last) in enumerate(runs):
        if last > len(lines):
            return None
        parts.extend(c + e for c, e in lines[at:first - 1])
        held = lines[first - 1:last]
        # A statement, as what it holds is: the import block ends where it ended, and an
        # empty line goes before it as before what it holds. The dot ends the number: no
        # marker is the start of another.
        marker = f"pass  #{token}-{n}." + held[0][1]
        filler = "".join(e for _, e in held[1:])
        holes.append(Hole(marker, filler, "".join(c + e for c, e in held)))
        parts.append(marker + filler)
        at = last
    parts.extend(c + e for c, e in lines[at:])
    return HeldOut("".join(parts), tuple(holes))


def _unused_token(text: str) -> str:
    token = "snlint-held"
    n = 0
    while token in text:
        n += 1
        token = f"snlint-held{n}"
    return token
