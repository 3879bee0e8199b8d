"""SN103 sn-applied-twice: one layer spectrally normalized twice."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.checks.fix_data import SNCall
from snlint.checks.sn_applications import State, applications, linked_findings
from snlint.checks.unwrap_sn import removal, remove_sn
from snlint.findings import Finding
from snlint.torchapi import SN_HOOK, SN_PARAM


CODE = "SN103"


def check(model, emit: Emitter) -> Iterator[Finding]:
    def source() -> Iterator[Finding]:
        for a in applications(model):
            app, layer, what = a.app, a.layer, a.what
            if a.index < 1:
                continue
            first = layer.sn[0]
            yield emit.finding(
                CODE, app.site,
                f"{what} is spectrally normalized twice: it already got SN at line "
                f"{first.site.span.line}"
                + (f" of {first.site.path}" if first.site.path != app.site.path else "")
                + (" (two parametrizations stack silently: two power iterations)" if app.api == first.api == SN_PARAM
                   else " (torch raises at construction)" if SN_HOOK in (app.api, first.api) else ""),
                symbol=a.symbol,
                data=SNCall(app.api, what, from_filter=app.from_filter, first_api=first.api))

    def built(st: State):
        if st.index == 0:
            return None
        m, state, first = st.leaf, st.state, st.leaf.sn[0]
        return state.site, (f"{m.type_name} is spectral-normalized twice ({first.api} then "
                            f"{state.api}): the second SN is redundant")
    return linked_findings(model, emit, CODE, source(), built)


# SN101-SN103 share one fix (snlint.checks.unwrap_sn).
fix_input = removal
fix = remove_sn
