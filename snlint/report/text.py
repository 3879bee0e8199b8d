"""Text formats for people, in ruff's layout: `concise` (one line per finding,
`models/d.py:3:6: SN101 [*] message`) and `full` (with the source lines under a caret,
the discriminator, and the fix).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping

import click

from snlint.findings import Finding
from snlint.lines import line_texts

# C0 controls and DEL other than tab: shown as "?" so a source line cannot drive the terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TAB_WIDTH = 4
# A span over more lines than this shows its first lines and an ellipsis.
_MAX_SPAN_LINES = 6

_SEVERITY_COLOR = {"error": "red", "warning": "yellow", "info": "cyan"}


def fix_applies(finding: Finding, unsafe_fixes: bool) -> bool:
    """Whether the finding's fix is available under the current settings (ruff's `[*]`)."""
    return finding.fix is not None and finding.fix.applies(unsafe_fixes)


def location(finding: Finding) -> str:
    """`path:line:col`, or `path:cell N:line:col` for a notebook cell."""
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{finding.path}:{cell}{finding.line}:{finding.column}"


def printable(text: str) -> str:
    """`text` with U+FFFD for the lone surrogates of a file name that is not UTF-8, so the
    output stays UTF-8."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def one_line(text: str) -> str:
    """A message on one line (a parser's message may span several)."""
    return " ".join(part.strip() for part in line_texts(text) if part.strip())


def header(finding: Finding, *, color: bool = False, unsafe_fixes: bool = False) -> str:
    """The concise line: `path:line:col: CODE [*] message`."""
    where, code = location(finding), finding.code
    if color:
        where = click.style(where, bold=True)
        code = click.style(code, fg=_SEVERITY_COLOR.get(finding.severity), bold=True)
    mark = " [*]" if fix_applies(finding, unsafe_fixes) else ""
    return f"{where}: {code}{mark} {one_line(finding.message)}{finding.via()}"


def render_concise(findings: Iterable[Finding], *, color: bool = False,
                   show_fixes: bool = False, unsafe_fixes: bool = False) -> str:
    lines: list[str] = []
    for finding in findings:
        lines.append(header(finding, color=color, unsafe_fixes=unsafe_fixes))
        if show_fixes:
            lines.extend("  " + line for line in _evidence_lines(finding))
        if show_fixes and finding.fix is not None:
            lines.extend("  " + line for line in _fix_lines(finding, color, with_diff=True))
    return "\n".join(lines)


def render_full(findings: Iterable[Finding], sources: Mapping[str, str], *,
                color: bool = False, show_fixes: bool = False,
                unsafe_fixes: bool = False) -> str:
    blocks = []
    split_cache: dict[str, list[str]] = {}
    for finding in findings:
        lines = [header(finding, color=color, unsafe_fixes=unsafe_fixes)]
        source_lines = _source_lines(finding, sources, split_cache)
        notes = _note_lines(finding, color, unsafe_fixes, show_fixes)
        if source_lines is not None:
            lines.extend(_snippet(finding, source_lines, color, notes))
        elif notes:
            lines.extend("  " + note for note in notes)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _source_lines(finding: Finding, sources: Mapping[str, str],
                  cache: dict[str, list[str]]) -> list[str] | None:
    # A notebook finding's lines count within its cell (`notebook.cell_key`).
    key = finding.path if finding.cell is None else f"{finding.path}:cell {finding.cell}"
    text = sources.get(key)
    if text is None:
        return None
    if key not in cache:
        cache[key] = line_texts(text)
    lines = cache[key]
    if not 1 <= finding.line <= len(lines):
        return None
    return lines


