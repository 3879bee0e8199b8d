"""Which plan fixes a finding: the `fix` of the finding's rule module, where it has one."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable

from snlint.checks.registry import fixers
from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import Plan
from snlint.facts import Names
from snlint.findings import Finding

Planners = dict[str, Callable[[Finding, ParsedFile, Config], "Plan | None"]]


def plan_for(finding: Finding, parsed: ParsedFile, config: Config,
             planners_by_code: Planners | None = None) -> Plan | None:
    """The fix for `finding` in the parsed file, or None."""
    if finding.cell is not None:
        return None  # notebook cells: positions are within a cell, not the file
    planner = (planners_by_code if planners_by_code is not None else fixers()).get(finding.code)
    if planner is None:
        return None
    if finding.node is None:
        # A location the graph pass reported is a position: the fix is at the node the
        # source pass read there, and there is none when it read nothing there.
        index = parsed.names.facts.sites.get(finding.span)
        if index is None:
            return None
        finding = finding.with_(span=replace(finding.span, node=index))
    return planner(finding, parsed, config)


def names_of(findings: Iterable[Finding]) -> Names | None:
    """The names the findings of one file were linted with (one lint: the same for all)."""
    return next((f.names for f in findings if f.names is not None), None)
