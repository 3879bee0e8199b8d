"""SN101 sn-on-normalization: spectral norm on a normalization layer."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.checks.fix_data import SNCall
from snlint.checks.sn_applications import (
    State, applications, filter_note, linked_findings, shape_text,
)
from snlint.checks.unwrap_sn import removal, remove_sn
from snlint.checks.verdicts import sn_on_normalization
from snlint.findings import Finding


CODE = "SN101"


def check(model, emit: Emitter) -> Iterator[Finding]:
    source = (emit.finding(
        CODE, a.app.site,
        f"spectral norm on {a.what}, a normalization layer{filter_note(a.app)}",
        evidence="It divides the affine weight vector by its L2 norm and bounds nothing.",
        symbol=a.symbol, data=SNCall(a.app.api, a.what, from_filter=a.app.from_filter))
        for a in applications(model) if sn_on_normalization(a.kind))

    def built(st: State):
        m, state = st.leaf, st.state
        if st.index == 0 and sn_on_normalization(m.kind):
            return state.site, (
                f"spectral norm on {m.type_name}: it divides the layer's affine {state.name} "
                f"(shape {shape_text(state.param_shape)}) by its norm; no Lipschitz bound results")
        return None
    return linked_findings(model, emit, CODE, source, built)


# SN101-SN103 share one fix (snlint.checks.unwrap_sn).
fix_input = removal
fix = remove_sn
