"""Building every finding's fix (JSON, SARIF, --show-fixes) costs about as much as the
file, not the file once per finding: a fix prints, compiles and diffs the top-level
statements it changes, and the rest of the file is printed once. Counted, not timed: the
characters libcst prints and the characters diffed, for a file of many findings."""

from __future__ import annotations

import json
from pathlib import Path

import libcst as cst
import pytest

import snlint.fix as fix_package
import snlint.fix.diff as diff_module
import snlint.report.sarif as sarif_module
from snlint.config import Config
from snlint.engine import lint_text
from snlint.report import render

BUGGY = (Path(__file__).resolve().parent.parent / "examples" / "dcgan" / "buggy.py").read_text()


@pytest.fixture
def counted(monkeypatch):
    """Characters printed by libcst, diffed, compiled and compared for SARIF."""
    counts = {"printed": 0, "diffed": 0, "compiled": 0, "compared": 0, "parsed": 0}
    print_node, diff, compiles, replacements = (cst.Module.code_for_node, diff_module.unified_diff,
                                                 fix_package.compiles, sarif_module.replacements)
    parse = cst.parse_module

    def printing(self, node):
        code = print_node(self, node)
        counts["printed"] += len(code)
        return code

    def diffing(path, old, new, context=3):
        counts["diffed"] += len(old) + len(new)
        return diff(path, old, new, context)

    def compiling(text, path, first_line=1):
        counts["compiled"] += len(text)
        return compiles(text, path, first_line)

    def comparing(old, new):
        counts["compared"] += len(old) + len(new)
        return replacements(old, new)

    def parsing(text, *args, **kwargs):
        counts["parsed"] += len(text)
        return parse(text, *args, **kwargs)

    monkeypatch.setattr(cst.Module, "code_for_node", printing)
    monkeypatch.setattr(diff_module, "unified_diff", diffing)
    monkeypatch.setattr(fix_package, "compiles", compiling)
    monkeypatch.setattr(sarif_module, "replacements", comparing)
    monkeypatch.setattr(cst, "parse_module", parsing)
    return counts


@pytest.mark.parametrize("copies", [4, 16])
def test_every_fix_of_a_file_costs_about_the_file(tmp_path, counted, copies):
    text = "\n\n".join([BUGGY] * copies)
    findings = lint_text(text, "many.py", Config(root=tmp_path, graph=False), fixes=True)
    fixes = [f for f in findings if f.fix is not None and f.fix.diff]
    assert len(fixes) == 4 * copies  # SN101, SN102 and SN201 (safe), SN301 (unsafe) in each copy
    output = render(findings, "sarif", {"many.py": text}, root=tmp_path)
    assert len(json.loads(output)["runs"][0]["results"]) == len(findings)
    size = len(text)
    # Once the file (its statements' code, the file compiled and parsed once), and each
    # fix its own class statement (a quarter of a copy: 4 fixes a copy print about one
    # more file): a bound that does not grow with the copies, where the whole file per
    # fix would be `4 * copies` files.
    assert counted["parsed"] <= size
    assert counted["printed"] <= 3 * size
    assert counted["compiled"] <= 3 * size
    assert counted["diffed"] <= 4 * size and counted["compared"] <= 4 * size
