"""SN301 batch-norm-in-discriminator: batch statistics in a discriminator, however spelled."""

from __future__ import annotations

from typing import Iterator

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.checks.couplings import definition_of, trained_couplings
from snlint.checks.emit import Emitter, describe, evidence as joined, lead_sentence
from snlint.checks.linked import Shown, confirmed_by, runtime_only
from snlint.checks.verdicts import (
    leaf_has_batch_statistics, measured_batch_normalization, probed_sources,
)
from snlint.config import Config
from snlint.findings import UNSAFE, Finding, Location
from snlint.graph.facts import Site


CODE = "SN301"


def check(model, emit: Emitter) -> Iterator[Finding]:
    """SN301 from the source's batch norms (less what the built discriminator keeps in
    eval mode) and the runtime leaves and `F.batch_norm` calls joined to them; a batch
    norm or call only the runtime has is judged by the same
    `normalizes_with_batch_statistics`, and a module the probe measured standardizing with
    the batch's statistics (no batch norm by type) by `measured_batch_normalization`."""
    shown_by_source: set[int] = set()
    by_source: list[Location] = []
    for d in model.discriminators:
        runtime = model.runtime.get(d.cls.qualname)
        found = trained_couplings(model, d)
        for c in found:
            by_source.append(c.site)
            where = "its norm_layer default builds " if c.via_default else ""
            finding = emit.finding(
                CODE, c.site,
                f"{where}{c.what} in {describe(d.ref)} normalizes with the statistics of the "
                f"current batch",
                symbol=c.symbol, discriminator=d.ref, data={"layer": c.what},
                evidence=joined(lead_sentence(c.lead), _MECHANISM)).with_(related=c.related)
            if runtime is not None:
                builts = [c.built or c.site, *c.also_built]
                shown = [m for built in builts for m in runtime.leaves_built_at(built)
                         if leaf_has_batch_statistics(m)]
                shown += [s for s in runtime.facts.batch_norm_calls
                          if s is not None and runtime.locate(s) in builts]
                finding = confirmed_by(finding, runtime, shown, shown_by_source)
            yield finding
    shown: list[Shown] = []
    unused = {d.cls.qualname: d.unused_defaults for d in model.discriminators}
    for qualname, runtime in model.runtime.items():
        probed = {s.get("path"): s for s in probed_sources(runtime.facts)}
        for m in runtime.facts.modules:
            if leaf_has_batch_statistics(m) and id(m) not in shown_by_source and not (
                    _unused_default(runtime, m, unused.get(qualname, frozenset()))):
                why = "in training mode" if m.training else "(track_running_stats=False)"
                evidence = _measured(m.path) if m.path in probed else "seen in the built model"
                shown.append(Shown(
                    runtime, CODE, m.param_site or m.site, m.path,
                    f"{m.type_name} `{m.path}` in {describe(runtime.ref) or 'the discriminator'} "
                    f"normalizes with the statistics of the current batch {why}",
                    {"layer": m.type_name, **({"measured": True} if m.path in probed else {})},
                    evidence=f"{evidence[0].upper()}{evidence[1:]}. {_MECHANISM}"))
        shown += [Shown(runtime, CODE, site, "",
                        f"`F.batch_norm` in {describe(runtime.ref) or 'the discriminator'} "
                        "normalizes with the statistics of the current batch in training",
                        {"layer": "F.batch_norm"}, layers=False, evidence=_MECHANISM)
                  for site in runtime.facts.batch_norm_calls if id(site) not in shown_by_source]
        shown += _standardizing(runtime, probed.values(), by_source)
    yield from runtime_only(emit, shown)


_MECHANISM = ("When real and generated samples arrive in separate batches, those statistics "
              "alone tell them apart.")


def _unused_default(runtime, m, unused: frozenset) -> bool:
    """Built by a parameter's default (`norm_layer=nn.BatchNorm2d`) that every call in the
    project replaces: the source judges the class without it, and so does the graph pass."""
    if m.param_site is None or not unused:
        return False
    at = runtime.locate(m.param_site)
    return (at.path, at.span) in unused


def _measured(path: str) -> str:
    return f"measured: perturbing sample 0 changes the other samples' output of `{path}`"


def _standardizing(runtime, sources, by_source: list[Location]) -> list[Shown]:
    """SN301 for the modules the probe measured standardizing with batch statistics that
    no batch norm type names (a hand-rolled whitening layer, a third-party block), at the
    discriminator's line that builds each. Not where a batch norm already explains it: a
    source SN301 at that line, or one (source or runtime `F.batch_norm`) written inside
    the module's own class."""
    found = []
    for source in sources:
        if source.get("kind") == "batch_norm" or not measured_batch_normalization(source):
            continue
        site = Site.from_dict(source.get("site"))
        if runtime.locate(site) in by_source:
            continue
        defined = definition_of(runtime, source)
        if defined is not None and any(map(defined.holds, [*by_source, *runtime.facts.batch_norm_calls])):
            continue
        path = source.get("path", "")
        found.append(Shown(
            runtime, CODE, site, path,
            f"{source.get('type', 'a module')} `{path}` in "
            f"{describe(runtime.ref) or 'the discriminator'} standardizes with the statistics "
            "of the current batch",
            {"layer": source.get("type", ""), "measured": True},
            evidence=f"{_measured(path)[0].upper()}{_measured(path)[1:]}, which stays the same "
            "when every sample's input to it is scaled and shifted alike, as a batch norm's "
            f"does. {_MECHANISM}"))
    return found


