"""Valid Python however deep: no SN999, no exit 2, every output format. An expression
nested deeper than the lowering follows is read as an unknown value, and SN904 (info)
says where; what CPython itself cannot parse at its default limits is SN901."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from snlint.cli import main
from snlint.source import extract_with_notes
from snlint.source.scan_ast import MAX_NESTING

DISCRIMINATOR = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = spectral_norm(nn.BatchNorm2d(8))
""")
FORMATS = ["concise", "full", "json", "json-lines", "github", "sarif"]


def attributes(n: int) -> str:
    return DISCRIMINATOR + "        self.x = self.bn" + ".weight" * n + "\n"


def calls(n: int) -> str:
    return DISCRIMINATOR + "        self.y = nn.Identity()" + "()" * n + "\n"


def reported(output: str, fmt: str) -> str:
    """What the output reports (SARIF's rule table names every code: not that)."""
    if fmt == "sarif":
        return " ".join(r["ruleId"] for r in json.loads(output)["runs"][0]["results"])
    return output


def run(tmp_path, monkeypatch, text: str, fmt: str):
    (tmp_path / "d.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["d.py", "--no-graph", "--no-cache", "--output-format", fmt, "--show-fixes"])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("make, n", [(attributes, 500), (attributes, 1000), (calls, 500), (calls, 1000)],
                         ids=["500 attributes", "1000 attributes", "500 calls", "1000 calls"])
def test_a_deep_chain_is_read_in_part_in_every_format(tmp_path, monkeypatch, make, n, fmt):
    result = run(tmp_path, monkeypatch, make(n), fmt)
    assert result.exit_code == 1, result.output  # the SN101 and SN301 on line 8
    out = reported(result.output, fmt)
    assert "SN999" not in out and "internal error" not in out
    assert "SN904" in out and "SN101" in out
    if fmt == "json":
        found = [(f["code"], f["line"], f["severity"]) for f in json.loads(result.output)]
        assert found == [("SN101", 8, "error"), ("SN301", 8, "error"), ("SN904", 9, "info")]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("make", [attributes, calls])
def test_a_chain_cpython_cannot_parse_is_sn901(tmp_path, monkeypatch, make, fmt):
    # 5,000 levels: CPython's own parser gives up ("maximum recursion depth exceeded"),
    # and `python d.py` does too; not an internal error.
    result = run(tmp_path, monkeypatch, make(5000), fmt)
    assert result.exit_code == 1, result.output
    out = reported(result.output, fmt)
    assert "SN901" in out and "SN999" not in out


def test_the_sn904_points_at_the_first_expression_cut_and_counts_them():
    text = "import torch\nx = torch" + ".a" * 300 + "\n" + "y = " + "a + " * 200 + "b\n"
    facts, _, notes = extract_with_notes(text, "d.py", "d.py")
    assert [(n.code, n.severity, n.line, n.column) for n in notes] == [("SN904", "info", 2, 5)]
    assert notes[0].message == (
        "nested too deeply to follow: this expression and deep ones on 1 more line are read as "
        "unknown values (findings in them may be missed; no fixes for this file)")
    assert not facts.rewritable  # libcst's code of such a tree recurses past the limit


def test_nesting_up_to_the_limit_is_read_whole():
    text = "import torch\nx = torch" + ".a" * (MAX_NESTING - 1) + "\n"
    facts, _, notes = extract_with_notes(text, "d.py", "d.py")
    assert notes == []
    assert facts.body[0].value.qual == "torch" + ".a" * (MAX_NESTING - 1)


def test_deep_statements_and_expressions_together(tmp_path, monkeypatch):
    # Forty-five functions each holding an `if` (90 levels of indentation), and in the
    # innermost expressions just within the limit: read whole, in every format.
    lines, indent = [], ""
    for i in range(45):
        lines += [f"{indent}def f{i}():", f"{indent}    if x:"]
        indent += "        "
    lines += [f"{indent}y = z" + ".a()" * 45, f"{indent}v = " + "(lambda: " * 90 + "1" + ")" * 90]
    text = DISCRIMINATOR + "\n\n" + "\n".join(lines) + "\n"
    for fmt in FORMATS:
        result = run(tmp_path, monkeypatch, text, fmt)
        out = reported(result.output, fmt)
        assert result.exit_code == 1 and "SN101" in out, (fmt, result.output)
        assert "SN999" not in out and "SN904" not in out, fmt
