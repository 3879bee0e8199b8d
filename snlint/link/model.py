"""The linked model: the records the link step emits and the rules read.

Each record is created once, by the interpreter. What is whole when it happens (an SN
call, an init call, a gradient penalty) is frozen from the start. A layer is filled in
while the program runs, and a forward call learns what it scores once the discriminators
are known: both are made read-only by `snlint.link.seal` when the link is done, so a
rule never sees a value still being computed.
"""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

from snlint.findings import DiscriminatorRef, Location, Span
from snlint.records import dataclass

# Classes named as discriminators (a registry's candidates for a key not known here; a
# class a discriminator is made of that is discriminator code itself, for SN301's fix).
DISCRIMINATOR_CLASS = re.compile(r"discriminator|critic", re.I)

if TYPE_CHECKING:
    from snlint.facts import ClassFacts, FileFacts
    from snlint.link.join import Runtime
    from snlint.link.provenance import Evidence
    from snlint.link.values import Frame, Value

_EMPTY: Mapping = MappingProxyType({})


def _empty() -> Mapping:
    return _EMPTY


# Records compare by identity: deep comparison of the class facts they hold is not needed.

@dataclass(frozen=True, eq=False)
class SNFact:
    """One spectral norm put on a layer."""

    api: str  # SN_HOOK | SN_PARAM | SN_CUSTOM
    callee: str  # the SN callable as written at the call (`spectral_norm`, `SN`, `SpectralNorm`)
    call: Location  # the SN call node itself
    site: Location  # where the mistake shows, seen from the frame that built the layer
    name: str | None = "weight"  # None when not a literal
    dim: int | None = None  # explicit dim when a literal
    dim_arg: Location | None = None
    from_filter: bool = False  # applied by a `modules()` loop or `apply(fn)` over types
    reshape: Location | None = None  # a hand-written SN's `w.view(w.shape[0], -1)`


@dataclass(eq=False)
class Layer:
    """One module object the program builds: one record per object, so a line that
    builds many (a loop) gives records with the same `call`. Also an interpreter value."""

    type: str  # torch short name (`Conv2d`) or a project class qualname
    kind: str  # a torchapi kind, "module" for project classes, "object" for plain ones
    call: Location  # the node that builds it
    frame: "Frame"  # the frame that built it
    cls: "ClassFacts | None" = None
    args: tuple["Value", ...] = ()
    kwargs: dict[str, "Value"] = field(default_factory=dict)
    sn: "list[SNFact] | tuple[SNFact, ...]" = field(default_factory=list)  # in the order applied
    attrs: dict[str, "Value"] = field(default_factory=dict)  # `self.x = ...`, add_module
    children_order: list[str] = field(default_factory=list)
    in_loop: bool = False
    conditional: bool = False
    read_once: bool = False  # built in a loop's body read once for all its runs
    ambiguous: bool = False
    bypassed: bool = False  # a forward torch never calls (MultiheadAttention.out_proj)
    init_frame: "Frame | None" = None
    opaque: bool = False  # something snlint cannot follow touched its modules
    kept_in_eval: bool = False
    weight_norm: str = ""  # weight_norm's API used instead of SN; "own": its class normalizes it
    frozen: bool = False  # requires_grad_(False) in an __init__, or eval through a train() override
    base_type: str | None = None  # torch type a project subclass derives from
    origin: Location | None = None  # the `norm_layer=...` parameter whose default built it
    bound_names: "list[str] | tuple[str, ...]" = field(default_factory=list)  # `netD`, `self.D`: names it was bound to
    # The undecided `if` branches it was built in (`Frame.branches`): ((token, branch), ...).
    branches: tuple = ()
    called_methods: set[str] = field(default_factory=set)  # its methods that already ran
    # How training code reaches this instance, outermost step last ("built by define_D() at
    # train.py:40"); empty when built where it is used.
    via: "list[str] | tuple[str, ...]" = field(default_factory=list)
    # Set when the link is done (`snlint.link.seal`):
    id: int = -1  # its place in `LinkedModel.layers`
    children: tuple[tuple[str, int], ...] = ()  # (attribute, layer id), in assignment order
    has_weight: bool = False  # a `weight` attribute of its own
    kernel_1x1: bool | None = None  # a literal 1x1 kernel; None when not known
    configured: bool = False  # built with every argument that can decide its layers known
    # The call sites above `call`, innermost first: where a layer built in shared code shows
    # in the discriminator's own code (`snlint.checks.shared`).
    chain: tuple[Location, ...] = ()

    @property
    def short_type(self) -> str:
        # A class defined twice in one module has `@line` on its second qualname.
        return self.type.rsplit(".", 1)[-1].partition("@")[0]

    @property
    def qualname(self) -> str | None:
        """The project class it is an instance of."""
        return self.cls.qualname if self.cls is not None else None

    @property
    def picked_among(self) -> str | None:
        """The step of `via` that says a key not known here picked this instance's class."""
        return next((step for step in self.via if step.startswith("one of ")), None)

    def set_attr(self, name: str, value: "Value") -> None:
        if name not in self.attrs:
            self.children_order.append(name)
        self.attrs[name] = value

    def named_children(self) -> list[tuple[str, "Layer"]]:
        out = []
        for name in self.children_order:
            value = self.attrs.get(name)
            if isinstance(value, Layer):
                out.append((name, value))
        return out

    def descendants(self, path: str = "", seen: set[int] | None = None) -> list[tuple[str, "Layer"]]:
        seen = set() if seen is None else seen
        out: list[tuple[str, Layer]] = []
        for name, child in self.named_children():
            if id(child) in seen:
                continue
            seen.add(id(child))
            sub = f"{path}.{name}" if path else name
            out.append((sub, child))
            out.extend(child.descendants(sub, seen))
        return out


