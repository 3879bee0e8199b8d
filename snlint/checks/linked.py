"""Findings from linked facts. Each rule judges the source's layers and the runtime
leaves joined to them with the same verdicts: a source finding the runtime shows too is
confirmed ("source+graph"); a mistake only the runtime shows (a layer built in a loop the
source cannot follow, an `F.batch_norm` call, the probe) is a "graph" finding at its
recorded site, one per site and code however many instances were built there."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Iterator

from snlint.checks.emit import Emitter, evidence
from snlint.findings import Finding, Location
from snlint.records import dataclass

if TYPE_CHECKING:
    from snlint.graph.facts import Site
    from snlint.link.join import Runtime


@dataclass
class Shown:
    """One mistake the runtime shows on a built discriminator."""

    runtime: Runtime
    code: str
    site: Site | None
    path: str  # the module's path in the discriminator ("" for the class itself)
    message: str  # for one instance; the count is added when several share a site
    data: object = None  # `Finding.data`
    layers: bool = True  # instances of built layers (counted), not operations
    names_discriminator: bool = True  # SN1xx are about SN itself, wherever it is
    evidence: str = ""  # why it holds, for the full formats (`Finding.evidence`)


def confirmed(finding: Finding, runtime: Runtime) -> Finding:
    """A source finding the built discriminator shows too."""
    return replace(finding, pass_="source+graph", message=finding.message + runtime.note,
                   evidence=evidence(finding.evidence, runtime.note_evidence))


def confirmed_by(finding: Finding, runtime: Runtime, shown: list, seen: set[int]) -> Finding:
    """`finding`, confirmed when the built discriminator shows it (`shown`, its runtime
    facts at the finding's site), which go into `seen`: `runtime_only` skips them."""
    seen.update(map(id, shown))
    return confirmed(finding, runtime) if shown else finding


def runtime_only(emit: Emitter, shown: Iterable[Shown]) -> Iterator[Finding]:
    """Findings for mistakes no source finding covers: one per discriminator, code and
    location, counting the layers built there."""
    groups: dict[tuple[int, str, Location], list[Shown]] = {}
    for s in shown:
        groups.setdefault((id(s.runtime), s.code, s.runtime.locate(s.site)), []).append(s)
    for (_, code, location), group in groups.items():
        first = group[0]
        count = len(group)
        message = first.message
        if first.layers and count > 1:
            message += f" ({count} instances built here)"
        message += first.runtime.note
        finding = emit.finding(code, location, message, symbol=first.runtime.symbol(first.path),
                              discriminator=first.runtime.ref if first.names_discriminator else None,
                              data=first.data,
                              evidence=evidence(first.evidence, first.runtime.note_evidence))
        yield replace(finding, pass_="graph")
