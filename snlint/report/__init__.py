"""Output formats (README, "Usage"): concise, full, json, json-lines, github,
sarif."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from snlint.findings import Finding
# The machine formats are imported when asked for: a run prints one format, and the
# one-file path (an editor, a pre-commit hook) should not pay for the others.
from snlint.report.text import (
    fix_applies,
    render_concise,
    render_full,
    render_statistics,
    statistics,
    summary,
)

FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif")
TEXT_FORMATS = frozenset({"concise", "full"})
# The formats that carry each fix itself (its message and diff, or its edits); the
# others say only whether a finding has one, unless --show-fixes asks for more.
FIX_FORMATS = frozenset({"json", "json-lines", "sarif"})

__all__ = ["FIX_FORMATS", "FORMATS", "TEXT_FORMATS", "fix_applies", "render", "render_stats", "statistics",
           "summary"]


def render(findings: Iterable[Finding], fmt: str, sources: Mapping[str, str], *,
           color: bool = False, show_fixes: bool = False, unsafe_fixes: bool = False,
           root: Path | None = None, cleared: Iterable[Finding] = ()) -> str:
    """The findings in format `fmt`, without a trailing newline ("" when there are none
    in concise, full, json-lines and github; "[]" in json).

    `sources` maps a display path to its text (for the source lines `full` shows).
    `color` styles the text formats with ANSI codes. `[*]` marks a finding whose fix
    applies under the current settings: a safe fix, or an unsafe one with `unsafe_fixes`.
    `show_fixes` adds each fix and its diff under the finding in `concise`, and shows
    the diff of an unsafe fix that `unsafe_fixes` has not enabled in `full`.
    `root` is the project root SARIF URIs are relative to (default: the working folder).
    `cleared`: the source findings the graph pass cleared (`Finding.cleared_by`): json and
    json-lines list them among the findings, sarif as suppressed results; the other
    formats, which are read as what to act on, leave them out.
    """
    findings = list(findings)
    cleared = list(cleared)
    if fmt == "concise":
        return render_concise(findings, color=color, show_fixes=show_fixes,
                              unsafe_fixes=unsafe_fixes)
    if fmt == "full":
        return render_full(findings, sources, color=color, show_fixes=show_fixes,
                           unsafe_fixes=unsafe_fixes)
    if fmt == "json":
        from snlint.report.json import render_json

        return render_json(sorted(findings + cleared, key=Finding.sort_key))
    if fmt == "json-lines":
        from snlint.report.json import render_json_lines

        return render_json_lines(sorted(findings + cleared, key=Finding.sort_key))
    if fmt == "github":
        from snlint.report.github import render_github

        return render_github(findings)
    if fmt == "sarif":
        from snlint.report.sarif import render_sarif

        return render_sarif(findings + cleared, sources, root)
    raise ValueError(f"unknown output format {fmt!r} (expected one of {', '.join(FORMATS)})")


def render_stats(findings: Iterable[Finding], fmt: str, *, unsafe_fixes: bool = False) -> str:
    """`--statistics`: counts per code, most frequent first; a table, or JSON records
    `{"code", "name", "count", "fixable"}` for the json formats."""
    rows = statistics(findings, unsafe_fixes)
    if fmt in TEXT_FORMATS or fmt in ("github", "sarif"):  # a table is all they can say
        return render_statistics(rows)
    if fmt in ("json", "json-lines"):
        from snlint.report.json import render_rows

        return render_rows(rows, fmt)
    raise ValueError(f"unknown output format {fmt!r} (expected one of {', '.join(FORMATS)})")
