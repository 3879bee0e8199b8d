"""The packages stand on floors, and imports point down: data at the bottom, then the
passes, then the rules, then what runs them. A module may import from its own package or
from a lower floor, never from its floor or above, wherever the import is written (at the
top or inside a function). Every package and top-level module has a floor here: a new
one must say where it stands."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "snlint"

FLOORS = [
    {"records"},  # dataclasses with shared methods: nothing but the standard library below
    {"lines"},  # a text's lines and what a line's tokens are
    # data: findings, torch's names, where libcst nodes are; the facts and the rule
    # catalogue over them
    {"findings", "torchapi", "positions"},
    {"regular", "probes"},  # reading only regular files; what a run looked at, as it was
    {"facts", "catalogue"},
    {"config", "suppress"},
    {"files"},
    # per-file work: libcst lowering, notebooks, noqa, source editing; torch (in a child)
    {"source", "notebook", "noqa", "edit", "graph"},
    # what a run reads: files, notebooks, their diagnostics
    {"inputs"},
    # the project: names resolved across files, code interpreted
    {"link"},
    # the rules, over linked facts
    {"checks"},
    # how their findings are patched (libcst), found by the registry by module name
    {"fixes"},
    # what acts on findings
    {"fix", "report"},
    # what runs a lint
    {"graph_pass", "shipped_configs"},  # shipped_configs: the link again per option file
    # a run: its stages in order, what it keeps between runs (replay, caches) and shares
    # with worker processes, --fix's rounds
    {"engine", "live_audit"},
    {"stdin"},
    {"cli"},
    {"launch"},  # a replayed answer, else the cli
    {"__main__", "__init__"},
]
FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}


def _unit(path: Path) -> str:
    return path.relative_to(PACKAGE).with_suffix("").parts[0]


def _imports(path: Path) -> set[str]:
    units = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "snlint" else [f"snlint.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        units.update(n.split(".")[1] for n in names if n.startswith("snlint.") and n.count(".") >= 1)
    return units


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_package_and_module_has_a_floor():
    assert sorted({_unit(p) for p in MODULES} - set(FLOOR)) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_imports_point_down(path):
    unit = _unit(path)
    upward = sorted(u for u in _imports(path) - {unit} if FLOOR.get(u, 99) >= FLOOR[unit])
    assert upward == [], f"{unit} (floor {FLOOR[unit]}) imports {upward}"


@pytest.mark.parametrize("package", sorted(p.name for p in PACKAGE.iterdir()
                                           if (p / "__init__.py").is_file()))
def test_each_package_imports_alone(package):
    """No import cycle that only an import order hides."""
    out = subprocess.run([sys.executable, "-c", f"import snlint.{package}"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
