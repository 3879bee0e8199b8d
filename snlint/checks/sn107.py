"""SN107 sn-never-applied: spectral norm that never reaches the weight the layer uses."""

from __future__ import annotations

from functools import partial
from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.checks.sn_applications import State, applications, linked_findings
from snlint.checks.sn_migration import Migrate, migrate, migration
from snlint.checks.verdicts import hook_sn_never_runs, measured, sigma_text
from snlint.findings import Finding


CODE = "SN107"


def check(model, emit: Emitter) -> Iterator[Finding]:
    source = (emit.finding(
        CODE, a.app.site,
        "hook-based spectral norm on MultiheadAttention.out_proj never runs: attention "
        "reads out_proj.weight directly, so the weight stays un-normalized",
        symbol=a.symbol)
        for a in applications(model) if hook_sn_never_runs(a.app.api, a.layer.bypassed))

    def built(st: State):
        m, state = st.leaf, st.state
        if st.index > 0:
            return None
        name = m.path.rpartition('.')[2]
        if hook_sn_never_runs(state.api, m.bypassed_forward):
            raw = f" (measured: {sigma_text(st.use.sigma)})" if measured(st.use) == "raw" else ""
            return state.site, (
                f"hook-based spectral norm on {m.type_name} `{name}` never "
                "runs: MultiheadAttention reads out_proj.weight directly, so the weight is never "
                f"normalized{raw}")
        if measured(st.use) == "raw":
            # The forward handed the layer's op its raw parameter: a wrapper that normalizes
            # into a local, or a forward that reads the weight around the hook.
            return state.site, (
                f"spectral norm on {m.type_name} `{m.path}` never reaches the weight it uses: it "
                f"computes with its raw weight: {sigma_text(st.use.sigma)} (measured in a forward)")
        return None
    return linked_findings(model, emit, CODE, source, built)


# This call moves (the file's other calls of the hook API are SN501's).
fix_input = partial(migration, whole_file=False)


def fix(finding: Finding, payload: Migrate, parsed):
    """The parametrizations API runs even where the owner reads the weight directly."""
    plan = migrate(finding, payload, parsed)
    if plan is not None:
        plan.message = ("Use the parametrizations API, which normalizes the layer even though "
                        "its owner reads the weight directly (the layer's output changes). "
                        + plan.message)
    return plan
