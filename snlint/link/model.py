"""The linked model: what the link step found, as frozen records the rules read.

Each module object the program builds is one `LayerFact` with a stable id, its place in
`LinkedModel.layers`; its children are named by id, since one layer may sit in two trees
(or in its own). The events (SN applications, inits, forward calls, penalties, batch
statistics) name their layers by record. What a rule would otherwise ask the interpreter
(where a member layer shows from its owner's `__init__`, whether an instance was built
with its deciding arguments known, which SN application of a layer came first) is worked
out once, when `snlint.link.freeze` builds the model, so the rules never see a frame or a
value still being computed. Class and file facts are `snlint.facts`, frozen already.
"""

from __future__ import annotations

from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

from snlint.findings import DiscriminatorRef, Location, Span
from snlint.records import dataclass

if TYPE_CHECKING:
    from snlint.facts import ClassFacts, FileFacts
    from snlint.link.join import Runtime
    from snlint.link.provenance import Evidence

_EMPTY: Mapping = MappingProxyType({})


def _empty() -> Mapping:
    return _EMPTY


# Records compare by identity: a layer's facts hold its class's facts, whose deep
# comparison and hashing nothing needs.

@dataclass(frozen=True, eq=False)
class SNFact:
    """One spectral norm put on a layer."""

    api: str  # SN_HOOK | SN_PARAM | SN_CUSTOM
    callee: str  # the SN callable as written at the call (`spectral_norm`, `SN`, `SpectralNorm`)
    call: Location  # the SN call node itself
    site: Location  # where the mistake shows, seen from the frame that built the layer
    name: str | None = "weight"  # None when not a literal
    name_arg: Location | None = None
    dim: int | None = None  # explicit dim when a literal
    dim_arg: Location | None = None
    dim_explicit: bool = False
    from_filter: bool = False  # applied by a `modules()` loop or `apply(fn)` over types
    filter_types: tuple[str, ...] = ()
    reshape: Location | None = None  # a hand-written SN's `w.view(w.shape[0], -1)`


@dataclass(frozen=True, eq=False)
class LayerFact:
    """One module object the program builds. Where one source line builds many (a block
    used four times, a loop), each is its own record with the same `call`."""

    id: int
    type: str  # torch short name (`Conv2d`) or a project class qualname
    kind: str  # a torchapi kind, "module" for project classes, "object" for plain ones
    call: Location  # the node that builds it
    cls: "ClassFacts | None" = None
    children: tuple[tuple[str, int], ...] = ()  # (attribute, layer id), in assignment order
    sn: tuple[SNFact, ...] = ()  # in the order applied
    in_loop: bool = False
    conditional: bool = False
    ambiguous: bool = False
    bypassed: bool = False  # a forward torch never calls (MultiheadAttention.out_proj)
    opaque: bool = False  # something snlint cannot follow touched its modules
    kept_in_eval: bool = False
    weight_norm: str = ""  # weight_norm's API when the layer uses it instead of SN; "own": its class normalizes its weight
    frozen: bool = False  # requires_grad_(False) in an __init__, or eval through a train() override
    base_type: str | None = None  # torch type a project subclass derives from
    origin: Location | None = None  # the `norm_layer=...` parameter whose default built it
    bound_names: tuple[str, ...] = ()  # `netD`, `self.D`: names it was bound to
    # How training code reaches this instance, outermost step last ("built by define_D() at
    # train.py:40", "copied by deepcopy at train.py:41"); empty when built where it is used.
    via: tuple[str, ...] = ()
    has_weight: bool = False  # a `weight` attribute of its own
    kernel_1x1: bool | None = None  # a literal 1x1 kernel; None when not known
    # Built with arguments, every one that can decide its layers known (a norm choice, a
    # string its `__init__` compares): that build alone decides what it holds.
    configured: bool = False
    branches: tuple[tuple[int, int], ...] = ()  # (undecided `if`, branch) it was built in
    # The call sites above `call`, innermost first (a helper's call in the `__init__` that
    # ran it, then that class's construction...): where a layer built in shared code
    # shows in the discriminator's own code (`snlint.checks.shared`).
    chain: tuple[Location, ...] = ()

    @property
    def short_type(self) -> str:
        # A class defined twice in one module has `@line` on its second qualname.
        return self.type.rsplit(".", 1)[-1].partition("@")[0]

    @property
    def qualname(self) -> str | None:
        """The project class it is an instance of."""
        return self.cls.qualname if self.cls is not None else None


