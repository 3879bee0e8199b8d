"""SN106 sn-init-of-derived-weight: an init that writes a weight the parametrization recomputes.

Source only: the runtime keeps no record of inits."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from snlint.checks.emit import Emitter
from snlint.checks.sn_migration import init_target, original_of
from snlint.config import Config
from snlint.edit.parsed import ParsedFile
from snlint.edit.plan import SAFE, Plan
from snlint.findings import Finding
from snlint.torchapi import SN_PARAM


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


def fix(finding: Finding, parsed: ParsedFile, config: Config) -> Plan | None:
    call = parsed.node(finding.node, cst.Call)
    if call is None:
        return None
    param = finding.get("param") or "weight"
    target = init_target(parsed, call, [param])
    if target is None:
        return None
    where = parsed.code(target.value)
    plan = Plan(finding.code, SAFE,
                f"Initialize `{where}.parametrizations.{param}.original` (the trained parameter) "
                f"instead of `{where}.{param}`, which is recomputed on every access; state_dict "
                f"keys do not change")
    return plan.replace(target, original_of(target, param))
