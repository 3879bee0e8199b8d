"""Tab indentation CPython accepts and libcst does not (improved-wgan-pytorch's train.py):
the file is read by CPython's parser, its findings point at the file's own columns, and no
fix is offered for a file libcst cannot rewrite."""

from __future__ import annotations

from click.testing import CliRunner

from snlint.cli import main
from snlint.engine import lint_text

# Line 10 is indented `4 spaces, tab, 4 spaces`: 12 columns for CPython, 9 characters.
MIXED = (
    "import torch.nn as nn\n"
    "from torch.nn.utils import spectral_norm\n"
    "\n"
    "\n"
    "class Discriminator(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.c1 = spectral_norm(nn.Conv2d(3, 8, 3))\n"
    "        if True:\n"
    "    \t    self.bn = spectral_norm(nn.BatchNorm2d(8))\n"
    "        self.c2 = spectral_norm(nn.Conv2d(8, 1, 3))\n"
)


def test_a_file_only_cpython_parses_is_linted_at_its_own_columns():
    findings = lint_text(MIXED, "d.py")
    # `spectral_norm(` starts after 9 characters of indentation and `self.bn = `.
    assert [(f.code, f.line, f.column) for f in findings] == [("SN101", 10, 20), ("SN301", 10, 34)]
    assert all(f.fix is None for f in findings)  # libcst cannot rewrite the file as written


def test_fix_leaves_such_a_file_as_it_is(tmp_path, monkeypatch):
    (tmp_path / "d.py").write_text(MIXED)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["d.py", "--fix", "--no-graph", "--no-cache", "--exit-zero"])
    assert (tmp_path / "d.py").read_text() == MIXED
    assert "SN901" not in result.output and "d.py:10:20: SN101" in result.output
