"""SN put on the wrong thing: SN101-SN107, and the legacy API (SN501)."""

from __future__ import annotations

from typing import Iterator

from snlint.checks import Context
from snlint.findings import Finding
from snlint.torchapi import NORMALIZATION, SN_HOOK, SN_PARAM, WEIGHTLESS, default_sn_dim


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
    symbols = symbol_map(project)
    never_applied: set = set()
    for finding in _placement(project, ctx, symbols):
        if finding.code == "SN107":
            never_applied.add((finding.path, finding.span))
        yield finding
    for call in events.sn_calls:
        # Where SN107 already reports the hook API (it never runs there), SN501 would
        # be a second finding for one mistake.
        if call.api == SN_HOOK and (call.call.path, call.call.span) not in never_applied:
            yield ctx.finding(
                "SN501", call.call,
                "torch.nn.utils.spectral_norm is the legacy hook API; "
                "torch.nn.utils.parametrizations.spectral_norm is the maintained one",
                data={"api": call.api})


def _placement(project, ctx: Context, symbols: dict[int, str]) -> Iterator[Finding]:
    events = project.events
    for event in events.sn:
        app, layer = event.app, event.target
        symbol = symbols.get(id(layer))
        kind = layer.kind if layer.base_type is None else _kind_of_base(layer)
        what = layer.short_type
        if kind in NORMALIZATION:
            yield ctx.finding(
                "SN101", app.site,
                f"spectral norm on {what}, a normalization layer: it divides the affine "
                f"weight vector by its L2 norm and bounds nothing{_where(app)}",
                symbol=symbol, data={"api": app.api, "layer": what, "from_filter": app.from_filter})
        elif kind in WEIGHTLESS or (kind == "module" and "weight" not in layer.attrs):
            detail = {
                "activation": "an activation",
                "container": "a container (SN must go on the conv/linear layers inside it)",
            }.get(kind, "a module without a weight matrix")
            if what == "PReLU":
                detail = "PReLU, whose 1-D slope SN scales to unit norm, turning it into identity or |x|"
            elif kind == "module":
                detail = "a module without a weight of its own (SN must go on its conv/linear layers)"
            yield ctx.finding("SN102", app.site, f"spectral norm on {what}: {detail}{_where(app)}",
                              symbol=symbol, data={"api": app.api, "layer": what, "kind": kind,
                                                   "from_filter": app.from_filter})
        index = next((i for i, a in enumerate(layer.sn) if a is app), 0)
        if index >= 1:
            first = layer.sn[0]
            yield ctx.finding(
                "SN103", app.site,
                f"{what} is spectrally normalized twice: it already got SN at line "
                f"{first.site.span.line}"
                + (f" of {first.site.path}" if first.site.path != app.site.path else "")
                + (" (two parametrizations stack silently: two power iterations)" if app.api == first.api == SN_PARAM
                   else " (torch raises at construction)" if SN_HOOK in (app.api, first.api) else ""),
                symbol=symbol, data={"api": app.api, "first_api": first.api, "layer": what,
                                     "from_filter": app.from_filter})
        if app.name is not None and app.name != "weight" and kind not in NORMALIZATION:
            yield ctx.finding(
                "SN104", app.site,
                f"spectral norm on {what}.{app.name}, not on its weight matrix: a 1-D parameter "
                f"is just divided by its L2 norm",
                symbol=symbol, data={"api": app.api})
        if (app.dim_explicit and app.dim is not None and kind in ("conv", "conv_transpose")
                and app.dim != default_sn_dim(what if layer.base_type is None else layer.base_type)
                and layer.kernel_is_1x1() is not True):
            axis = default_sn_dim(what if layer.base_type is None else layer.base_type)
            yield ctx.finding(
                "SN105", app.dim_arg or app.site,
                f"dim={app.dim} on {what}: its output axis is dim {axis}, so σ is estimated "
                f"for the wrong matrix shape",
                symbol=symbol, data={"api": app.api})
        if app.reshape is not None and kind == "conv_transpose":
            yield ctx.finding(
                "SN105", app.reshape,
                f"{app.callee} flattens the weight along dim 0, but {what}'s output axis is "
                f"dim 1: σ is estimated for the wrong matrix shape",
                symbol=symbol, data={"api": app.api, "hand_written": True})
        if app.api == SN_HOOK and layer.bypassed:
            yield ctx.finding(
                "SN107", app.site,
                "hook-based spectral norm on MultiheadAttention.out_proj never runs: attention "
                "reads out_proj.weight directly, so the weight stays un-normalized",
                symbol=symbol, data={"api": app.api})
    for init in events.inits:
        normalized = [a for a in init.sn if a.api == SN_PARAM and a.name == init.param]
        if normalized:
            yield ctx.finding(
                "SN106", init.call,
                f"this init writes {init.layer.short_type}.{init.param}, which "
                f"parametrizations.spectral_norm recomputes on every access: it lands in a "
                f"temporary and does nothing; initialize parametrizations.{init.param}.original",
                data={"param": init.param})


def _kind_of_base(layer) -> str:
    from snlint.torchapi import KINDS

    return KINDS.get(layer.base_type or "", layer.kind)
