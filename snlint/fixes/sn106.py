"""SN106's fix: initialize the parametrization's `original`, the trained parameter, not the
weight it recomputes."""

from __future__ import annotations

import libcst as cst

from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import SAFE, Plan
from snlint.findings import Finding
from snlint.fixes.sn_migration import init_target, original_of


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    call = parsed.node(finding.node, cst.Call)
    if call is None:
        return None
    param = finding.get("param") or "weight"
    target = init_target(parsed, call, [param])
    if target is None:
        return None
    where = parsed.code(target.value)
    plan = Plan(finding.code, SAFE,
                f"Initialize `{where}.parametrizations.{param}.original` (the trained parameter) "
                f"instead of `{where}.{param}`, which is recomputed on every access; state_dict "
                f"keys do not change")
    return plan.replace(target, original_of(target, param))
