"""Which finding of a later lint is which finding of the first: what `--fix`'s rounds
match to fix only what the first lint announced (`snlint.fix.apply`).

A finding's line and column move when a fix above it adds or removes lines (an import,
a wrapper split over lines), so its identity is where it is *in the code*, not on the
page: its file (and notebook cell), its rule, its symbol (`Discriminator.net.3`, the
training function) and the text of its node with runs of whitespace made one space.
A fix that moves a node keeps all four; one that rewrites a node (wraps a layer in SN,
replaces a norm) changes the text, so a finding at the rewritten node is another
finding. Findings that share all four (the same layer built twice in one loop) are
counted: the first lint's count of an identity is how many of them the rounds may fix.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from snlint.findings import Finding, Span
from snlint.lines import split_lines

Identity = tuple[str, int, str, str, str]  # path, cell (0: none), code, symbol, node text


def text_at(text: str, span: Span, lines: list[str] | None = None) -> str:
    """The source text of a span (1-based lines and columns, end exclusive); `lines`:
    `split_lines(text)`, when the caller has them."""
    lines = split_lines(text) if lines is None else lines
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
    `texts` (path -> the text the findings were linted from). Each file is split into
    lines once."""
    lines: dict[str, list[str]] = {}
    out: dict[int, Identity] = {}
    for f in findings:
        if f.is_diagnostic:
            continue
        split = lines.get(f.path)
        if split is None:
            split = lines[f.path] = split_lines(texts.get(f.path, ""))
        # A notebook's spans are within a cell, not the joined text: its node text is
        # read all the same (the same wrong place each round), the cell keeps it apart.
        node = " ".join(text_at("", f.span, split).split())
        out[id(f)] = (f.path, f.cell or 0, f.code, f.symbol or "", node)
    return out


def beyond(findings: Iterable[Finding], texts: Mapping[str, str],
           first: Counter) -> list[Finding]:
    """The findings (in order) that no finding of the first lint accounts for: `first`
    counts that lint's identities, and each of them accounts for one finding here, with
    its identity, else (a fix rewrote part of its node: SN on a Sequential whose conv a
    fix wrapped) with its file, rule and symbol. Notebook findings are left out (their
    identity is approximate)."""
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
