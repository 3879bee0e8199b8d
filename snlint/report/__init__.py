"""Output formats (README, "Usage"): concise, full, json, json-lines, github, sarif."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from snlint.findings import Finding
# The machine formats are imported when asked for: a one-file run (an editor, a
# pre-commit hook) should not pay for the others.
from snlint.report.text import render_concise, render_full, render_statistics, statistics, summary

FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif")
TEXT_FORMATS = frozenset({"concise", "full"})
# The formats that carry each fix itself (its message and diff, or its edits); the
# others say only whether a finding has one, unless --show-fixes asks for more.
FIX_FORMATS = frozenset({"json", "json-lines", "sarif"})

__all__ = ["FIX_FORMATS", "FORMATS", "TEXT_FORMATS", "render", "render_stats", "summary"]


def render(findings: Iterable[Finding], fmt: str, sources: Mapping[str, str], *,
           color: bool = False, show_fixes: bool = False, unsafe_fixes: bool = False,
           root: Path | None = None, cleared: Iterable[Finding] = ()) -> str:
    """The findings in format `fmt`, without a trailing newline.

    `sources`: display path -> text (the source lines `full` shows). `show_fixes` adds
    each fix and its diff (in `full`, the diff of an unsafe fix not enabled). `root`: what
    SARIF URIs are relative to. `cleared`: the findings the graph pass cleared, listed by
    json and json-lines, suppressed results in sarif, left out by the formats read as
    what to act on.
    """
    findings = list(findings)
    cleared = list(cleared)
    if fmt == "concise":
        return render_concise(findings, color=color, show_fixes=show_fixes,
                              unsafe_fixes=unsafe_fixes)
    if fmt == "full":
        return render_full(findings, sources, color=color, show_fixes=show_fixes,
                           unsafe_fixes=unsafe_fixes)
    if fmt in ("json", "json-lines"):
        from snlint.report.json import render_rows

        return render_rows([f.to_dict() for f in sorted(findings + cleared, key=Finding.sort_key)],
                           fmt)
    if fmt == "github":
        from snlint.report.github import render_github

        return render_github(findings)
    if fmt == "sarif":
        from snlint.report.sarif import render_sarif

        return render_sarif(findings + cleared, sources, root)
    raise ValueError(f"unknown output format {fmt!r} (expected one of {', '.join(FORMATS)})")


def render_stats(findings: Iterable[Finding], fmt: str, *, unsafe_fixes: bool = False) -> str:
    """`--statistics`: counts per code, most frequent first, as a table or JSON records."""
    rows = statistics(findings, unsafe_fixes)
    if fmt in TEXT_FORMATS or fmt in ("github", "sarif"):  # a table is all they can say
        return render_statistics(rows)
    if fmt in ("json", "json-lines"):
        from snlint.report.json import render_rows

        return render_rows(rows, fmt)
    raise ValueError(f"unknown output format {fmt!r} (expected one of {', '.join(FORMATS)})")
