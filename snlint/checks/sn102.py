"""SN102 sn-on-weightless-layer: spectral norm on a layer without a weight matrix."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.checks.fix_data import SNCall
from snlint.checks.sn_applications import (
    State, applications, filter_note, linked_findings, on_a_vector, shape_text,
)
from snlint.checks.unwrap_sn import removal, remove_sn
from snlint.checks.verdicts import sn_on_normalization, sn_without_weight_matrix
from snlint.findings import Finding


CODE = "SN102"


def check(model, emit: Emitter) -> Iterator[Finding]:
    """SN on a layer without a weight matrix (an activation, a container, a 1-D weight)."""
    def source() -> Iterator[Finding]:
        for a in applications(model):
            kind, what = a.kind, a.what
            if sn_on_normalization(kind) or not sn_without_weight_matrix(
                    kind, has_weight=a.layer.has_weight):
                continue
            detail = {
                "activation": "an activation",
                "container": "a container (SN must go on the conv/linear layers inside it)",
            }.get(kind, "a module without a weight matrix")
            if what == "PReLU":
                detail = "PReLU, whose 1-D slope SN scales to unit norm, turning it into identity or |x|"
            elif kind == "module":
                detail = "a module without a weight of its own (SN must go on its conv/linear layers)"
            yield emit.finding(CODE, a.app.site, f"spectral norm on {what}: {detail}{filter_note(a.app)}",
                              symbol=a.symbol,
                              data=SNCall(a.app.api, what, kind, a.app.from_filter))

    def built(st: State):
        m, state, ndim = st.leaf, st.state, st.ndim
        if st.index > 0 or sn_on_normalization(m.kind) or on_a_vector(st):
            return None
        if sn_without_weight_matrix(m.kind, weight_ndim=ndim):
            what = ("has a 1-D weight (shape " + shape_text(state.param_shape)
                    + "): SN scales it to unit norm") if ndim is not None and ndim <= 1 else (
                "has no weight matrix")
            return state.site, f"spectral norm on {m.type_name}, which {what}"
        return None
    return linked_findings(model, emit, CODE, source(), built)


# SN101-SN103 share one fix (snlint.checks.unwrap_sn).
fix_input = removal
fix = remove_sn
