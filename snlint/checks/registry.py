"""Which rules exist: every `snNNN` module of this package is one rule, matched to its page.

A rule module has `CODE`, `check(model, emit)` yielding findings over the linked model,
and, where a mechanical fix exists, `fix_input(finding, facts, config)`, which decides
from the file's source facts how the fix edits the file (a typed payload with an
`applicability`, or None), and `fix(finding, payload, parsed)`, which carries it out on
the parsed file (importing libcst inside: a plain lint only marks fixes). Adding a rule
is a page in `rules/`, a module here and its tests; nothing else names it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType

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


def fixers(modules: dict[str, ModuleType] | None = None) -> dict[str, ModuleType]:
    """Code -> rule module, for the rules that have a fix (`fix_input` and `fix`)."""
    modules = rule_modules() if modules is None else modules
    return {code: m for code, m in modules.items()
            if callable(getattr(m, "fix_input", None)) and callable(getattr(m, "fix", None))}


def premises() -> dict[str, frozenset[str]]:
    """Code -> the codes its findings stand on (`PREMISES`): SN401's separate batches
    matter only because of an SN301 batch norm, so its fix waits for the run's fixes of
    SN301 and is made only if the lint after them still finds it; SN201's wrap takes the
    discriminator's SN API, which SN501's fixes of the same run change, so it waits too."""
    return {code: frozenset(m.PREMISES) for code, m in rule_modules().items()
            if getattr(m, "PREMISES", ())}


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
