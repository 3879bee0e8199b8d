"""What the interpreter reports (`Events`: the records of `snlint.link.model` it emits as
it runs the program), and the names training code gives its players.
"""

from __future__ import annotations

import re
from dataclasses import field

from snlint.link.model import (  # noqa: F401 - DISCRIMINATOR_CLASS: the link step reads it here
    DISCRIMINATOR_CLASS, BatchFact, ForwardFact, InitFact, Layer, PenaltyFact, SNApplied, SNCallFact,
)
from snlint.records import dataclass

# Names training code gives its players. A discriminator bound to `netD` or `self.D`, a
# generator bound to `netG`; single letters only as whole names, and a capital with a
# suffix (`D_A`) only as written: `d_losses`, `g_loss` are meters and tensors.
D_NAME = re.compile(r"(?:^|[._])(?:net_?d|d_?net|disc|discriminator|critic|model_?d|d_model)$|(?:^|\.)(?:(?-i:D_\w+)|D)$", re.I)
# A capital G alone, with a suffix (`G_AB`), a letter (`Gb`) or a number (`G1`); not a
# generator's own block (`self.G_middle_0`).
G_NAME = re.compile(r"(?:^|[._])(?:net_?g|g_?net|gen|generator|model_?g|g_model|g_ema|netg_ema)$|"
                    r"(?:^|\.)(?:(?-i:G_(?!(?:middle|head|block|layer|stage|stem|tail|res|up|down)_?\d)\w+"
                    r"|G[a-z]|G\d+)|G)$|(?:^|\.)G_ema$", re.I)
REAL_NAME = re.compile(r"real|^x$|^imgs?$|^images?$|^x_?data$|^inputs?$|^batch$|^data$|^gts?$", re.I)
FAKE_NAME = re.compile(r"fake|gen(?:erated)?_|^x_?gen|^g_?out|samples?_?g|^x_?fake|recon|^x_?rec$|^sr$", re.I)
# A generator's class: named so, `G`, `G12` (a domain mapping), `G_NET` / `NetG`.
GENERATOR_CLASS = re.compile(r"(?i:generator)|^G\d*$|^(?i:g_?net|net_?g)\d*$")
DATA_SOURCE = re.compile(r"loader|dataset|dataiter|data_iter|batches", re.I)


@dataclass
class Events:
    sn: list[SNApplied] = field(default_factory=list)
    sn_calls: list[SNCallFact] = field(default_factory=list)
    inits: list[InitFact] = field(default_factory=list)
    instances: list[Layer] = field(default_factory=list)
    forwards: list[ForwardFact] = field(default_factory=list)
    penalties: list[PenaltyFact] = field(default_factory=list)
    # The forward calls whose outputs one `loss.backward()` differentiates, when more than one.
    backwards: list[tuple[ForwardFact, ...]] = field(default_factory=list)
    batch_norm_calls: list[BatchFact] = field(default_factory=list)
    kept_sites: set = field(default_factory=set)
    update_roots: list = field(default_factory=list)
    batch_reductions: list[BatchFact] = field(default_factory=list)
