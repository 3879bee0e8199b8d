"""SN put on the wrong thing: SN101-SN107, and the legacy API (SN501)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from snlint.checks import Context
from snlint.checks.linked import Shown, confirmed, runtime_only
from snlint.findings import Finding, Location
from snlint.graph.facts import LeafFacts, Site, SNState
from snlint.checks.verdicts import (
    hook_sn_never_runs, sn_dim_off_output_axis, sn_off_the_weight, sn_on_normalization,
    sn_without_weight_matrix,
)
from snlint.torchapi import SN_HOOK, SN_PARAM, default_sn_dim


def _where(app) -> str:
    if app.from_filter:
        return " (applied by a loop or apply() whose isinstance filter lets it through)"
    return ""


def symbol_map(project) -> dict[int, str]:
    """id(layer) -> its symbol (`Discriminator.main.3`), from every module built alone."""
    from snlint.checks.coverage import members

    symbols: dict[int, str] = {}
    for root in project.roots.values():
        for m in members(root):
            symbols.setdefault(id(m.layer), m.symbol)
    return symbols


def check(project, ctx: Context) -> Iterator[Finding]:
    events = project.events
    never_applied: set = set()
    apps = list(_applications(project))
    for rule in (sn101, sn102, sn103, sn104, sn105, sn107):
        for finding in rule(project, ctx, apps):
            if finding.code == "SN107":
                never_applied.add((finding.path, finding.span))
            yield finding
    yield from sn106(project, ctx)
    for call in events.sn_calls:
        # Where SN107 already reports the hook API (it never runs there), SN501 would
        # be a second finding for one mistake.
        if call.api == SN_HOOK and (call.call.path, call.call.span) not in never_applied:
            yield ctx.finding(
                "SN501", call.call,
                "torch.nn.utils.spectral_norm is the legacy hook API; "
                "torch.nn.utils.parametrizations.spectral_norm is the maintained one",
                data={"api": call.api})


# Each SN1xx rule is one function over linked facts: the SN applications the source saw
# (`_applications`; `apps` when the caller has them) and the SN states of the runtime
# leaves (`_states`); `_linked` joins them by the SN call (or dim= argument) both record.

@dataclass
class _Application:
    app: object
    layer: object
    symbol: str | None
    kind: str
    what: str


def _applications(project) -> Iterator[_Application]:
    symbols = symbol_map(project)
    for event in project.events.sn:
        layer = event.target
        kind = layer.kind if layer.base_type is None else _kind_of_base(layer)
        yield _Application(event.app, layer, symbols.get(id(layer)), kind, layer.short_type)


def _given(project, apps: list[_Application] | None) -> Iterable[_Application]:
    return apps if apps is not None else _applications(project)


@dataclass
class _State:
    """One SN state of a runtime leaf, with its index among the leaf's SN states."""

    leaf: LeafFacts
    state: SNState
    index: int

    @property
    def ndim(self) -> int | None:
        shape = self.state.param_shape
        return len(shape) if shape is not None else None

    @property
    def data(self) -> dict:
        m, state = self.leaf, self.state
        return {"layer": m.type_name, "api": state.api, "name": state.name, "kind": m.kind}


def _states(runtime) -> Iterator[_State]:
    for m in runtime.facts.modules:
        for i, state in enumerate(m.sn):
            yield _State(m, state, i)


def _linked(project, ctx: Context, code: str, source: Iterable[Finding],
            built: Callable[[_State], "tuple[Site | None, str, dict] | None"]) -> Iterator[Finding]:
    """`source` confirmed where a built discriminator's SN state at the same SN call is the
    same mistake (`built`), and the mistakes only the runtime shows."""
    judged = [(runtime, st, out) for runtime in project.runtime.values() for st in _states(runtime)
              for out in [built(st)] if out is not None]
    shown_by_source: set[int] = set()
    for finding in source:
        loc = Location(finding.path, finding.span)
        same = [(runtime, i) for i, (runtime, _, (site, _, _)) in enumerate(judged)
                if runtime.locate(site) == loc]
        if same:
            shown_by_source.update(i for _, i in same)
            finding = confirmed(finding, same[0][0])
        yield finding
    yield from runtime_only(ctx, (
        Shown(runtime, code, site, st.leaf.path, message, data, names_discriminator=False)
        for i, (runtime, st, (site, message, data)) in enumerate(judged) if i not in shown_by_source))


