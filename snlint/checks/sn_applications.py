"""The spectral norms a project applies, as SN101-SN107 read them: each SN application
the source saw (`applications`), each SN state of a built discriminator's leaves
(`states`), and `linked_findings`, which joins the two at the same SN call."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from snlint.checks.emit import Emitter
from snlint.checks.fix_data import SNCall
from snlint.checks.linked import Shown, confirmed, runtime_only
from snlint.checks.verdicts import sn_off_the_weight
from snlint.findings import Finding, Location
from snlint.graph.facts import LeafFacts, Site, SNState, WeightUse
from snlint.link.model import LayerFact, LinkedModel, SNFact
from snlint.records import dataclass
from snlint.torchapi import KINDS


def filter_note(app: SNFact) -> str:
    if app.from_filter:
        return " (applied by a loop or apply() whose isinstance filter lets it through)"
    return ""


@dataclass
class Application:
    app: SNFact
    layer: LayerFact
    index: int  # its place among the layer's spectral norms
    symbol: str | None
    kind: str
    what: str


def applications(model: LinkedModel) -> Iterator[Application]:
    symbols: dict[int, str] = {}  # layer id -> its symbol, from every module built alone
    for root in model.roots.values():
        for m in model.members(root):
            symbols.setdefault(m.layer.id, m.symbol)
    for event in model.sn:
        layer = event.target
        kind = KINDS.get(layer.base_type or "", layer.kind)
        yield Application(event.app, layer, event.index, symbols.get(layer.id), kind, layer.short_type)


@dataclass
class State:
    """One SN state of a runtime leaf, with its index among the leaf's SN states."""

    leaf: LeafFacts
    state: SNState
    index: int
    # The weight the leaf computed with in a forward, when measured (`snlint.graph.weights`).
    use: WeightUse | None = None

    @property
    def ndim(self) -> int | None:
        shape = self.state.param_shape
        return len(shape) if shape is not None else None

    @property
    def call(self) -> SNCall:
        m = self.leaf
        first = m.sn[0].api if self.index else None
        return SNCall(self.state.api, m.type_name, m.kind, first_api=first)


def states(runtime) -> Iterator[State]:
    for m in runtime.facts.modules:
        for i, state in enumerate(m.sn):
            yield State(m, state, i, runtime.facts.weights.get(m.path))


def linked_findings(model: LinkedModel, emit: Emitter, code: str, source: Iterable[Finding],
            built: Callable[[State], "tuple[Site | None, str] | None"]) -> Iterator[Finding]:
    """`source` confirmed where a built discriminator's SN state at the same SN call is the
    same mistake (`built`), and the mistakes only the runtime shows."""
    judged = [(runtime, st, out) for runtime in model.runtime.values() for st in states(runtime)
              for out in [built(st)] if out is not None]
    shown_by_source: set[int] = set()
    for finding in source:
        loc = Location(finding.path, finding.span)
        same = [(runtime, i) for i, (runtime, _, (site, _)) in enumerate(judged)
                if runtime.locate(site) == loc]
        if same:
            shown_by_source.update(i for _, i in same)
            finding = confirmed(finding, same[0][0])
        yield finding
    yield from runtime_only(emit, (
        Shown(runtime, code, site, st.leaf.path, message, st.call, names_discriminator=False)
        for i, (runtime, st, (site, message)) in enumerate(judged) if i not in shown_by_source))


def on_a_vector(st: State) -> bool:
    """SN104's case, which takes precedence over SN102 and SN105 on the runtime's side."""
    return sn_off_the_weight(st.leaf.kind, st.state.name, param_ndim=st.ndim)


def shape_text(shape: tuple[int, ...] | None) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]" if shape is not None else "?"
