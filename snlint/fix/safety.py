"""Which fix is safe: the one policy both `[*]` (`snlint.fix.planning.mark`, from the
facts) and `--fix` (`snlint.fix.planning.plan_for`, from the plan) go through, so the
two cannot disagree.

A rule's fix has an *intrinsic* applicability (its payload says whether the edit
chooses something or restructures code). A safe fix must also not break the
program (DESIGN.md, "Applicability"): no `state_dict` key or shape changes, so a released
checkpoint still loads with `strict=True`, and no edit of code another network runs.
`decide` demotes every fix that breaks one of these, with the reason its message gives,
then applies the project's `extend-unsafe-fixes` / `extend-safe-fixes` as ruff does: the
more specific selector wins, and `extend-unsafe-fixes` on a tie. Like ruff's,
`extend-safe-fixes` promotes every unsafe fix of the rule, whatever made it unsafe.

A new rule with a fix that changes keys, shapes or shared code is named in `breaks`;
tests/graph/test_fix_safety_built.py builds each rule's fixed discriminator to hold it to that."""

from __future__ import annotations

from snlint.config import Config
from snlint.findings import SAFE, UNSAFE, Finding
from snlint.torchapi import SN_HOOK, WEIGHTLESS

# Appended to a plan's message, which already names the keys or shapes that change.
KEYS = SHAPES = "unsafe: a checkpoint saved before the fix no longer loads with strict=True"
SHARED = "unsafe: the layer is built in code another network runs too"

# Modules with no `weight` at all: SN raises on them at construction (KeyError / ValueError),
# so no program with the mistake ever built, and taking SN off changes no checkpoint.
# Not "loss": a loss may hold a `weight` buffer.
_NO_WEIGHT = WEIGHTLESS - {"loss"}


def decide(finding: Finding, applicability: str, config: Config) -> tuple[str, str | None]:
    """The applicability of a fix for `finding` whose rule says `applicability`, under
    `config`, and the reason to add to its message when the policy made it unsafe."""
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
        # Pointed at the discriminator's call of code the generator runs too
        # (`snlint.checks.shared`): an edit there or in the shared line reaches both.
        return SHARED
    if code == "SN102":
        return None if _takes_sn_off_weightless(finding) else KEYS
    if code == "SN103":
        # Hook SN on a layer already normalized (either API) raises at construction: no
        # checkpoint exists. Two parametrizations stack silently and save a second u/v.
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
    best: tuple[int, int] | None = None  # (specificity, unsafe wins a tie)
    for selectors, verdict in ((config.extend_safe_fixes, 0), (config.extend_unsafe_fixes, 1)):
        for s in selectors:
            if s == "ALL" or code.startswith(s):
                rank = (0 if s == "ALL" else len(s), verdict)
                best = rank if best is None or rank > best else best
    if best is None:
        return None
    return UNSAFE if best[1] else SAFE