def sn101(project, ctx: Context, apps: list[_Application] | None = None) -> Iterator[Finding]:
    """SN on a normalization layer."""
    source = (ctx.finding(
        "SN101", a.app.site,
        f"spectral norm on {a.what}, a normalization layer: it divides the affine "
        f"weight vector by its L2 norm and bounds nothing{_where(a.app)}",
        symbol=a.symbol, data={"api": a.app.api, "layer": a.what, "from_filter": a.app.from_filter})
        for a in _given(project, apps) if sn_on_normalization(a.kind))

    def built(st: _State):
        m, state = st.leaf, st.state
        if st.index == 0 and sn_on_normalization(m.kind):
            return state.site, (
                f"spectral norm on {m.type_name}: it divides the layer's affine {state.name} "
                f"(shape {_shape(state.param_shape)}) by its norm; no Lipschitz bound results"), st.data
        return None
    return _linked(project, ctx, "SN101", source, built)


def sn102(project, ctx: Context, apps: list[_Application] | None = None) -> Iterator[Finding]:
    """SN on a layer without a weight matrix (an activation, a container, a 1-D weight)."""
    def source() -> Iterator[Finding]:
        for a in _given(project, apps):
            kind, what = a.kind, a.what
            if sn_on_normalization(kind) or not sn_without_weight_matrix(
                    kind, has_weight="weight" in a.layer.attrs):
                continue
            detail = {
                "activation": "an activation",
                "container": "a container (SN must go on the conv/linear layers inside it)",
            }.get(kind, "a module without a weight matrix")
            if what == "PReLU":
                detail = "PReLU, whose 1-D slope SN scales to unit norm, turning it into identity or |x|"
            elif kind == "module":
                detail = "a module without a weight of its own (SN must go on its conv/linear layers)"
            yield ctx.finding("SN102", a.app.site, f"spectral norm on {what}: {detail}{_where(a.app)}",
                              symbol=a.symbol, data={"api": a.app.api, "layer": what, "kind": kind,
                                                     "from_filter": a.app.from_filter})

    def built(st: _State):
        m, state, ndim = st.leaf, st.state, st.ndim
        if st.index > 0 or sn_on_normalization(m.kind) or _on_a_vector(st):
            return None
        if sn_without_weight_matrix(m.kind, weight_ndim=ndim):
            what = ("has a 1-D weight (shape " + _shape(state.param_shape)
                    + "): SN scales it to unit norm") if ndim is not None and ndim <= 1 else (
                "has no weight matrix")
            return state.site, f"spectral norm on {m.type_name}, which {what}", st.data
        return None
    return _linked(project, ctx, "SN102", source(), built)


def sn103(project, ctx: Context, apps: list[_Application] | None = None) -> Iterator[Finding]:
    """SN applied twice to one layer."""
    def source() -> Iterator[Finding]:
        for a in _given(project, apps):
            app, layer, what = a.app, a.layer, a.what
            index = next((i for i, x in enumerate(layer.sn) if x is app), 0)
            if index < 1:
                continue
            first = layer.sn[0]
            yield ctx.finding(
                "SN103", app.site,
                f"{what} is spectrally normalized twice: it already got SN at line "
                f"{first.site.span.line}"
                + (f" of {first.site.path}" if first.site.path != app.site.path else "")
                + (" (two parametrizations stack silently: two power iterations)" if app.api == first.api == SN_PARAM
                   else " (torch raises at construction)" if SN_HOOK in (app.api, first.api) else ""),
                symbol=a.symbol, data={"api": app.api, "first_api": first.api, "layer": what,
                                       "from_filter": app.from_filter})

    def built(st: _State):
        if st.index == 0:
            return None
        m, state, first = st.leaf, st.state, st.leaf.sn[0]
        return state.site, (f"{m.type_name} is spectral-normalized twice ({first.api} then "
                            f"{state.api}): the second SN is redundant"), {**st.data, "first_api": first.api}
    return _linked(project, ctx, "SN103", source(), built)


