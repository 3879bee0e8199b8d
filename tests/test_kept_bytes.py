"""Bytes outside a fix's change stay as they are, also where libcst's code of the file
leaves them out: a form feed in a statement line's indentation, and the bare `\\r` that
ends a file whose lines end in `\\r` (`snlint.lines.put_back`)."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from snlint.cli import main
from snlint.lines import put_back

HELPER = "def helper():\n    x = 1\n\f    y = 2\n    return x + y\n"
DISCRIMINATOR = textwrap.dedent("""\
    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = spectral_norm(nn.BatchNorm2d(8))
""")
HEAD = "import torch.nn as nn\nfrom torch.nn.utils import spectral_norm\n\n\n"
# Enough lines in a function no fix reads for the round to hold it out (`edit.held_out`).
OTHER = "\n\ndef other():\n" + "".join(f"    v{i} = {i}\n" for i in range(10)) + "    return v0\n"


def fix(tmp_path, monkeypatch, data: bytes) -> bytes:
    (tmp_path / "d.py").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["d.py", "--fix", "--extend-safe-fixes", "SN101", "--no-graph", "--no-cache", "--exit-zero"])
    assert "Fixed 1 finding" in result.output, result.output
    return (tmp_path / "d.py").read_bytes()


def fixed(text: str) -> str:
    # The SN101 fix: the wrapper goes, and with it the import nothing else reads.
    return text.replace("spectral_norm(nn.BatchNorm2d(8))", "nn.BatchNorm2d(8)").replace(
        "from torch.nn.utils import spectral_norm\n", "")


@pytest.mark.parametrize("tail", ["", OTHER], ids=["parsed whole", "held out"])
def test_a_form_feed_in_another_function_stays(tmp_path, monkeypatch, tail):
    text = HEAD + HELPER + "\n\n" + DISCRIMINATOR + tail
    assert fix(tmp_path, monkeypatch, text.encode()) == fixed(text).encode()


def test_a_form_feed_before_the_first_statement_stays(tmp_path, monkeypatch):
    text = "\f" + HEAD + DISCRIMINATOR
    assert fix(tmp_path, monkeypatch, text.encode()) == fixed(text).encode()


def test_a_file_of_bare_cr_lines_keeps_its_last_cr(tmp_path, monkeypatch):
    text = (HEAD + HELPER.replace("\f", "") + "\n\n" + DISCRIMINATOR).replace("\n", "\r")
    assert text.endswith("(8))\r")
    assert fix(tmp_path, monkeypatch, text.encode()) == fixed(text.replace("\r", "\n")).replace("\n", "\r").encode()


def test_put_back_restores_kept_lines_only():
    text = "x = 1\n\fy = 2\n\fz = 3\n"
    assert put_back(text, "x = 1\ny = 2\nz = 3\n", "x = 1\ny = 20\nz = 3\n") == "x = 1\ny = 20\n\fz = 3\n"


def test_put_back_refuses_a_reading_that_is_not_line_for_line():
    assert put_back("x = 1\n\fy = 2\n", "x = 1\n", "x = 1\n") is None


def test_the_fix_an_output_shows_keeps_a_form_feed(tmp_path):
    # Built alone on the text as read (JSON, SARIF, --show-fixes), where libcst's code
    # leaves the form feed out: the fix's edit is of the whole file, form feed kept.
    from snlint.config import Config
    from snlint.engine import lint_text

    text = HEAD + HELPER + "\n\n" + DISCRIMINATOR
    findings = lint_text(text, "d.py", Config(root=tmp_path, graph=False), fixes=True)
    [edit] = [e for f in findings if f.code == "SN101" for e in f.fix.edits]
    assert (edit.start, edit.end) == (0, len(text))
    assert text[:edit.start] + edit.text + text[edit.end:] == fixed(text)
