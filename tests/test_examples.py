"""The example projects in examples/ lint to exactly the mistakes planted in them.

examples/EXPECTED.md documents the same list for readers; a test keeps the two in step.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from snlint.config import Config

EXAMPLES = (Path(__file__).resolve().parent.parent / "examples").resolve()

# (path relative to examples/, line, column, code), sorted; see examples/EXPECTED.md.
PLANTED = [
    ("dcgan/buggy.py", 63, 13, "SN101"),
    ("dcgan/buggy.py", 64, 13, "SN102"),
    ("dcgan/buggy.py", 69, 13, "SN201"),
    ("helpers_project/blocks.py", 16, 21, "SN201"),
    ("helpers_project/discriminator.py", 26, 26, "SN201"),
    ("helpers_project/discriminator.py", 30, 9, "SN106"),
    ("helpers_project/discriminator.py", 31, 23, "SN201"),
    ("sngan/buggy.py", 45, 75, "SN105"),
    ("sngan/buggy.py", 76, 25, "SN201"),
]

# Findings of rules after the first milestone (SN3xx, SN4xx): allowed, not required.
LATER = [("dcgan/buggy.py", 63, 27, "SN301")]
LATER_PREFIXES = ("SN3", "SN4")

BUGGY = ("dcgan/buggy.py", "sngan/buggy.py", "helpers_project/")
FIXED = ("dcgan/fixed.py", "sngan/fixed.py", "helpers_project_fixed/")


def relative(path: str) -> str:
    p = Path(path)
    if not p.is_absolute():
        p = Path.cwd() / p
    return p.resolve().relative_to(EXAMPLES).as_posix()


def lint_folder(config: Config):
    from snlint.engine import run  # imported here so the page/doc tests run without it

    return run([str(EXAMPLES)], config).findings


def rows(findings) -> list[tuple[str, int, int, str]]:
    return sorted((relative(f.path), f.line, f.column, f.code) for f in findings)


@pytest.fixture(scope="module")
def source_rows():
    """The source pass over the whole folder (no torch: hermetic and fast)."""
    return rows(lint_folder(Config(root=EXAMPLES, graph=False)))


def test_buggy_examples_report_exactly_the_planted_mistakes(source_rows):
    buggy = [r for r in source_rows if r[0].startswith(BUGGY)]
    assert [r for r in buggy if not r[3].startswith(LATER_PREFIXES)] == PLANTED
    assert set(r for r in buggy if r[3].startswith(LATER_PREFIXES)) <= set(LATER)


def test_fixed_examples_give_no_findings(source_rows):
    assert [r for r in source_rows if r[0].startswith(FIXED)] == []


def test_no_findings_outside_the_example_files(source_rows):
    assert [r for r in source_rows if not r[0].startswith(BUGGY + FIXED)] == []


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="graph pass needs torch")
def test_graph_pass_agrees_with_the_planted_list():
    """With the default configuration (graph pass on when torch is importable) the rule
    findings are the same sites, one finding per mistake; the only diagnostic is SN912
    for dcgan/buggy.py, whose discriminator raises when built (SN on a LeakyReLU)."""
    found = rows(lint_folder(Config(root=EXAMPLES)))
    rules = [r for r in found if not r[3].startswith("SN9")]
    assert [r for r in rules if not r[3].startswith(LATER_PREFIXES)] == PLANTED
    assert set(r for r in rules if r[3].startswith(LATER_PREFIXES)) <= set(LATER)
    assert [(r[0], r[3]) for r in found if r[3].startswith("SN9")] == [("dcgan/buggy.py", "SN912")]


def expected_md_rows(section_title: str) -> list[tuple[str, int, int, str, str]]:
    text = (EXAMPLES / "EXPECTED.md").read_text(encoding="utf-8")
    if section_title:
        text = text.split(f"## {section_title}", 1)[1]
    text = text.split("\n## ", 1)[0]
    out = []
    for line in text.splitlines():
        m = re.match(r"\| ([\w/.]+\.py) \| (\d+) \| (\d+) \| (SN\d{3}) \| `([^`]+)`", line)
        if m:
            out.append((m[1], int(m[2]), int(m[3]), m[4], m[5]))
    return out


def test_expected_md_lists_the_planted_findings():
    assert [r[:4] for r in expected_md_rows("")] == PLANTED
    assert [r[:4] for r in expected_md_rows("Later rules")] == LATER


@pytest.mark.parametrize("path, line, column, code, node",
                         expected_md_rows("") + expected_md_rows("Later rules"))
def test_expected_md_positions_point_at_the_named_node(path, line, column, code, node):
    source_line = (EXAMPLES / path).read_text(encoding="utf-8").splitlines()[line - 1]
    assert source_line[column - 1:].startswith(node)
