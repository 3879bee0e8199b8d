"""The graph pass's facts joined to the linked project: what the runtime built for each
discriminator, found by the source sites the link step reports.

Runs in the parent (no torch): it reads `snlint.graph.facts` only. The rules ask a
`Runtime` what the built discriminator has at a source site, and judge those leaves
with the same functions (`snlint.checks.verdicts`) they apply to the source's layers: a
source finding the runtime clears is not made, and only where the graph built the class.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from snlint.findings import Finding, Location, Span
from snlint.graph.facts import LeafFacts, Site, TargetFacts

DisplayFor = Callable[[str], "str | None"]


def site_key(site: Site, display_for: DisplayFor) -> tuple[str, Span] | None:
    path = display_for(site.file)
    if path is None:
        return None
    return path, Span(site.line, site.column, site.end_line, site.end_column)


@dataclass
class Runtime:
    """One discriminator as the graph pass built it."""

    facts: TargetFacts
    # (display path, span) of a construction (site, origin, norm_layer parameter) -> the
    # leaves built there; of an SN call (or its dim= argument) -> the leaves it wraps.
    built_at: dict[tuple[str, Span], list[LeafFacts]] = field(default_factory=dict)
    sn_at: dict[tuple[str, Span], list[LeafFacts]] = field(default_factory=dict)

    def leaves_built_at(self, loc: Location) -> list[LeafFacts]:
        return self.built_at.get((loc.path, loc.span), [])


def runtime_of(facts: TargetFacts, display_for: DisplayFor) -> Runtime:
    runtime = Runtime(facts)

    def keys(sites) -> list[tuple[str, Span]]:
        found = (site_key(s, display_for) for s in sites if s is not None)
        return list(dict.fromkeys(k for k in found if k is not None))

    for leaf in facts.modules:
        for key in keys((leaf.site, leaf.origin, leaf.param_site)):
            runtime.built_at.setdefault(key, []).append(leaf)
        for key in keys(site for state in leaf.sn for site in (state.site, state.dim_site)):
            runtime.sn_at.setdefault(key, []).append(leaf)
    return runtime


def join(project, built: dict[str, TargetFacts], display_for: DisplayFor) -> None:
    """Attach each built discriminator's runtime facts (by class qualname) to `project`.
    A class the graph pass did not build (not imported, needs arguments, timed out) gets
    none: its source findings stand as they are."""
    project.runtime = {qual: runtime_of(facts, display_for)
                       for qual, facts in built.items() if facts.status == "ok"}


def built_note(built_with: str) -> str:
    """What a graph finding adds about the arguments that built its discriminator: where
    they came from when the graph pass had to find or guess them (the user may need to
    check them); nothing for a class built with its own defaults, the obvious case."""
    if not built_with or built_with.startswith("built with its defaults"):
        return ""
    return f"; graph pass: {built_with}"


def one_finding_per_mistake(source: list[Finding], graph: list[Finding]) -> list[Finding]:
    """Source findings, the graph's that name the same node (at the node, or, for a layer a
    helper builds inside the container it returns, at its innermost construction) become
    one finding with pass "source+graph"; the graph's others stay "graph". What the
    runtime clears never became a source finding (the rules read `Runtime`)."""
    by_key = {(f.code, f.path, f.span): f for f in graph if not f.is_diagnostic}
    by_origin: dict[tuple, list[tuple]] = {}
    for g in graph:
        if not g.is_diagnostic and g.get("origin"):
            by_origin.setdefault((g.code, *g.get("origin")), []).append((g.code, g.path, g.span))
    out: list[Finding] = []
    for f in source:
        key = (f.code, f.path, f.span)
        same = [k for k in dict.fromkeys([key, *by_origin.get(key, [])]) if k in by_key]
        if same:
            note = built_note(by_key[same[0]].get("built_with") or "")
            out.append(replace(f, pass_="source+graph", message=f.message + note))
            for k in same:
                del by_key[k]
            continue
        out.append(f)
    out.extend(by_key.values())
    out.extend(f for f in graph if f.is_diagnostic)
    return out