# The name the rules know a layer by.
LayerFact = Layer


def exclusive(a: tuple, b: tuple) -> bool:
    """Whether two paths of undecided-`if` branches (`Layer.branches`) part at one `if`."""
    taken = dict(a)
    return any(key in taken and taken[key] != i for key, i in b)


@dataclass(frozen=True, eq=False)
class Member:
    """A layer of a module tree, with the project class instance that owns it and the
    symbol findings show (`Discriminator.main.3`)."""

    layer: Layer
    owner: Layer
    symbol: str
    site: Location  # the call that builds the layer, seen from its owner's __init__ (`seal._site`)


@dataclass(frozen=True, eq=False)
class SNApplied:
    """A spectral norm the interpreter saw applied to `target`, the `index`-th on it."""

    app: SNFact
    target: Layer
    index: int


@dataclass(frozen=True, eq=False)
class SNCallFact:
    api: str
    callee: str
    call: Location


@dataclass(frozen=True, eq=False)
class InitFact:
    """An init call (`nn.init.normal_(m.weight)`) on a parameter of `layer`."""

    call: Location
    layer: Layer
    sn: tuple[SNFact, ...]  # the layer's spectral norms when the init ran
    param: str


@dataclass(eq=False)
class ForwardFact:
    """A module called in code that runs it (training code, or a forward method)."""

    module: Layer | None  # the instance, when known
    callee: str  # as written: `netD`, `self.D`
    call: Location
    kind: str  # "real" | "fake" | "mixed" | "unknown" | "constant" (a label): what its input is
    update: tuple  # calls with the same key belong to one update (up to an optimizer step)
    function: str
    order: int
    node: Location | None = None  # the forward call itself
    chain: tuple[Location, ...] = ()  # the call, then each call site above it up to the update
    origins: frozenset = frozenset()  # where its input came from (`provenance`)
    # Where each positional argument came from, when more than one is a tensor (`D(x, y)`).
    arguments: tuple[frozenset, ...] = ()
    branches: tuple = ()  # the undecided `if` branches it runs in (`Frame.branches`)
    names: tuple[str, ...] = ()  # the names its input is written with: the fallback evidence
    evidence: Mapping[str, "Evidence"] = field(default_factory=_empty)  # {"real"/"fake": why}, once `kind` is decided
    assumed: str = ""  # the discriminator class assumed for a call through a bare name, why
    detached: bool = False  # its input is written `.detach()`ed: a discriminator step's
    scored_into: str = ""  # the name its score is given (`d_real = D(x)`)
    eval_mode: bool = False  # its module was left in eval mode by training code before it
    # The module calls whose output it scores (`TensorV.outputs` of its sample): the trunk a
    # head is fed by (`netC(netD(x), c)`), which a gradient on the head's score goes through.
    fed_by: tuple = ()

    def site_apart_from(self, other: "ForwardFact") -> Location:
        """Where this call shows apart from `other`: itself, or, when both are one call
        inside a helper (`run_D(x)`), the first call site above it where they differ."""
        for mine, theirs in zip(self.chain, other.chain):
            if mine != theirs:
                return mine
        return self.call


