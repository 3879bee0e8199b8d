"""Batch coupling in discriminators, as SN301, SN303 and SN401 read it: where each
normalizes with batch statistics (`couplings`), in the instance a call reaches
(`called_couplings`), and which real and generated calls belong together (`pairs`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from snlint.checks.emit import describe
from snlint.checks.shared import own_site, per_model
from snlint.checks.verdicts import (
    leaf_has_batch_statistics, measured_batch_normalization, normalizes_with_batch_statistics,
    probed_sources, runtime_clears_batch_norm, runtime_clears_batch_statistics,
)
from snlint.findings import Location
from snlint.graph.facts import Site
from snlint.link.join import site_key
from snlint.records import dataclass
from snlint.link.model import DiscriminatorFact, ForwardFact, LayerFact, LinkedModel, exclusive


@dataclass
class Coupling:
    """One place that makes a discriminator's output depend on the rest of the batch."""

    site: Location
    what: str
    symbol: str | None
    via_default: bool = False
    measured: str = ""  # how the graph pass found it, when the source did not
    related: tuple = ()  # the shared code that builds it (`snlint.checks.shared.own_site`)
    built: Location | None = None  # where it is built as the graph pass records it, when not `site`
    # Where the other layers `site` leads to are built (a base class's `__init__` run
    # through `super()` builds three batch norms): the graph pass's layers there count too.
    also_built: tuple = ()
    lead: str = ""  # how `site` leads to it, the end of a message (`own_site`)
    # How many layers one instance of the discriminator builds here (a block used four
    # times: 4); 1 when some are behind an `if` not decided here.
    count: int = 1
    # The project instances that own the layers built at `site` (`Member.owner`), for
    # SN401's view of which of them a forward runs (`sn401._run_apart`).
    owners: tuple = ()


def couplings(model: LinkedModel, d: DiscriminatorFact) -> list[Coupling]:
    """Batch-statistics normalization in every instance of `d` the program builds, less
    what a train() override keeps in eval mode and the defaults the project never builds
    with (`DiscriminatorFact.unused_defaults`)."""
    instances = [i for i in model.instances_of(d.cls.qualname) if i is not d.instance]
    if not d.unused_defaults:
        return couplings_in(model, d, [d.instance, *instances])
    # Nor where a factory run on its own builds it in a branch of a key it was not given
    # (`elif netD == 'pixel':`): the training code passes the key it builds with.
    found = couplings_in(model, d, [d.instance, *(i for i in instances if not i.branches)])
    return [c for c in found if not (c.via_default and (c.site.path, c.site.span) in d.unused_defaults)]


def called_couplings(model: LinkedModel, d: DiscriminatorFact, call: ForwardFact,
                     pooled: list[Coupling]) -> list[Coupling]:
    """Batch statistics in the instance a forward call reaches: that instance alone where
    training code built it with its arguments all known (`define_D(norm="instance")`),
    else every instance (`pooled`). What the graph pass measured holds for every instance."""
    module = call.module
    if module is None or module is d.instance or call.assumed or not module.configured:
        return pooled
    return couplings_in(model, d, [module]) or [c for c in pooled if c.measured]


def measured(model: LinkedModel, d: DiscriminatorFact) -> list[Coupling]:
    """The batch-statistics normalization the graph pass found in `d` built with the
    project's arguments (`Runtime.may_clear`): batch norms in training mode, `F.batch_norm`
    with batch statistics, and the modules its probe measured standardizing with them."""
    runtime = model.runtime.get(d.cls.qualname)
    if runtime is None or not runtime.may_clear:
        return []
    facts = runtime.facts
    probed = probed_sources(facts)
    how = "as measured by the graph pass" if probed else "as the built model shows"
    found: dict[tuple, Coupling] = {}

    def add(site: Site | None, what: str, path: str) -> None:
        loc = runtime.locate(site)
        found.setdefault((loc.path, loc.span), Coupling(
            loc, what, runtime.symbol(path) if path else None, measured=how))

    for source in probed:  # the module that first mixes samples first
        if measured_batch_normalization(source):
            add(Site.from_dict(source.get("site")), f"{source.get('type', '')} `{source.get('path', '')}`",
                source.get("path", ""))
    for m in facts.modules:
        if leaf_has_batch_statistics(m):
            add(m.param_site or m.site, f"{m.type_name} `{m.path}`", m.path)
    for site in facts.batch_norm_calls:
        add(site, "F.batch_norm(training=True)", "")
    return list(found.values())


