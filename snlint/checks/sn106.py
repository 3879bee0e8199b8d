"""SN106 sn-init-of-derived-weight: an init that writes a weight the parametrization recomputes.

Source only: the runtime keeps no record of inits."""

from __future__ import annotations

from typing import Iterator

from snlint.checks.emit import Emitter
from snlint.config import Config
from snlint.checks import fixable as at
from snlint.facts import FileFacts
from snlint.findings import SAFE, Finding
from snlint.torchapi import INIT_FUNCTION, INPLACE_TENSOR_INIT, SN_PARAM


CODE = "SN106"


def check(model, emit: Emitter) -> Iterator[Finding]:
    """An init that writes a weight parametrizations.spectral_norm recomputes (source only:
    the runtime keeps no record of inits)."""
    for init in model.inits:
        normalized = [a for a in init.sn if a.api == SN_PARAM and a.name == init.param]
        if normalized:
            yield emit.finding(
                CODE, init.call,
                f"this init writes {init.layer.short_type}.{init.param}, which "
                f"parametrizations.spectral_norm recomputes on every access: it lands in a "
                f"temporary and does nothing; initialize parametrizations.{init.param}.original",
                data={"param": init.param})


def fixable(finding: Finding, facts: FileFacts, config: Config) -> str | None:
    """The applicability of the fix (`snlint.fixes.sn106`), read from the file's facts
    (`snlint.checks.fixable`): the call is an init that writes `X.<param>`
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
    return SAFE if _written_attribute(target) == param else None


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
