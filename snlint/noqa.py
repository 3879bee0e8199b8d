"""`--add-noqa`: write `# noqa: CODE` on every reported line, as ruff does.

Only comments change: codes merge into an existing directive, a directive is appended to
another comment (a `# type: ignore` must stay first), else `  # noqa: CODES` is added.
Lines whose end lies inside a string or that continue with a backslash are skipped (a
comment there would change the program). Diagnostics and notebook findings get none.
"""

from __future__ import annotations

import io
import os
import tokenize
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from snlint.files import read_source, write_atomic
from snlint.findings import Finding
from snlint.lines import lines_with_endings
from snlint.suppress import CODE_SEPARATOR, NOQA


def _scan(text: str) -> tuple[set[int], dict[int, tokenize.TokenInfo]]:
    """(rows whose end lies inside a string, row -> its comment token). Raises
    tokenize.TokenError / SyntaxError when the text does not tokenize."""
    inside: set[int] = set()
    comments: dict[int, tokenize.TokenInfo] = {}
    opened: list[int] = []  # rows where an f-string / t-string (3.12+ tokens) starts
    for tok in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
        name = tokenize.tok_name.get(tok.type, "")
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok
        elif name.endswith("STRING_START"):
            opened.append(tok.start[0])
        elif name.endswith("STRING_END") and opened:
            inside.update(range(opened.pop(), tok.end[0]))
        elif tok.start[0] < tok.end[0] and tok.type not in (tokenize.NEWLINE, tokenize.NL):
            inside.update(range(tok.start[0], tok.end[0]))
    return inside, comments


def _directive(codes: Iterable[str]) -> str:
    return "# noqa: " + ", ".join(sorted(set(codes)))


def _merged_comment(comment: str, codes: set[str]) -> str | None:
    """The comment with `codes` in its noqa directive; None when nothing changes."""
    match = NOQA.search(comment)
    if match is None:
        return f"{comment}  {_directive(codes)}"
    if match.group("colon") is None:  # a bare `# noqa` already silences the line
        return None
    if match.group("codes"):
        present = CODE_SEPARATOR.split(match.group("codes"))
        new = sorted(codes - set(present))
        if not new:
            return None
        joined = ", ".join([*present, *new])
        return comment[:match.start("codes")] + joined + comment[match.end("codes"):]
    # `# noqa:` with no code is no directive yet: give it the codes.
    rest = comment[match.end():]
    codes_text = ", ".join(sorted(codes))
    return (comment[:match.start("colon")] + ": " + codes_text
            + (" " + rest.lstrip() if rest.strip() else rest))


def add_noqa(text: str, codes_by_line: Mapping[int, Iterable[str]]) -> tuple[str, int]:
    """`text` with a noqa directive for the codes of each line, and how many lines
    changed. A text that does not tokenize is returned unchanged."""
    try:
        inside, comments = _scan(text)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return text, 0
    lines = lines_with_endings(text)
    changed = 0
    for row, codes in sorted(codes_by_line.items()):
        codes = set(codes)
        if not codes or row in inside or not 0 < row <= len(lines):
            continue
        content, ending = lines[row - 1]
        comment = comments.get(row)
        if comment is not None:
            start, end = comment.start[1], comment.end[1]
            new_comment = _merged_comment(content[start:end], codes)
            if new_comment is None:
                continue
            content = content[:start] + new_comment + content[end:]
        else:
            code = content.rstrip(" \t\f")
            if not code or code.endswith("\\"):
                continue
            trailing = len(content) - len(code)
            content = content + " " * max(0, 2 - trailing) + _directive(codes)
        lines[row - 1] = (content, ending)
        changed += 1
    return "".join(content + ending for content, ending in lines), changed


def codes_by_file(findings: Iterable[Finding]) -> dict[str, dict[int, set[str]]]:
    """path -> line -> the codes reported there (findings only, no notebook cells)."""
    out: dict[str, dict[int, set[str]]] = {}
    for f in findings:
        if f.is_diagnostic or f.cell is not None:
            continue
        out.setdefault(f.path, {}).setdefault(f.line, set()).add(f.code)
    return out


def write_noqa(findings: Iterable[Finding], sources: Mapping[str, str],
               max_size: int, report: Callable[[str], None]) -> int:
    """Add the directives to the files on disk; the number of directives added. A file
    that changed since it was linted is left alone, as is one that cannot be written
    (said with `report`)."""
    total = 0
    for path, codes in codes_by_file(findings).items():
        if path not in sources:
            continue
        absolute = Path(os.path.abspath(path))
        read = read_source(path, absolute, max_size)
        if isinstance(read, Finding) or read.text != sources[path]:
            continue
        new_text, changed = add_noqa(read.text, codes)
        if changed:
            try:
                write_atomic(absolute, new_text.encode(read.encoding))
            except OSError as e:
                report(f"snlint: cannot write {path}: {e.strerror or e}")
                continue
            total += changed
    return total


