"""The rule catalogue, read from the rule pages (`rules/*.md`): a page's front matter is
the only place a rule's metadata is written."""

from __future__ import annotations

import functools
import re
from dataclasses import field
from pathlib import Path
from typing import Iterable

from snlint.findings import DIAGNOSTICS
from snlint.records import dataclass

_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_SECTION = re.compile(r"^## (.+)$", re.M)
_FENCE = re.compile(r"```python\n(.*?)```", re.S)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    fix: str  # "safe" | "unsafe" | "none"
    page: str = field(repr=False, default="")
    default_on: bool = True
    short: str = ""  # the front matter's `summary`
    example_also: frozenset[str] = frozenset()

    @property
    def is_diagnostic(self) -> bool:
        return self.code.startswith("SN9")

    @property
    def opt_in(self) -> bool:
        return not self.default_on

    @property
    def body(self) -> str:
        """The page without its front matter."""
        match = _FRONT.match(self.page)
        return self.page[match.end():] if match else self.page

    def section(self, title: str) -> str:
        """The text of one `## title` section of the page, without its heading."""
        parts = _SECTION.split(self.page)
        for heading, body in zip(parts[1::2], parts[2::2]):
            if heading.strip().lower() == title.lower():
                return body.strip()
        return ""

    def code_block(self, title: str) -> str | None:
        match = _FENCE.search(self.section(title))
        return match.group(1) if match else None

    @property
    def summary(self) -> str:
        """One line: the page's `summary`, else the first sentence of "What it finds"."""
        if self.short:
            return self.short
        text = " ".join(self.section("What it finds").split())
        if not text:
            return DIAGNOSTICS.get(self.code, ("", "", ""))[2]
        end = text.find(". ")
        return text if end < 0 else text[: end + 1]


def selector_matches(code: str, selectors: Iterable[str]) -> bool:
    """Whether `code` is named by any selector (`ALL`, a code, or a prefix of one): the
    grammar of `select`, `ignore`, `per-file-ignores` and suppression comments."""
    return any(s == "ALL" or code.startswith(s) for s in selectors)


def pages_dir() -> Path:
    """Where the pages are: inside the installed wheel, else the source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "rules", here.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("snlint rule pages not found (rules/*.md)")


def parse_page(text: str) -> Rule:
    match = _FRONT.match(text)
    if not match:
        raise ValueError("rule page has no front matter")
    meta = {}
    for line in match.group(1).splitlines():
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip()
    default = meta.get("default", "on")
    if default not in ("on", "off"):
        raise ValueError(f"rule page {meta.get('code')}: default is {default!r}, not on or off")
    also = frozenset(c.strip() for c in meta.get("example-also", "").split(",") if c.strip())
    return Rule(meta["code"], meta["name"], meta["severity"], meta.get("fix", "none"), text,
                default_on=default == "on", short=meta.get("summary", ""), example_also=also)


@functools.cache
def rule_codes() -> frozenset[str]:
    """Every code, rules and diagnostics, from the pages' names alone (no page is read):
    what a selector in the configuration must name."""
    return frozenset(page.stem for page in pages_dir().glob("SN*.md")) | frozenset(DIAGNOSTICS)


def load_catalogue(directory: Path | None = None) -> dict[str, Rule]:
    directory = directory or pages_dir()
    rules: dict[str, Rule] = {}
    for page in sorted(directory.glob("SN*.md")):
        rule = parse_page(page.read_text(encoding="utf-8"))
        rules[rule.code] = rule
    for code, (name, severity, what) in DIAGNOSTICS.items():
        rules.setdefault(code, Rule(code, name, severity, "none", f"# {code} {name}\n\n{what}\n"))
    return rules


def markdown_table(rules: dict[str, Rule]) -> str:
    """The README's rule table, generated from the pages (a test keeps the README equal)."""
    lines = ["| code | name | severity | finds | fix |", "| --- | --- | --- | --- | --- |"]
    for code, rule in sorted(rules.items()):
        if rule.is_diagnostic:
            continue
        severity = rule.severity + (", opt-in" if rule.opt_in else "")
        lines.append(f"| [{code}](rules/{code}.md) | {rule.name} | {severity} | {rule.summary} | {rule.fix} |")
    return "\n".join(lines)
