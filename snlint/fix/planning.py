"""Which plan fixes a finding: the `fix` of the finding's rule (in `snlint.fixes`), where
it has one; and, without parsing anything, whether there is one (`fixability`)."""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping

from snlint.config import Config
from snlint.facts import FileFacts, Names
from snlint.findings import Finding, Fix
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
             planners_by_code: Planners | None = None, payload: Any = None) -> Plan | None:
    """The fix for `finding` in the parsed file, or None; its applicability as the safety
    policy decides (`snlint.fix.safety`), as `mark` does. A rule with a `fix_input`
    builds it from the payload its mark holds (`payload`: the mark's, when the finding
    has none)."""
    if finding.cell is not None:
        return None  # notebook cells: positions are within a cell, not the file
    if planners_by_code is None:
        from snlint.checks.registry import fixers  # the rules' modules: the link step's imports

        planners_by_code = fixers()
    planner = planners_by_code.get(finding.code)
    if planner is None:
        return None
    if isinstance(planner, ModuleType):
        if payload is None and finding.fix is not None:
            payload = finding.fix.payload
        plan = planner.fix(finding, payload, parsed) if payload is not None else None
    else:
        at = _at_node(finding, parsed.names.facts)
        plan = planner(at, parsed, config) if at is not None else None
    if plan is not None:
        plan.applicability, reason = decide(finding, plan.applicability, config)
        if reason is not None:
            plan.message = f"{plan.message}; {reason}"
    return plan


def mark(finding: Finding, facts: FileFacts, config: Config, codes: Collection[str],
         predicates: Predicates, pages: Mapping[str, str]) -> Fix | None:
    """The unbuilt fix of `finding` (its applicability, and the payload its rule's fix is
    built from), or None when there is none, decided from the file's source facts without
    parsing the file: what `[*]` and the summary's count say on a plain lint (`codes`:
    the rules that have a fix, `snlint.checks.registry.fixable_codes`).

    A rule with a `fix_input` decides there, from the facts, whether and how its fix
    edits the file; the payload it returns is all its libcst half (`fix`) reads, so what
    is marked is what `--fix` does. Then the safety policy (`snlint.fix.safety`) decides,
    as for the plan."""
    if finding.cell is not None or finding.code not in codes:
        return None
    at = _at_node(finding, finding.names if finding.names is not None else facts.names)
    if at is None:
        return None
    predicate = predicates.get(finding.code)
    payload = None
    if isinstance(predicate, ModuleType):
        payload = predicate.fix_input(at, facts, config)
        applicability = payload.applicability if payload is not None else None
    elif predicate is not None:
        applicability = predicate(at, facts, config)
    else:
        page = pages.get(finding.code)
        applicability = page if page in ("safe", "unsafe") else None
    if applicability is None:
        return None
    return Fix(decide(finding, applicability, config)[0], payload=payload)


def names_of(findings: Iterable[Finding]) -> Names | None:
    """The names the findings of one file were linted with (one lint: the same for all)."""
    return next((f.names for f in findings if f.names is not None), None)
