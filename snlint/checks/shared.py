"""Where a layer built in shared code shows in a discriminator's own code. A helper the
generator runs too builds the layer at one line for every network, which cannot change
for the discriminator alone: a finding points at the discriminator's own line that leads
there (its call of the helper, or the `__init__` parameter whose string default picks the
layer), with the helper's line as a related location."""

from __future__ import annotations

import weakref
from typing import Callable, TypeVar

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.findings import Location, Related, Span
from snlint.link.model import DiscriminatorFact, LinkedModel, Member

T = TypeVar("T")


def per_model(compute: Callable[[LinkedModel], T]) -> Callable[[LinkedModel], T]:
    """`compute(model)` once per linked model (the checks of one lint ask for it many
    times), dropped with the model."""
    memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def cached(model: LinkedModel) -> T:
        found = memo.get(model)
        if found is None:
            found = memo[model] = compute(model)
        return found
    return cached


@per_model
def discriminator_classes(model: LinkedModel) -> set[str]:
    """The discriminator classes and every project class their instances are made of."""
    inside = {d.cls.qualname for d in model.discriminators}
    for d in model.discriminators:
        for inst in (d.instance, *model.instances_of(d.cls.qualname)):
            inside |= model.classes_in(inst)
    return inside


@per_model
def outside_sites(model: LinkedModel) -> frozenset[tuple[str, Span]]:
    """(path, span) of every node that builds, or leads to, a layer of another network: in
    the trees of the classes built alone that are no discriminator nor part of one, less
    the layers a discriminator inside them owns (a wrapper that builds both networks)."""
    discriminators = {d.cls.qualname for d in model.discriminators}
    inside = discriminator_classes(model)
    out: set[tuple[str, Span]] = set()
    for qual, root in model.roots.items():
        if qual in inside or root.id not in model.trees:
            continue
        if model.classes_in(root) & discriminators:
            continue  # a wrapper that builds a discriminator: not another network
        for m in model.members(root):
            if m.owner.qualname in inside:
                continue
            out.add((m.layer.call.path, m.layer.call.span))
            out.update((loc.path, loc.span) for loc in m.layer.chain)
    return frozenset(out)


@per_model
def _constructions(model: LinkedModel) -> frozenset[tuple[str, Span]]:
    """(path, span) of every call that builds an instance of a project class."""
    return frozenset((i.call.path, i.call.span) for i in model.instances)


def own_site(model: LinkedModel, d: DiscriminatorFact, m: Member) -> tuple[Location, tuple[Related, ...], str]:
    """Where a finding about member `m` of `d` points, its related locations, and how that
    line leads to the layer: `m.site`, unless code another network runs builds it; then
    the first call above it in the owner's code that only discriminators run (or the
    parameter default that decides it), with the shared line as related."""
    outside = outside_sites(model)
    literal = m.layer.call
    if not outside or (literal.path, literal.span) not in outside:
        return m.site, (), ""
    own = None
    constructions = _constructions(model)
    for loc in m.layer.chain:
        if (loc.path, loc.span) in constructions:
            break  # past the owner's own code: its construction, in training code or a block
        if (loc.path, loc.span) not in outside:
            own = loc
            break
    if own is None or own == m.site and m.site != literal:
        return m.site, (), ""
    default = deciding_default(d, own)
    related = (Related(literal.path, literal.span,
                       f"{m.layer.short_type} built here, in code another network runs too"),)
    if default is not None:
        return default, related, "; this default picks it, in code another network runs too"
    return own, related, "; this call builds it, in code another network runs too"


def deciding_default(d: DiscriminatorFact, call: Location) -> Location | None:
    """The one parameter of the `__init__` around `call` (in `d`'s file) whose string
    default `call` passes down (`mode='C' + ac_type`): the choice of layer is made there."""
    if call.path != d.file.path or call.span.node is None:
        return None
    index = at.FactsAt.of(d.file)
    node = index.at(call.span.node)
    if not isinstance(node, F.Call):
        return None
    function = next((a for a in index.ancestors(node) if isinstance(a, F.FunctionFacts)), None)
    if function is None or function.name != "__init__":
        return None
    read: set[str] = set()
    for arg in node.args:
        read |= at.names_in(arg.value)
    picked = [p for p in function.params if p.name in read and isinstance(p.default, F.Const)
              and isinstance(p.default.value, str)]
    if len(picked) != 1:
        return None
    return Location(call.path, picked[0].span)
