"""Every rule page with a fix: the autofix turns its Example into exactly its Fixed block.

Only the page's own rule is selected, and its fixes (safe or unsafe, as the page says)
run to a fixed point, so the test shows the fix the page documents and nothing else.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from snlint.catalogue import load_catalogue
from snlint.config import Config
from snlint.engine import lint_sources
from snlint.engine.fixing import fixed_point

CATALOGUE = load_catalogue()
WITH_FIX = sorted(code for code, rule in CATALOGUE.items()
                  if not rule.is_diagnostic and rule.fix in ("safe", "unsafe"))

def autofix(code: str, rule: str) -> str:
    config = Config(root=Path("."), select=[rule], graph=False)
    problems: list[str] = []
    result = fixed_point({"example.py": code}, config,
                         unsafe=True, report=problems.append)
    assert problems == []
    return result.texts["example.py"]


def test_pages_with_fixes_exist():
    assert {"SN101", "SN102", "SN103", "SN104", "SN105", "SN106", "SN107", "SN201",
            "SN501"} <= set(WITH_FIX)


@pytest.mark.parametrize("code", WITH_FIX)
def test_autofix_turns_example_into_fixed(code):
    rule = CATALOGUE[code]
    assert autofix(rule.code_block("Example"), code) == rule.code_block("Fixed")


@pytest.mark.parametrize("code", WITH_FIX)
def test_example_fix_has_the_pages_applicability(code):
    rule = CATALOGUE[code]
    config = Config(root=Path("."), select=[code], graph=False)
    found = [f for f in lint_sources({"example.py": rule.code_block("Example")}, config)
             if f.code == code]
    assert found and all(f.fix is not None and f.fix.applicability == rule.fix for f in found)
