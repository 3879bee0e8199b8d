"""Batch coupling: SN301 (batch statistics in a discriminator), SN303 (a gradient penalty
through one), SN401 (real and generated samples scored in separate forward calls)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

from snlint.checks import Context, describe
from snlint.checks.coverage import members
from snlint.checks.linked import Shown, confirmed_by, runtime_only
from snlint.checks.verdicts import (
    has_batch_statistics, leaf_has_batch_statistics, normalizes_with_batch_statistics,
    runtime_clears_batch_norm,
)
from snlint.findings import Finding, Location
from snlint.link import resolve
from snlint.link.values import ListV, TupleV, UnknownV
from snlint.graph.facts import Site


@dataclass
class Coupling:
    """One place that makes a discriminator's output depend on the rest of the batch."""

    site: Location
    what: str
    symbol: str | None
    via_default: bool = False


def couplings(project, d) -> list[Coupling]:
    """Batch-statistics normalization in every instance of discriminator `d` the program
    builds (alone, and as training code builds it), less what a train() override keeps in
    eval mode."""
    instances = [d.instance] + [i for i in project.instances_of(d.cls.qualname) if i is not d.instance]
    return _couplings_in(project, d, instances)


def called_couplings(project, d, call, pooled: list[Coupling]) -> list[Coupling]:
    """Batch statistics in the instance a forward call reaches. Where training code built
    that instance with arguments all known (`define_D(norm="instance")`, a registry's
    config), it alone decides: the class's other configurations do not run. Otherwise
    (built alone with its defaults, assumed, or built from unknown arguments) every
    instance counts, as for SN301."""
    module = call.module
    if module is None or module is d.instance or id(call) in project.assumptions \
            or not _configured(module):
        return pooled
    return _couplings_in(project, d, [module])


def _configured(layer) -> bool:
    """Built with arguments, and every one that can decide its layers known: a norm choice
    or a string its `__init__` compares. An unknown device list or channel count does not
    send the judgement back to the class's defaults."""
    if not (layer.args or layer.kwargs):
        return False
    init = layer.cls.method("__init__") if layer.cls is not None else None
    if init is None:
        return all(_known(v) for v in list(layer.args) + list(layer.kwargs.values()))
    params = [p.name for p in init.params[1:] if p.kind in ("pos", "posonly")]
    bound = dict(zip(params, layer.args))
    bound.update(layer.kwargs)
    deciding = resolve.deciding(init)
    if len(layer.args) > len(params) or any(k not in deciding and k not in params for k in layer.kwargs):
        return all(_known(v) for v in list(layer.args) + list(layer.kwargs.values()))
    return all(_known(v) for k, v in bound.items() if k in deciding)


