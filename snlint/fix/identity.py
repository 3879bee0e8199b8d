"""Which finding of a later lint is which finding of the first, for `--fix`'s rounds.

A fix above a finding moves its line, so its identity is where it is in the code: its
file (and cell), rule, symbol and node text with whitespace runs made one space. A fix
that rewrites the node makes another finding. Findings sharing an identity are counted.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from snlint.findings import Finding, Span
from snlint.lines import split_lines

Identity = tuple[str, int, str, str, str]  # path, cell (0: none), code, symbol, node text


def text_at(lines: list[str], span: Span) -> str:
    """The source text of a span (1-based lines and columns, end exclusive) in the file's
    `lines` (`split_lines`)."""
    if not 1 <= span.line <= len(lines) or span.end_line > len(lines):
        return ""
    if span.line == span.end_line:
        return lines[span.line - 1][span.column - 1:span.end_column - 1]
    parts = [lines[span.line - 1][span.column - 1:]]
    parts += lines[span.line:span.end_line - 1]
    parts.append(lines[span.end_line - 1][:span.end_column - 1])
    return "".join(parts)


def identities(findings: Iterable[Finding], texts: Mapping[str, str]) -> dict[int, Identity]:
    """id(finding) -> its identity, for each finding that is not a diagnostic, read in
    `texts` (path -> the text the findings were linted from)."""
    lines: dict[str, list[str]] = {}
    out: dict[int, Identity] = {}
    for f in findings:
        if f.is_diagnostic:
            continue
        split = lines.get(f.path)
        if split is None:
            split = lines[f.path] = split_lines(texts.get(f.path, ""))
        # A notebook's spans are within a cell: its node text is wrong, but the same
        # each round, and the cell keeps it apart.
        node = " ".join(text_at(split, f.span).split())
        out[id(f)] = (f.path, f.cell or 0, f.code, f.symbol or "", node)
    return out


def beyond(findings: Iterable[Finding], texts: Mapping[str, str],
           first: Counter) -> list[Finding]:
    """The findings (in order) that no finding of the first lint (`first`: its identities,
    counted) accounts for, by identity, else (a fix rewrote part of its node) by file,
    rule and symbol. Notebook findings are left out."""
    left = Counter(first)
    loose = Counter(key[:4] for key in first.elements())
    keys = identities(findings, texts)
    unmatched = []
    for f in findings:
        key = keys.get(id(f))
        if key is None or f.cell is not None:
            continue
        if left[key] > 0:
            left[key] -= 1
            loose[key[:4]] -= 1
        else:
            unmatched.append(f)
    out = []
    for f in unmatched:
        key = keys[id(f)][:4]
        if loose[key] > 0:
            loose[key] -= 1
        else:
            out.append(f)
    return out
