"""How a rule says what it found: `Emitter` turns a code, a location and a message into a
Finding carrying the page's name and severity; `describe` names a discriminator and the
evidence that makes it one, the same way in every rule's message."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Iterable

from snlint.catalogue import Rule
from snlint.findings import DiscriminatorRef, Finding, Location
from snlint.records import dataclass


@dataclass
class Emitter:
    rules: dict[str, Rule]
    _seen: dict[tuple[str, str, Any], int] = field(default_factory=dict)

    def finding(self, code: str, loc: Location, message: str, *, symbol: str | None = None,
                discriminator: DiscriminatorRef | None = None,
                data: Any = None, evidence: str = "") -> Finding:
        """`message`: what and where, short enough for one line; `evidence`: why it
        holds (the mechanism, the measured values, the candidates), for the full formats."""
        name, severity = self.meta(code)
        return Finding(code, name, severity, message, loc.path, loc.span,
                       symbol=symbol, discriminator=discriminator,
                       data=data, evidence=evidence)

    def meta(self, code: str) -> tuple[str, str]:
        rule = self.rules[code]
        return rule.name, rule.severity


def merge_instances(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (code, site). The interpreter builds a class once on its own and
    again inside every module that uses it, so the same site is seen many times; checks
    that count instances say so in their own message. Where several discriminators share
    the site (a base class's `__init__` run by a subclass), the finding names the one with
    the strongest evidence: the class the training code uses, not its base found by name."""
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
    """The discriminator as a one-line message names it: its class; `with_file`: with the
    file it is in (two of one name, as two notebooks that each define `DCGAN`). Why it is a
    discriminator is the finding's evidence (`DiscriminatorRef.why`), not the message's."""
    if ref is None:
        return ""
    path, _, cls = ref.cls.rpartition(":")
    return f"{cls} in {path}" if with_file and path else cls


def lead_sentence(lead: str) -> str:
    """`own_site`'s lead ("; this call builds it, in code another network runs too") as a
    sentence of a finding's evidence."""
    lead = lead.lstrip("; ").strip()
    return f"{lead[:1].upper()}{lead[1:]}." if lead else ""


def evidence(*parts: str) -> str:
    """A finding's evidence from its non-empty parts, one sentence after another."""
    return " ".join(p.strip() for p in parts if p and p.strip())
