"""The values the link step's interpreter computes, and the frames it runs code in. A
module object the program builds is a value too: `Layer` (`snlint.link.model`).
"""

from __future__ import annotations

from dataclasses import field, replace
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from snlint.findings import Location
from snlint.link.model import Layer
from snlint.records import dataclass
from snlint.torchapi import KINDS, type_names

if TYPE_CHECKING:
    from snlint.facts import ClassFacts, Expr, FileFacts, FunctionFacts


# How deep calls nest before the evaluator stops following them.
MAX_DEPTH = 24


@dataclass(eq=False)
class Frame:
    """One interpretation of one function body (or of a module's top level)."""

    file: "FileFacts"
    name: str
    parent: "Frame | None" = None
    call_site: Location | None = None  # the call in the parent frame that opened this one
    self_value: "Layer | None" = None  # the instance an __init__ frame builds
    cls: "ClassFacts | None" = None
    loop_depth: int = 0
    cond_depth: int = 0
    # Loops whose body is read once for a count not known here (`range(1, n_layers)`):
    # what it builds is built that many times, not once.
    read_once: int = 0
    env: dict[str, "Value"] = field(default_factory=dict)
    returned: "Value | None" = None
    # What an undecided `if` returned while its other branch went on: the body may end there.
    early: list = field(default_factory=list)
    depth: int = 0
    loops: list = field(default_factory=list)  # spans of the loops being run, innermost last
    jumped: bool = False  # a `continue`/`break` ran: the rest of this loop body does not
    no_grad: bool = False  # running inside `with torch.no_grad():` (or inference_mode)
    # (On a root frame.) The ids of the modules an `.eval()` run so far left in eval mode,
    # no `.train()` since: their batch norms normalize with running statistics.
    in_eval: frozenset = frozenset()
    qualname: str = ""  # the function being run (recursion guard)
    function: str = ""  # the function's own name (`train`, `forward`)
    optimizer_steps: int = 0  # `optimizer.step()` calls run so far (on a root frame)
    # Which optimizer each step stepped, as written in the root's own body (None: in a helper).
    stepped: list = field(default_factory=list)
    # The branches of undecided `if`s being run, callers' included: ((token, 0 or 1), ...),
    # a token per run of an `if`. Calls in the two branches of one never run together.
    branches: tuple = ()
    # The token of an `if` whose test reads only local names, by the test and those names'
    # values: run again on the same values, it takes the same branch.
    if_tokens: dict = field(default_factory=dict)

    @contextmanager
    def looping(self, span) -> Iterator[None]:
        """Running the body of the loop at `span`; a `continue`/`break` in it ends with it."""
        self.loop_depth += 1
        self.loops.append(span)
        try:
            yield
        finally:
            self.loop_depth -= 1
            self.loops.pop()
            self.jumped = False

    def lineage(self) -> Iterator["Frame"]:
        """This frame, then each frame that called into it."""
        frame: Frame | None = self
        while frame is not None:
            yield frame
            frame = frame.parent

    @property
    def grad_free(self) -> bool:
        """Whether this frame, or one that called into it, runs inside `torch.no_grad()`."""
        return any(frame.no_grad for frame in self.lineage())

    @property
    def root(self) -> "Frame":
        return next(frame for frame in self.lineage() if frame.parent is None)

    def seen_from(self, target: "Frame", loc: Location) -> Location:
        """Where `loc` (a node in this frame) shows in `target`, an ancestor frame: the call
        there that led here. Unrelated frames see the node itself."""
        frame: Frame | None = self
        current = loc
        while frame is not None and frame is not target:
            if frame.call_site is None:
                return loc
            current = frame.call_site
            frame = frame.parent
        return current if frame is target else loc

    def call_sites(self) -> tuple[Location, ...]:
        """The calls that led to this frame, innermost first (a frame with a call site
        always has a parent)."""
        out = []
        frame = self
        while frame.call_site is not None:
            out.append(frame.call_site)
            frame = frame.parent
        return tuple(out)

    def is_within(self, ancestor: "Frame") -> bool:
        return any(frame is ancestor for frame in self.lineage())

    def runs(self, qualname: str) -> bool:
        """Whether this frame or one above it runs `qualname`: calling it would recurse."""
        return any(frame.qualname == qualname for frame in self.lineage())

    @property
    def owner_frame(self) -> "Frame | None":
        """The nearest frame, this one or above, that runs for an instance (`self`)."""
        return next((frame for frame in self.lineage() if frame.self_value is not None), None)


