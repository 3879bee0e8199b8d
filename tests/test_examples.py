"""The example projects in examples/ lint to exactly the mistakes planted in them.

examples/EXPECTED.md documents the same list for readers; a test keeps the two in step.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from snlint.config import Config

EXAMPLES = (Path(__file__).resolve().parent.parent / "examples").resolve()

# (path relative to examples/, line, column, code), sorted; see examples/EXPECTED.md.
PLANTED = [
    ("batch_coupling/buggy.py", 52, 13, "SN301"),
    ("batch_coupling/buggy.py", 65, 13, "SN303"),
    ("batch_coupling/buggy.py", 81, 18, "SN401"),
    ("batch_coupling_project/nets.py", 51, 39, "SN301"),
    ("batch_coupling_project/train.py", 31, 18, "SN401"),
    ("batch_coupling_project/train.py", 40, 31, "SN401"),
    ("dcgan/buggy.py", 63, 13, "SN101"),
    ("dcgan/buggy.py", 63, 27, "SN301"),
    ("dcgan/buggy.py", 64, 13, "SN102"),
    ("dcgan/buggy.py", 69, 13, "SN201"),
    ("helpers_project/blocks.py", 16, 21, "SN201"),
    ("helpers_project/discriminator.py", 26, 26, "SN201"),
    ("helpers_project/discriminator.py", 30, 9, "SN106"),
    ("helpers_project/discriminator.py", 31, 23, "SN201"),
    ("sngan/buggy.py", 45, 75, "SN105"),
    ("sngan/buggy.py", 76, 25, "SN201"),
]

BUGGY = ("dcgan/buggy.py", "sngan/buggy.py", "helpers_project/", "batch_coupling/buggy.py",
         "batch_coupling_project/")
FIXED = ("dcgan/fixed.py", "sngan/fixed.py", "helpers_project_fixed/", "batch_coupling/fixed.py",
         "batch_coupling_project_fixed/")


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
    assert [r for r in source_rows if r[0].startswith(BUGGY)] == PLANTED


def test_fixed_examples_give_no_findings(source_rows):
    assert [r for r in source_rows if r[0].startswith(FIXED)] == []


def test_no_findings_outside_the_example_files(source_rows):
    assert [r for r in source_rows if not r[0].startswith(BUGGY + FIXED)] == []


@pytest.fixture(scope="module")
def graph_findings():
    """The graph pass over the whole folder, run once for the tests that read it (it
    builds every discriminator). Without torch those tests are skipped; the source-pass
    and EXPECTED.md tests above and below still run."""
    pytest.importorskip("torch")
    return tuple(lint_folder(Config(root=EXAMPLES, graph=True)))


def test_graph_pass_agrees_with_the_planted_list(graph_findings):
    """With the graph pass (`--graph`) the rule findings are the same sites, one finding per mistake; the only diagnostic is SN912
    for dcgan/buggy.py, whose discriminator raises when built (SN on a LeakyReLU)."""
    found = rows(graph_findings)
    assert [r for r in found if not r[3].startswith("SN9")] == sorted(PLANTED + GRAPH_ONLY)
    assert [(r[0], r[3]) for r in found if r[3].startswith("SN9")] == [("dcgan/buggy.py", "SN912")]


# Layers only the graph pass sees: built from a config table by name (`getattr(nn, ...)`).
GRAPH_ONLY = [("graph_only/discriminator.py", 21, 24, "SN301")]


def test_graph_pass_confirms_source_findings_and_adds_what_source_cannot_see(graph_findings):
    passes = {(Path(f.path).relative_to(EXAMPLES).as_posix(), f.line, f.column, f.code): f.pass_
              for f in graph_findings}
    assert passes[GRAPH_ONLY[0]] == "graph"
    assert passes[("sngan/buggy.py", 76, 25, "SN201")] == "source+graph"
    assert passes[("dcgan/buggy.py", 63, 13, "SN101")] == "source"  # that class cannot be built


def expected_md_rows(section_title: str) -> list[tuple[str, int, int, str, str]]:
    """The table rows of EXPECTED.md's introduction (title "") or of one section."""
    text = (EXAMPLES / "EXPECTED.md").read_text(encoding="utf-8")
    if section_title:
        text = text.split(f"\n## {section_title}\n", 1)[1]
    text = text.split("\n## ", 1)[0]
    out = []
    for line in text.splitlines():
        m = re.match(r"\| ([\w/.]+\.py) \| (\d+) \| (\d+) \| (SN\d{3}) \| `([^`]+)`", line)
        if m:
            out.append((m[1], int(m[2]), int(m[3]), m[4], m[5]))
    return out


EXPECTED_SECTIONS = ("", "Batch coupling (SN301, SN303, SN401)")


def test_expected_md_lists_the_planted_findings():
    listed = [r[:4] for title in EXPECTED_SECTIONS for r in expected_md_rows(title)]
    assert sorted(listed) == PLANTED


@pytest.mark.parametrize("path, line, column, code, node",
                         [r for title in EXPECTED_SECTIONS for r in expected_md_rows(title)])
def test_expected_md_positions_point_at_the_named_node(path, line, column, code, node):
    source_line = (EXAMPLES / path).read_text(encoding="utf-8").splitlines()[line - 1]
    assert source_line[column - 1:].startswith(node)