BATCH_NORMS = {"BatchNorm1d": 1, "BatchNorm2d": 2, "BatchNorm3d": 3, "SyncBatchNorm": 0}


BN_POSITIONS = ("num_features", "eps", "momentum", "affine", "track_running_stats")


BN_ONLY = frozenset({"momentum", "track_running_stats", "process_group"})


def _replacement(bn: str, choice: str) -> tuple[str, str]:
    """(torch.nn class, note) replacing batch norm `bn` under `norm-replacement`."""
    if choice == "identity":
        return "Identity", ""
    if choice == "instancenorm":
        dims = BATCH_NORMS[bn]
        if dims in (2, 3):
            return f"InstanceNorm{dims}d", ""
        return "GroupNorm", (f" (norm-replacement is instancenorm, but {bn} may normalize "
                             f"(N, C) features, where InstanceNorm does not apply: GroupNorm(1, C) instead)")
    return "GroupNorm", ""


# ---------------------------------------------------------------- without parsing


def fixable(finding: Finding, facts: F.FileFacts, config: Config) -> str | None:
    """The applicability of the fix (`snlint.fixes.sn301`), read from the file's facts
    (`snlint.checks.at_node`): the questions its planner asks of the tree, in its order."""
    choice = (config.norm_replacement or "groupnorm").lower()
    if choice not in ("groupnorm", "instancenorm", "identity"):
        return None
    index = at.FactsAt.of(facts)
    names = at.names_of(finding, facts)
    site = index.at(finding.node)
    if not isinstance(site, (F.Call, F.Param)) or not _in_discriminator_facts(finding, index, site):
        return None
    if isinstance(site, F.Call):
        bn = at.torch_nn_type(names, site.func)
        if bn in BATCH_NORMS:
            return UNSAFE if _nameable(names, bn, choice, site.func) and \
                _norm_args_fit(site.args, False) else None
        if at.qualified(names, site.func) == "functools.partial":
            return _partial_fixable(names, site, choice)
        return None
    default = site.default
    if default is None:
        return None
    if isinstance(default, F.Call):
        return _partial_fixable(names, default, choice) if (
            at.qualified(names, default.func) == "functools.partial") else None
    bn = at.torch_nn_type(names, default)
    if bn not in BATCH_NORMS or not _nameable(names, bn, choice, default):
        return None
    new, _ = _replacement(bn, choice)
    if new != "Identity" and at.binding_for(names, "functools.partial") is None \
            and not names.is_free("functools"):
        return None
    return UNSAFE


def discriminator_class_here(finding: Finding) -> str | None:
    """The name of the finding's discriminator class when it is defined in the finding's
    own file (a replacement is only made inside it), else None."""
    ref = finding.discriminator
    if ref is None:
        return None
    path, _, name = ref.cls.rpartition(":")
    return name.rpartition(".")[2] if path == finding.path else None


def _in_discriminator_facts(finding: Finding, index: at.FactsAt, site) -> bool:
    """The planner's `_in_discriminator_class`: the nearest class around the site is the
    finding's discriminator's."""
    name = discriminator_class_here(finding)
    if name is None:
        return False
    for anc in index.ancestors(site):
        if isinstance(anc, F.ClassFacts):
            return anc.name == name
    return False


def _nameable(names, bn: str, choice: str, like) -> bool:
    """`_nn_ref` finds a way to name the replacement."""
    new, _ = _replacement(bn, choice)
    if isinstance(like, F.Global) and "." in (like.text or "") and \
            (at.qualified(names, like) or "").rpartition(".")[0] == "torch.nn":
        return True
    return at.binding_for(names, f"torch.nn.{new}") is not None or names.is_free(new)


def bn_parameters(args) -> list[str] | None:
    """The batch-norm parameter each argument passes, given (star, keyword) per argument:
    positional ones in `BN_POSITIONS` order. None when one cannot be named (`*args`, more
    positional arguments than a batch norm takes). The planner (`snlint.fixes.sn301`) and
    its predicate here both read arguments through it."""
    named: list[str] = []
    index = 0
    for star, keyword in args:
        if star:
            return None
        if keyword is None:
            if index >= len(BN_POSITIONS):
                return None
            named.append(BN_POSITIONS[index])
            index += 1
        else:
            named.append(keyword)
    return named


def _norm_args_fit(args, in_partial: bool) -> bool:
    """`_norm_args` can map the batch norm's arguments."""
    named = bn_parameters((a.star, a.keyword) for a in args)
    return named is not None and ("num_features" in named or in_partial)


def _partial_fixable(names, call, choice: str) -> str | None:
    """`_replace_norm_partial` makes a plan."""
    pos = call.positional()
    if not pos or at.has_star(call):
        return None
    bn = at.torch_nn_type(names, pos[0].value)
    if bn not in BATCH_NORMS or not _nameable(names, bn, choice, pos[0].value):
        return None
    rest = [a for a in call.args if a is not pos[0]]
    new, _ = _replacement(bn, choice)
    if new != "Identity" and rest and not _norm_args_fit(rest, True):
        return None
    return UNSAFE
