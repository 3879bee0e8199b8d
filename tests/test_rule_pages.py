"""The rule pages are test data: each Example triggers its rule (and only the rules its
mistake necessarily implies), each Fixed triggers nothing, and the front matter agrees
with the rule contract (DESIGN)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from snlint.checks.catalogue import load_catalogue, pages_dir
from snlint.config import Config

# The rule contract table of DESIGN.md: code -> (name, severity, fix applicability).
CONTRACT = {
    "SN101": ("sn-on-normalization", "error", "safe"),
    "SN102": ("sn-on-weightless-layer", "error", "safe"),
    "SN103": ("sn-applied-twice", "error", "safe"),
    "SN104": ("sn-wrong-parameter", "error", "safe"),
    "SN105": ("sn-wrong-dim", "warning", "safe"),
    "SN106": ("sn-init-of-derived-weight", "warning", "safe"),
    "SN107": ("sn-never-applied", "error", "unsafe"),
    "SN201": ("missing-sn", "error", "safe"),
    "SN301": ("batch-norm-in-discriminator", "error", "unsafe"),
    "SN302": ("batch-coupled-op-in-discriminator", "info", "none"),
    "SN303": ("batch-norm-with-gradient-penalty", "error", "none"),
    "SN401": ("separate-real-fake-batches", "error", "unsafe"),
    "SN501": ("legacy-spectral-norm", "info", "unsafe"),
}
FIRST_MILESTONE = ("SN101", "SN102", "SN103", "SN104", "SN105", "SN106", "SN107",
                   "SN201", "SN501")
SECTIONS = ("What it finds", "Why it matters", "Example", "Fixed", "Fix")

# Rules an Example's mistake necessarily triggers besides its own, when they are selected:
# a gradient penalty through batch statistics, or real and fake scored apart by a
# discriminator with batch statistics, needs a batch norm in that discriminator (SN301);
# SN on MultiheadAttention.out_proj that never runs is hook-API SN (SN501, opt-in).
COMPANIONS = {
    "SN303": {"SN301"},
    # SN401: its page's batch norm carries `# noqa: SN301` (the fix leaves it).
    "SN107": {"SN501"},
}
# Rules a Fixed block may still trigger under select ALL: SN501 for a Fixed that keeps the
# hook API (none today). Everything else must be silent.
FIXED_IGNORE: dict[str, list[str]] = {}

CATALOGUE = load_catalogue()
PAGES = sorted(code for code, rule in CATALOGUE.items() if not rule.is_diagnostic)


def lint(code: str, config: Config):
    from snlint.engine import lint_text  # the engine may land after the pages

    return lint_text(code, "example.py", config)


def test_every_first_milestone_rule_has_a_page():
    assert set(FIRST_MILESTONE) <= set(PAGES)


def test_every_page_file_is_named_after_its_code():
    names = sorted(p.stem for p in pages_dir().glob("SN*.md"))
    assert names == PAGES


@pytest.mark.parametrize("code", PAGES)
def test_front_matter_agrees_with_the_contract(code):
    rule = CATALOGUE[code]
    assert (rule.name, rule.severity, rule.fix) == CONTRACT[code]


@pytest.mark.parametrize("code", PAGES)
def test_page_has_title_and_required_sections(code):
    rule = CATALOGUE[code]
    assert f"\n# {code} {rule.name}\n" in rule.page
    for title in SECTIONS:
        assert rule.section(title), f"{code}: missing or empty section {title!r}"


@pytest.mark.parametrize("code", PAGES)
def test_example_and_fixed_are_python_that_differs(code):
    rule = CATALOGUE[code]
    example, fixed = rule.code_block("Example"), rule.code_block("Fixed")
    assert example and fixed
    ast.parse(example)
    ast.parse(fixed)
    assert example != fixed


@pytest.mark.parametrize("code", PAGES)
def test_example_triggers_exactly_its_rule(code):
    """Default selection plus the page's own rule (SN501, SN302 are opt-in)."""
    config = Config(root=Path("."), select=None, extend_select=[code])
    findings = lint(CATALOGUE[code].code_block("Example"), config)
    implied = {c for c in COMPANIONS.get(code, ()) if config.is_enabled(c, "example.py")}
    assert {f.code for f in findings} == {code} | implied


@pytest.mark.parametrize("code", PAGES)
def test_fixed_triggers_nothing(code):
    config = Config(root=Path("."), select=["ALL"], ignore=FIXED_IGNORE.get(code, []))
    findings = lint(CATALOGUE[code].code_block("Fixed"), config)
    assert [(f.code, f.line, f.message) for f in findings] == []
