"""The libcst source pass: one read of one file, producing facts (never findings)."""

from __future__ import annotations

import ast
from typing import Iterable

import libcst as cst

from snlint.facts import FileFacts
from snlint.findings import Finding, Span, diagnostic
from snlint.source.indentation import expand_tabs
from snlint.source.lower import lower_file, resolve_relative


def module_name(relpath: str) -> tuple[str, bool]:
    """`models/d.py` -> (`models.d`, False); `models/__init__.py` -> (`models`, True)."""
    stem = relpath[:-3] if relpath.endswith(".py") else relpath
    parts = [p for p in stem.replace("\\", "/").split("/") if p and p != "."]
    is_package = bool(parts) and parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(p.replace("-", "_") for p in parts), is_package


def extract(text: str, path: str, relpath: str) -> FileFacts | Finding:
    """Facts of one file, or an SN901 diagnostic when it does not parse."""
    return extract_file(text, path, relpath)[0]


def extract_file(text: str, path: str, relpath: str) -> tuple[FileFacts | Finding, set[str] | None]:
    """Facts of one file (or its SN901 diagnostic), and the modules it imports
    (`Scopes.modules`; None when it does not parse)."""
    expanded = None
    try:
        tree = cst.parse_module(text)
    except cst.ParserSyntaxError as e:
        python = _compile_error(text, path)  # asked once: it also words the SN901
        expanded = expand_tabs(text) if python is None else None
        tree = _parsed(expanded.text) if expanded is not None else None
        if tree is None:
            return _syntax_error(path, e, python), None
    except (cst.CSTValidationError, RecursionError) as e:
        # Text libcst's parser accepts but cannot build a tree for (an identifier made of
        # characters newer than this Python's Unicode tables): CPython says why.
        return _syntax_error(path, None, _compile_error(text, path), str(e)), None
    module, is_package = module_name(relpath)
    return lower_file(tree, path, module, is_package, expanded)


def _compile_error(text: str, path: str) -> BaseException | None:
    """What CPython raises compiling `text`; None when it compiles."""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return error
    return None


def _parsed(text: str) -> cst.Module | None:
    try:
        return cst.parse_module(text)
    except (cst.ParserSyntaxError, cst.CSTValidationError, RecursionError):
        return None


def project_modules(names: Iterable[str]) -> set[str]:
    """The imported modules worth looking for in the project: not torch's, numpy's and
    the standard library's that GAN code imports most."""
    return {m for m in names if m and not m.startswith(("torch", "numpy", "functools", "typing"))}


def ast_modules(text: str, module: str, is_package: bool) -> set[str] | None:
    """`Scopes.modules` read with Python's `ast` (C speed), for a file that is not lowered;
    None when CPython cannot parse it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = resolve_relative(module, is_package, node.level, base)
            out.add(base)
            out.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
    return out


def _syntax_error(path: str, e: cst.ParserSyntaxError | None, python: BaseException | None,
                  reason: str = "") -> Finding:
    # CPython's parser names the offending token precisely and in words users know;
    # libcst's native parser can point a line late. Prefer CPython's (`python`, what it
    # raised compiling the text) where it agrees that the file is broken.
    if isinstance(python, SyntaxError):
        line = python.lineno or 1
        column = python.offset or 1
        return diagnostic("SN901", path, f"syntax error: {python.msg}",
                          Span(line, column, line, column + 1))
    if e is None:
        return diagnostic("SN901", path, f"cannot parse: {reason.splitlines()[0] if reason else 'libcst failed'}")
    line, column = e.raw_line, e.raw_column + 1
    return diagnostic("SN901", path, f"syntax error: {e.message}", Span(line, column, line, column + 1))
