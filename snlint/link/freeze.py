"""The linked project frozen into the model the rules read (`snlint.link.model`).

Runs once per lint, after the graph pass's facts are joined. Every layer the events, the
roots and the discriminators reach, and every layer their trees hold, gets an id in the
order first reached; what the rules ask of the interpreter's frames and argument values
is answered here, once per layer and once per member of each tree the rules walk, so
freezing costs about one walk of what the program built.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from snlint.findings import Location
from snlint.link import resolve
from snlint.link.model import (
    BatchNormFact, DiscriminatorFact, ForwardFact, InitFact, LayerFact, LinkedModel, Member,
    PenaltyFact, ReductionFact, SNApplied, SNCallFact, SNFact,
)
from snlint.link.unread import Reads
from snlint.link.values import ConstV, Layer, ListV, SNApp, TupleV, UnknownV, Value

if TYPE_CHECKING:
    from snlint.link import LinkedProject


def freeze(project: LinkedProject) -> LinkedModel:
    """The model of `project`, with the graph pass's facts joined (or none)."""
    return _Freezer(project).model()


class _Freezer:
    def __init__(self, project: LinkedProject) -> None:
        self.project = project
        self.ids: dict[int, int] = {}  # id() of a Layer -> its record's id
        self.order: list[Layer] = []
        self.children: list[list[tuple[str, Layer]]] = []  # by record id
        self.facts: list[LayerFact] = []
        self.apps: dict[int, SNFact] = {}
        # id() of an __init__'s facts -> its positional parameters, and resolve.deciding of it
        self.inits: dict[int, tuple[list[str], set[str]]] = {}
        self.frames: dict[int, int] = {}  # id() of an update's frame -> its number
        self.branch_ids: dict[int, int] = {}  # id() of an undecided `if`'s token -> its number
        self.reads = Reads(project.files.values())
        self.unread: set[tuple[str, int]] = set()  # (path, line) of layers nothing reads

    def model(self) -> LinkedModel:
        project, events = self.project, self.project.events
        self.reach(events.instances)
        self.reach(project.roots.values())
        self.reach(d.instance for d in project.discriminators)
        self.reach(e.target for e in events.sn)
        self.reach(e.layer for e in events.inits)
        self.reach(c.module for c in events.forwards)
        self.reach(c.owner for c in events.batch_norm_calls)
        self.reach(r.owner for r in events.batch_reductions)
        while len(self.children) < len(self.order):  # each layer's children, breadth first
            children = self.order[len(self.children)].children()
            self.children.append(children)
            self.reach(child for _, child in children)
        self.facts = [self.layer_fact(i, layer) for i, layer in enumerate(self.order)]

        instances = tuple(self.fact(i) for i in events.instances)
        by_class: dict[str, list[LayerFact]] = {}
        for inst in instances:
            if inst.cls is not None:
                by_class.setdefault(inst.cls.qualname, []).append(inst)
        forwards = {id(c): self.forward(c) for c in events.forwards}
        return LinkedModel(
            layers=tuple(self.facts),
            instances=instances,
            roots=MappingProxyType({q: self.fact(layer) for q, layer in project.roots.items()}),
            discriminators=tuple(DiscriminatorFact(d.cls, d.file, d.ref, self.fact(d.instance), d.unused_defaults)
                                 for d in project.discriminators),
            sn=tuple(SNApplied(self.app(e.app), self.fact(e.target), _index(e.app, e.target))
                     for e in events.sn),
            sn_calls=tuple(SNCallFact(c.api, c.callee, c.call) for c in events.sn_calls),
            inits=tuple(InitFact(e.call, self.fact(e.layer), tuple(map(self.app, e.sn)), e.param)
                        for e in events.inits),
            forwards=tuple(forwards.values()),
            penalties=tuple(PenaltyFact(forwards[id(p.forward)], p.grad) for p in events.penalties),
            backwards=tuple(tuple(forwards[id(c)] for c in b) for b in events.backwards),
            batch_norm_calls=tuple(BatchNormFact(self.fact(c.owner), c.call)
                                   for c in events.batch_norm_calls),
            batch_reductions=tuple(ReductionFact(self.fact(r.owner), r.call, r.what)
                                   for r in events.batch_reductions),
            kept_in_eval=frozenset(project.kept_in_eval),
            runtime=MappingProxyType(dict(project.runtime)),
            by_class=MappingProxyType({q: tuple(v) for q, v in by_class.items()}),
            trees=MappingProxyType(self.trees()),
            unread=frozenset(self.unread),
        )

    def reach(self, layers) -> None:
        for layer in layers:
            if layer is not None and id(layer) not in self.ids:
                self.ids[id(layer)] = len(self.order)
                self.order.append(layer)

    def fact(self, layer: Layer | None) -> LayerFact | None:
        return self.facts[self.ids[id(layer)]] if layer is not None else None

    def app(self, app: SNApp) -> SNFact:
        # One application may sit on several layers (a copy shares its original's list).
        fact = self.apps.get(id(app))
        if fact is None:
            fact = self.apps[id(app)] = SNFact(
                app.api, app.callee, app.call, app.site, app.name, app.name_arg, app.dim,
                app.dim_arg, app.dim_explicit, app.from_filter, tuple(app.filter_types), app.reshape)
        return fact

    def layer_fact(self, i: int, layer: Layer) -> LayerFact:
        return LayerFact(
            i, layer.type, layer.kind, layer.call, layer.cls,
            children=tuple((name, self.ids[id(child)]) for name, child in self.children[i]),
            sn=tuple(map(self.app, layer.sn)),
            in_loop=layer.in_loop, conditional=layer.conditional, ambiguous=layer.ambiguous,
            bypassed=layer.bypassed, opaque=layer.opaque, kept_in_eval=layer.kept_in_eval,
            weight_norm=layer.weight_norm, frozen=layer.frozen, base_type=layer.base_type,
            origin=layer.origin, bound_names=tuple(layer.bound_names), via=tuple(layer.via),
            has_weight="weight" in layer.attrs, kernel_1x1=layer.kernel_is_1x1(),
            configured=self.configured(layer), branches=self.branches(layer.branches),
            chain=_chain(layer))

    def forward(self, call) -> ForwardFact:
        return ForwardFact(
            self.fact(call.module), call.callee, call.call, call.kind, self.update(call.update),
            call.function, call.order, call.node, tuple(call.chain), tuple(call.names),
            MappingProxyType(dict(call.evidence)), call.assumed, self.branches(call.branches), call.detached)

    def branches(self, path: tuple) -> tuple[tuple[int, int], ...]:
        """The undecided `if`s a frame ran in, by number (the interpreter's by a token)."""
        return tuple((self.branch_ids.setdefault(id(token), len(self.branch_ids)), i) for token, i in path)

    def update(self, key: tuple) -> tuple:
        """The interpreter keys an update by id() of the frame it runs in; the model by the
        order that frame first ran a forward call."""
        frame, *rest = key
        return (self.frames.setdefault(frame, len(self.frames)), *rest)

    def configured(self, layer: Layer) -> bool:
        """Built with arguments, and every one that can decide its layers known: a norm
        choice or a string its `__init__` compares. An unknown device list or channel count
        does not send the judgement back to the class's defaults."""
        if not (layer.args or layer.kwargs):
            return False
        init = layer.cls.method("__init__") if layer.cls is not None else None
        if init is None:
            return _all_known(layer.args) and _all_known(layer.kwargs.values())
        found = self.inits.get(id(init))
        if found is None:
            # Read once per `__init__`: a model's layers are built by a few classes.
            found = self.inits[id(init)] = (
                [p.name for p in init.params[1:] if p.kind in ("pos", "posonly")], resolve.deciding(init))
        params, deciding = found
        if len(layer.args) > len(params) or any(k not in deciding and k not in params for k in layer.kwargs):
            return _all_known(layer.args) and _all_known(layer.kwargs.values())
        bound = dict(zip(params, layer.args))
        bound.update(layer.kwargs)
        return all(_known(v) for k, v in bound.items() if k in deciding)

    def trees(self) -> dict[int, tuple[Member, ...]]:
        """The members of the trees rules walk: each class built alone, and each instance
        of a discriminator class (as training code builds, copies or calls it). Each is a
        build of its own, so the trees hardly overlap (a copy's is its original's, a module
        passed in is in both) and walking them all costs about one walk of what the
        program built."""
        project = self.project
        classes = {d.cls.qualname for d in project.discriminators}

        def of_a_discriminator(layer: Layer | None) -> bool:
            return layer is not None and layer.cls is not None and layer.cls.qualname in classes

        entries = [*project.roots.values(), *(d.instance for d in project.discriminators),
                   *filter(of_a_discriminator, project.events.instances),
                   *filter(of_a_discriminator, (c.module for c in project.events.forwards))]
        out: dict[int, tuple[Member, ...]] = {}
        for layer in entries:
            if layer is not None and self.ids[id(layer)] not in out:
                out[self.ids[id(layer)]] = tuple(self.members(layer))
        return out

    def members(self, root: Layer) -> list[Member]:
        out: list[Member] = []
        self._members(root, root, "", out, set())
        return out

    # A method, not a closure that calls itself: that would hold this freezer (and the
    # whole model) in a cycle until the cyclic collector found it.
    def _members(self, node: Layer, owner: Layer, path: str, out: list[Member], seen: set[int]) -> None:
        for name, child in self.children[self.ids[id(node)]]:
            if id(child) in seen:
                continue
            if node.cls is not None and node.init_frame is not None and self.reads.unread(node.cls, name):
                # Built, never read: it never runs (`snlint.link.unread`).
                self.unread.add((child.call.path, child.call.span.line))
                continue
            seen.add(id(child))
            if (node.kind == "container" and child.in_loop and name.isdigit()) or name.startswith("*"):
                sub = f"{path}[*]"
            else:
                sub = f"{path}.{name}" if path else name
            out.append(Member(self.fact(child), self.fact(owner), f"{owner.short_type}.{sub}",
                              _site(child, owner)))
            if child.cls is not None and child.init_frame is not None:
                self._members(child, child, "", out, seen)
            else:
                self._members(child, owner, sub, out, seen)


