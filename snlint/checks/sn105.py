"""SN105 sn-wrong-dim: spectral norm estimating sigma for the wrong matrix shape."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.checks.sn_applications import State, applications, linked_findings, on_a_vector
from snlint.checks.verdicts import (
    measured, sigma_text, sn_dim_off_output_axis, sn_on_normalization, sn_without_weight_matrix,
)
from snlint.config import Config
from snlint import facts as F
from snlint.checks import at_node as at
from snlint.findings import SAFE, Finding, record
from snlint.torchapi import SN_HOOK, SN_PARAM, default_sn_dim


CODE = "SN105"


def check(model, emit: Emitter) -> Iterator[Finding]:
    """SN estimating sigma for the wrong matrix shape: a dim= off the output axis, or a
    hand-written reshape along dim 0 of a transposed conv."""
    def source() -> Iterator[Finding]:
        for a in applications(model):
            app, layer, what, kind = a.app, a.layer, a.what, a.kind
            axis = default_sn_dim(what if layer.base_type is None else layer.base_type)
            if sn_dim_off_output_axis(kind, app.dim, axis, layer.kernel_1x1):
                yield emit.finding(
                    CODE, app.dim_arg or app.site,
                    f"dim={app.dim} on {what}: its output axis is dim {axis}, so σ is estimated "
                    f"for the wrong matrix shape",
                    symbol=a.symbol)
            if app.reshape is not None and kind == "conv_transpose":
                yield emit.finding(
                    CODE, app.reshape,
                    f"{app.callee} flattens the weight along dim 0, but {what}'s output axis is "
                    f"dim 1: σ is estimated for the wrong matrix shape",
                    symbol=a.symbol)

    # Hand-written SN the source already reports at its reshape: the measurement is the
    # same mistake, one finding.
    reshaped = {a.app.site for a in applications(model)
                if a.app.reshape is not None and a.kind == "conv_transpose"}
    reported = {id(state) for runtime in model.runtime.values() for m in runtime.facts.modules
                for state in m.sn if state.site is not None and runtime.locate(state.site) in reshaped}

    def built(st: State):
        m, state, ndim = st.leaf, st.state, st.ndim
        if (st.index == 0 and state.api not in (SN_HOOK, SN_PARAM)
                and measured(st.use) == "wrong_axis" and id(state) not in reported):
            return state.site, (
                f"spectral norm of {m.type_name} `{m.path}` normalizes its weight along dim 0, "
                f"its input axis: measured {sigma_text(st.use.sigma_dim0)} flattened along dim 0, "
                f"{sigma_text(st.use.sigma)} along its output axis, dim 1")
        if (st.index > 0 or sn_on_normalization(m.kind) or on_a_vector(st)
                or sn_without_weight_matrix(m.kind, weight_ndim=ndim)
                or state.api not in (SN_HOOK, SN_PARAM) or ndim is None or ndim < 3):
            return None
        default = 1 if m.kind == "conv_transpose" else 0
        kernel = 1
        for size in (state.param_shape or ())[2:]:
            kernel *= size
        if sn_dim_off_output_axis(m.kind, state.dim, default, kernel == 1):
            return state.dim_site or state.site, (
                f"spectral norm of {m.type_name} with dim={state.dim}; its output axis is dim "
                f"{default}, and this dim changes the estimated sigma")
        return None
    return linked_findings(model, emit, CODE, source(), built)


@record
class DropDim:
    """SN105's fix: drop the `dim=` argument, so the API's default, the output axis, applies."""

    arg: int
    applicability = SAFE


def fix_input(finding: Finding, facts: F.FileFacts, config: Config) -> DropDim | None:
    """The `dim` argument at the finding, keyword or last positional, of an SN call."""
    index, _, arg = at.fact_at(finding, facts)
    call = index.parent.get(id(arg)) if isinstance(arg, F.Arg) else None
    if not isinstance(call, F.Call) or arg.keyword not in (None, "dim"):
        return None
    pos = call.positional()
    if arg.keyword is None and (not pos or pos[-1] is not arg):
        return None
    return DropDim(finding.node)


def fix(finding: Finding, payload: DropDim, parsed):
    import libcst as cst

    from snlint.edit.plan import Plan
    from snlint.edit.syntax import remove_arg

    arg = parsed.node(payload.arg, cst.Arg)
    if arg is None:
        return None
    plan = Plan(finding.code, payload.applicability,
                f"Drop {parsed.code(arg).strip().rstrip(',')} so the API's default, the layer's output "
                f"axis, applies; state_dict keys stay, the u/v vectors change shape (drop them "
                f"from old checkpoints)")
    return plan.replace(*remove_arg(parsed, arg))