@dataclass
class Definition:
    """Where the class of a module the probe measured mixing samples is written: `site`
    as recorded, `location` in the project (None outside it), and `called_at`, the
    forward's call of the module (where fx records what it inlines of an installed one)."""

    site: Site
    location: Location | None
    called_at: Site | None = None

    def holds(self, where: Location | Site | None) -> bool:
        """`where` lies in its lines, or is the forward's call of the module."""
        if isinstance(where, Site) and where == self.called_at:
            return True
        if isinstance(where, Site):
            a, b, same = where, self.site, where.file == self.site.file
        elif isinstance(where, Location) and self.location is not None:
            a, b, same = where.span, self.location.span, where.path == self.location.path
        else:
            return False
        return same and b.line <= a.line and a.end_line <= b.end_line


def definition_of(runtime, source: dict) -> Definition | None:
    defined = Site.from_dict(source.get("defined_at"))
    if defined is None:
        return None
    key = site_key(defined, runtime.display_for)
    return Definition(defined, Location(*key) if key is not None else None,
                      Site.from_dict(source.get("called_at")))


def batch_normalizing_classes(runtime) -> list[Definition]:
    """The definitions of the modules the probe measured standardizing with batch
    statistics that are no batch norm: what is written inside them is part of SN301's
    finding at the line that builds them."""
    found = []
    for source in probed_sources(runtime.facts):
        if source.get("kind") != "batch_norm" and measured_batch_normalization(source):
            defined = definition_of(runtime, source)
            if defined is not None:
                found.append(defined)
    return found


@per_model
def configured_elsewhere(model: LinkedModel) -> set[int]:
    """Ids of the forward calls whose instance was built from unknown arguments where the
    same call also runs on one the same construction builds with its arguments known (a
    method run on its own beside the script's `Model(opt).step()`): the latter says what
    trains."""
    known = {((c.call.path, c.call.span), (c.module.call.path, c.module.call.span))
             for c in model.forwards if c.module is not None and c.module.configured and not c.assumed}
    return {id(c) for c in model.forwards
            if c.module is not None and not c.module.configured
            and ((c.call.path, c.call.span), (c.module.call.path, c.module.call.span)) in known}


def trained_couplings(model: LinkedModel, d: DiscriminatorFact) -> list[Coupling]:
    """SN301's view of `d`: where every instance the training code calls was built with
    its deciding arguments known, those instances alone decide (a batch-norm default the
    project never trains with is no finding), and so do the project's builds of a class
    known only by its name that no training code calls. Otherwise every instance counts,
    the class built alone with its defaults included."""
    called: dict[int, LayerFact] = {}
    for call in _trained_calls(model).get(d.cls.qualname, ()):
        if call.module is not d.instance:
            called.setdefault(call.module.id, call.module)
    if called and all(m.configured for m in called.values()):
        return couplings_in(model, d, list(called.values()))
    if not called and d.ref.evidence == "name":
        # A factory that passes `norm='instance'` to each class it builds: the class's own
        # `norm='batch'` default is built nowhere.
        built = [i for i in model.instances_of(d.cls.qualname) if i is not d.instance]
        if built and all(i.configured for i in built) and not couplings_in(model, d, built):
            return []
    return couplings(model, d)


@per_model
def _trained_calls(model: LinkedModel) -> dict[str, list]:
    """Class qualname -> the forward calls of its instances that `trained_couplings` reads
    (not assumed, not subsumed by a configured one), in order."""
    found: dict[str, list] = {}
    subsumed = configured_elsewhere(model)
    for call in model.forwards:
        if call.module is not None and not call.assumed and id(call) not in subsumed:
            found.setdefault(call.module.qualname, []).append(call)
    return found


