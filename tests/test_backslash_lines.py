"""A line that is only a backslash continuation, between statements: CPython reads it as
nothing, libcst's parser drops it (its positions after it are a line short and its code
loses the line). The file is linted at CPython's lines and offered no fix, since a fix
finds its node by position in libcst's tree and writes libcst's code."""

from __future__ import annotations

from click.testing import CliRunner

from snlint.cli import main
from snlint.engine import lint_text

DROPPED = (
    "import torch.nn as nn\n"
    "from torch.nn.utils import spectral_norm\n"
    "\\\n"
    "class Discriminator(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.c1 = spectral_norm(nn.Conv2d(3, 8, 3))\n"
    "        self.bn = spectral_norm(nn.BatchNorm2d(8))\n"
)


def test_findings_are_at_the_lines_python_reads_and_carry_no_fix():
    findings = lint_text(DROPPED, "d.py")
    assert [(f.code, f.line, f.column) for f in findings] == [("SN101", 8, 19), ("SN301", 8, 33)]
    assert all(f.fix is None for f in findings)


def test_fix_leaves_the_file_as_it_is(tmp_path, monkeypatch):
    (tmp_path / "d.py").write_text(DROPPED)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["d.py", "--fix", "--unsafe-fixes", "--no-graph", "--no-cache",
                                       "--exit-zero"])
    assert (tmp_path / "d.py").read_text() == DROPPED
    assert "d.py:8:19: SN101" in result.output


def test_a_continuation_inside_a_statement_keeps_its_fix():
    # libcst keeps a backslash line inside an expression: it reads the file as written.
    text = DROPPED.replace("\\\n", "").replace("nn.BatchNorm2d(8)", "nn.BatchNorm2d(\n\\\n8)")
    findings = lint_text(text, "d.py")
    assert [(f.code, f.line, f.fix is not None) for f in findings] == [("SN101", 7, True), ("SN301", 7, True)]


def test_a_file_ending_in_spaces_libcst_would_shorten_gets_no_fix():
    # libcst reads `x = 1\n\n    ` at the end of a file back as `x = 1\n    `: a fix
    # would lose a line.
    text = DROPPED.replace("\\\n", "") + "x = 1\n\n    "
    findings = lint_text(text, "d.py")
    assert [(f.code, f.line, f.fix) for f in findings] == [("SN101", 7, None), ("SN301", 7, None)]