def sn104(project, ctx: Context, apps: list[_Application] | None = None) -> Iterator[Finding]:
    """SN on a parameter other than the weight matrix."""
    source = (ctx.finding(
        "SN104", a.app.site,
        f"spectral norm on {a.what}.{a.app.name}, not on its weight matrix: a 1-D parameter "
        f"is just divided by its L2 norm",
        symbol=a.symbol, data={"api": a.app.api})
        for a in _given(project, apps) if sn_off_the_weight(a.kind, a.app.name))

    def built(st: _State):
        m, state = st.leaf, st.state
        if st.index == 0 and _on_a_vector(st):
            return state.site, (f"spectral norm on `{state.name}` of {m.type_name} (shape "
                                f"{_shape(state.param_shape)}), not its weight matrix"), st.data
        return None
    return _linked(project, ctx, "SN104", source, built)


def sn105(project, ctx: Context, apps: list[_Application] | None = None) -> Iterator[Finding]:
    """SN estimating sigma for the wrong matrix shape: a dim= off the output axis, or a
    hand-written reshape along dim 0 of a transposed conv."""
    def source() -> Iterator[Finding]:
        for a in _given(project, apps):
            app, layer, what, kind = a.app, a.layer, a.what, a.kind
            axis = default_sn_dim(what if layer.base_type is None else layer.base_type)
            if app.dim_explicit and sn_dim_off_output_axis(kind, app.dim, axis, layer.kernel_is_1x1()):
                yield ctx.finding(
                    "SN105", app.dim_arg or app.site,
                    f"dim={app.dim} on {what}: its output axis is dim {axis}, so σ is estimated "
                    f"for the wrong matrix shape",
                    symbol=a.symbol, data={"api": app.api})
            if app.reshape is not None and kind == "conv_transpose":
                yield ctx.finding(
                    "SN105", app.reshape,
                    f"{app.callee} flattens the weight along dim 0, but {what}'s output axis is "
                    f"dim 1: σ is estimated for the wrong matrix shape",
                    symbol=a.symbol, data={"api": app.api, "hand_written": True})

    def built(st: _State):
        m, state, ndim = st.leaf, st.state, st.ndim
        if (st.index > 0 or sn_on_normalization(m.kind) or _on_a_vector(st)
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
                f"{default}, and this dim changes the estimated sigma"), {
                **st.data, "dim": state.dim, "default_dim": default}
        return None
    return _linked(project, ctx, "SN105", source(), built)


def sn106(project, ctx: Context) -> Iterator[Finding]:
    """An init that writes a weight parametrizations.spectral_norm recomputes (source only:
    the runtime keeps no record of inits)."""
    for init in project.events.inits:
        normalized = [a for a in init.sn if a.api == SN_PARAM and a.name == init.param]
        if normalized:
            yield ctx.finding(
                "SN106", init.call,
                f"this init writes {init.layer.short_type}.{init.param}, which "
                f"parametrizations.spectral_norm recomputes on every access: it lands in a "
                f"temporary and does nothing; initialize parametrizations.{init.param}.original",
                data={"param": init.param})


def sn107(project, ctx: Context, apps: list[_Application] | None = None) -> Iterator[Finding]:
    """Hook-based SN on MultiheadAttention.out_proj, whose weight attention reads directly."""
    source = (ctx.finding(
        "SN107", a.app.site,
        "hook-based spectral norm on MultiheadAttention.out_proj never runs: attention "
        "reads out_proj.weight directly, so the weight stays un-normalized",
        symbol=a.symbol, data={"api": a.app.api})
        for a in _given(project, apps) if hook_sn_never_runs(a.app.api, a.layer.bypassed))

    def built(st: _State):
        m, state = st.leaf, st.state
        if st.index == 0 and hook_sn_never_runs(state.api, m.bypassed_forward):
            return state.site, (
                f"hook-based spectral norm on {m.type_name} `{m.path.rpartition('.')[2]}` never "
                "runs: MultiheadAttention reads out_proj.weight directly, so the weight is never "
                "normalized"), st.data
        return None
    return _linked(project, ctx, "SN107", source, built)


def _on_a_vector(st: _State) -> bool:
    """SN104's case, which takes precedence over SN102 and SN105 on the runtime's side."""
    return sn_off_the_weight(st.leaf.kind, st.state.name, param_ndim=st.ndim)


def _shape(shape: tuple[int, ...] | None) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]" if shape is not None else "?"


def _kind_of_base(layer) -> str:
    from snlint.torchapi import KINDS

    return KINDS.get(layer.base_type or "", layer.kind)
