"""Rule logic: small functions from the linked project to findings.

Checks never parse, import, read files or print. Each family module exposes
`check(project, ctx)` yielding findings, built by one function per code from the linked
facts: the source's layers and what the graph pass built for them (`checks.linked`).
`Context` turns a code and a location into a Finding with the catalogue's name and
severity; `merge_instances` keeps one finding per code and site.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from snlint.checks.catalogue import Rule
from snlint.findings import DiscriminatorRef, Finding, Location


@dataclass
class Context:
    rules: dict[str, Rule]
    _seen: dict[tuple[str, str, Any], int] = field(default_factory=dict)

    def finding(self, code: str, loc: Location, message: str, *, symbol: str | None = None,
                discriminator: DiscriminatorRef | None = None,
                data: dict[str, Any] | None = None) -> Finding:
        name, severity = self.meta(code)
        return Finding(code, name, severity, message, loc.path, loc.span,
                       symbol=symbol, discriminator=discriminator,
                       data=tuple(sorted((data or {}).items())))


    def meta(self, code: str) -> tuple[str, str]:
        rule = self.rules.get(code)
        if rule is not None:
            return rule.name, rule.severity
        # `snlint.audit` where the rule pages are not installed.
        return _FALLBACK[code]


_FALLBACK = {
    "SN101": ("sn-on-normalization", "error"),
    "SN102": ("sn-on-weightless-layer", "error"),
    "SN103": ("sn-applied-twice", "error"),
    "SN104": ("sn-wrong-parameter", "error"),
    "SN105": ("sn-wrong-dim", "warning"),
    "SN106": ("sn-init-of-derived-weight", "warning"),
    "SN107": ("sn-never-applied", "error"),
    "SN201": ("missing-sn", "error"),
    "SN301": ("batch-norm-in-discriminator", "error"),
    "SN302": ("batch-coupled-op-in-discriminator", "info"),
    "SN303": ("batch-norm-with-gradient-penalty", "error"),
    "SN401": ("separate-real-fake-batches", "error"),
    "SN501": ("legacy-spectral-norm", "info"),
}


def merge_instances(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (code, site). The interpreter builds a class once on its own and
    again inside every module that uses it, so the same site is seen many times; checks
    that count instances say so in their own message."""
    seen: dict[tuple, Finding] = {}
    for f in findings:
        seen.setdefault((f.code, f.path, f.span), f)
    return list(seen.values())


def run_checks(project, ctx: Context) -> tuple[list[Finding], list[tuple[str, BaseException]]]:
    """Findings of every rule family, and the families that failed (snlint's bug: the
    others still report)."""
    from snlint.checks import coupling, coverage, placement

    findings: list[Finding] = []
    failures: list[tuple[str, BaseException]] = []
    for family in (placement, coverage, coupling):
        try:
            findings.extend(family.check(project, ctx))
        except Exception as e:  # noqa: BLE001
            failures.append((family.__name__.rsplit(".", 1)[-1], e))
    return merge_instances(findings), failures


def describe(ref: DiscriminatorRef | None) -> str:
    if ref is None:
        return ""
    cls = ref.cls.rpartition(":")[2]
    why = {"configuration": "configured as a discriminator",
           "name": "a discriminator by its name",
           "training code": "used as a discriminator by the training code"}.get(ref.evidence, ref.evidence)
    via = f"; {ref.via}" if ref.via else ""
    return f"{cls} ({why}{'; ' + ref.detail if ref.detail else ''}{via})"


def iter_unique(items: Iterable[Any], key) -> Iterator[Any]:
    seen = set()
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            yield item
