"""Which rules exist: every `snNNN` module of this package is one rule, matched to its page.

A rule module has `CODE`, `check(model, emit)` yielding findings over the linked model
(`snlint.link.model.LinkedModel`), and, where a mechanical fix exists, `fix(finding,
parsed, config)` returning a plan (`snlint.edit.plan.Plan`) or None, and optionally
`fixable(finding, facts, config)`: the applicability of the plan `fix` would make, decided
from the file's source facts without parsing it (a plain lint marks fixable findings
with it and builds no fix). Adding a rule is a page in `rules/`, a module here and its
tests; nothing else names it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType
from typing import Callable

from snlint.checks.emit import Emitter, merge_instances
from snlint.findings import Finding
from snlint.link.model import LinkedModel


_RULE_MODULE = re.compile(r"^sn\d{3}$")


def rule_modules() -> dict[str, ModuleType]:
    """Code -> module, for every rule module in this package."""
    import snlint.checks as package

    modules: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if _RULE_MODULE.match(info.name):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            if getattr(module, "CODE", None) != info.name.upper():
                raise ImportError(f"{module.__name__}: CODE must be {info.name.upper()!r}")
            modules[module.CODE] = module
    return dict(sorted(modules.items()))


def fixers(modules: dict[str, ModuleType] | None = None) -> dict[str, Callable]:
    """Code -> the rule's fix planner, for the rules that have one."""
    modules = rule_modules() if modules is None else modules
    return {code: m.fix for code, m in modules.items() if callable(getattr(m, "fix", None))}


def fix_predicates(modules: dict[str, ModuleType] | None = None) -> dict[str, Callable]:
    """Code -> the rule's `fixable` predicate, for the fixable rules that have one (the
    others' fixes are as their page says, wherever the planner has a node to start from)."""
    modules = rule_modules() if modules is None else modules
    return {code: m.fixable for code, m in modules.items()
            if callable(getattr(m, "fix", None)) and callable(getattr(m, "fixable", None))}


def run_checks(model: LinkedModel, emit: Emitter) -> tuple[list[Finding], list[tuple[str, BaseException]]]:
    """Findings of every rule over `model`, and the rules that failed (snlint's bug: the
    others still report)."""
    findings: list[Finding] = []
    failures: list[tuple[str, BaseException]] = []
    for code, module in rule_modules().items():
        if code not in emit.rules:
            continue  # a module without a page is no rule (the page tests say so)
        try:
            findings.extend(module.check(model, emit))
        except Exception as e:  # noqa: BLE001
            failures.append((code, e))
    return merge_instances(findings), failures
