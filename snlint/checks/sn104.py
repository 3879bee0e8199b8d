"""SN104 sn-wrong-parameter: spectral norm on a parameter other than the weight matrix."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.checks.fix_data import SNCall
from snlint.checks.sn_applications import (
    State, applications, linked_findings, on_a_vector, shape_text,
)
from snlint.checks import at_node as at
from snlint.checks.unwrap_sn import sn_call_fact
from snlint.checks.verdicts import sn_off_the_weight
from snlint.config import Config
from snlint.facts import FileFacts
from snlint.findings import SAFE, Finding, record
from snlint.torchapi import SN_HOOK


CODE = "SN104"


def check(model, emit: Emitter) -> Iterator[Finding]:
    source = (emit.finding(
        CODE, a.app.site,
        f"spectral norm on {a.what}.{a.app.name}, not on its weight matrix: a 1-D parameter "
        f"is just divided by its L2 norm",
        symbol=a.symbol, data=SNCall(a.app.api))
        for a in applications(model) if sn_off_the_weight(a.kind, a.app.name))

    def built(st: State):
        m, state = st.leaf, st.state
        if st.index == 0 and on_a_vector(st):
            return state.site, (f"spectral norm on `{state.name}` of {m.type_name} (shape "
                                f"{shape_text(state.param_shape)}), not its weight matrix")
        return None
    return linked_findings(model, emit, CODE, source, built)


@record
class NormalizeWeight:
    """SN104's fix: the SN call's `name` argument goes, so SN normalizes `weight`, its
    default; a positional one with more after it becomes `"weight"` (`rename`)."""

    arg: int
    rename: bool
    api: str | None  # the SN call's API: which state_dict keys change
    applicability = SAFE


def fix_input(finding: Finding, facts: FileFacts, config: Config) -> NormalizeWeight | None:
    _, _, call = sn_call_fact(finding, facts)
    if call is None or at.has_star(call):
        return None
    pos = call.positional()
    name_arg = call.keyword("name") or (pos[1] if len(pos) >= 2 else None)
    if name_arg is None:
        return None
    rename = name_arg.keyword is None and pos[-1] is not name_arg
    return NormalizeWeight(name_arg.span.node, rename, finding.data.api)


def fix(finding: Finding, payload: NormalizeWeight, parsed):
    import libcst as cst

    from snlint.edit.plan import Plan
    from snlint.edit.syntax import remove_arg

    name_arg = parsed.node(payload.arg, cst.Arg)
    if name_arg is None:
        return None
    old = parsed.code(name_arg.value)
    keys = ("`weight_orig`, `weight_u`, `weight_v` instead of `bias_orig`, `bias_u`, `bias_v`"
            if payload.api == SN_HOOK else
            "`bias`, `parametrizations.weight.original`, `parametrizations.weight.0._u` and `._v` "
            "instead of `weight` and `parametrizations.bias.original`")
    if payload.rename:
        value = name_arg.value
        quote = value.value[0] if isinstance(value, cst.SimpleString) and value.value[0] in "'\"" else '"'
        new = cst.SimpleString(f"{quote}weight{quote}", lpar=value.lpar, rpar=value.rpar)
        plan = Plan(finding.code, payload.applicability,
                    f"Normalize `weight` instead of {old}; state_dict keys change ({keys})")
        return plan.replace(value, new)
    plan = Plan(finding.code, payload.applicability,
                f"Drop name={old} so spectral norm normalizes `weight`, its default; state_dict keys change ({keys})")
    return plan.replace(*remove_arg(parsed, name_arg))
