"""What the source pass knows of one file's names before it lowers a line of it."""

from __future__ import annotations

from collections import Counter
from dataclasses import field
from typing import Any

from snlint.records import dataclass


@dataclass
class Scopes:
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    star: list[str] = field(default_factory=list)
    module_names: set[str] = field(default_factory=set)  # bound at module level
    # (line of `def`, name) -> names the function binds, less its `global` names
    functions: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    # The import statements of each function's own body (not of functions or classes
    # nested in it), in source order.
    function_imports: dict[Any, list[Any]] = field(default_factory=dict)
    # The whole file, every scope at once (what a fix may rely on or add):
    imported: dict[str, list[str]] = field(default_factory=dict)  # local name -> each import's target
    bound: Counter = field(default_factory=Counter)  # bindings of each name other than imports
    reads: Counter = field(default_factory=Counter)  # loads of each name
    mentioned: set[str] = field(default_factory=set)  # `global`, `nonlocal` and `del` names
    # Every module the file imports, dotted, relative imports resolved: `import a.b` ->
    # a.b; `from a import b, *` -> a, a.b, a.* (`snlint.engine.imported_files` follows them).
    modules: set[str] = field(default_factory=set)
    # Expressions nested deeper than the lowering follows, replaced in the tree by an
    # unknown value: (line, column, end line, end column) of each, 1-based columns.
    cuts: list[tuple[int, int, int, int]] = field(default_factory=list)
    # Whether the tree holds what only CPython's compiler rejects (`return` outside a
    # function, a keyword argument repeated): then the file is compiled to know.
    suspect: bool = False

    def bind_import(self, local: str, qual: str, fallback: bool) -> None:
        """An import binds `local` to `qual`; `fallback`: it is in an `except` handler
        (`try: from new import x / except ImportError: from old import x`: the first
        wins, and the fallback does not rebind it)."""
        self.imported.setdefault(local, []).append(qual)
        if fallback and local in self.imports:
            return
        self.imports[local] = qual