def _site(layer: Layer, owner: Layer) -> Location:
    """The call that builds `layer`, seen from `owner`'s __init__: a helper that returns
    the layer itself shows as the helper's call; a helper that returns a container holding
    it does not."""
    loc, frame = layer.call, layer.frame
    target = owner.init_frame
    while target is not None and frame is not target and frame.call_site is not None \
            and frame.parent is not None and frame.returned is layer:
        loc, frame = frame.call_site, frame.parent
    return loc


def _chain(layer: Layer) -> tuple[Location, ...]:
    """The call sites above the node that built `layer`, innermost first: each frame's
    call in the frame that opened it (`conv(...)` in a discriminator's `__init__`, then
    `Discriminator(...)` in the training code)."""
    out: list[Location] = []
    frame = layer.frame
    while frame is not None and frame.call_site is not None and len(out) < 32:
        out.append(frame.call_site)
        frame = frame.parent
    return tuple(out)


def _index(app: SNApp, layer: Layer) -> int:
    return next((i for i, x in enumerate(layer.sn) if x is app), 0)


def _all_known(values) -> bool:
    # A literal, most arguments (`nn.Conv2d(3, 64, 4)`), is known without a call.
    return all(type(v) is ConstV or _known(v) for v in values)


def _known(value: Value, depth: int = 0) -> bool:
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
