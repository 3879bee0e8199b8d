"""The graph pass's facts joined to the linked project: what the runtime built for each
discriminator, indexed by the source sites the link step reports (no torch here).

The rules ask a `Runtime` what the built discriminator has at a source site and judge it
as they judge the source's layers (`snlint.checks.linked`). A source finding the runtime
shows wrong is cleared only where the graph pass built that very class with the
arguments the project uses (`Runtime.may_clear`).
"""

from __future__ import annotations

import json
from dataclasses import field
from typing import Callable

from snlint.findings import DiscriminatorRef, Location, Span
from snlint.graph.facts import LeafFacts, Site, TargetFacts
from snlint.link.arguments import UNKNOWN_SPEC, site_specs
from snlint.records import dataclass

DisplayFor = Callable[[str], "str | None"]


def site_key(site: Site, display_for: DisplayFor) -> tuple[str, Span] | None:
    path = display_for(site.file)
    if path is None:
        return None
    return path, Span(site.line, site.column, site.end_line, site.end_column)


@dataclass
class Runtime:
    """One discriminator as the graph pass built it, indexed by the source sites the link
    step knows, and named as the source names it."""

    facts: TargetFacts
    ref: DiscriminatorRef  # the discriminator findings about it name
    fallback: Location  # where a finding without a project site goes (its `class` line)
    display_for: DisplayFor
    # (display path, span) of a construction (site, origin, norm_layer parameter) -> the
    # leaves built there; of an SN call (or its dim= argument) -> the leaves it wraps.
    built_at: dict[tuple[str, Span], list[LeafFacts]] = field(default_factory=dict)
    sn_at: dict[tuple[str, Span], list[LeafFacts]] = field(default_factory=dict)
    # Built with the arguments the project uses: what it shows may clear a source finding.
    may_clear: bool = False

    def leaves_built_at(self, loc: Location) -> list[LeafFacts]:
        return self.built_at.get((loc.path, loc.span), [])

    def locate(self, site: Site | None) -> Location:
        """A recorded site as a finding's location; one outside the project (torch, a
        package) or unknown goes to the class."""
        key = site_key(site, self.display_for) if site is not None else None
        return Location(*key) if key is not None else self.fallback

    def symbol(self, path: str) -> str:
        name = self.facts.target.class_name
        return f"{name}.{path}" if path else name

    @property
    def note(self) -> str:
        """What a graph finding's message adds when the graph pass found or guessed the
        arguments that built its discriminator: where, or that they were guessed, short
        enough for a terminal line; nothing for a class built with its own defaults."""
        built_with = self.facts.built_with
        if not built_with or built_with.startswith("built with its defaults"):
            return ""
        if built_with.startswith("built with guessed sizes"):
            return "; graph pass: built with guessed sizes"
        return "; graph pass: " + built_with.split(" (", 1)[0].split(", ", 1)[0]

    @property
    def note_evidence(self) -> str:
        """The whole of how the discriminator was built, when the message says only its start."""
        return f"Graph pass: {self.facts.built_with}." if self.note else ""


def runtime_of(facts: TargetFacts, display_for: DisplayFor, ref: DiscriminatorRef | None = None,
               fallback: Location | None = None) -> Runtime:
    target = facts.target
    runtime = Runtime(facts, ref or DiscriminatorRef(f"{target.display}:{target.class_name}", "name"),
                      fallback or Location(target.display, Span(1, 1, 1, 1)), display_for)

    def keys(sites) -> list[tuple[str, Span]]:
        found = (site_key(s, display_for) for s in sites if s is not None)
        return list(dict.fromkeys(k for k in found if k is not None))

    for leaf in facts.modules:
        for key in keys((leaf.site, leaf.origin, leaf.param_site, *leaf.via)):
            runtime.built_at.setdefault(key, []).append(leaf)
        for key in keys(site for state in leaf.sn for site in (state.site, state.dim_site)):
            runtime.sn_at.setdefault(key, []).append(leaf)
    return runtime


def join(project, built: dict[str, TargetFacts], display_for: DisplayFor) -> None:
    """Attach each built discriminator's runtime facts (by class qualname) to `project`; a
    class the graph pass did not build gets none."""
    ds = {d.cls.qualname: d for d in project.discriminators}
    project.runtime = {}
    for qual, facts in built.items():
        if facts.status != "ok":
            continue
        d = ds.get(qual)
        runtime = runtime_of(facts, display_for, d.ref if d is not None else None,
                             Location(d.file.path, d.cls.span) if d is not None else None)
        runtime.may_clear = may_clear(facts.arguments, site_arguments(project.instances_of(qual)))
        project.runtime[qual] = runtime


def may_clear(arguments: str, passed: set[str]) -> bool:
    """Whether a class built with `arguments` (`TargetFacts.arguments`) was built as the
    project builds it, given the argument sets its sites pass (`site_arguments`): with
    the [tool.snlint.models] entry; from a site, where every site passes the same; or with
    its defaults, where no site passes any argument."""
    if arguments == "configured":
        return True
    if arguments == "project":
        return len(passed) == 1
    if arguments == "defaults":
        return passed <= {NOTHING_PASSED}
    return False


NOTHING_PASSED = "[[], {}]"


def site_arguments(instances) -> set[str]:
    """The argument sets (as JSON specs, `snlint.link.arguments`) the project's own
    construction sites pass. Of a site read both with its arguments known and with some
    unknown (its class run on its own), only the first counts."""
    by_call: dict[tuple, list[str]] = {}
    for call, spec in site_specs(instances):
        by_call.setdefault((call.path, call.span), []).append(json.dumps(spec, sort_keys=True))
    out: set[str] = set()
    for specs in by_call.values():
        known = [s for s in specs if UNKNOWN not in s]
        out.update(known or specs)
    return out


UNKNOWN = json.dumps(UNKNOWN_SPEC)

