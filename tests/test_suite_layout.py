"""The suite collects: pytest imports test modules by basename (no __init__.py in the test
folders), so two test modules of one name in different folders stop the whole run."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_basename():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert sorted(name for name, n in names.items() if n > 1) == []
