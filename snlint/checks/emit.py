"""How a rule says what it found: `Emitter` turns a code, a location and a message into a
Finding carrying the page's name and severity; `describe` names a discriminator the same
way in every rule's message."""

from __future__ import annotations

from typing import Any, Iterable

from snlint.catalogue import Rule
from snlint.findings import DiscriminatorRef, Finding, Location
from snlint.records import dataclass


@dataclass
class Emitter:
    rules: dict[str, Rule]

    def finding(self, code: str, loc: Location, message: str, *, symbol: str | None = None,
                discriminator: DiscriminatorRef | None = None,
                data: Any = None, evidence: str = "") -> Finding:
        """`message`: what and where, short enough for one line; `evidence`: why it
        holds (the mechanism, the measured values, the candidates), for the full formats."""
        rule = self.rules[code]
        return Finding(code, rule.name, rule.severity, message, loc.path, loc.span,
                       symbol=symbol, discriminator=discriminator, data=data, evidence=evidence)


def merge_instances(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (code, site): the interpreter builds a class once alone and again
    inside every module that uses it. Where several discriminators share the site (a base
    class's `__init__`), the one with the strongest evidence is named."""
    seen: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.code, f.path, f.span)
        if key not in seen or _strength(f) > _strength(seen[key]):
            seen[key] = f
    return list(seen.values())


_EVIDENCE = ("name", "training code", "configuration")


def _strength(f: Finding) -> int:
    ref = f.discriminator
    return _EVIDENCE.index(ref.evidence) if ref is not None and ref.evidence in _EVIDENCE else -1


def describe(ref: DiscriminatorRef | None, *, with_file: bool = False) -> str:
    """The discriminator's class as a message names it; `with_file`: with its file (two
    classes of one name, as two notebooks that each define `DCGAN`)."""
    if ref is None:
        return ""
    path, _, cls = ref.cls.rpartition(":")
    return f"{cls} in {path}" if with_file and path else cls


def lead_sentence(lead: str) -> str:
    """`own_site`'s lead ("; this call builds it, ...") as a sentence of evidence."""
    lead = lead.lstrip("; ").strip()
    return f"{lead[:1].upper()}{lead[1:]}." if lead else ""


def evidence(*parts: str) -> str:
    """A finding's evidence from its non-empty parts, one sentence after another."""
    return " ".join(p.strip() for p in parts if p and p.strip())
