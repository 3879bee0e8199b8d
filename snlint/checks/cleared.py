"""The graph pass only adds: the source findings a built discriminator shows wrong are
kept, marked `cleared_by` with what it showed. The rules run a second time without the
runtime; a source finding the joined run lacks is cleared where a discriminator built
with the project's arguments shows it wrong at its site, and reported as found otherwise."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from snlint.checks.couplings import batch_normalizing_classes
from snlint.checks.emit import Emitter
from snlint.checks.registry import run_checks
from snlint.checks.verdicts import (
    leaf_has_batch_statistics, leaf_missing_sn, runtime_clears_batch_norm,
    runtime_clears_batch_statistics, runtime_clears_missing_sn, uses_sn,
)
from snlint.findings import Cleared, Finding, Location

if TYPE_CHECKING:
    from snlint.link.join import Runtime
    from snlint.link.model import LinkedModel


def checks_only_adding(model: LinkedModel, emit: Emitter) -> tuple[list[Finding], list[tuple[str, BaseException]]]:
    """`run_checks` over `model`, each source finding the runtime took away given back,
    cleared with the evidence or as found."""
    joined, failures = run_checks(model, emit)
    if not model.runtime:
        return joined, failures
    source, _ = run_checks(replace(model, runtime=MappingProxyType({})), emit)
    kept = {_key(f) for f in joined}
    runtimes = {r.ref.cls: r for r in model.runtime.values()}
    out = list(joined)
    for finding in source:
        if _key(finding) in kept or finding.is_diagnostic:
            continue
        ref = finding.discriminator
        runtime = runtimes.get(ref.cls) if ref is not None else None
        evidence = why_cleared(finding, runtime) if runtime is not None else None
        out.append(finding.with_(cleared_by=Cleared("graph", evidence)) if evidence else finding)
    return out, failures


def _key(f: Finding) -> tuple:
    return f.code, f.path, f.span.line, f.span.column


def why_cleared(finding: Finding, runtime: Runtime) -> str | None:
    """What the built discriminator shows that makes `finding` wrong, or None."""
    if not runtime.may_clear:
        return None
    # A finding at a discriminator's call of shared code: the layer is built at the
    # related line, where the graph pass records it.
    where = finding.related[0] if finding.related else finding
    site = Location(where.path, where.span)
    leaves = runtime.leaves_built_at(site)
    name = runtime.facts.target.class_name
    built = f"the built {name} ({runtime.facts.built_with or 'built with no arguments'})"
    if finding.code == "SN301" and runtime_clears_batch_norm(runtime, site):
        leaf = next(m for m in leaves if not leaf_has_batch_statistics(m))
        symbol = runtime.symbol(leaf.path)
        if leaf.kind != "batch_norm":
            return f"{symbol} is a {leaf.type_name}, no batch norm, in {built}"
        state = "is kept in eval mode" if leaf.kept_in_eval or not leaf.training \
            else "normalizes with running statistics"
        return f"{leaf.type_name} {symbol} {state} in {built}"
    if finding.code == "SN201" and runtime_clears_missing_sn(runtime, site):
        if not uses_sn(runtime.facts):
            return f"{built} has spectral norm on none of its conv/linear layers"
        leaf = next(m for m in leaves if not leaf_missing_sn(m))
        if leaf.sn:
            state = "has spectral norm (added at run time)"
        elif leaf.weight_norm:
            state = "is under weight normalization"
        else:
            state = "is frozen"
        return f"{leaf.type_name} {runtime.symbol(leaf.path)} {state} in {built}"
    if finding.code == "SN302" and any(d.holds(site) for d in batch_normalizing_classes(runtime)):
        # A batch reduction inside a module measured as batch normalization: SN301's.
        return (f"it is part of a module measured standardizing with batch statistics in "
                f"{built}: SN301 reports it where the discriminator builds it")
    if finding.code in ("SN401", "SN303") and runtime_clears_batch_statistics(runtime):
        kept = any(m.kind == "batch_norm" for m in runtime.facts.modules)
        how = ": its batch norms are kept in eval mode" if kept else ""
        return f"{built} normalizes with no batch statistics{how}"
    return None