def exclusive(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    """Whether two paths of undecided-`if` branches (`LayerFact.branches`,
    `ForwardFact.branches`) part at one `if`: what runs in one never runs with the other."""
    taken = dict(a)
    return any(key in taken and taken[key] != i for key, i in b)


@dataclass(frozen=True, eq=False)
class Member:
    """A layer of a module tree, with the project class instance that owns it and the
    symbol findings show (`Discriminator.main.3`)."""

    layer: LayerFact
    owner: LayerFact
    symbol: str
    # The call that builds the layer, seen from its owner's __init__: a helper that
    # returns the layer itself shows as the helper's call; a helper that returns a
    # container holding it does not (wrapping that call would put SN on the container).
    site: Location


@dataclass(frozen=True, eq=False)
class SNApplied:
    """A spectral norm the interpreter saw applied to `target`, the `index`-th on it."""

    app: SNFact
    target: LayerFact
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
    layer: LayerFact
    sn: tuple[SNFact, ...]  # the layer's spectral norms when the init ran
    param: str


@dataclass(frozen=True, eq=False)
class ForwardFact:
    """A module called in code that runs it (training code, or a forward method)."""

    module: LayerFact | None  # the instance, when known
    callee: str  # as written: `netD`, `self.D`
    call: Location
    kind: str  # "real" | "fake" | "mixed" | "unknown" | "constant" (a label, no samples): what its input is
    update: tuple  # calls with the same key belong to one update (one loop body of one function)
    function: str
    order: int
    node: Location | None = None  # the forward call itself
    chain: tuple[Location, ...] = ()  # the call, then each call site above it up to the update
    names: tuple[str, ...] = ()  # the names its input is written with: the fallback evidence
    evidence: Mapping[str, Evidence] = field(default_factory=_empty)  # {"real"/"fake": why}
    # Set when the instance was not built where it is called and the project's only
    # discriminator class was assumed: what was assumed, for the message.
    assumed: str = ""
    branches: tuple[tuple[int, int], ...] = ()  # (undecided `if`, branch) it runs in
    detached: bool = False  # its input is written `.detach()`ed: a discriminator step's

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
class BatchNormFact:
    """`F.batch_norm(..., training=True)` in a forward of `owner`."""

    owner: LayerFact | None
    call: Location


@dataclass(frozen=True, eq=False)
class ReductionFact:
    """`x.std(0)`, `torch.mean(x, dim=0)`: an operation over the batch dimension."""

    owner: LayerFact | None
    call: Location
    what: str


@dataclass(frozen=True, eq=False)
class DiscriminatorFact:
    cls: "ClassFacts"
    file: "FileFacts"
    ref: DiscriminatorRef
    instance: LayerFact | None  # the class built alone
    unused_defaults: frozenset = frozenset()  # `link.Discriminator`'s: (path, span) of parameters


@dataclass(frozen=True, eq=False)
class LinkedModel:
    layers: tuple[LayerFact, ...] = ()  # by id
    # Instances of project classes, in the order their construction finished.
    instances: tuple[LayerFact, ...] = ()
    roots: Mapping[str, LayerFact] = field(default_factory=_empty)  # qualname -> the class built alone
    discriminators: tuple[DiscriminatorFact, ...] = ()
    sn: tuple[SNApplied, ...] = ()
    sn_calls: tuple[SNCallFact, ...] = ()
    inits: tuple[InitFact, ...] = ()
    forwards: tuple[ForwardFact, ...] = ()
    penalties: tuple[PenaltyFact, ...] = ()
    # The forward calls one `loss.backward()` differentiates (more than one), in order.
    backwards: tuple[tuple[ForwardFact, ...], ...] = ()
    batch_norm_calls: tuple[BatchNormFact, ...] = ()
    batch_reductions: tuple[ReductionFact, ...] = ()
    # Construction sites a train() override keeps in eval mode.
    kept_in_eval: frozenset[tuple[str, Span]] = frozenset()
    # Class qualname -> what the graph pass built for it (`snlint.link.join.Runtime`);
    # empty without the graph pass.
    runtime: Mapping[str, "Runtime"] = field(default_factory=_empty)
    by_class: Mapping[str, tuple[LayerFact, ...]] = field(default_factory=_empty)  # qualname -> its instances
    # Layer id -> its tree's members, for each class built alone and each instance of a
    # discriminator class.
    trees: Mapping[int, tuple[Member, ...]] = field(default_factory=_empty)
    # (path, line) of each layer a module builds and nothing reads (`snlint.link.unread`):
    # in no tree above, and never run.
    unread: frozenset[tuple[str, int]] = frozenset()

    def layer(self, id: int) -> LayerFact:
        return self.layers[id]

    def instances_of(self, qualname: str) -> tuple[LayerFact, ...]:
        return self.by_class.get(qualname, ())

    def members(self, root: LayerFact) -> tuple[Member, ...]:
        """Every layer of `root`'s tree, each once, with the project class instance that
        owns it and its symbol (`DBlock.c_sc`, `Discriminator.main.3`,
        `Discriminator.layers[*]`). `root` is a class built alone (`roots`) or an instance
        of a discriminator class; the trees of other layers are not recorded (KeyError)."""
        return self.trees[root.id]

    def classes_in(self, root: LayerFact | None) -> set[str]:
        """The qualified names of the layers of `root`'s tree; none where it has no tree."""
        if root is None or root.id not in self.trees:
            return set()
        return {m.layer.qualname for m in self.trees[root.id]}