def _width(text: str) -> int:
    """Terminal columns of `text` (tabs already expanded): wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else
               0 if unicodedata.combining(ch) else 1 for ch in text)


def _display(line: str) -> str:
    return _CONTROL.sub("?", line.expandtabs(_TAB_WIDTH))


def _snippet(finding: Finding, lines: list[str], color: bool, notes: list[str]) -> list[str]:
    first = finding.line
    last = min(max(finding.end_line, first), len(lines))
    if last - first + 1 > _MAX_SPAN_LINES:
        shown = list(range(first, first + _MAX_SPAN_LINES - 1))
        elided = True
    else:
        shown = list(range(first, last + 1))
        elided = False
    gutter = len(str(shown[-1]))
    pad = " " * gutter
    bar = f"{pad} |"

    line = lines[first - 1]
    # The caret runs from the column to the end column on a one-line span, and to the end
    # of the first line on a multi-line span; a zero-width span still gets one caret.
    start = min(max(finding.column, 1) - 1, len(line))
    end = finding.end_column - 1 if finding.end_line == first else len(line)
    end = min(max(end, start), len(line))
    offset = _width(_display(line[:start]))
    length = max(_width(_display(line[:end])) - offset, 1)
    caret = "^" * length + " " + finding.code
    if color:
        caret = click.style(caret, fg=_SEVERITY_COLOR.get(finding.severity), bold=True)

    out = [bar, f"{first:>{gutter}} | {_display(line)}".rstrip(), f"{bar} {' ' * offset}{caret}"]
    for number in shown[1:]:
        out.append(f"{number:>{gutter}} | {_display(lines[number - 1])}".rstrip())
    if elided:
        out.append(f"{pad} | ...")
    out.append(bar)
    out.extend(f"{pad} {note}" for note in notes)
    return out


def _evidence_lines(finding: Finding) -> list[str]:
    """What the one-line message leaves out: the discriminator and the evidence."""
    notes = []
    ref = finding.discriminator
    if ref is not None:
        detail = "".join(f"; {part}" for part in (ref.detail, ref.via) if part)
        notes.append(f"= discriminator: {ref.cls} (by {ref.evidence}{detail})")
    if finding.evidence:
        notes.append(f"= evidence: {one_line(finding.evidence)}")
    return notes


def _note_lines(finding: Finding, color: bool, unsafe_fixes: bool, show_fixes: bool) -> list[str]:
    notes = _evidence_lines(finding)
    notes.extend(f"= via {r.path}:{r.span.line}:{r.span.column}" + (f": {r.message}" if r.message else "")
                 for r in finding.related)
    if finding.fix is not None:
        # An unsafe fix that --unsafe-fixes has not enabled is named, and its diff shown
        # only on request (--show-fixes), as ruff hides the fixes it would not apply.
        with_diff = show_fixes or fix_applies(finding, unsafe_fixes)
        notes.extend(_fix_lines(finding, color, with_diff=with_diff,
                                hidden=not fix_applies(finding, unsafe_fixes)))
    return notes


def _fix_lines(finding: Finding, color: bool, *, with_diff: bool, hidden: bool = False) -> list[str]:
    fix = finding.fix
    assert fix is not None
    label = f"= fix ({fix.applicability}"
    label += ", enable with --unsafe-fixes): " if hidden else "): "
    if not fix.built:
        return [label + "--show-fixes shows it"]
    out = [label + one_line(fix.message)]
    if with_diff and fix.diff:
        for line in fix.diff.rstrip("\n").split("\n"):
            line = line.rstrip("\r")
            if color and line.startswith("+") and not line.startswith("+++"):
                line = click.style(line, fg="green")
            elif color and line.startswith("-") and not line.startswith("---"):
                line = click.style(line, fg="red")
            out.append(f"    {line}".rstrip())
    return out


def plural(count: int, word: str) -> str:
    if count == 1 or word == "info":
        return f"{count} {word}"
    return f"{count} {word}s"


def summary(findings: Iterable[Finding], unsafe_fixes: bool = False, *, fixed: int = 0,
            new: int = 0) -> str:
    """ruff's closing lines: what was found, and how much `--fix` would fix (unsafe fixes
    counted apart without `unsafe_fixes`). After `--fix` made `fixed` fixes, `findings`
    are what remains, `new` of them made by the fixes."""
    findings = list(findings)
    if not findings and not fixed:
        return "All checks passed!"
    by_severity = Counter(f.severity for f in findings)
    parts = [plural(by_severity[sev], sev) for sev in ("error", "warning", "info")
             if by_severity[sev]]
    parts += [plural(n, sev) for sev, n in sorted(by_severity.items())
              if sev not in ("error", "warning", "info")]
    if fixed:
        remaining = f"{len(findings)} remaining" + (f": {', '.join(parts)}" if parts else "")
        lines = [f"Found {plural(fixed + len(findings), 'finding')} ({fixed} fixed, {remaining})."]
    else:
        lines = [f"Found {plural(len(findings), 'finding')} ({', '.join(parts)})."]
    if new:
        lines.append(f"{plural(new, 'finding')} appeared because of the fixes and "
                     f"{'was' if new == 1 else 'were'} not fixed: review {'it' if new == 1 else 'them'}.")

    fixable = sum(1 for f in findings if fix_applies(f, unsafe_fixes))
    hidden = sum(1 for f in findings if f.fix is not None and not fix_applies(f, unsafe_fixes))
    if fixable:
        more = f" ({hidden} more with --unsafe-fixes)" if hidden else ""
        lines.append(f"[*] {fixable} fixable with --fix{more}.")
    elif hidden:
        lines.append(f"No fixes available ({hidden} with --unsafe-fixes).")
    return "\n".join(lines)


def statistics(findings: Iterable[Finding], unsafe_fixes: bool = False) -> list[dict]:
    """Counts per code, most frequent first (ties by code)."""
    counts: Counter[str] = Counter()
    names: dict[str, str] = {}
    fixable: dict[str, bool] = {}
    for f in findings:
        counts[f.code] += 1
        names[f.code] = f.name
        fixable[f.code] = fixable.get(f.code, False) or fix_applies(f, unsafe_fixes)
    return [{"code": code, "name": names[code], "count": count, "fixable": fixable[code]}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def render_statistics(rows: list[dict]) -> str:
    """`count  code  name [*]`, columns aligned."""
    if not rows:
        return ""
    count_width = max(len(str(row["count"])) for row in rows)
    code_width = max(len(row["code"]) for row in rows)
    lines = []
    for row in rows:
        mark = " [*]" if row["fixable"] else ""
        lines.append(f"{row['count']:>{count_width}}  {row['code']:<{code_width}}  {row['name']}{mark}")
    return "\n".join(lines)
