"""Adding a rule is a page and a module: in a scratch copy of the project, a new rule's
page in `rules/` and its module in `snlint/checks/` are all it takes for the rule to run,
to be listed by --list-rules, explained by --explain, and checked by the page tests.
(The README's rule table is generated from the pages; tests/test_readme.py keeps it
current, as ruff's generated docs are.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PAGE = '''\
---
code: SN601
name: dropout-in-discriminator
severity: warning
fix: none
default: on
summary: a Dropout layer in a discriminator
---

# SN601 dropout-in-discriminator

## What it finds
A Dropout layer built by a discriminator.

## Why it matters
A test rule: it exists to show that a page and a module make a rule.

## Example
```python
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = spectral_norm(nn.Conv2d(3, 1, 4))
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.conv(x))
```

## Fixed
```python
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = spectral_norm(nn.Conv2d(3, 1, 4))

    def forward(self, x):
        return self.conv(x)
```

## Fix
None: remove the layer.
'''

MODULE = '''\
"""SN601 dropout-in-discriminator: a test rule."""

CODE = "SN601"


def check(model, emit):
    for d in model.discriminators:
        for m in model.members(d.instance):
            if m.layer.kind == "dropout":
                yield emit.finding(CODE, m.site, f"{m.layer.short_type} in {d.cls.name}",
                                   symbol=m.symbol, discriminator=d.ref)
'''


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """The package, the pages and the page tests, copied; then only the new rule's page
    and module added."""
    root = tmp_path_factory.mktemp("scratch")
    shutil.copytree(ROOT / "snlint", root / "snlint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "rules", root / "rules")
    (root / "tests").mkdir()
    for name in ("conftest.py", "test_rule_pages.py"):
        shutil.copy(ROOT / "tests" / name, root / "tests" / name)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / "rules" / "SN601.md").write_text(PAGE, encoding="utf-8")
    (root / "snlint" / "checks" / "sn601.py").write_text(MODULE, encoding="utf-8")
    return root


def run(scratch: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(scratch)}
    return subprocess.run([sys.executable, *args], cwd=scratch, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_new_rule_runs(scratch):
    (scratch / "d.py").write_text(textwrap.dedent(PAGE.split("```python\n")[1].split("```")[0]))
    out = run(scratch, "-m", "snlint", "d.py", "--no-graph", "--output-format", "concise")
    assert out.stdout.splitlines()[0] == "d.py:9:21: SN601 Dropout in Discriminator"


def test_the_new_rule_is_listed(scratch):
    out = run(scratch, "-m", "snlint", "--list-rules")
    line = next(line for line in out.stdout.splitlines() if line.startswith("SN601"))
    assert line.split() == ["SN601", "dropout-in-discriminator", "warning", "none", "on", "a",
                            "Dropout", "layer", "in", "a", "discriminator"]


def test_the_new_rule_is_explained(scratch):
    out = run(scratch, "-m", "snlint", "--explain", "SN601")
    assert out.stdout.startswith("# SN601 dropout-in-discriminator\n\nSeverity: warning. Fix: none. "
                                 "On by default.\n")


def test_the_page_tests_check_the_new_rule(scratch):
    # Its own --basetemp: by default a nested pytest shares (and prunes) the outer run's
    # /tmp/pytest-of-USER folders.
    out = run(scratch, "-m", "pytest", "-o", "addopts=", "-v", "-p", "no:cacheprovider",
              "--basetemp", str(scratch / "basetemp"), "tests/test_rule_pages.py", "-k", "SN601")
    assert out.returncode == 0, out.stdout + out.stderr
    passed = sorted(line.split("::")[1].split(" ")[0] for line in out.stdout.splitlines() if " PASSED" in line)
    assert passed == [f"{name}[SN601]" for name in (
        "test_a_fixable_rule_has_a_fix_and_only_it", "test_example_and_fixed_are_python_that_differs",
        "test_example_triggers_exactly_its_rule", "test_fixed_triggers_nothing",
        "test_front_matter_is_complete", "test_page_has_title_and_required_sections")]
