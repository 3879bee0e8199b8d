"""Shared fixtures: lint an in-memory file or project with snlint's engine.

Inputs are dedented (textwrap.dedent) and nothing else: a snippet written as
`lint('''\n    import torch\n''')` keeps its leading empty line, so `import torch` is on line 2,
as the reader counts it in the test.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings

from snlint.config import Config

# Every property test draws the same examples on every run (as tests/test_properties.py
# always has): a run fails for the change it tests, never for a case a later random draw
# happens upon (CI refused a change that way). `SNLINT_FUZZ_SCALE` other than 1 draws at
# random, to search wider on a development machine.
settings.register_profile(
    "snlint", derandomize=float(os.environ.get("SNLINT_FUZZ_SCALE", "1")) == 1)
settings.load_profile("snlint")

# A discriminator with SN on two of its three convs: one SN201, at 10:21-10:47 on the head's
# `nn.Conv2d(128, 1, 4, 1, 0)`; its message names the 2 of 3 sites.
MISSING_SN = textwrap.dedent("""\
    import torch.nn as nn
    from torch.nn.utils.parametrizations import spectral_norm


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))
            self.c2 = spectral_norm(nn.Conv2d(64, 128, 4, 2, 1))
            self.head = nn.Conv2d(128, 1, 4, 1, 0)

        def forward(self, x):
            return self.head(self.c2(self.c1(x)))
""")


def _config(root: Path | None, **options) -> Config:
    # In-memory text cannot be imported: these fixtures test the source pass alone
    # unless a test asks for the graph pass (graph=True).
    options.setdefault("graph", False)
    return Config(root=root if root is not None else Path.cwd(), **options)


@pytest.fixture(autouse=True)
def _cache_outside_the_repository(monkeypatch, tmp_path_factory):
    # A CLI run from the repository's folder would leave its .snlint_cache there.
    monkeypatch.setenv("SNLINT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "snlint-cache"))


@pytest.fixture
def missing_sn() -> str:
    """The text of a discriminator whose head alone lacks SN (MISSING_SN above): the
    file the CLI, output-format and hook tests lint, one SN201 at line 10, column 21."""
    return MISSING_SN


@pytest.fixture
def lint():
    """`lint(code, path="example.py", **config_options)` -> the findings of one file.

    Config options are Config fields (`select=["ALL"]`, `discriminators=[...]`); the
    default selection is the default one (SN501 and SN302 off). `fixes=True` builds each
    finding's fix (otherwise a fixable finding's fix is only marked)."""
    from snlint.engine import lint_text

    def run(code: str, path: str = "example.py", *, root: Path | None = None,
            fixes: bool = False, **options):
        return lint_text(textwrap.dedent(code), path, _config(root, **options), fixes=fixes)

    return run


@pytest.fixture
def lint_project():
    """`lint_project({"models/d.py": code, ...}, **config_options)` -> the findings of the
    files linted as one project (display paths relative to the project root); `fixes=True`
    builds each finding's fix."""
    from snlint.engine import lint_sources

    def run(files: dict[str, str], *, root: Path | None = None, fixes: bool = False, **options):
        sources = {path: textwrap.dedent(code) for path, code in files.items()}
        return lint_sources(sources, _config(root, **options), fixes=fixes)

    return run


@pytest.fixture
def interpreter_work(monkeypatch):
    """Counts the statements snlint's project interpreter runs, instead of timing a lint.

    `work = interpreter_work(limit=1000)` before linting; then `work.statements` (all entry
    points together) and `work.cut_short` (entry points the interpreter's own step budget
    stopped). Past `limit` statements the test fails at once: a runaway (an exponential
    recursion) fails it, it does not hang it."""
    from snlint.link import interpret

    class Work:
        def __init__(self, limit: int) -> None:
            self.limit = limit
            self.statements = 0
            self.stopped: list[BaseException] = []  # each BudgetExceeded once

        @property
        def cut_short(self) -> int:
            return len(self.stopped)

    works: list[Work] = []
    stmt = interpret.Interpreter.stmt

    def counted(self, *args, **kwargs):
        work = works[-1]
        work.statements += 1
        if work.statements > work.limit:
            # pytest's Failed is a BaseException, so snlint's guards (an Exception becomes
            # an SN999 finding) let it through. No traceback: formatting the interpreter's
            # deeply nested frames would take longer than the runaway itself.
            pytest.fail(f"more than {work.limit} statements interpreted", pytrace=False)
        try:
            return stmt(self, *args, **kwargs)
        except interpret.BudgetExceeded as e:
            if not any(e is seen for seen in work.stopped):
                work.stopped.append(e)
            raise

    def start(limit: int = interpret.STEP_BUDGET) -> Work:
        works.append(Work(limit))
        monkeypatch.setattr(interpret.Interpreter, "stmt", counted)
        return works[-1]

    return start
