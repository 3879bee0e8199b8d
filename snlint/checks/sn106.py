"""SN106 sn-init-of-derived-weight: an init that writes a weight the parametrization recomputes.

Source only: the runtime keeps no record of inits."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.config import Config
from snlint.checks import at_node as at
from snlint.facts import FileFacts
from snlint.findings import SAFE, Finding
from snlint.torchapi import INIT_FUNCTION, INPLACE_TENSOR_INIT, SN_PARAM


CODE = "SN106"


def check(model, emit: Emitter) -> Iterator[Finding]:
    """An init that writes a weight parametrizations.spectral_norm recomputes (source only:
    the runtime keeps no record of inits)."""
    shared = _shared_inits(model)
    for init in model.inits:
        if _parametrized(init):
            others = shared.get((init.call, init.param))
            yield emit.finding(
                CODE, init.call,
                f"this init writes {init.layer.short_type}.{init.param}, which spectral_norm "
                f"recomputes: initialize parametrizations.{init.param}.original",
                evidence=f"parametrizations.spectral_norm recomputes {init.param} on every "
                "access: the write lands in a temporary and does nothing.",
                data={"param": init.param, **({"shared_init": others} if others else {})})


def _parametrized(init) -> bool:
    return any(a.api == SN_PARAM and a.name == init.param for a in init.sn)


def _shared_inits(model) -> dict[tuple, str]:
    """(init call, parameter) -> the classes whose layers it also initializes without the
    parametrization, for an init that reaches both kinds of layer (a shared
    `init_weights`, an `apply(weights_init)` run on the generator too): pointing it at
    `parametrizations.weight.original` alone would raise on their layers."""
    wrapped = {(init.call, init.param) for init in model.inits if _parametrized(init)}
    plain: dict[tuple, list] = {}
    for init in model.inits:
        if (init.call, init.param) in wrapped and not _parametrized(init):
            plain.setdefault((init.call, init.param), []).append(init.layer)
    if not plain:
        return {}
    builders: dict[tuple, set[str]] = {}  # construction site -> the classes that build it
    for root in model.roots.values():
        for m in model.members(root):
            builders.setdefault((m.layer.call.path, m.layer.call.span), set()).add(m.owner.short_type)
    named: dict[tuple, str] = {}
    for key, layers in plain.items():
        names = sorted(set().union(*(builders.get((l.call.path, l.call.span), set()) for l in layers)))
        named[key] = ", ".join(names[:3]) if names else "layers without it"
    return named


def fixable(finding: Finding, facts: FileFacts, config: Config) -> str | None:
    """The applicability of the fix (`snlint.fixes.sn106`), read from the file's facts
    (`snlint.checks.at_node`): the call is an init that writes `X.<param>`
    (`snlint.fixes.sn_migration.init_target`)."""
    _, names, call = at.call_at(finding, facts)
    if call is None:
        return None
    qual = at.qualified(names, call.func)
    read = at.attribute(call.func)
    if qual is not None and INIT_FUNCTION.match(qual):
        pos = call.positional()
        arg = pos[0] if pos else call.keyword("tensor")
        target = arg.value if arg is not None else None
    elif read is not None and read[0] in INPLACE_TENSOR_INIT:
        target = read[1]
    else:
        return None
    param = finding.get("param") or "weight"
    if _written_attribute(target) != param:
        return None
    if finding.get("shared_init"):
        # The planner guards the init per layer: it reads the layer twice, and names
        # torch.nn.utils.parametrize (`snlint.fixes.sn106._guarded`).
        if _layer_text(target) is None:
            return None
        if at.binding_for(names, "torch.nn.utils.parametrize") is None and not names.is_free("parametrize"):
            return None
    return SAFE


def _layer_text(target) -> str | None:
    """`X` of `X.weight[.data]` when it is a name or attribute chain."""
    if isinstance(target, str):
        parts = target.split(".")
        parts = parts[:-1] if parts[-1] == "data" else parts
        return ".".join(parts[:-1]) or None
    read = at.attribute(target)
    if read is None:
        return None
    attr, base = read
    if attr == "data":
        return _layer_text(base)
    return base if isinstance(base, str) else at.dotted(base)


def _written_attribute(target) -> str | None:
    """`weight` for `X.weight` or `X.weight.data` (`target` is a fact, or the text of a
    module-level chain the source pass kept whole)."""
    if isinstance(target, str):
        parts = target.split(".")
        if parts[-1] == "data":
            parts = parts[:-1]
        return parts[-1] if len(parts) >= 2 else None
    read = at.attribute(target)
    if read is not None and read[0] == "data":
        return _written_attribute(read[1])
    return read[0] if read is not None else None
