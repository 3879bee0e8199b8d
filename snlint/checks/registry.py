"""Which rules exist: every `snNNN` module of this package is one rule, matched to its page.

A rule module has `CODE`, `check(model, emit)` yielding findings over the linked model
(`snlint.link.model.LinkedModel`), and, where a mechanical fix exists, optionally
`fixable(finding, facts, config)`: the applicability of the plan its fix would make,
decided from the file's source facts without parsing it (a plain lint marks fixable
findings with it and builds no fix). The fix itself, `fix(finding, parsed, config)`
returning a plan (`snlint.edit.plan.Plan`) or None, lives in `snlint/fixes/<name>.py`:
it needs libcst, which only building a fix imports. Adding a rule is a page in `rules/`,
a module here (and its planner there) and its tests; nothing else names it.
"""

from __future__ import annotations

import importlib
import importlib.util
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
    """Code -> the rule's fix planner, for the rules that have one: the module's own `fix`,
    else the `fix` of its module in `snlint.fixes`. Imports the planners (and libcst)."""
    modules = rule_modules() if modules is None else modules
    out: dict[str, Callable] = {}
    for code, m in modules.items():
        if callable(getattr(m, "fix_input", None)):
            out[code] = m  # type: ignore[assignment]
            continue
        own = getattr(m, "fix", None)
        if callable(own):
            out[code] = own
            continue
        planner = _planner_module(m)
        if planner is not None:
            out[code] = importlib.import_module(planner).fix
    return out


def fixable_codes(modules: dict[str, ModuleType] | None = None) -> set[str]:
    """The codes `fixers` has a planner for, known without importing any planner: what a
    plain lint asks, which must not pay for libcst."""
    modules = rule_modules() if modules is None else modules
    return {code for code, m in modules.items()
            if callable(getattr(m, "fix", None)) or _planner_module(m) is not None}


def _planner_module(module: ModuleType) -> str | None:
    """The name of the rule module's planner in `snlint.fixes`, when there is one."""
    name = f"snlint.fixes.{module.__name__.rpartition('.')[2]}"
    return name if importlib.util.find_spec(name) is not None else None


def premises(modules: dict[str, ModuleType] | None = None) -> dict[str, frozenset[str]]:
    """Code -> the codes its findings stand on, for the rules that declare them
    (`PREMISES`): a finding of such a rule is a mistake only because of findings of those
    rules about the same discriminator (SN401's separate real and fake batches matter
    because of an SN301 batch norm), so a fix of it waits until the run's fixes of its
    premises are made, and is made only if the lint after them still finds it."""
    modules = rule_modules() if modules is None else modules
    return {code: frozenset(m.PREMISES) for code, m in modules.items() if getattr(m, "PREMISES", ())}


def fix_predicates(modules: dict[str, ModuleType] | None = None) -> dict[str, Callable]:
    """Code -> the rule's `fixable` predicate, for the fixable rules that have one (the
    others' fixes are as their page says, wherever the planner has a node to start from)."""
    modules = rule_modules() if modules is None else modules
    codes = fixable_codes(modules)
    out: dict[str, Callable] = {}
    for code, m in modules.items():
        if code in codes and callable(getattr(m, "fix_input", None)):
            out[code] = m  # type: ignore[assignment]
        elif code in codes and callable(getattr(m, "fixable", None)):
            out[code] = m.fixable
    return out


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
