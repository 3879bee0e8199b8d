"""Whether a hook-API spectral norm can move to `parametrizations.spectral_norm` (the fix
of SN107 and SN501, `snlint.fixes.sn_migration.migrate`), read without parsing."""

from __future__ import annotations

from snlint import facts as F
from snlint.checks import at_node as at
from snlint.findings import UNSAFE, Finding
from snlint.torchapi import SN_HOOK


def migratable(finding: Finding, facts: F.FileFacts) -> str | None:
    """`migrate`'s applicability, read from the file's facts (`snlint.checks.at_node`): a
    call of the hook API's spectral_norm (how it is renamed is the planner's choice)."""
    _, names, call = at.call_at(finding, facts)
    if call is None or at.sn_api(names, call.func) != SN_HOOK:
        return None
    return UNSAFE
