"""A file CPython rejects, when parsing it or only when compiling it, gets SN901 with
CPython's own message, line and column; libcst's parser never reads it (it accepts some
such files, and crashes the process on some deeply nested ones), and no fix touches it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from snlint.cli import main
from snlint.source import extract_file

ROOT = Path(__file__).resolve().parent.parent

DISCRIMINATOR = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = spectral_norm(nn.BatchNorm2d(8))
""")


@pytest.mark.parametrize("text, expected", [
    ("import torch\nx = dict(a=1, a=2)\n", (2, 15, "syntax error: keyword argument repeated: a")),
    ("import torch\nx = " + "(" * 201 + "1" + ")" * 201 + "\n", (2, 205, "syntax error: too many nested parentheses")),
    ("import torch\nreturn 1\n", (2, 1, "syntax error: 'return' outside function")),
    ("import torch\nnonlocal x\n", (2, 1, "syntax error: nonlocal declaration not allowed at module level")),
    ("import torch\nawait x\n", (2, 1, "syntax error: 'await' outside function")),
    ("import torch\ndef f():\n    await x\n", (3, 5, "syntax error: 'await' outside async function")),
    ("import torch\nclass C:\n    yield 1\n", (3, 5, "syntax error: 'yield' outside function")),
    ("import torch\ndef f(a, a):\n    pass\n", (2, 10, "syntax error: duplicate argument 'a' in function definition")),
], ids=["repeated keyword", "201 parentheses", "return", "nonlocal", "await", "await in def", "yield in class",
        "repeated parameter"])
def test_what_cpython_rejects_is_sn901_with_its_message(text, expected):
    finding, modules = extract_file(text, "bad.py", "bad.py")
    assert (finding.code, finding.line, finding.column, finding.message) == ("SN901", *expected)
    assert modules is None


def test_a_keyword_given_once_and_a_return_in_a_function_are_fine():
    facts, _ = extract_file("import torch\ndef f(**k):\n    return dict(a=1, b=2, **k)\n", "ok.py", "ok.py")
    assert facts.path == "ok.py"


def test_a_repeated_keyword_is_not_fixed(tmp_path, monkeypatch):
    text = DISCRIMINATOR + "        self.c = nn.Conv2d(3, 8, 3, bias=False, bias=True)\n"
    (tmp_path / "d.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["d.py", "--fix", "--no-graph", "--no-cache"])
    assert (tmp_path / "d.py").read_text() == text
    assert result.exit_code == 1
    assert result.output.startswith("d.py:9:49: SN901 syntax error: keyword argument repeated: bias\n")


def test_nesting_that_crashed_libcst_ends_in_sn901_and_the_other_files_findings(tmp_path):
    # 1,300 parentheses and 1,250 open calls: libcst's native parser crashed the whole
    # process on them (exit 139, every finding lost). In a child: a crash must not take
    # the test run down with it.
    (tmp_path / "parens.py").write_text("import torch\nx = " + "(" * 1300 + "1" + ")" * 1300 + "\n")
    (tmp_path / "calls.py").write_text("import torch\nx = " + "f(" * 1250 + "\n")
    (tmp_path / "d.py").write_text(DISCRIMINATOR)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "snlint", "--no-graph", "--no-cache", "--output-format",
                           "json", "."], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    found = sorted((f["path"], f["code"], f["line"], f["message"]) for f in json.loads(done.stdout))
    assert found == [
        ("calls.py", "SN901", 2, "syntax error: too many nested parentheses"),
        ("d.py", "SN101", 8,
         "spectral norm on BatchNorm2d, a normalization layer"),
        ("d.py", "SN301", 8, found[2][3]),
        ("parens.py", "SN901", 2, "syntax error: too many nested parentheses"),
    ]
