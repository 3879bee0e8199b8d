"""SN303 batch-norm-with-gradient-penalty: a gradient penalty through a critic with batch statistics."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from snlint.checks.couplings import (
    called_couplings, candidates, coupled_discriminators, graph_evidence, reached,
)
from snlint.checks.emit import Emitter, evidence as emitted_evidence
from snlint.findings import Finding, place


CODE = "SN303"
# The per-sample gradient is missing only because of SN301's batch statistics.
PREMISES = ("SN301",)


def check(model, emit: Emitter) -> Iterator[Finding]:
    coupled = coupled_discriminators(model)
    at_site: dict[tuple, list] = {}
    for penalty in model.penalties:
        module = penalty.forward.module
        if module is None or module.cls is None or module.cls.qualname not in coupled:
            continue
        d, pooled = coupled[module.cls.qualname]
        found = called_couplings(model, d, penalty.forward, pooled)
        if found:
            site = penalty.forward.node or penalty.forward.call
            at_site.setdefault((site.path, site.span), []).append(
                (penalty, site, reached(d, [penalty.forward]), found))
    for entries in at_site.values():
        penalty, site, ref, _ = entries[0]
        subject, listed, stats = candidates([(r, f) for _, _, r, f in entries])
        assumed = penalty.forward.assumed
        finding = emit.finding(
            CODE, site,
            f"the gradient penalty at {place(penalty.grad.path, penalty.grad.span.line, site.path)} "
            f"differentiates this output of {subject}, which has batch statistics",
            symbol=penalty.forward.function, discriminator=ref,
            evidence=emitted_evidence(
                f"Batch statistics: {stats}. Each sample's score depends on the whole batch, so "
                f"the per-sample gradient the penalty constrains does not exist"
                + (f" ({assumed})" if assumed else "") + ".", listed))
        # Only the graph pass's evidence makes it: `--no-graph` lacks it.
        yield replace(finding, pass_="graph") if all(graph_evidence(e[3]) for e in entries) else finding