def running_module(frame: Frame) -> Frame | None:
    """The run of the module body of `frame`'s file this frame is part of, if any."""
    return next((f for f in frame.lineage() if f.name == "<module>" and f.file is frame.file), None)


class Value:
    pass


@dataclass(eq=False)
class UnknownV(Value):
    why: str = ""


UNKNOWN = UnknownV()


@dataclass(eq=False)
class ConstV(Value):
    value: Any
    origin: str = ""  # where a configuration value came from ("argparse default at train.py:12")


@dataclass(eq=False)
class ListV(Value):
    items: list[Value] = field(default_factory=list)
    kind: str = "list"


@dataclass(eq=False)
class DictV(Value):
    items: dict[Any, Value] = field(default_factory=dict)
    attrs: bool = False  # attribute access too (EasyDict, OmegaConf, a project dict subclass)
    origin: str = ""


@dataclass(eq=False)
class NamespaceV(Value):
    """argparse: the parser while arguments are added, or the namespace `parse_args()`
    returns (`parsed`), holding each option's default."""

    attrs: dict[str, Value] = field(default_factory=dict)
    parsed: bool = False
    origin: str = ""


@dataclass(eq=False)
class FileV(Value):
    """`open("configs/d.yaml")` with a literal path (resolved, or "" when not found)."""

    path: str
    shown: str


@dataclass(eq=False)
class FuncV(Value):
    fn: "FunctionFacts"
    file: "FileFacts"
    closure: dict[str, Value] | None = None
    bound: Value | None = None  # `self` for a bound method
    cls: "ClassFacts | None" = None


@dataclass(eq=False)
class LambdaV(Value):
    params: tuple[str, ...]
    body: Any  # facts.Expr
    file: "FileFacts"
    closure: dict[str, Value]
    star: str | None = None
    dstar: str | None = None


@dataclass(eq=False)
class ClassV(Value):
    cls: "ClassFacts"
    file: "FileFacts"
    via: str = ""  # how it was looked up ("registry ARCH_REGISTRY key 'X'"), for what it builds


@dataclass(eq=False)
class EnumMemberV(Value):
    """A member of a project `enum.Enum` class read from its class (`GANType.VANILLA`):
    its `name` is known, and its `value` when the class assigns it a constant."""

    cls: "ClassFacts"
    name: str
    value: "Expr"


@dataclass(eq=False)
class OneOfV(Value):
    """One of several classes or instances, where a key that picks one is not known
    (`define_D(opt.netD)` with `opt.netD` unknown, `{"a": A, "b": B}[args.arch]`)."""

    options: tuple[Value, ...]
    why: str  # "one of 2 classes define_D() may build", for the message
    # "discriminator": the discriminator classes a registry holds, for a key not known here.
    role: str = ""


@dataclass(eq=False)
class TorchTypeV(Value):
    name: str
    origin: Location | None = None  # a parameter default it came from

    @property
    def kind(self) -> str:
        return KINDS[self.name]


@dataclass(eq=False)
class SNFuncV(Value):
    api: str
    text: str


@dataclass(eq=False)
class PartialV(Value):
    func: Value
    args: tuple[Value, ...]
    kwargs: dict[str, Value]
    text: str = ""
    origin: Location | None = None


