"""SN302 batch-coupled-op-in-discriminator: an operation that mixes samples in a discriminator."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.couplings import batch_normalizing_classes, batch_reductions_in
from snlint.checks.emit import Emitter, describe
from snlint.checks.linked import Shown, confirmed_by, runtime_only
from snlint.checks.verdicts import measured_batch_normalization
from snlint.findings import Finding
from snlint.graph.facts import Site


CODE = "SN302"


def check(model, emit: Emitter) -> Iterator[Finding]:
    """SN302: operations that mix samples (minibatch stddev and the like). Often
    deliberate, so info and opt-in. The source's reductions are confirmed by the ones the
    built discriminator records at the same call; the runtime's others, and the coupling
    only its probe sees, are the graph's."""
    shown_by_source: set[int] = set()
    for d in model.discriminators:
        runtime = model.runtime.get(d.cls.qualname)
        # A reduction written inside a module measured as batch normalization (a
        # hand-rolled whitening layer) is that SN301's, one finding per mistake.
        inside = batch_normalizing_classes(runtime) if runtime is not None else []
        owned = batch_reductions_in(model, d)
        for r in owned:
            if any(defined.holds(r.call) for defined in inside):
                continue
            if any(_within(r.call, other.call) for other in owned):
                # `torch.mean((x - torch.mean(x, dim=0)) ** 2, dim=0)`: one hand-written
                # variance, one finding, at the outer reduction (which the built model's
                # record of the inner one confirms, not repeats).
                if runtime is not None:
                    shown_by_source.update(id(pair) for pair in runtime.facts.batch_reductions
                                           if pair[1] is not None and runtime.locate(pair[1]) == r.call)
                continue
            finding = emit.finding(
                CODE, r.call,
                f"{r.what} in {r.owner.short_type}.forward reduces over the batch: each score of "
                f"{describe(d.ref)} then depends on the other samples in the batch (minibatch "
                f"statistics; often deliberate, as StyleGAN's minibatch stddev)",
                symbol=f"{r.owner.short_type}.forward", discriminator=d.ref)
            if runtime is not None:
                shown = [pair for pair in runtime.facts.batch_reductions
                         if pair[1] is not None and runtime.locate(pair[1]) == r.call]
                finding = confirmed_by(finding, runtime, shown, shown_by_source)
            yield finding
    shown: list[Shown] = []
    for runtime in model.runtime.values():
        facts = runtime.facts
        inside = batch_normalizing_classes(runtime)
        for pair in facts.batch_reductions:
            if id(pair) not in shown_by_source and not any(d.holds(pair[1]) for d in inside):
                what, site = pair
                shown.append(Shown(runtime, CODE, site, "",
                                   f"{what} reduces over the batch dimension: it mixes samples",
                                   layers=False))
        shown += _probed_coupling(runtime)
    yield from runtime_only(emit, shown)


def _within(inner, outer) -> bool:
    """Whether the call at `inner` is an argument, at any depth, of the one at `outer`."""
    a, b = inner.span, outer.span
    return inner.path == outer.path and (a.line, a.column, a.end_line, a.end_column) != \
        (b.line, b.column, b.end_line, b.end_column) and (b.line, b.column) <= (a.line, a.column) \
        and (a.end_line, a.end_column) <= (b.end_line, b.end_column)


def _probed_coupling(runtime) -> list[Shown]:
    """Where the probe located the coupling, each place no batch norm explains; batch
    reductions the forward recorded are more precise and win when there are some."""
    facts = runtime.facts
    probe = facts.probe or {}
    if not probe.get("coupled") or facts.batch_reductions or facts.batch_norm_calls:
        return []
    batch_stats = {m.path for m in facts.modules if m.kind == "batch_norm" and m.uses_batch_stats}
    sources = probe.get("sources") or []
    shown = []
    for source in sources:
        if source.get("path") in batch_stats or measured_batch_normalization(source):
            continue  # SN301's
        path = source.get("path", "")
        where = f"{source.get('type', '')} `{path}`" if path else facts.target.class_name
        shown.append(Shown(runtime, CODE, Site.from_dict(source.get("site")), path,
                           f"the batch-coupling probe sees {where} mix samples: changing one "
                           "sample's input changed the others' outputs there", layers=False))
    if not sources and not batch_stats:
        shown.append(Shown(runtime, CODE, None, "",
                           "the batch-coupling probe sees samples coupled (changing one input "
                           "changed the others' outputs) and no batch norm explains it",
                           layers=False))
    return shown