def couplings_in(model: LinkedModel, d: DiscriminatorFact, instances: list) -> list[Coupling]:
    found: dict[tuple, Coupling] = {}
    counts: dict[tuple, Counter] = {}  # site -> instance -> its layers built there
    uncertain: set[tuple] = set()
    runtime = model.runtime.get(d.cls.qualname)
    classes = {d.cls.qualname}
    for inst in instances:
        if inst is None:
            continue
        for m in model.members(inst):
            if m.layer.cls is not None:
                classes.add(m.layer.cls.qualname)
            kept = m.layer.kept_in_eval or (m.layer.call.path, m.layer.call.span) in model.kept_in_eval
            if not normalizes_with_batch_statistics(m.layer.kind, kept_in_eval=kept):
                continue
            built = m.layer.origin or m.site
            if runtime is not None and runtime_clears_batch_norm(runtime, built):
                continue  # built, and kept in eval mode there
            site, related, lead = (built, (), "") if m.layer.origin is not None else own_site(model, d, m)
            key = (site.path, site.span)
            counts.setdefault(key, Counter())[inst.id] += 1
            if m.layer.conditional or m.layer.read_once:
                uncertain.add(key)  # an undecided `if`, or a loop read once for all its runs
            known = found.get(key)
            if known is None:
                found[key] = Coupling(
                    site, m.layer.short_type, m.symbol, via_default=m.layer.origin is not None,
                    related=related, built=built if site is not built else None, lead=lead,
                    owners=(m.owner,))
            else:
                if site is not built and built not in (known.built, *known.also_built):
                    known = found[key] = replace(known, also_built=(*known.also_built, built))
                if all(o is not m.owner for o in known.owners):
                    found[key] = replace(known, owners=(*known.owners, m.owner))
    for call in model.batch_norm_calls:
        owner = call.owner
        if owner is not None and owner.cls is not None and owner.cls.qualname in classes:
            found.setdefault((call.call.path, call.call.span), Coupling(
                call.call, "F.batch_norm(training=True)", f"{owner.short_type}.forward"))
    for key, per_instance in counts.items():
        if key not in uncertain and max(per_instance.values()) > 1:
            found[key] = replace(found[key], count=max(per_instance.values()))
    return list(found.values())


def first_place(found: list[Coupling]) -> str:
    c = found[0]
    evidence = f", batch-coupled {c.measured}" if c.measured else ""
    return f"{c.what} at {c.site.path}:{c.site.span.line}{evidence}"


def candidates(scored: list[tuple]) -> tuple[str, str, str]:
    """(who, which candidates and why, which batch statistics) for a finding: `who` names
    one discriminator, or the first candidate a call may reach and how many others
    ("DCGAN_D or 1 other candidate"); the second names each with why it is one, for the
    evidence."""
    unique: dict[str, tuple] = {}
    for ref, found in scored:
        unique.setdefault(ref.cls, (ref, found))
    if len(unique) == 1:
        ref, found = next(iter(unique.values()))
        return describe(ref), "", first_place(found)
    refs = [r for r, _ in unique.values()]
    names = [r.cls.rpartition(":")[2] for r in refs]
    # Candidates reached in different ways (`load_network_stageI()` in one branch,
    # `load_network_stageII()` in the other) each say how; one way is said once, after them.
    apart = len({r.via for r in refs}) > 1
    listed = " or ".join(f"{describe(r, with_file=names.count(name) > 1)} "
                         f"({replace(r, via=r.via if apart else '', detail='').why()})"
                         for r, name in zip(refs, names))
    via = "" if apart else refs[0].via
    others = len(refs) - 1
    who = f"{describe(refs[0], with_file=names.count(names[0]) > 1)} or {others} other candidate{'s' if others != 1 else ''}"
    # Candidates that share a helper name its place once.
    places = dict.fromkeys(first_place(f) for _, f in unique.values())
    return who, f"Candidates: {listed}{', ' + via if via else ''}.", "; ".join(places)


