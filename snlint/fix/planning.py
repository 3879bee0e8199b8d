"""Which plan fixes a finding: the `fix` of the finding's rule module, where it has one."""

from __future__ import annotations

from typing import Callable

from snlint.checks.registry import fixers
from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import Plan
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
    return planner(finding, parsed, config)
