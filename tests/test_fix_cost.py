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
from snlint.engine import fixing, lint_text
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


def one_long_class(layers: int) -> str:
    """A discriminator whose every layer is a finding with an unsafe fix (a batch norm:
    SN301; a conv without SN among convs with it: SN201), all in one class."""
    lines = ["import torch.nn as nn", "from torch.nn.utils import spectral_norm", "", "",
             "class Discriminator(nn.Module):", "    def __init__(self):", "        super().__init__()"]
    for i in range(layers):
        conv = "nn.Conv2d(8, 8, 3, padding=1)"
        lines.append(f"        self.conv{i} = {f'spectral_norm({conv})' if i % 3 == 0 else conv}")
        lines.append(f"        self.bn{i} = nn.BatchNorm2d(8)")
    lines += ["", "    def forward(self, x):"]
    lines += [f"        x = self.bn{i}(self.conv{i}(x))" for i in range(layers)]
    return "\n".join(lines + ["        return x.mean()", ""])


@pytest.mark.parametrize("layers", [30, 120])
def test_fixing_many_findings_in_one_long_class_costs_about_the_class(monkeypatch, layers):
    """Each fix finds its statement in the class and checks it against the fixes chosen so
    far: neither may go over the whole class, or every chosen fix, once per fix."""
    import snlint.edit.parsed as parsed_module
    import snlint.positions as positions

    counts = {"lines_counted": 0, "ranges": 0}
    breaks, node_range = positions._breaks, parsed_module.ParsedFile.range

    def counting_breaks(code):
        counts["lines_counted"] += len(code)
        return breaks(code)

    def counting_ranges(self, node):
        counts["ranges"] += 1
        return node_range(self, node)

    monkeypatch.setattr(positions, "_breaks", counting_breaks)
    monkeypatch.setattr(parsed_module.ParsedFile, "range", counting_ranges)
    text = one_long_class(layers)
    result = fixing.fixed_point({"d.py": text}, Config(root=Path("."), graph=False), unsafe=True,
                                report=print)
    fixes = sum(result.fixed.values())
    assert fixes == layers + layers * 2 // 3  # every SN301 and SN201
    # Bounds that do not grow with the layers (each was about 80x and 50x at 30 layers,
    # 330x and 200x at 120, when each fix went over the class and the fixes chosen).
    assert counts["lines_counted"] <= 6 * len(text)
    assert counts["ranges"] <= 4 * fixes


def test_the_fixes_chosen_overlap_a_plan_exactly_when_one_of_them_does():
    """`Taken` (ranges merged into runs) answers as comparing the plan with each chosen
    plan would: a node in common, or ranges that overlap; an empty range counts inside."""
    import random

    from snlint.edit.plan import Taken

    class Node:
        def __init__(self, start, end):
            self.span = (start, end)

    class Plan:
        def __init__(self, nodes):
            self._nodes = nodes

        def nodes(self):
            return self._nodes

    class Parsed:
        @staticmethod
        def range(node):
            return node.span

    def pairwise(plan, chosen):
        return any(x is y or (x.span[0] < y.span[1] and y.span[0] < x.span[1])
                   for other in chosen for x in plan.nodes() for y in other.nodes())

    rng = random.Random(7)
    for _ in range(300):
        made: list[Node] = []
        taken, chosen = Taken(Parsed()), []
        for _ in range(12):
            nodes = []
            for _ in range(rng.randint(1, 3)):
                if made and rng.random() < 0.1:
                    nodes.append(rng.choice(made))  # the same node as another plan's
                    continue
                start = (rng.randint(1, 6), rng.randint(0, 4))
                end = max(start, (rng.randint(1, 6), rng.randint(0, 4)))
                nodes.append(Node(start, end))
            made.extend(nodes)
            plan = Plan(nodes)
            assert taken.overlaps(plan) == pairwise(plan, chosen)
            if not pairwise(plan, chosen):
                taken.add(plan)
                chosen.append(plan)
