"""A finding's fix, decided once: `mark` asks the finding's rule, from the source facts and
without parsing anything, whether and how its fix edits the file (the rule's `fix_input`,
whose typed payload the unbuilt `Fix` holds); `plan_for` has the rule's `fix` carry that
payload out on the parsed file. So `[*]` and `--fix` answer the same decision."""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, Iterable

from snlint.config import Config
from snlint.facts import FileFacts, Names
from snlint.findings import Finding, Fix
from snlint.fix.safety import decide

if TYPE_CHECKING:  # a plain lint marks fixes without libcst
    from snlint.edit.parsed import ParsedFile
    from snlint.edit.plan import Plan

Rules = dict[str, ModuleType]  # code -> the rule module of a rule with a fix


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


def plan_for(finding: Finding, parsed: ParsedFile, config: Config, rules: Rules | None = None,
             payload: Any = None) -> Plan | None:
    """The fix for `finding` in the parsed file, built by its rule's `fix` from the payload
    its mark holds (`payload`: when the finding holds no mark), or None; its applicability
    as the safety policy decides (`snlint.fix.safety`), as `mark` does."""
    if finding.cell is not None:
        return None  # notebook cells: positions are within a cell, not the file
    if rules is None:
        from snlint.checks.registry import fixers  # the rules' modules: the link step's imports

        rules = fixers()
    rule = rules.get(finding.code)
    if payload is None and finding.fix is not None:
        payload = finding.fix.payload
    if rule is None or payload is None:
        return None
    plan = rule.fix(finding, payload, parsed)
    if plan is not None:
        plan.applicability, reason = decide(finding, plan.applicability, config)
        if reason is not None:
            plan.message = f"{plan.message}; {reason}"
    return plan


def mark(finding: Finding, facts: FileFacts, config: Config, rules: Rules) -> Fix | None:
    """The unbuilt fix of `finding`, or None when there is none: what `[*]` and the
    summary's count say on a plain lint, decided without parsing the file. The rule's
    `fix_input` decides from the file's source facts whether and how its fix edits the
    file; the payload it returns is all its libcst half (`fix`) reads, so what is marked
    is what `--fix` does (the libcst half refuses only where the tree does not hold the
    nodes the payload names). Then the safety policy (`snlint.fix.safety`) decides, as
    for the plan."""
    rule = rules.get(finding.code)
    if finding.cell is not None or rule is None:
        return None
    at = _at_node(finding, finding.names if finding.names is not None else facts.names)
    payload = rule.fix_input(at, facts, config) if at is not None else None
    if payload is None:
        return None
    return Fix(decide(finding, payload.applicability, config)[0], payload=payload)


def names_of(findings: Iterable[Finding]) -> Names | None:
    """The names the findings of one file were linted with (one lint: the same for all)."""
    return next((f.names for f in findings if f.names is not None), None)
