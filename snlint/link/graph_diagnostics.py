"""The graph pass's own diagnostics (SN910-SN913): what it could not import, build or trace.

Parent side: plain data in, findings out; no torch.
"""

from __future__ import annotations

import os
from typing import Callable

from snlint.findings import Finding, Location, Span, diagnostic
from snlint.graph.facts import Site, TargetFacts

DisplayFor = Callable[[str], "str | None"]


def _span(site: Site) -> Span:
    return Span(site.line, site.column, site.end_line, site.end_column)


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def target_diagnostics(facts: TargetFacts, display_for: DisplayFor, fallback: Location) -> list[Finding]:
    """SN910-SN913. Import failures concern the file, not a class: they sit at the failing
    line (or 1:1) with the same message for every class of the file, so they compare equal
    and deduplicate."""
    target = facts.target
    path, span = fallback.path, fallback.span
    if facts.status == "import_error":
        site, where, span = facts.error_site, "", Span(1, 1, 1, 1)
        if site is not None and _same_file(site.file, target.file):
            span = _span(site)
        elif site is not None:
            shown = display_for(site.file)
            where = f" (at {shown}:{site.line})" if shown else ""
        return [diagnostic("SN910", path, f"graph pass: importing {target.display} failed: "
                                          f"{facts.message}{where}", span)]
    if facts.status == "timeout":
        if facts.message.startswith("importing "):  # the runner's words for a hung import
            span = Span(1, 1, 1, 1)
        return [diagnostic("SN911", path, f"graph pass: {facts.message}", span)]
    if facts.status == "build_error":
        site, where = facts.error_site, ""
        shown = display_for(site.file) if site is not None else None
        if shown:
            where = f" (at {shown}:{site.line})"
        # What was tried (and the [tool.snlint.models] entry that would help) follows
        # the last error and where it was raised.
        tried = f"; {facts.built_with}" if facts.built_with else ""
        return [diagnostic("SN912", path, f"graph pass: cannot build {target.class_name}: "
                                          f"{facts.message}{where}{tried}", span)]
    if not facts.trace_ok:
        return [diagnostic("SN913", path, f"graph pass: torch.fx cannot trace "
                                          f"{target.class_name}: {facts.trace_reason}; module "
                                          "facts and the probe still ran", span)]
    return []