@dataclass(eq=False)
class NameV(Value):
    """A global name that is not a layer type: `torch.nn.init.normal_`, `builtins.isinstance`."""

    qual: str
    text: str = ""


@dataclass(eq=False)
class ModuleV(Value):
    file: "FileFacts"


@dataclass(eq=False)
class ModulesV(Value):
    """One module out of `root.modules()` (a loop variable or `apply`'s argument), narrowed
    by the `isinstance` tests seen so far."""

    root: Layer
    types: tuple[str, ...] | None = None  # torch short names / project qualnames; None = any
    exclude: tuple[str, ...] = ()
    children_only: bool = False
    name_has: tuple[str, ...] = ()  # `classname.find("Conv") != -1` (DCGAN's weights_init)
    name_lacks: tuple[str, ...] = ()

    def matches(self, layer: Layer) -> bool:
        names = {layer.type, layer.short_type, layer.base_type or ""}
        names |= type_names(layer.base_type or layer.short_type)
        if self.types is not None and not names & set(self.types):
            return False
        if any(s not in layer.short_type for s in self.name_has):
            return False
        if any(s in layer.short_type for s in self.name_lacks):
            return False
        return not names & set(self.exclude)

    def narrowed(self, **changes) -> "ModulesV":
        return replace(self, **changes)

    def members(self) -> list[tuple[str, Layer]]:
        members = self.root.named_children() if self.children_only else self.root.descendants()
        return [(p, m) for p, m in members if self.matches(m)]


@dataclass(eq=False)
class ClassOfV(Value):
    """`m.__class__` / `type(m)` of a `modules()` variable; `.__name__` of it (`named`)."""

    modules: "ModulesV"
    named: bool = False


@dataclass(eq=False)
class NameFindV(Value):
    """`classname.find("Conv")` of a ClassOfV name."""

    modules: "ModulesV"
    needle: str


@dataclass(eq=False)
class ModulesIterV(Value):
    root: Layer
    named: bool = False
    children_only: bool = False


@dataclass(eq=False)
class ParametersV(Value):
    """`module.parameters()`: a loop over it sees one parameter at a time (`ParamV`)."""

    root: Layer
    named: bool = False


@dataclass(eq=False)
class ParamV(Value):
    """A parameter out of `root.parameters()` in a loop: what the loop sets on it
    (`p.requires_grad = False`) it sets on every parameter of `root`."""

    root: Layer


@dataclass(eq=False)
class WeightV(Value):
    """A layer's parameter (`m.weight`, `m.weight.data`)."""

    owner: Value  # Layer or ModulesV
    name: str


@dataclass(eq=False)
class SuperV(Value):
    self_value: Layer
    cls: "ClassFacts"
    file: "FileFacts"


@dataclass(eq=False)
class TupleV(Value):
    items: tuple[Value, ...]


@dataclass(eq=False)
class TensorV(Value):
    """A tensor in training code, with where it came from: `real` (the data loader),
    `fake` (a generator's output), and the module calls whose outputs it carries."""

    tags: frozenset[str] = frozenset()
    outputs: tuple[tuple, ...] = ()  # (the Layer or "?", the ForwardFact of the call)
    origins: frozenset = frozenset()  # where each part came from (`snlint.link.provenance`)

    def join(self, other: "TensorV") -> "TensorV":
        return TensorV(self.tags | other.tags, self.outputs + tuple(o for o in other.outputs if o not in self.outputs),
                       self.origins | other.origins)


def tensors(value: Value) -> list[TensorV]:
    """The tensors a value is or holds."""
    if isinstance(value, TensorV):
        return [value]
    if isinstance(value, (ListV, TupleV)):
        return [t for item in value.items for t in tensors(item)]
    return []


def tensor_join(values) -> TensorV:
    """One tensor carrying what every tensor among `values` carries."""
    out = TensorV()
    for value in values:
        for t in tensors(value):
            out = out.join(t)
    return out
