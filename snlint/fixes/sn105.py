"""SN105's fix: drop the `dim=` off the layer's output axis, so the API's default applies."""

from __future__ import annotations

import libcst as cst

from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import SAFE, Plan
from snlint.edit.syntax import positional, remove_arg
from snlint.findings import Finding


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    arg = parsed.node(finding.node, cst.Arg)
    if arg is None:
        return None
    call = parsed.parent(arg)
    if not isinstance(call, cst.Call):
        return None
    pos = positional(call)
    if arg.keyword is None and (arg not in pos or pos.index(arg) != len(pos) - 1):
        return None
    if arg.keyword is not None and arg.keyword.value != "dim":
        return None
    plan = Plan(finding.code, SAFE,
                f"Drop {parsed.code(arg).strip().rstrip(',')} so the API's default, the layer's output "
                f"axis, applies; state_dict keys stay, the u/v vectors change shape (drop them "
                f"from old checkpoints)")
    return plan.replace(call, remove_arg(call, arg))
