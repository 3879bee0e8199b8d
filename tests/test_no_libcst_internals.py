"""snlint uses libcst through its public API only: a module of libcst's whose name starts
with an underscore (`libcst._nodes.internal`, `libcst._position`) may change in any
release, and pyproject.toml bounds libcst from below only."""

from __future__ import annotations

import ast
from pathlib import Path

SNLINT = Path(__file__).resolve().parent.parent / "snlint"


def _private(module: str) -> bool:
    return module.split(".")[0] == "libcst" and any(
        part.startswith("_") for part in module.split(".")[1:])


def test_no_module_imports_a_private_libcst_module():
    found = []
    for path in sorted(SNLINT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            found += [f"{path.relative_to(SNLINT)}:{node.lineno}: {name}"
                      for name in names if _private(name)]
    assert found == []


def test_no_module_names_a_private_libcst_module_in_its_text():
    # importlib.import_module("libcst._nodes...") and the like, which the imports miss
    found = [str(path.relative_to(SNLINT)) for path in sorted(SNLINT.rglob("*.py"))
             if "libcst._" in path.read_text(encoding="utf-8")]
    assert found == []
