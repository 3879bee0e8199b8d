"""Which fix is safe: the one policy `[*]` (`planning.mark`) and `--fix`
(`planning.plan_for`) both go through (DESIGN.md, "Applicability").

`decide` demotes a fix that changes `state_dict` keys or shapes, or edits code another
network runs, then applies `extend-unsafe-fixes` / `extend-safe-fixes` as ruff does (the
more specific selector wins, unsafe on a tie). tests/graph/test_fix_safety_built.py
holds `breaks` to each rule's fixed discriminator."""

from __future__ import annotations

from snlint.config import Config
from snlint.findings import SAFE, UNSAFE, Finding
from snlint.torchapi import SN_HOOK, WEIGHTLESS

# Appended to a plan's message, which already names the keys or shapes that change.
KEYS = SHAPES = "unsafe: a checkpoint saved before the fix no longer loads with strict=True"
SHARED = "unsafe: the layer is built in code another network runs too"

# Modules with no `weight`: SN raises on them at construction, so taking it off changes no
# checkpoint. Not "loss": a loss may hold a `weight` buffer.
_NO_WEIGHT = WEIGHTLESS - {"loss"}


def decide(finding: Finding, applicability: str, config: Config) -> tuple[str, str | None]:
    """The applicability of a fix for `finding` whose rule says `applicability`, and the
    reason to add to its message when the policy made it unsafe."""
    reason = breaks(finding) if applicability == SAFE else None
    final = UNSAFE if reason is not None else applicability
    moved = override(finding.code, config)
    if moved is not None:
        final = moved
    return final, (reason if final == UNSAFE else None)


def breaks(finding: Finding) -> str | None:
    """Why a fix of `finding` may break a program that runs today, or None."""
    code = finding.code
    if finding.related:
        # At a call of code the generator runs too (`snlint.checks.shared`).
        return SHARED
    if code == "SN102":
        return None if _takes_sn_off_weightless(finding) else KEYS
    if code == "SN103":
        # Hook SN on a normalized layer raises at construction: no checkpoint exists.
        # Two parametrizations stack silently and save a second u/v.
        call = finding.data
        built = finding.pass_ != "source"
        return None if SN_HOOK in (call.api, call.first_api) and not built else KEYS
    if code == "SN105":
        return SHAPES
    if code == "SN106":
        shared = finding.data.shared_init
        return f"unsafe: the init also runs for {shared}, whose layers lack the parametrization" \
            if shared else None
    if code in ("SN101", "SN104", "SN107", "SN201", "SN501"):
        return KEYS
    return None


def _takes_sn_off_weightless(finding: Finding) -> bool:
    """SN102 on a module with no weight: a built model (the graph pass saw it) had one."""
    call = finding.data
    return finding.pass_ == "source" and call.layer != "PReLU" and call.kind in _NO_WEIGHT


def override(code: str, config: Config) -> str | None:
    """What `extend-safe-fixes` / `extend-unsafe-fixes` make of `code`'s fixes, or None."""
    # (specificity, whether unsafe: it wins a tie) of each selector that matches
    lists = ((config.extend_safe_fixes, False), (config.extend_unsafe_fixes, True))
    ranks = [(0 if s == "ALL" else len(s), unsafe)
             for selectors, unsafe in lists for s in selectors if s == "ALL" or code.startswith(s)]
    if not ranks:
        return None
    return UNSAFE if max(ranks)[1] else SAFE
