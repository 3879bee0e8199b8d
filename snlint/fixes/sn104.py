"""SN104's fix: drop the `name=` that puts spectral norm on a parameter other than the
weight matrix, so it normalizes `weight`, its default."""

from __future__ import annotations

import libcst as cst

from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import SAFE, Plan
from snlint.edit.syntax import has_star, keyword, positional, remove_arg
from snlint.findings import Finding
from snlint.fixes.unwrap_sn import sn_call
from snlint.torchapi import SN_HOOK


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    call = sn_call(finding, parsed)
    if call is None or has_star(call):
        return None
    name_arg = keyword(call, "name")
    pos = positional(call)
    if name_arg is None and len(pos) >= 2:
        name_arg = pos[1]
    if name_arg is None:
        return None
    old = parsed.code(name_arg.value)
    api = finding.get("api")
    keys = ("`weight_orig`, `weight_u`, `weight_v` instead of `bias_orig`, `bias_u`, `bias_v`"
            if api == SN_HOOK else
            "`bias`, `parametrizations.weight.original`, `parametrizations.weight.0._u` and `._v` "
            "instead of `weight` and `parametrizations.bias.original`")
    message = f"Drop name={old} so spectral norm normalizes `weight`, its default; state_dict keys change ({keys})"
    plan = Plan(finding.code, SAFE, message)
    if name_arg.keyword is None and pos.index(name_arg) < len(pos) - 1:
        # Positional, with more positional arguments after it: name the weight instead.
        value = name_arg.value
        quote = value.value[0] if isinstance(value, cst.SimpleString) and value.value[0] in "'\"" else '"'
        new = cst.SimpleString(f"{quote}weight{quote}", lpar=value.lpar, rpar=value.rpar)
        plan.message = f"Normalize `weight` instead of {old}; state_dict keys change ({keys})"
        return plan.replace(value, new)
    return plan.replace(call, remove_arg(call, name_arg))
