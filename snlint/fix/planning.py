"""A finding's fix, decided once: `mark` has the rule's `fix_input` decide from the source
facts (its payload goes in the unbuilt `Fix`), and `plan_for` has the rule's `fix` carry
that payload out on the parsed file, so `[*]` and `--fix` agree."""

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
    """`finding` with the index of the node its fix starts from (for a position the graph
    pass reported, the node the source pass read there), or None."""
    if finding.node is not None:
        return finding
    index = names.sites.get(finding.span)
    if index is None:
        return None
    return finding.with_(span=replace(finding.span, node=index))


def plan_for(finding: Finding, parsed: ParsedFile, config: Config, rules: Rules | None = None,
             payload: Any = None) -> Plan | None:
    """The fix for `finding` in the parsed file, built by its rule's `fix` from its mark's
    payload (or `payload`), or None; its applicability as `snlint.fix.safety` decides."""
    if finding.cell is not None:
        return None  # a cell's positions are not the file's
    if rules is None:
        from snlint.checks.registry import fixers

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
    """The unbuilt fix of `finding` (what `[*]` says), or None, decided by the rule's
    `fix_input` from the file's facts and by the safety policy."""
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