def reached(d: DiscriminatorFact, calls: list[ForwardFact]):
    """`d.ref`, with how the calls reach the instance they score (`LayerFact.via`), when
    they do not call one built where they are."""
    steps: list[str] = []
    for call in calls:
        for step in reversed(call.module.via if call.module is not None else ()):
            if step not in steps:
                steps.append(step)
    return replace(d.ref, via="; ".join(steps)) if steps else d.ref


def _built_apart(a: LayerFact | None, b: LayerFact | None) -> bool:
    return a is not None and b is not None and a is not b and \
        (a.call.path, a.call.span) != (b.call.path, b.call.span)


def pairs(calls: list[ForwardFact]) -> list[tuple]:
    """Real and fake calls that belong together: nearest first, and on a tie the pair that
    scores real before fake (a discriminator step, not a generator step's lone `D(fake)`
    before it). A concatenated call separates."""
    segments: list[list] = [[]]
    for call in calls:
        if call.kind == "mixed":
            segments.append([])
        elif call.kind in ("real", "fake"):
            segments[-1].append(call)
    pairs = []
    for segment in segments:
        # Calls of one instance pair first (two discriminators of one class each score
        # their own batches); on a tie, a generated batch written `.detach()`ed (the
        # discriminator's own step) before one that is not (the generator's step).
        candidates = [(segment[i].module is not segment[j].module, j - i,
                       0 if (segment[i] if segment[i].kind == "fake" else segment[j]).detached else 1,
                       0 if segment[i].kind == "real" else 1, i, j)
                      for i in range(len(segment)) for j in range(i + 1, len(segment))
                      if segment[i].kind != segment[j].kind
                      # Not in branches that never run together (`if optimizer_idx == 0:`),
                      and not exclusive(segment[i].branches, segment[j].branches)
                      # nor one call a loop runs on another discriminator each time,
                      and not (segment[i].call == segment[j].call
                               and segment[i].module is not segment[j].module)
                      # nor two networks of one class built apart (an encoder beside `D`).
                      and not _built_apart(segment[i].module, segment[j].module)]
        used: set[int] = set()
        for *_, i, j in sorted(candidates):
            if i in used or j in used:
                continue
            a, b = segment[i], segment[j]
            used.update((i, j))
            pairs.append((a, b))
    return sorted(pairs, key=lambda p: p[0].order)


def coupled_discriminators(model: LinkedModel) -> dict[str, tuple]:
    """Discriminator qualname -> (discriminator, its couplings), for those SN303 and SN401
    judge: with batch statistics in the source (or, where it sees none, measured by the
    graph pass), less those the graph pass built as the project builds them without."""
    coupled: dict[str, tuple] = {}
    for d in model.discriminators:
        found = couplings(model, d) or measured(model, d)
        if not found:
            continue
        runtime = model.runtime.get(d.cls.qualname)
        if runtime is None or not runtime_clears_batch_statistics(runtime):
            coupled[d.cls.qualname] = (d, found)
    return coupled


def graph_evidence(found: list[Coupling]) -> bool:
    """A training-code finding rests on the graph pass's evidence alone (its pass is "graph")."""
    return bool(found) and all(c.measured for c in found)


def batch_reductions_in(model: LinkedModel, d: DiscriminatorFact) -> list:
    """The batch reductions (SN302's kind) in a forward of `d` or of a module class its
    instances are built from (each class's forward is read once, on its own)."""
    classes = {d.cls.qualname}
    for inst in [d.instance, *model.instances_of(d.cls.qualname)]:
        if inst is not None:
            classes.update(m.layer.cls.qualname for m in model.members(inst) if m.layer.cls is not None)
    return [r for r in model.batch_reductions
            if r.owner is not None and r.owner.cls is not None and r.owner.cls.qualname in classes]
