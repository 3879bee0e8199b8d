"""Projects written to disk, for tests that run snlint in one as a user would: the files
(dedented) under a root that is a git work tree, and `snlint .` run from that root."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from snlint.config import Config
from snlint.engine import run


def write_project(root: Path, files: dict[str, str]) -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)  # the project root
    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code), encoding="utf-8")


def lint_in(root: Path, files: dict[str, str]):
    """The findings of `snlint .` run in the project, as a user would."""
    write_project(root, files)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return run(["."], Config(root=root, graph=False)).findings
    finally:
        os.chdir(cwd)
