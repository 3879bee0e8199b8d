"""SN104 sn-wrong-parameter: spectral norm on a parameter other than the weight matrix."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.checks.sn_applications import (
    State, applications, linked_findings, on_a_vector, shape_text,
)
from snlint.checks import fixable as at
from snlint.checks.unwrap_sn import sn_call_fact
from snlint.checks.verdicts import sn_off_the_weight
from snlint.config import Config
from snlint.facts import FileFacts
from snlint.findings import SAFE, Finding


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


def fixable(finding: Finding, facts: FileFacts, config: Config) -> str | None:
    """The applicability of the fix (`snlint.fixes.sn104`), read from the file's facts
    (`snlint.checks.fixable`)."""
    _, _, call = sn_call_fact(finding, facts)
    if call is None or at.has_star(call):
        return None
    pos = call.positional()
    return SAFE if call.keyword("name") is not None or len(pos) >= 2 else None
