"""The linked project sealed into the model the rules read (`snlint.link.model`).

Runs once per lint, after the graph pass's facts are joined: every layer reached gets its
id, what the rules would ask of the interpreter's frames and values is answered once per
layer and per member of each tree the rules walk, and the records are made read-only.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from snlint.findings import Location
from snlint.link import resolve
from snlint.link.model import Layer, LinkedModel, Member, read_only
from snlint.link.unread import Reads
from snlint.link.values import ConstV, ListV, TupleV, UnknownV, Value

if TYPE_CHECKING:
    from snlint.link import LinkedProject

# The records the interpreter emitted (`Events`), each a field of the model of that name.
_EVENT_RECORDS = ("instances", "sn", "sn_calls", "inits", "forwards", "penalties", "backwards",
                  "batch_norm_calls", "batch_reductions")


def seal(project: LinkedProject) -> LinkedModel:
    """The model of `project`, with the graph pass's facts joined (or none)."""
    return _Sealer(project).model()


class _Sealer:
    def __init__(self, project: LinkedProject) -> None:
        self.project = project
        self.ids: dict[int, int] = {}  # id() of a Layer -> its id
        self.order: list[Layer] = []
        self.children: list[list[tuple[str, Layer]]] = []  # by id
        # id() of an __init__'s facts -> its positional parameters, and resolve.deciding of it
        self.inits: dict[int, tuple[list[str], set[str]]] = {}
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
            children = self.order[len(self.children)].named_children()
            self.children.append(children)
            self.reach(child for _, child in children)
        trees = self.trees()
        for i, layer in enumerate(self.order):
            if type(layer) is Layer:  # not sealed by an earlier model of this project
                self.settle(i, layer)
                read_only(layer)
        for call in events.forwards:
            read_only(call)

        by_class: dict[str, list[Layer]] = {}
        for inst in events.instances:
            if inst.cls is not None:
                by_class.setdefault(inst.cls.qualname, []).append(inst)
        return LinkedModel(
            layers=tuple(self.order),
            roots=MappingProxyType(dict(project.roots)),
            discriminators=tuple(project.discriminators),
            **{name: tuple(getattr(events, name)) for name in _EVENT_RECORDS},
            kept_in_eval=frozenset(events.kept_sites),
            runtime=MappingProxyType(dict(project.runtime)),
            by_class=MappingProxyType({q: tuple(v) for q, v in by_class.items()}),
            trees=MappingProxyType(trees),
            unread=frozenset(self.unread),
        )

    def reach(self, layers) -> None:
        for layer in layers:
            if layer is not None and id(layer) not in self.ids:
                self.ids[id(layer)] = len(self.order)
                self.order.append(layer)

    def settle(self, i: int, layer: Layer) -> None:
        """What the rules read of a layer and the interpreter did not keep as it ran."""
        layer.id = i
        layer.children = tuple((name, self.ids[id(child)]) for name, child in self.children[i])
        layer.sn, layer.bound_names, layer.via = tuple(layer.sn), tuple(layer.bound_names), tuple(layer.via)
        layer.has_weight = "weight" in layer.attrs
        layer.kernel_1x1 = _kernel_1x1(layer)
        layer.configured = self.configured(layer)
        layer.chain = layer.frame.call_sites()

    def configured(self, layer: Layer) -> bool:
        """Built with arguments, and every one that can decide its layers (a norm choice, a
        string its `__init__` compares) known; an unknown channel count does not count."""
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
        of a discriminator class (as training code builds, copies or calls it)."""
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
                members: list[Member] = []
                self._members(layer, layer, "", members, set())
                out[self.ids[id(layer)]] = tuple(members)
        return out

    # A method, not a closure that calls itself: that would hold this sealer (and the
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
            out.append(Member(child, owner, f"{owner.short_type}.{sub}", _site(child, owner)))
            if child.cls is not None and child.init_frame is not None:
                self._members(child, child, "", out, seen)
            else:
                self._members(child, owner, sub, out, seen)


def _site(layer: Layer, owner: Layer) -> Location:
    """The call that builds `layer`, seen from `owner`'s __init__: a helper that returns
    the layer itself shows as the helper's call; one that returns a container holding it
    does not (wrapping that call would put SN on the container)."""
    loc, frame = layer.call, layer.frame
    target = owner.init_frame
    while target is not None and frame is not target and frame.call_site is not None \
            and frame.parent is not None and frame.returned is layer:
        loc, frame = frame.call_site, frame.parent
    return loc


def _kernel_1x1(layer: Layer) -> bool | None:
    k = layer.kwargs.get("kernel_size")
    if k is None and len(layer.args) >= 3:
        k = layer.args[2]
    if isinstance(k, ConstV):
        v = k.value
        if isinstance(v, int):
            return v == 1
        if isinstance(v, tuple) and all(isinstance(x, int) for x in v):
            return all(x == 1 for x in v)
    if isinstance(k, (ListV, TupleV)) and all(isinstance(i, ConstV) for i in k.items):
        return all(i.value == 1 for i in k.items)  # type: ignore[attr-defined]
    return None


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
    # A config dict or options namespace is known as a whole.
    return True
