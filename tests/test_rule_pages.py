"""The rule pages are test data: each Example triggers its rule (and only the rules its
page says its mistake necessarily triggers too: `example-also`), each Fixed triggers
nothing, and every page's front matter is complete and matches a rule module."""

from __future__ import annotations

import ast
import re
import types

import pytest

from snlint.catalogue import load_catalogue, pages_dir
from snlint.checks.registry import fixers, rule_modules
from snlint.config import Config
from snlint.engine import lint_text

SECTIONS = ("What it finds", "Why it matters", "Example", "Fixed", "Fix")
SEVERITIES = ("error", "warning", "info")
APPLICABILITY = ("safe", "unsafe", "none")
# A Fixed block must be silent under select ALL, except for rules listed here per page.
FIXED_IGNORE: dict[str, list[str]] = {}

CATALOGUE = load_catalogue()
PAGES = sorted(code for code, rule in CATALOGUE.items() if not rule.is_diagnostic)


def lint(code: str, config: Config):
    return lint_text(code, "example.py", config)


def test_every_page_file_is_named_after_its_code():
    names = sorted(p.stem for p in pages_dir().glob("SN*.md"))
    assert names == PAGES


@pytest.mark.parametrize("code", PAGES)
def test_front_matter_is_complete(code):
    rule = CATALOGUE[code]
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert rule.severity in SEVERITIES and rule.fix in APPLICABILITY
    assert rule.short and "\n" not in rule.short
    assert rule.example_also <= set(PAGES) - {code}


def test_every_page_has_a_rule_module_and_every_module_a_page():
    assert sorted(rule_modules()) == PAGES


@pytest.mark.parametrize("code", PAGES)
def test_a_fixable_rule_has_a_fix_and_only_it(code):
    assert (code in fixers()) == (CATALOGUE[code].fix != "none")


def test_a_rule_with_a_fix_has_both_halves():
    # `fix_input` decides from the facts (a plain lint marks with it); `fix` builds.
    rule, half, bare = (types.ModuleType(name) for name in ("sn999", "sn998", "sn997"))
    rule.fix_input = half.fix_input = lambda finding, facts, config: None
    rule.fix = lambda finding, payload, parsed: None
    assert fixers({"SN999": rule, "SN998": half, "SN997": bare}) == {"SN999": rule}


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
def test_example_triggers_exactly_its_rule(code, tmp_path):
    """Default selection plus the page's own rule (SN501, SN302 are opt-in)."""
    config = Config(root=tmp_path, select=None, extend_select=[code])
    findings = lint(CATALOGUE[code].code_block("Example"), config)
    implied = {c for c in CATALOGUE[code].example_also if config.is_enabled(c, "example.py")}
    assert {f.code for f in findings} == {code} | implied


@pytest.mark.parametrize("code", PAGES)
def test_fixed_triggers_nothing(code, tmp_path):
    config = Config(root=tmp_path, select=["ALL"], ignore=FIXED_IGNORE.get(code, []))
    findings = lint(CATALOGUE[code].code_block("Fixed"), config)
    assert [(f.code, f.line, f.message) for f in findings] == []
