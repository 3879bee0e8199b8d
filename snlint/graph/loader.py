"""Importing a project file in the graph-pass worker (child process only).

Where the file goes on `sys.path`, under which module name it loads (never `__main__`),
and what a failed import leaves behind: its one-line reason and the project line that
raised.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import types
from typing import Any

from snlint.graph.facts import GraphTarget, Site, one_line


def error_site(tb: types.TracebackType | None) -> Site | None:
    """The innermost user frame of a traceback, with the exact column range."""
    from snlint.graph import sites

    best = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if sites.is_user_file(code.co_filename):
            best = sites.to_site(sites.code_pos(code, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    return best


def _module_name(file: str) -> tuple[str, str | None]:
    """(import name, folder to put on sys.path for it). Files inside packages keep their
    dotted name so relative imports work; others get a private name (never __main__)."""
    folder, base = os.path.split(file)
    stem = os.path.splitext(base)[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    if len(parts) > 1 or (parts and stem == "__init__"):
        name = ".".join(parts)
        existing = sys.modules.get(name)
        if existing is None or os.path.abspath(getattr(existing, "__file__", "") or "") == file:
            if all(p.isidentifier() for p in parts):
                return name, folder
    digest = hashlib.sha1(file.encode("utf-8")).hexdigest()[:10]
    safe = "".join(c if c.isalnum() else "_" for c in stem)
    return f"snlint_user_{safe}_{digest}", None


def _is_user_module(name: str, module: Any) -> bool:
    from snlint.graph import sites

    if name.startswith("snlint_user_"):
        return True
    file = getattr(module, "__file__", None)
    if file:
        return sites.is_user_file(file)
    paths = getattr(module, "__path__", None)  # namespace packages have no __file__
    try:
        return any(sites.is_user_file(os.path.join(p, "__init__.py")) for p in (paths or ()))
    except TypeError:
        return False


class Loader:
    """Imports one target file at a time, remembering its failure.

    Moving on to another file forgets the user modules the previous one imported and its
    sys.path entries: two folders each holding a `blocks.py` (examples, experiments) must
    not share `sys.modules["blocks"]`. torch and the standard library stay imported.
    """

    def __init__(self) -> None:
        self.modules: dict[str, types.ModuleType | tuple[str, Site | None]] = {}
        self.baseline_path = list(sys.path)
        self.baseline_modules = set(sys.modules)

    def _add_path(self, folder: str) -> None:
        if folder and folder not in sys.path:
            sys.path.insert(0, folder)

    def _forget_previous_file(self) -> None:
        self.modules.clear()
        for name, module in list(sys.modules.items()):
            if name not in self.baseline_modules and _is_user_module(name, module):
                del sys.modules[name]
        sys.path[:] = self.baseline_path
        importlib.invalidate_caches()

    def load(self, target: GraphTarget) -> types.ModuleType | tuple[str, Site | None]:
        file = os.path.abspath(target.file)
        if file in self.modules:
            return self.modules[file]
        if self.modules:
            self._forget_previous_file()
        if target.root:
            self._add_path(os.path.abspath(target.root))
        self._add_path(os.path.dirname(file))
        name, package_root = _module_name(file)
        sys.argv = [file]  # a script parsing its arguments at import sees itself, no options
        try:
            if package_root is not None:
                self._add_path(package_root)
                module = importlib.import_module(name)
            else:
                spec = importlib.util.spec_from_file_location(name, file)
                if spec is None or spec.loader is None:
                    raise ImportError(f"cannot load {file}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    sys.modules.pop(name, None)
                    raise
            result: Any = module
        except BaseException as exc:  # SystemExit and KeyboardInterrupt included
            result = (one_line(exc), error_site(exc.__traceback__))
        self.modules[file] = result
        return result
