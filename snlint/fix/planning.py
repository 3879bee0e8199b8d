"""Which plan fixes a finding: the `fix` of the finding's rule (in `snlint.fixes`), where
it has one; and, without parsing anything, whether there is one (`fixability`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Collection, Iterable, Mapping

from snlint.config import Config
from snlint.facts import FileFacts, Names
from snlint.findings import Finding
from snlint.fix.safety import decide

if TYPE_CHECKING:  # a plain lint decides fixability without libcst
    from snlint.edit.parsed import ParsedFile
    from snlint.edit.plan import Plan

Planners = dict[str, Callable[[Finding, "ParsedFile", Config], "Plan | None"]]
Predicates = dict[str, Callable[[Finding, FileFacts, Config], "str | None"]]


def _at_node(finding: Finding, names: Names) -> Finding | None:
    """`finding` with the index of the node its fix starts from, or None when there is
    none: a location the graph pass reported is a position, and the fix is at the node
    the source pass read there (there is none where it read nothing)."""
    if finding.node is not None:
        return finding
    index = names.sites.get(finding.span)
    if index is None:
        return None
    return finding.with_(span=replace(finding.span, node=index))


def plan_for(finding: Finding, parsed: ParsedFile, config: Config,
             planners_by_code: Planners | None = None) -> Plan | None:
    """The fix for `finding` in the parsed file, or None; its applicability as the safety
    policy decides (`snlint.fix.safety`), as `fixability` does."""
    if finding.cell is not None:
        return None  # notebook cells: positions are within a cell, not the file
    if planners_by_code is None:
        from snlint.checks.registry import fixers  # the rules' modules: the link step's imports

        planners_by_code = fixers()
    planner = planners_by_code.get(finding.code)
    if planner is None:
        return None
    at = _at_node(finding, parsed.names.facts)
    plan = planner(at, parsed, config) if at is not None else None
    if plan is not None:
        plan.applicability, reason = decide(finding, plan.applicability, config)
        if reason is not None:
            plan.message = f"{plan.message}; {reason}"
    return plan


def fixability(finding: Finding, facts: FileFacts, config: Config, codes: Collection[str],
               predicates: Predicates, pages: Mapping[str, str]) -> str | None:
    """The applicability ("safe" / "unsafe") of the fix `plan_for` would plan for
    `finding`, or None when it would plan none, decided from the file's source facts
    without parsing the file: what `[*]` and the summary's count say on a plain lint
    (`codes`: the rules that have a planner, `snlint.checks.registry.fixable_codes`).

    The rule's `fixable` predicate decides where it has one; otherwise the fix is as the
    rule's page says (`pages`: code -> "safe" / "unsafe" / "none"); then the safety policy
    (`snlint.fix.safety`) decides, as for the plan. A predicate reads the same facts the
    planner's node came from, so the two agree on the code real projects hold
    (tests/test_fixability.py); where a planner refuses for a reason the facts do
    not show, `[*]` says more than `--fix` then does."""
    if finding.cell is not None or finding.code not in codes:
        return None
    at = _at_node(finding, finding.names if finding.names is not None else facts.names)
    if at is None:
        return None
    predicate = predicates.get(finding.code)
    if predicate is not None:
        applicability = predicate(at, facts, config)
    else:
        page = pages.get(finding.code)
        applicability = page if page in ("safe", "unsafe") else None
    return decide(finding, applicability, config)[0] if applicability is not None else None


def names_of(findings: Iterable[Finding]) -> Names | None:
    """The names the findings of one file were linted with (one lint: the same for all)."""
    return next((f.names for f in findings if f.names is not None), None)
