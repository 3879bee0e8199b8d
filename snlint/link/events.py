"""What the interpreter reports, and the names training code gives its players.

The link step reads `Events` (SN applications, init calls, forward calls of modules,
gradient penalties, batch-statistics calls) and the name patterns, and freezes the events
into the model the checks read (`snlint.link.model`); neither needs the interpreter that
fills them in, so they live apart from it.
"""

from __future__ import annotations

import re
from dataclasses import field

from snlint.findings import Location
from snlint.link.values import Layer, SNApp
from snlint.records import dataclass

# Names training code gives its players. A discriminator bound to `netD` or `self.D`, a
# generator bound to `netG`; single letters only as whole names, and a capital with a
# suffix (`D_A`) only as written: `d_losses`, `g_loss` are meters and tensors.
D_NAME = re.compile(r"(?:^|[._])(?:net_?d|d_?net|disc|discriminator|critic|model_?d|d_model)$|(?:^|\.)(?:(?-i:D_\w+)|D)$", re.I)
# A capital G alone, with a suffix (`G_AB`), a letter (fsgan's `Gb`, `Gc`) or a number (`G1`);
# not a generator's own block (SPADE's `self.G_middle_0`).
G_NAME = re.compile(r"(?:^|[._])(?:net_?g|g_?net|gen|generator|model_?g|g_model|g_ema|netg_ema)$|"
                    r"(?:^|\.)(?:(?-i:G_(?!(?:middle|head|block|layer|stage|stem|tail|res|up|down)_?\d)\w+"
                    r"|G[a-z]|G\d+)|G)$|(?:^|\.)G_ema$", re.I)
REAL_NAME = re.compile(r"real|^x$|^imgs?$|^images?$|^x_?data$|^inputs?$|^batch$|^data$|^gts?$", re.I)
FAKE_NAME = re.compile(r"fake|gen(?:erated)?_|^x_?gen|^g_?out|samples?_?g|^x_?fake|recon|^x_?rec$|^sr$", re.I)
# Classes named as discriminators (a registry's candidates for a key not known here).
DISCRIMINATOR_CLASS = re.compile(r"discriminator|critic", re.I)
# Classes named as generators: by the word, or a capital G alone or numbered for the
# domains it maps between (yunjey's mnist-svhn-transfer `G12`, `G21`).
# A generator's class: named so, `G`, `G12`, or AttnGAN's family's `G_NET` / `NetG`.
GENERATOR_CLASS = re.compile(r"(?i:generator)|^G\d*$|^(?i:g_?net|net_?g)\d*$")
DATA_SOURCE = re.compile(r"loader|dataset|dataiter|data_iter|batches", re.I)


@dataclass
class SNEvent:
    app: SNApp
    target: Layer


@dataclass
class SNCall:
    api: str
    callee: str
    call: Location


@dataclass
class InitEvent:
    call: Location
    layer: Layer
    sn: tuple[SNApp, ...]
    param: str


@dataclass
class ForwardCall:
    """A module called in code that runs it (training code, or a forward method)."""

    module: Layer | None  # the instance, when known
    callee: str  # as written: `netD`, `self.D`
    call: Location
    kind: str  # "real" | "fake" | "mixed" | "unknown" | "constant" (a label, no samples): what its input is
    update: tuple  # calls with the same key belong to one update (one loop body of one function)
    function: str
    order: int
    node: Location | None = None  # the forward call itself
    chain: tuple[Location, ...] = ()  # the call, then each call site above it up to the update
    origins: frozenset = frozenset()  # where its input came from (`provenance`)
    # Where each positional argument came from, when more than one is a tensor (a
    # conditional discriminator's `D(x, y)`): `decide_sides` reads the ones that differ.
    arguments: tuple[frozenset, ...] = ()
    branches: tuple = ()  # the undecided `if` branches it runs in (`Frame.branches`)
    names: tuple[str, ...] = ()  # the names its input is written with: the fallback evidence
    evidence: dict = field(default_factory=dict)  # {"real"/"fake": why}, once `kind` is decided
    # Set when the instance was not built where it is called and the project's only
    # discriminator class was assumed: what was assumed, for the message.
    assumed: str = ""
    detached: bool = False  # its input is written `.detach()`ed: a discriminator step's
    # The name its score is given (`d_real = D(x)`), when only that says what it scores.
    scored_into: str = ""

    def site_apart_from(self, other: "ForwardCall") -> Location:
        """Where this call shows apart from `other`: itself, or, when both are one call
        inside a helper (`run_D(x)`), the first call site above it where they differ."""
        for mine, theirs in zip(self.chain, other.chain):
            if mine != theirs:
                return mine
        return self.call


@dataclass
class Penalty:
    """`torch.autograd.grad(outputs=D(x), ..., create_graph=True)`: a gradient penalty."""

    forward: ForwardCall
    grad: Location


@dataclass
class BatchNormCall:
    owner: Layer | None
    call: Location


@dataclass
class BatchReduction:
    """`x.std(0)`, `torch.mean(x, dim=0)`: an operation over the batch dimension."""

    owner: Layer | None
    call: Location
    what: str


@dataclass
class Events:
    sn: list[SNEvent] = field(default_factory=list)
    sn_calls: list[SNCall] = field(default_factory=list)
    inits: list[InitEvent] = field(default_factory=list)
    instances: list[Layer] = field(default_factory=list)
    forwards: list[ForwardCall] = field(default_factory=list)
    penalties: list[Penalty] = field(default_factory=list)
    # The forward calls whose outputs one `loss.backward()` differentiates, when more than one.
    backwards: list[tuple[ForwardCall, ...]] = field(default_factory=list)
    batch_norm_calls: list[BatchNormCall] = field(default_factory=list)
    kept_sites: set = field(default_factory=set)
    update_roots: list = field(default_factory=list)
    batch_reductions: list[BatchReduction] = field(default_factory=list)
