"""SN107's fix: move the hook spectral norm to the parametrizations API, which runs
even where the owner reads the weight directly."""

from __future__ import annotations

from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import Plan
from snlint.findings import Finding
from snlint.fixes.sn_migration import migrate


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    plan = migrate(finding, parsed, whole_file=False)
    if plan is not None:
        plan.message = ("Use the parametrizations API, which normalizes the layer even though "
                        "its owner reads the weight directly (the layer's output changes). "
                        + plan.message)
    return plan
