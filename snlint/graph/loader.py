"""Importing a project file in the graph-pass worker (child process only): where it goes on
`sys.path`, the module name it loads under (never `__main__`), and what a failed import
leaves (its one-line reason and the project line that raised). Every project module runs
as its definitions-only copy (snlint.graph.definitions), through `_ProjectFinder`."""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any

from snlint.graph import allowlist
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


def _package_name(file: str) -> tuple[list[str], str]:
    """The dotted parts of `file` inside its regular package (`__init__.py` folders) and
    the folder above the top package; `[stem]` and the file's folder outside a package."""
    folder, base = os.path.split(file)
    stem = os.path.splitext(base)[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return parts, folder


def _free_name(name: str, file: str) -> bool:
    existing = sys.modules.get(name)
    return existing is None or os.path.abspath(getattr(existing, "__file__", "") or "") == file


def _private_name(file: str) -> str:
    stem = os.path.splitext(os.path.basename(file))[0]
    digest = hashlib.sha1(file.encode("utf-8")).hexdigest()[:10]
    safe = "".join(c if c.isalnum() else "_" for c in stem)
    return f"snlint_user_{safe}_{digest}"


def _module_name(file: str, roots: list[str] = ()) -> tuple[str, str | None, str | None]:
    """(import name, folder above its top package, folder of its namespace package).

    A file in a regular package keeps its dotted name (relative imports work). A file in a
    plain folder under an import root is named by its path from the deepest root
    (`models/models.py` -> `models.models`), as the project's scripts import it. Others get a
    private name."""
    parts, package_root = _package_name(file)
    is_init = os.path.basename(file) == "__init__.py"
    if (len(parts) > 1 or (parts and is_init)) and all(p.isidentifier() for p in parts):
        name = ".".join(parts)
        if _free_name(name, file):
            return name, package_root, None
    if not is_init:
        folder = os.path.dirname(file)
        under = [r for r in roots if folder.startswith(os.path.join(r, ""))]
        if under:
            base = max(under, key=len)
            dotted = os.path.relpath(os.path.splitext(file)[0], base).split(os.sep)
            if all(p.isidentifier() for p in dotted) and _free_name(".".join(dotted), file):
                return ".".join(dotted), None, os.path.join(base, dotted[0])
    return _private_name(file), None, None


def _register_namespace(top: str, folder: str) -> bool:
    """Import the namespace package `top` now, while only the import roots are on sys.path,
    when it holds `folder`: later, a `top.py` in the file's folder would win over it."""
    if top in sys.modules:
        return False
    spec = importlib.machinery.PathFinder.find_spec(top)
    if spec is None or spec.loader is not None or not spec.submodule_search_locations:
        return False
    if folder not in list(spec.submodule_search_locations):
        return False
    sys.modules[top] = importlib.util.module_from_spec(spec)
    return True


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
    except (TypeError, KeyError):  # KeyError: a namespace path whose parent is gone
        return False


def _needs_copy(tree: ast.Module) -> bool:
    """Whether any statement falls outside what runs as written: most modules need no
    libcst (0.4 s) to know that. True whenever in doubt."""
    names = _ModuleNames(tree)
    if names.rebound & _PLAIN_DECORATORS:
        return True  # `property = ...`: then `@property` is the project's code
    return not all(_as_written(stmt, names) for stmt in tree.body)


_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod", "property"})


class _ModuleNames:
    """The module's top-level imports (local name -> qualified name), and every name it
    binds otherwise anywhere (never resolved: it may be the project's)."""

    def __init__(self, tree: ast.Module) -> None:
        self.imports: dict[str, str] = {}
        top = set()
        for stmt in tree.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                top.add(id(stmt))
                for alias in stmt.names:
                    if isinstance(stmt, ast.Import):
                        local = alias.asname or alias.name.partition(".")[0]
                        self.imports[local] = alias.name if alias.asname else local
                    elif stmt.level == 0 and stmt.module and alias.name != "*":
                        self.imports[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
                    else:
                        self.imports[alias.asname or alias.name] = "."  # relative: the project's
        self.rebound: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self.rebound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.rebound.add(node.name)
            elif isinstance(node, ast.arg):
                self.rebound.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
                self.rebound.update((a.asname or a.name).partition(".")[0] for a in node.names)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.rebound.update(node.names)

    def pure_call(self, func: ast.expr) -> bool:
        parts = []
        while isinstance(func, ast.Attribute):
            parts.insert(0, func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id in self.rebound:
            return False
        if func.id in self.imports:
            origin = self.imports[func.id]
            if origin.startswith("."):
                return False
            return allowlist.pure(".".join([origin, *parts]))
        builtin = ".".join(["builtins", func.id, *parts])
        return func.id in allowlist.BUILTINS and allowlist.pure(builtin)


def _calls_pure(names: _ModuleNames, *nodes: ast.AST | None) -> bool:
    return all(names.pure_call(sub.func) for node in nodes if node is not None
               for sub in ast.walk(node) if isinstance(sub, ast.Call))


def _as_written(stmt: ast.stmt, names: _ModuleNames) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return _calls_pure(names, stmt) and all(
            isinstance(t, ast.Name) for t in (stmt.targets if isinstance(stmt, ast.Assign)
                                              else [stmt.target]))
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        plain = all((isinstance(d, ast.Name) and d.id in _PLAIN_DECORATORS)
                    or (isinstance(d, ast.Attribute) and d.attr in ("setter", "getter", "deleter"))
                    for d in stmt.decorator_list)
        return plain and _calls_pure(names, stmt.args, stmt.returns)
    if isinstance(stmt, ast.If) and not stmt.orelse:
        # `if __name__ == "__main__":` never runs: the module is never imported as __main__.
        return ast.unparse(stmt.test) in ("__name__ == '__main__'", "'__main__' == __name__")
    if isinstance(stmt, ast.ClassDef):
        return (not stmt.decorator_list and _calls_pure(names, *stmt.bases, *stmt.keywords)
                and all(_as_written(s, names) for s in stmt.body))
    return False


def _copy_of(source: str) -> str:
    """What runs of a project module: the source itself when every statement runs as
    written, else its definitions-only copy (snlint.graph.definitions)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source  # compiling it reports the error at the user's line
    if not _needs_copy(tree):
        return source
    from snlint.graph.definitions import definitions_only

    try:
        return definitions_only(source)[0]
    except Exception:  # libcst cannot parse what CPython can: run nothing of it
        return "\n" * source.count("\n")


# Project modules whose import hung or crashed an earlier worker (absolute path -> why),
# given by the parent: importing one again raises at once. `on_loading(path, started)`
# tells the parent which project module is executing (a hang is charged to the innermost).
HUNG: dict[str, str] = {}
on_loading: Any = None


class _DefinitionsLoader(importlib.machinery.SourceFileLoader):
    """Loads a project module's definitions-only copy, compiled under its own path."""

    def get_code(self, fullname: str) -> types.CodeType:
        # Never a cached .pyc: that would be the whole module.
        source = importlib.util.decode_source(self.get_data(self.path))
        return compile(_copy_of(source), self.path, "exec", dont_inherit=True)

    def exec_module(self, module: types.ModuleType) -> None:
        from snlint.graph import copy_helpers

        path = os.path.abspath(self.path)
        if path in HUNG:
            raise ImportError(HUNG[path])
        copy_helpers.install(module.__dict__)
        if on_loading is not None:
            on_loading(path, True)
        try:
            super().exec_module(module)
        finally:
            if on_loading is not None:
                on_loading(path, False)
        recorded = [cls for _, cls in module.__dict__.get("__snlint_classes__", ())]
        copy_helpers.defer_defaults(module, recorded)
        _drop_unbound_exports(module)


def _drop_unbound_exports(module: types.ModuleType) -> None:
    """`__all__` without the names the copy left unbound (`__copyright__ = f"{time.strftime(...)}"`):
    else `from package.__about__ import *` raises AttributeError and blocks every module
    that imports the package. A package's submodule it names is still imported by `*`."""
    exported = module.__dict__.get("__all__")
    if not isinstance(exported, (list, tuple)) or not all(isinstance(n, str) for n in exported):
        return
    search = getattr(module, "__path__", None)

    def bound(name: str) -> bool:
        if name in module.__dict__:
            return True
        return search is not None and importlib.machinery.PathFinder.find_spec(name, search) is not None

    kept = [name for name in exported if bound(name)]
    if len(kept) != len(exported):
        module.__all__ = type(exported)(kept)


class _ProjectFinder(importlib.abc.MetaPathFinder):
    """First on sys.meta_path in the worker: a project module loads through its
    definitions-only copy, whoever imports it."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        from snlint.graph import sites

        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None
        if not spec.origin or not sites.is_user_file(spec.origin):
            return None
        spec.loader = _DefinitionsLoader(fullname, spec.origin)
        return spec


def _install_finder() -> None:
    if not any(isinstance(f, _ProjectFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _ProjectFinder())


def _import_definitions(name: str, file: str) -> types.ModuleType:
    """Import `file` as module `name` from its copy, its parent package first (relative
    imports)."""
    parent, _, child = name.rpartition(".")
    if parent:
        importlib.import_module(parent)
    loader = _DefinitionsLoader(name, file)
    spec = importlib.util.spec_from_file_location(name, file, loader=loader)
    if spec is None:
        raise ImportError(f"cannot load {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    if parent:
        setattr(sys.modules[parent], child, module)
    return module


class Loader:
    """Imports one target file at a time, remembering its failure. Moving to another file
    forgets the user modules and sys.path entries of the previous one (two folders may each
    hold a `blocks.py`)."""

    def __init__(self) -> None:
        _install_finder()
        self.modules: dict[str, types.ModuleType | tuple[str, Site | None]] = {}
        self.baseline_path = list(sys.path)
        self.baseline_modules = set(sys.modules)

    def _add_path(self, folder: str) -> None:
        if folder and folder not in sys.path:
            sys.path.insert(0, folder)

    def _prepare_path(self, target: GraphTarget, file: str) -> tuple[str, str | None]:
        """Put the import roots and the file's folder on sys.path; the file's module name and
        the folder above its package (None: load it from its path)."""
        roots = [os.path.abspath(p) for p in (target.paths or ([target.root] if target.root else []))]
        for folder in reversed(roots):  # each goes first: the first root ends up first
            self._add_path(folder)
        name, package_root, namespace = _module_name(file, roots)
        if namespace is not None:
            if _register_namespace(name.partition(".")[0], namespace):
                package_root = os.path.dirname(namespace)
            else:  # the name means something else here (a module, an installed package)
                name = _private_name(file)
        # The file's folder serves sibling imports. A package's folder, where a
        # `models/models.py` would shadow the package `models`, goes last, as a fallback.
        folder = os.path.dirname(file)
        if package_root is not None and namespace is None:
            if folder not in sys.path:
                sys.path.append(folder)
        else:
            self._add_path(folder)
        return name, package_root

    def forget(self) -> None:
        """Forget every module imported so far: the files may have changed on disk."""
        if not self.modules:
            return
        self.modules.clear()
        # All judged before any goes: a namespace subpackage's __path__ is recomputed from
        # its parent's, which must still be in sys.modules (`taming.modules` of `taming`).
        for name in [name for name, _ in self.user_modules()]:
            sys.modules.pop(name, None)
        sys.path[:] = self.baseline_path
        importlib.invalidate_caches()

    def load(self, target: GraphTarget) -> types.ModuleType | tuple[str, Site | None]:
        file = os.path.abspath(target.file)
        if file in self.modules:
            return self.modules[file]
        self.forget()
        name, package_root = self._prepare_path(target, file)
        sys.argv = [file]  # a script parsing its arguments at import sees itself, no options
        try:
            if package_root is not None:
                self._add_path(package_root)
                module = importlib.import_module(name)  # through _ProjectFinder
            else:
                module = _import_definitions(name, file)
            result: Any = module
        except BaseException as exc:  # SystemExit and KeyboardInterrupt included
            result = (one_line(exc), error_site(exc.__traceback__))
        self.modules[file] = result
        return result

    def user_modules(self) -> list[tuple[str, types.ModuleType]]:
        """The project modules imported since the loader started."""
        return [(name, module) for name, module in list(sys.modules.items())
                if name not in self.baseline_modules and _is_user_module(name, module)]


def user_files(loader: Loader) -> list[str]:
    """The project files imported since the loader started (the files a build read)."""
    files = {getattr(module, "__file__", None) for _, module in loader.user_modules()}
    return sorted({os.path.abspath(file) for file in files if file})
