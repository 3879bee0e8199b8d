"""Rules from the graph pass's runtime facts (a built discriminator), and its diagnostics.

Pure functions over `snlint.graph.facts`: no torch, no files, no printing. A finding sits
at the recorded source site (the SN call for SN1xx, the call that built the layer for
SN201/SN301), so that it merges with the source pass's finding for the same node; one
finding per site and code, however many instances the program built there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from snlint.checks.catalogue import Rule
from snlint.checks.verdicts import has_batch_statistics, leaf_has_batch_statistics, needs_sn  # noqa: F401
from snlint.findings import DiscriminatorRef, Finding, Location, Span
from snlint.graph.facts import LeafFacts, Site, TargetFacts
from snlint.link.graph_diagnostics import target_diagnostics
from snlint.link.join import built_note

# Name and severity when the catalogue has no page for a code (yet).
_FALLBACK = {
    "SN101": ("sn-on-normalization", "error"),
    "SN102": ("sn-on-weightless-layer", "error"),
    "SN103": ("sn-applied-twice", "error"),
    "SN104": ("sn-wrong-parameter", "error"),
    "SN105": ("sn-wrong-dim", "warning"),
    "SN107": ("sn-never-applied", "error"),
    "SN201": ("missing-sn", "error"),
    "SN301": ("batch-norm-in-discriminator", "error"),
    "SN302": ("batch-coupled-op-in-discriminator", "info"),
}
GRAPH_CODES = frozenset(_FALLBACK)
# SN1xx are about SN itself, wherever it is; the others concern a discriminator.
_NAMES_DISCRIMINATOR = frozenset({"SN201", "SN301", "SN302"})

_NORM_KINDS = frozenset({"batch_norm", "sample_norm"})
_WEIGHTLESS_KINDS = frozenset({"activation", "pooling", "dropout", "identity", "upsample", "container"})
_MATRIX_KINDS = frozenset({"conv", "conv_transpose", "linear"})

DisplayFor = Callable[[str], "str | None"]


@dataclass
class _Group:
    code: str
    location: Location
    symbol: str
    message: str  # for one instance; the count is added when several merge
    data: dict = field(default_factory=dict)
    count: int = 0
    layers: bool = True  # instances of built layers (counted in the message), not operations


@dataclass(frozen=True)
class _Path:
    """A module path without layer facts (a non-leaf module the probe pointed at)."""

    path: str


def _span(site: Site) -> Span:
    return Span(site.line, site.column, site.end_line, site.end_column)


def _shape(shape: tuple[int, ...] | None) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]" if shape is not None else "?"


def _sn_checks(m: LeafFacts) -> list[tuple[str, Site | None, str, dict]]:
    """(code, site, message, data) for each SN mistake on one layer."""
    out: list[tuple[str, Site | None, str, dict]] = []
    for i, state in enumerate(m.sn):
        data = {"layer": m.type_name, "api": state.api, "name": state.name, "kind": m.kind}
        ndim = len(state.param_shape) if state.param_shape is not None else None
        if i > 0:
            first = m.sn[0]
            out.append(("SN103", state.site,
                        f"{m.type_name} is spectral-normalized twice ({first.api} then "
                        f"{state.api}): the second SN is redundant", {**data, "first_api": first.api}))
            continue
        if m.kind in _NORM_KINDS:
            out.append(("SN101", state.site,
                        f"spectral norm on {m.type_name}: it divides the layer's affine "
                        f"{state.name} (shape {_shape(state.param_shape)}) by its norm; no "
                        "Lipschitz bound results", data))
        elif state.name != "weight" and (ndim is None or ndim <= 1):
            out.append(("SN104", state.site,
                        f"spectral norm on `{state.name}` of {m.type_name} (shape "
                        f"{_shape(state.param_shape)}), not its weight matrix", data))
        elif m.kind in _WEIGHTLESS_KINDS or (ndim is not None and ndim <= 1):
            what = ("has a 1-D weight (shape " + _shape(state.param_shape)
                    + "): SN scales it to unit norm") if ndim is not None and ndim <= 1 else (
                "has no weight matrix")
            out.append(("SN102", state.site, f"spectral norm on {m.type_name}, which {what}", data))
        elif state.api in ("hook", "parametrization"):
            default = 1 if m.kind == "conv_transpose" else 0
            kernel = 1
            for s in (state.param_shape or ())[2:]:
                kernel *= s
            if (state.dim != default and ndim is not None and ndim >= 3 and kernel > 1):
                out.append(("SN105", state.dim_site or state.site,
                            f"spectral norm of {m.type_name} with dim={state.dim}; its output "
                            f"axis is dim {default}, and this dim changes the estimated sigma",
                            {**data, "dim": state.dim, "default_dim": default}))
        if state.api == "hook" and m.bypassed_forward:
            out.append(("SN107", state.site,
                        f"hook-based spectral norm on {m.type_name} `{m.path.rpartition('.')[2]}` "
                        "never runs: MultiheadAttention reads out_proj.weight directly, so the "
                        "weight is never normalized", data))
    return out


def graph_findings(facts: TargetFacts, rules: dict[str, Rule], *,
                   display_for: DisplayFor, fallback: Location,
                   evidence: str = "name") -> list[Finding]:
    """Findings and SN91x diagnostics for one graph target.

    `display_for(abs_path)` gives a project file's display path, or None for a file outside
    the project (such sites go to `fallback`, normally the target class's line). `evidence`
    is why the class is a discriminator ("configuration", "training code", "name").
    """
    target = facts.target
    diagnostics = target_diagnostics(facts, display_for, fallback)
    if facts.status != "ok":
        return diagnostics

    def locate(site: Site | None) -> Location:
        if site is not None:
            path = display_for(site.file)
            if path is not None:
                return Location(path, _span(site))
        return fallback

    def symbol(m: LeafFacts | _Path | None) -> str:
        return f"{target.class_name}.{m.path}" if m is not None and m.path else target.class_name

    groups: dict[tuple[str, Location], _Group] = {}

    def _origin(site: Site | None) -> dict:
        # The innermost construction: where the source pass reports a layer that a helper
        # builds inside the container it returns. The merge matches on it too.
        if site is None or display_for(site.file) is None:
            return {}
        return {"origin": (display_for(site.file), _span(site))}

    def add(code: str, site: Site | None, m: LeafFacts | _Path | None, message: str,
            data: dict, layers: bool = True) -> None:
        location = locate(site)
        group = groups.get((code, location))
        if group is None:
            group = groups[(code, location)] = _Group(code, location, symbol(m), message,
                                                      dict(data), layers=layers)
        group.count += 1

    apis = Counter(s.api for m in facts.modules if m.kind in _MATRIX_KINDS for s in m.sn)
    uses_sn = bool(apis)
    for m in facts.modules:
        for code, site, message, data in _sn_checks(m):
            add(code, site, m, message, data)
        if uses_sn and needs_sn(m.kind, weight_norm=m.weight_norm, frozen=m.frozen) and not m.sn:
            add("SN201", m.site, m,
                f"{m.type_name} has no spectral norm, but the discriminator's other conv/linear "
                "layers use it",
                {"layer": m.type_name, "sn_api": apis.most_common(1)[0][0] if apis else "",
                 **_origin(m.origin)})
        if leaf_has_batch_statistics(m):
            why = "in training mode" if m.training else "(track_running_stats=False)"
            add("SN301", m.param_site or m.site, m,
                f"{m.type_name} normalizes with batch statistics {why}: real and generated "
                "batches become separable by their statistics",
                {"layer": m.type_name, **({} if m.param_site else _origin(m.origin))})
    for site in facts.batch_norm_calls:
        add("SN301", site, None, "`F.batch_norm` normalizes with batch statistics in training",
            {"layer": "F.batch_norm"}, layers=False)
    for what, site in facts.batch_reductions:
        add("SN302", site, None, f"{what} reduces over the batch dimension: it mixes samples",
            {"operation": what}, layers=False)
    probe = facts.probe or {}
    if probe.get("coupled") and not facts.batch_reductions and not facts.batch_norm_calls:
        # Where the probe located the coupling, report each place no batch norm explains;
        # batch reductions from the fx graph are more precise and win when there are some.
        batch_stats = {m.path for m in facts.modules if m.kind == "batch_norm" and m.uses_batch_stats}
        sources = probe.get("sources") or []
        for source in sources:
            if source.get("path") in batch_stats:
                continue
            path = source.get("path", "")
            where = f"{source.get('type', '')} `{path}`" if path else target.class_name
            add("SN302", Site.from_dict(source.get("site")), _Path(path),
                f"the batch-coupling probe sees {where} mix samples: changing one sample's "
                "input changed the others' outputs there", {"probe": True}, layers=False)
        if not sources and not batch_stats:
            add("SN302", None, None,
                "the batch-coupling probe sees samples coupled (changing one input changed "
                "the others' outputs) and no batch norm explains it", {"probe": True}, layers=False)

    findings = []
    note = built_note(facts.built_with)
    for group in groups.values():
        name, severity = _meta(group.code, rules)
        message = group.message
        if group.count > 1 and group.layers:
            message += f" ({group.count} instances built here)"
        message += note
        if note:
            group.data["built_with"] = facts.built_with
        disc = (DiscriminatorRef(f"{target.display}:{target.class_name}", evidence)
                if group.code in _NAMES_DISCRIMINATOR else None)
        data = tuple(sorted({**group.data, "instances": group.count}.items()
                            if group.layers else group.data.items()))
        findings.append(Finding(group.code, name, severity, message, group.location.path,
                                group.location.span, pass_="graph", symbol=group.symbol,
                                discriminator=disc, data=data))
    return sorted(findings + diagnostics, key=Finding.sort_key)


def _meta(code: str, rules: dict[str, Rule]) -> tuple[str, str]:
    rule = rules.get(code)
    if rule is not None:
        return rule.name, rule.severity
    return _FALLBACK[code]
