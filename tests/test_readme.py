"""The README says what the code does: its rule table is the one the pages make, it stays
a front page (at most 300 lines), and the modules docs/architecture.md names exist. Regenerate the table after adding a rule:

    python -c "from snlint.catalogue import *; print(markdown_table(load_catalogue()))"
"""

from __future__ import annotations

import re
from pathlib import Path

from snlint.catalogue import load_catalogue, markdown_table

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_rule_table_is_the_one_the_pages_make():
    assert markdown_table(load_catalogue()) in README


def test_the_readme_is_a_front_page():
    assert len(README.splitlines()) <= 300


def test_every_module_how_it_works_names_exists():
    """Full paths exist; a bare `name.py` is a file somewhere in the package. SN601 is the
    section's example of a rule one would add."""
    section = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`(snlint/[\w/]+(?:\.py)?)`", section)) - {"snlint/checks/sn601.py"}
    bare = set(re.findall(r"`(\w+\.py)`", section))
    files = {p.name for p in (ROOT / "snlint").rglob("*.py")}
    assert paths and bare
    assert sorted(p for p in paths if not (ROOT / p).exists()) == []
    assert sorted(bare - files) == []