@dataclass(frozen=True, eq=False)
class PenaltyFact:
    """`torch.autograd.grad(outputs=D(x), ..., create_graph=True)`: a gradient penalty."""

    forward: ForwardFact
    grad: Location


@dataclass(frozen=True, eq=False)
class BatchFact:
    """An operation in a forward of `owner` over the batch dimension: an
    `F.batch_norm(..., training=True)`, or a reduction (`x.std(0)`, `torch.mean(x, dim=0)`)
    that says `what` it is."""

    owner: Layer | None
    call: Location
    what: str = ""


@dataclass(frozen=True, eq=False)
class DiscriminatorFact:
    cls: "ClassFacts"
    file: "FileFacts"
    ref: DiscriminatorRef
    instance: Layer | None  # the class built alone
    # Known by its name only: the parameters (path, span) whose defaults built its layers
    # and that the project always passes (not judged).
    unused_defaults: frozenset = frozenset()


@dataclass(frozen=True, eq=False)
class LinkedModel:
    layers: tuple[Layer, ...] = ()  # by id
    # Instances of project classes, in the order their construction finished.
    instances: tuple[Layer, ...] = ()
    roots: Mapping[str, Layer] = field(default_factory=_empty)  # qualname -> the class built alone
    discriminators: tuple[DiscriminatorFact, ...] = ()
    sn: tuple[SNApplied, ...] = ()
    sn_calls: tuple[SNCallFact, ...] = ()
    inits: tuple[InitFact, ...] = ()
    forwards: tuple[ForwardFact, ...] = ()
    penalties: tuple[PenaltyFact, ...] = ()
    # The forward calls one `loss.backward()` differentiates (more than one), in order.
    backwards: tuple[tuple[ForwardFact, ...], ...] = ()
    batch_norm_calls: tuple[BatchFact, ...] = ()
    batch_reductions: tuple[BatchFact, ...] = ()
    # Construction sites a train() override keeps in eval mode.
    kept_in_eval: frozenset[tuple[str, Span]] = frozenset()
    runtime: Mapping[str, "Runtime"] = field(default_factory=_empty)  # qualname -> graph facts
    by_class: Mapping[str, tuple[Layer, ...]] = field(default_factory=_empty)  # qualname -> its instances
    # Layer id -> its tree's members, for each class built alone and each discriminator instance.
    trees: Mapping[int, tuple[Member, ...]] = field(default_factory=_empty)
    # (path, line) of each layer a module builds and nothing reads (`snlint.link.unread`).
    unread: frozenset[tuple[str, int]] = frozenset()

    def layer(self, id: int) -> Layer:
        return self.layers[id]

    def instances_of(self, qualname: str) -> tuple[Layer, ...]:
        return self.by_class.get(qualname, ())

    def members(self, root: Layer) -> tuple[Member, ...]:
        """Every layer of `root`'s tree, each once, with its owner and symbol. `root` is a
        class built alone or a discriminator instance; other trees are not recorded."""
        return self.trees[root.id]

    def classes_in(self, root: Layer | None) -> set[str]:
        """The qualified names of the layers of `root`'s tree; none where it has no tree."""
        if root is None or root.id not in self.trees:
            return set()
        return {m.layer.qualname for m in self.trees[root.id]}


def _read_only(self, name: str, value: object = None) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


# Subclasses with no state of their own, so a record can take one on (`read_only`).
class _SealedLayer(Layer):
    __slots__ = ()
    __setattr__ = _read_only
    __delattr__ = _read_only


class _SealedForward(ForwardFact):
    __slots__ = ()
    __setattr__ = _read_only
    __delattr__ = _read_only


_SEALED = {Layer: _SealedLayer, ForwardFact: _SealedForward}


def read_only(record: Layer | ForwardFact) -> None:
    """Make a layer or a forward call read-only, as the other records are from the start."""
    sealed = _SEALED.get(type(record))
    if sealed is not None:
        record.__class__ = sealed
