"""SN104 sn-wrong-parameter: spectral norm on a parameter other than the weight matrix."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from snlint.checks.emit import Emitter
from snlint.checks.sn_applications import (
    State, applications, linked_findings, on_a_vector, shape_text,
)
from snlint.checks import fixable as at
from snlint.checks.unwrap_sn import sn_call, sn_call_fact
from snlint.checks.verdicts import sn_off_the_weight
from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import SAFE, Plan
from snlint.edit.syntax import has_star, keyword, positional, remove_arg
from snlint.facts import FileFacts
from snlint.findings import Finding
from snlint.torchapi import SN_HOOK


CODE = "SN104"


def check(model, emit: Emitter) -> Iterator[Finding]:
    """SN on a parameter other than the weight matrix."""
    source = (emit.finding(
        CODE, a.app.site,
        f"spectral norm on {a.what}.{a.app.name}, not on its weight matrix: a 1-D parameter "
        f"is just divided by its L2 norm",
        symbol=a.symbol, data={"api": a.app.api})
        for a in applications(model) if sn_off_the_weight(a.kind, a.app.name))

    def built(st: State):
        m, state = st.leaf, st.state
        if st.index == 0 and on_a_vector(st):
            return state.site, (f"spectral norm on `{state.name}` of {m.type_name} (shape "
                                f"{shape_text(state.param_shape)}), not its weight matrix"), st.data
        return None
    return linked_findings(model, emit, CODE, source, built)


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


def fixable(finding: Finding, facts: FileFacts, config: Config) -> str | None:
    """`fix`'s applicability, read from the file's facts (`snlint.checks.fixable`)."""
    _, _, call = sn_call_fact(finding, facts)
    if call is None or at.has_star(call):
        return None
    pos = call.positional()
    return SAFE if call.keyword("name") is not None or len(pos) >= 2 else None