def _known(value, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(value, UnknownV):
        return False
    if isinstance(value, (ListV, TupleV)):
        return all(_known(v, depth + 1) for v in value.items)
    # A config dict or options namespace is known as a whole: the options the class reads
    # from it decide its layers, and one it does not read must not send the judgement back
    # to the class's own defaults.
    return True


def _couplings_in(project, d, instances: list) -> list[Coupling]:
    found: dict[tuple, Coupling] = {}
    runtime = project.runtime.get(d.cls.qualname)
    classes = {d.cls.qualname}
    for inst in instances:
        if inst is None:
            continue
        for m in members(inst):
            if m.layer.cls is not None:
                classes.add(m.layer.cls.qualname)
            kept = m.layer.kept_in_eval or (m.layer.call.path, m.layer.call.span) in project.kept_in_eval
            if not normalizes_with_batch_statistics(m.layer.kind, kept_in_eval=kept):
                continue
            site = m.layer.origin or m.site
            if runtime is not None and runtime_clears_batch_norm(runtime, site):
                continue  # built, and kept in eval mode there
            found.setdefault((site.path, site.span), Coupling(
                site, m.layer.short_type, m.symbol, via_default=m.layer.origin is not None))
    for call in project.events.batch_norm_calls:
        owner = call.owner
        if owner is not None and owner.cls is not None and owner.cls.qualname in classes:
            found.setdefault((call.call.path, call.call.span), Coupling(
                call.call, "F.batch_norm(training=True)", f"{owner.short_type}.forward"))
    return list(found.values())


def check(project, ctx: Context) -> Iterator[Finding]:
    found_in = {d.cls.qualname: couplings(project, d) for d in project.discriminators}
    yield from sn301(project, ctx, found_in)
    coupled: dict[str, tuple] = {}
    for d in project.discriminators:
        found = found_in[d.cls.qualname]
        if not found:
            continue
        runtime = project.runtime.get(d.cls.qualname)
        if runtime is None or has_batch_statistics(runtime.facts):
            # Where the graph built it without batch statistics, no SN303/SN401.
            coupled[d.cls.qualname] = (d, found)
    yield from sn302(project, ctx)
    yield from _penalties(project, ctx, coupled)
    yield from _separate_batches(project, ctx, coupled)


def sn301(project, ctx: Context, found_in: dict[str, list[Coupling]] | None = None) -> Iterator[Finding]:
    """SN301 from the source's batch norms (less what the built discriminator keeps in
    eval mode) and the runtime leaves and `F.batch_norm` calls joined to them; a batch
    norm or call only the runtime has is judged by the same
    `normalizes_with_batch_statistics`. `found_in`: `couplings` by discriminator, when the
    caller has them."""
    shown_by_source: set[int] = set()
    for d in project.discriminators:
        runtime = project.runtime.get(d.cls.qualname)
        found = found_in[d.cls.qualname] if found_in is not None else couplings(project, d)
        for c in found:
            where = "its norm_layer default builds " if c.via_default else ""
            finding = ctx.finding(
                "SN301", c.site,
                f"{where}{c.what} in {describe(d.ref)} normalizes with the statistics of the "
                f"current batch: when real and generated samples arrive in separate batches, "
                f"those statistics alone tell them apart",
                symbol=c.symbol, discriminator=d.ref, data={"layer": c.what})
            if runtime is not None:
                shown = [m for m in runtime.leaves_built_at(c.site) if leaf_has_batch_statistics(m)]
                shown += [s for s in runtime.facts.batch_norm_calls
                          if s is not None and runtime.locate(s) == c.site]
                finding = confirmed_by(finding, runtime, shown, shown_by_source)
            yield finding
    shown: list[Shown] = []
    for runtime in project.runtime.values():
        for m in runtime.facts.modules:
            if leaf_has_batch_statistics(m) and id(m) not in shown_by_source:
                why = "in training mode" if m.training else "(track_running_stats=False)"
                shown.append(Shown(
                    runtime, "SN301", m.param_site or m.site, m.path,
                    f"{m.type_name} in {describe(runtime.ref) or 'the discriminator'} "
                    f"normalizes with the statistics of the current batch {why} (seen in the "
                    "built model): when real and generated samples arrive in separate batches, "
                    "those statistics alone tell them apart", {"layer": m.type_name}))
        shown += [Shown(runtime, "SN301", site, "",
                        f"`F.batch_norm` in {describe(runtime.ref) or 'the discriminator'} "
                        "normalizes with the statistics of the current batch in training",
                        {"layer": "F.batch_norm"}, layers=False)
                  for site in runtime.facts.batch_norm_calls if id(site) not in shown_by_source]
    yield from runtime_only(ctx, shown)


def _first(found: list[Coupling]) -> str:
    c = found[0]
    return f"{c.what} at {c.site.path}:{c.site.span.line}"


def _penalties(project, ctx: Context, coupled: dict) -> Iterator[Finding]:
    at_site: dict[tuple, list] = {}
    for penalty in project.events.penalties:
        module = penalty.forward.module
        if module is None or module.cls is None or module.cls.qualname not in coupled:
            continue
        d, pooled = coupled[module.cls.qualname]
        found = called_couplings(project, d, penalty.forward, pooled)
        if found:
            site = penalty.forward.node or penalty.forward.call
            at_site.setdefault((site.path, site.span), []).append(
                (penalty, site, _reached(d, [penalty.forward]), found))
    for entries in at_site.values():
        penalty, site, ref, _ = entries[0]
        subject, stats = _candidates([(r, f) for _, _, r, f in entries])
        assumed = project.assumptions.get(id(penalty.forward))
        yield ctx.finding(
            "SN303", site,
            f"the gradient penalty at line {penalty.grad.span.line} differentiates this output "
            f"of {subject}, which has batch statistics ({stats}): each sample's "
            f"score depends on the whole batch, so the per-sample gradient it constrains does "
            f"not exist" + (f" ({assumed})" if assumed else ""),
            symbol=penalty.forward.function, discriminator=ref)


def _separate_batches(project, ctx: Context, coupled: dict) -> Iterator[Finding]:
    groups: dict[tuple, list] = {}
    for call in project.events.forwards:
        module = call.module
        if module is None or module.cls is None or module.cls.qualname not in coupled:
            continue
        groups.setdefault((call.update, module.cls.qualname), []).append(call)
    # One call may reach one of several candidate classes: one finding names each.
    at_site: dict[tuple, list] = {}
    for (_, qual), calls in groups.items():
        d, pooled = coupled[qual]
        for a, b in _pairs(sorted(calls, key=lambda c: c.order)):
            found = called_couplings(project, d, a, pooled) or called_couplings(project, d, b, pooled)
            if not found:
                continue
            first, second = a.site_apart_from(b), b.site_apart_from(a)
            at_site.setdefault((first.path, first.span, second.span), []).append(
                (a, b, first, second, _reached(d, [a, b]), found))
    for entries in sorted(at_site.values(), key=lambda e: e[0][0].order):
        a, b, first, second, ref, _ = entries[0]
        subject, stats = _candidates([(e[4], e[5]) for e in entries])
        assumed = project.assumptions.get(id(a)) or project.assumptions.get(id(b))
        note = f" ({assumed})" if assumed else ""
        its = "its batch statistics" if len({e[4].cls for e in entries}) == 1 else "the batch statistics of each"
        yield ctx.finding(
            "SN401", first,
            f"{_side(a)} go through {subject} here and {_side(b)} "
            f"in a separate call at line {second.span.line}; {its} "
            f"({stats}) then differ between the two batches and give "
            f"real from fake away{note}",
            symbol=a.function, discriminator=ref,
            data={"second": (second.path, second.span.line, second.span.column),
                  **{kind: why for call in (a, b) for kind, why in call.evidence.items()}})


def _side(call) -> str:
    """`real samples (a batch of `loader`, line 30)`: the kind and what decided it."""
    what = "real samples" if call.kind == "real" else "generated samples"
    why = call.evidence.get(call.kind)
    return f"{what} ({why})" if why else what


def _candidates(scored: list[tuple]) -> tuple[str, str]:
    """(who, which batch statistics) for a message: one discriminator, or each candidate
    class with batch statistics a call may reach ("DCGAN_D (...) or SNGAN_D (...), one of 2
    classes define_D() may build ...")."""
    unique: dict[str, tuple] = {}
    for ref, found in scored:
        unique.setdefault(ref.cls, (ref, found))
    if len(unique) == 1:
        ref, found = next(iter(unique.values()))
        return describe(ref), _first(found)
    refs = [r for r, _ in unique.values()]
    who = " or ".join(describe(replace(r, via="", detail="")) for r in refs)
    via = refs[0].via
    return f"{who}, {via}" if via else who, "; ".join(_first(f) for _, f in unique.values())


def _reached(d, calls: list):
    """`d.ref`, with how the calls reach the instance they score (`Layer.via`), when they
    do not call one built where they are."""
    steps: list[str] = []
    for call in calls:
        for step in reversed(call.module.via if call.module is not None else []):
            if step not in steps:
                steps.append(step)
    return replace(d.ref, via="; ".join(steps)) if steps else d.ref


def _pairs(calls: list) -> list[tuple]:
    """Real and fake calls that belong together: nearest first, and on a tie the pair that
    scores real before fake (a discriminator step), so that a generator step's lone
    `D(fake)` before it is not taken for half of it. A concatenated call separates."""
    segments: list[list] = [[]]
    for call in calls:
        if call.kind == "mixed":
            segments.append([])
        elif call.kind in ("real", "fake"):
            segments[-1].append(call)
    pairs = []
    for segment in segments:
        # Calls of one instance pair first: two discriminators of one class (MUNIT's
        # `dis_a` and `dis_b`) each score their own real and generated batches.
        candidates = [(segment[i].module is not segment[j].module, j - i,
                       0 if segment[i].kind == "real" else 1, i, j)
                      for i in range(len(segment)) for j in range(i + 1, len(segment))
                      if segment[i].kind != segment[j].kind]
        used: set[int] = set()
        for _, _, _, i, j in sorted(candidates):
            if i in used or j in used:
                continue
            a, b = segment[i], segment[j]
            if a.site_apart_from(b) == b.site_apart_from(a):
                continue
            used.update((i, j))
            pairs.append((a, b))
    return sorted(pairs, key=lambda p: p[0].order)


def sn302(project, ctx: Context) -> Iterator[Finding]:
    """SN302: operations that mix samples (minibatch stddev and the like). Often
    deliberate, so info and opt-in. The source's reductions are confirmed by the ones the
    built discriminator records at the same call; the runtime's others, and the coupling
    only its probe sees, are the graph's."""
    shown_by_source: set[int] = set()
    for d in project.discriminators:
        runtime = project.runtime.get(d.cls.qualname)
        classes = {d.cls.qualname}
        for inst in [d.instance] + project.instances_of(d.cls.qualname):
            if inst is not None:
                classes.update(m.layer.cls.qualname for m in members(inst) if m.layer.cls is not None)
        for r in project.events.batch_reductions:
            if r.owner is None or r.owner.cls is None or r.owner.cls.qualname not in classes:
                continue
            finding = ctx.finding(
                "SN302", r.call,
                f"{r.what} in {r.owner.short_type}.forward reduces over the batch: each score of "
                f"{describe(d.ref)} then depends on the other samples in the batch (minibatch "
                f"statistics; often deliberate, as StyleGAN's minibatch stddev)",
                symbol=f"{r.owner.short_type}.forward", discriminator=d.ref,
                data={"operation": r.what})
            if runtime is not None:
                shown = [pair for pair in runtime.facts.batch_reductions
                         if pair[1] is not None and runtime.locate(pair[1]) == r.call]
                finding = confirmed_by(finding, runtime, shown, shown_by_source)
            yield finding
    shown: list[Shown] = []
    for runtime in project.runtime.values():
        facts = runtime.facts
        for pair in facts.batch_reductions:
            if id(pair) not in shown_by_source:
                what, site = pair
                shown.append(Shown(runtime, "SN302", site, "",
                                   f"{what} reduces over the batch dimension: it mixes samples",
                                   {"operation": what}, layers=False))
        shown += _probed_coupling(runtime)
    yield from runtime_only(ctx, shown)


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
        if source.get("path") in batch_stats:
            continue
        path = source.get("path", "")
        where = f"{source.get('type', '')} `{path}`" if path else facts.target.class_name
        shown.append(Shown(runtime, "SN302", Site.from_dict(source.get("site")), path,
                           f"the batch-coupling probe sees {where} mix samples: changing one "
                           "sample's input changed the others' outputs there", {"probe": True},
                           layers=False))
    if not sources and not batch_stats:
        shown.append(Shown(runtime, "SN302", None, "",
                           "the batch-coupling probe sees samples coupled (changing one input "
                           "changed the others' outputs) and no batch norm explains it",
                           {"probe": True}, layers=False))
    return shown
