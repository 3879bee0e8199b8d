"""`--fix`, `--unsafe-fixes`, `--fix-only` and `--diff` on standard input, as ruff for
editors: the fixed source on standard output, what remains on standard error."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from snlint.cli import main
from test_fix_cli import BUGGY

SAFE_FIXED = BUGGY.replace("spectral_norm(nn.LeakyReLU(0.2))", "nn.LeakyReLU(0.2)")
ALL_FIXED = SAFE_FIXED.replace("nn.BatchNorm2d(8)", "nn.GroupNorm(1, 8)")
CLEAN = "import torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\n"
SN301 = "gan.py:9:18: SN301 BatchNorm2d in Discriminator normalizes with the statistics of the current batch\n"


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return tmp_path


def snlint(*args: str, input: str | bytes):
    return CliRunner().invoke(main, ["--no-graph", "--stdin-filename", "gan.py", *args, "-"],
                              input=input)


def test_fix_writes_the_fixed_source_to_stdout_and_what_remains_to_stderr(project):
    result = snlint("--fix", input=BUGGY)
    assert (result.exit_code, result.stdout) == (1, SAFE_FIXED)
    assert result.stderr == SN301 + (
        "Found 2 findings (1 fixed, 1 remaining: 1 error).\n"
        "No fixes available (1 with --unsafe-fixes).\n")
    assert not (project / "gan.py").exists()


def test_fix_with_statistics_reports_the_counts_of_what_remains():
    result = snlint("--fix", "--statistics", input=BUGGY)
    assert (result.exit_code, result.stdout) == (1, SAFE_FIXED)
    assert result.stderr == "1  SN301  batch-norm-in-discriminator\n"


def test_fix_with_show_fixes_shows_the_fix_still_offered():
    result = snlint("--fix", "--show-fixes", input=BUGGY)
    assert (result.exit_code, result.stdout) == (1, SAFE_FIXED)
    assert result.stderr.startswith(SN301 + "  = discriminator: gan.py:Discriminator (by name)\n")
    assert ("  = fix (unsafe): Replace BatchNorm2d with nn.GroupNorm(1, 8), a per-sample norm"
            in result.stderr)
    assert "      +        self.n = nn.GroupNorm(1, 8)\n" in result.stderr


def test_fix_with_unsafe_fixes_fixes_everything_and_exits_0():
    result = snlint("--fix", "--unsafe-fixes", input=BUGGY)
    assert (result.exit_code, result.stdout) == (0, ALL_FIXED)
    assert result.stderr == "Found 2 findings (2 fixed, 0 remaining).\n"


def test_fix_with_exit_zero_exits_0_when_findings_remain():
    result = snlint("--fix", "--exit-zero", input=BUGGY)
    assert (result.exit_code, result.stdout) == (0, SAFE_FIXED)


def test_fix_with_nothing_to_fix_echoes_the_input():
    result = snlint("--fix", input=CLEAN)
    assert (result.exit_code, result.stdout, result.stderr) == (0, CLEAN, "All checks passed!\n")


def test_fix_keeps_crlf_and_bom():
    data = ("\ufeff" + BUGGY).replace("\n", "\r\n").encode("utf-8")
    result = snlint("--fix", "--quiet", input=data)
    assert result.stdout_bytes == ("\ufeff" + SAFE_FIXED).replace("\n", "\r\n").encode("utf-8")
    assert result.stderr == SN301


def test_fix_only_writes_the_source_and_reports_nothing_but_the_count():
    result = snlint("--fix-only", input=BUGGY)
    assert (result.exit_code, result.stdout, result.stderr) == (0, SAFE_FIXED, "Fixed 1 finding.\n")


def test_exit_non_zero_on_fix_exits_1_when_a_fix_was_made():
    fixed = snlint("--fix-only", "--exit-non-zero-on-fix", input=BUGGY)
    clean = snlint("--fix", "--exit-non-zero-on-fix", input=CLEAN)
    assert (fixed.exit_code, clean.exit_code) == (1, 0)


def test_silent_fix_prints_only_the_source():
    result = snlint("--fix", "--silent", input=BUGGY)
    assert (result.exit_code, result.stdout, result.stderr) == (1, SAFE_FIXED, "")


def test_diff_prints_the_diff_and_exits_1():
    result = snlint("--diff", input=BUGGY)
    assert result.exit_code == 1
    assert result.stdout == (
        "--- a/gan.py\n+++ b/gan.py\n@@ -7,7 +7,7 @@\n"
        "         super().__init__()\n"
        "         self.a = spectral_norm(nn.Conv2d(3, 8, 3))\n"
        "         self.n = nn.BatchNorm2d(8)\n"
        "-        self.act = spectral_norm(nn.LeakyReLU(0.2))\n"
        "+        self.act = nn.LeakyReLU(0.2)\n"
        " \n"
        "     def forward(self, x):\n"
        "         return self.n(self.a(x))\n")
    assert result.stderr == "Would fix 1 finding (1 more with --unsafe-fixes).\n"


def test_diff_with_nothing_to_fix_exits_0_and_prints_nothing():
    result = snlint("--diff", input=CLEAN)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "No fixes to apply.\n")


def test_fix_leaves_a_syntax_error_as_it_is():
    broken = BUGGY + "def oops(:\n"
    result = snlint("--fix", "--output-format", "concise", input=broken)
    assert result.exit_code == 1
    assert result.stdout == broken
    assert result.stderr.startswith("gan.py:14:10: SN901 ")


def test_fix_report_can_go_to_an_output_file(project):
    result = snlint("--fix", "--output-file", "report.txt", input=BUGGY)
    assert (result.exit_code, result.stdout, result.stderr) == (1, SAFE_FIXED, "")
    assert (project / "report.txt").read_text().startswith(SN301)


def test_fix_writes_a_notebook_back_changing_only_the_fixed_line():
    from test_notebook import CELLS, notebook_json

    cells = [dict(cell) for cell in CELLS]
    cells[2] = dict(cells[2], source=cells[2]["source"][:-1] + [
        "        self.act = spectral_norm(nn.LeakyReLU(0.2))\n"])
    text = notebook_json(cells)
    result = CliRunner().invoke(main, ["--no-graph", "--stdin-filename", "nb.ipynb", "--fix", "-q",
                                       "-"], input=text)
    assert result.exit_code == 0
    assert result.stdout == text.replace("spectral_norm(nn.LeakyReLU(0.2))", "nn.LeakyReLU(0.2)")
